"""The embedded WATCH API: ``Store.watch(*keys, db=0) -> Watch`` and
``Store.execute_many(..., watch=w)`` returning ``None`` when a watched key was touched.

Which commands touch a key is compared with redis-server 8.8 in
tests/differential/test_differential_watch.py; here, the Python surface: the handle's
properties, its lifetime, several handles, and the errors of misuse.
"""

from __future__ import annotations

import gc

import pytest
import xstreams
from xstreams import ResponseError, Store, Watch


@pytest.fixture
def store():
    s = Store(clock_ms=1_700_000_000_000)
    yield s
    s.close()


def test_untouched_runs_touched_returns_none(store):
    store.execute_command("XADD", "s", "1-1", "f", "v")
    w = store.watch("s")
    assert isinstance(w, Watch)
    assert (w.keys, w.db, w.dirty) == ([b"s"], 0, False)
    assert store.execute_many([("XLEN", "s")], watch=w) == [1]
    store.execute_command("XADD", "s", "2-1", "f", "v")
    assert w.dirty
    assert store.execute_many([("XADD", "s", "3-1", "f", "v")], watch=w) is None
    assert store.execute_command("XLEN", "s") == 2, "an aborted transaction runs nothing"


def test_expiry_after_watch_aborts(store):
    store.execute_command("SET", "k", "v", "PX", 100)
    w = store.watch("k")
    store.advance_clock_ms(150)
    assert not w.dirty, "nothing noticed the expiry yet"
    assert store.execute_many([("PING",)], watch=w) is None


def test_unwatch_and_collection_release_the_keys(store):
    w = store.watch("a", "b", db=3)
    assert w.db == 3 and sorted(w.keys) == [b"a", b"b"]
    assert "watching_clients:1" in store.execute_command("INFO", "clients").decode()
    w.unwatch()
    assert w.keys == [] and not w.dirty
    store.execute_command("SET", "a", "v", db=3)
    assert store.execute_many([("PING",)], db=3, watch=w) == [b"PONG"]
    w2 = store.watch("a")
    del w2
    gc.collect()
    assert "watching_clients:0" in store.execute_command("INFO", "clients").decode()


def test_several_watches(store):
    w1, w2 = store.watch("a"), store.watch("b")
    assert store.execute_many([("PING",)], watch=(w1, w2)) == [b"PONG"]
    store.execute_command("SET", "b", "v")
    assert store.execute_many([("PING",)], watch=[w1, w2]) is None
    assert store.execute_many([("PING",)], watch=[w1]) == [b"PONG"]


def test_misuse(store):
    w = store.watch("k")
    with pytest.raises(ValueError, match="atomic"):
        store.execute_many([("PING",)], atomic=False, watch=w)
    with pytest.raises(TypeError, match="Watch"):
        store.execute_many([("PING",)], watch="k")
    with pytest.raises(ResponseError, match="wrong number of arguments for 'watch'"):
        store.watch()
    with pytest.raises(ResponseError, match="DB index is out of range"):
        store.watch("k", db=16)
    other = Store()
    slots = other.execute_many([("PING",)], watch=w)
    assert isinstance(slots[0], ResponseError)
    assert str(slots[0]) == "the Watch belongs to another store"
    other.close()
    assert "Watch" in xstreams.__all__
