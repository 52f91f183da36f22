"""The typed native paths of ``xstreams.Redis`` under threads, garbage collection and
pipelines: what the value checks against redis-py (test_client_streams.py,
test_client_pipeline.py) do not reach.

- A command runs with the GIL kept while the store is free and waits with it released
  while another thread holds the store: both must give the same values (a short read on a
  free store makes its values' bytes objects while serving).
- Reads never hold the store while they create Python objects, so a finalizer that calls
  the same store during a garbage collection inside a read cannot deadlock.
- A pipeline's stack runs natively in one store call; its values equal the Python path's.
"""

from __future__ import annotations

import gc
import threading

import pytest
import xstreams
from xstreams.client import Pipeline, Redis


def _fill(r: Redis, n: int, key: str = "s") -> list:
    return [r.xadd(key, {"f": f"v{i}", "g": str(i)}) for i in range(n)]


def test_commands_wait_for_a_busy_store_and_agree():
    store = xstreams.Store()
    r = Redis(store=store)
    ids = _fill(r, 50)
    stop = threading.Event()

    def hog() -> None:
        # Long batches hold the store lock (with the GIL released) again and again.
        cmds = [("XRANGE", "s", "-", "+")] * 200
        while not stop.is_set():
            store.execute_many(cmds, atomic=True)

    t = threading.Thread(target=hog)
    t.start()
    try:
        for _ in range(200):
            got = r.xrange("s", count=100)
            assert [e[0] for e in got] == ids
            assert got[3][1] == {b"f": b"v3", b"g": b"3"}
            assert r.xlen("s") == 50
            new = r.xadd("other", {"k": "v"})
            assert r.xrange("other", min=new, max=new) == [(new, {b"k": b"v"})]
    finally:
        stop.set()
        t.join()
    assert r.xlen("other") == 200


def test_group_reads_and_acks_agree_whether_the_store_is_free_or_busy():
    # A short read on a free store makes its values while serving (GIL held); on a busy
    # store it waits and builds them afterwards: the same entries, PEL and acks either way.
    store = xstreams.Store()
    r = Redis(store=store)
    ids = _fill(r, 300)
    r.xgroup_create("s", "g", "0")
    stop = threading.Event()

    def hog() -> None:
        cmds = [("XRANGE", "s", "-", "+", "COUNT", "50")] * 200
        while not stop.is_set():
            store.execute_many(cmds, atomic=True)

    def rounds(n: int) -> None:
        for _ in range(n):
            for start in range(0, 300, 100):
                got = r.xreadgroup("g", "c", {"s": ">"}, count=100)
                entries = got[0][1]
                assert [e[0] for e in entries] == ids[start : start + 100]
                i = start + 7
                assert entries[7][1] == {b"f": f"v{i}".encode(), b"g": str(i).encode()}
                assert r.xpending("s", "g")["pending"] == 100
                assert r.xack("s", "g", *[e[0] for e in entries]) == 100
            assert r.xreadgroup("g", "c", {"s": ">"}, count=100) == []
            r.xgroup_setid("s", "g", "0")
            store.validate()

    rounds(5)
    t = threading.Thread(target=hog)
    t.start()
    try:
        rounds(20)
    finally:
        stop.set()
        t.join()
    assert r.xpending("s", "g")["pending"] == 0


def test_a_finalizer_calling_the_store_during_a_read_does_not_deadlock():
    store = xstreams.Store()
    r = Redis(store=store)
    _fill(r, 300)
    r.xgroup_create("s", "g", "0")
    seen = []

    class Cycle:
        def __init__(self) -> None:
            self.me = self

        def __del__(self) -> None:
            # Runs inside whatever allocation triggers the collection: a native read
            # building its reply.
            seen.append(r.xadd("fin", {"x": "1"}))

    old = gc.get_threshold()
    gc.set_threshold(10, 1, 1)
    try:
        for _ in range(30):
            for _ in range(20):
                Cycle()
            assert len(r.xrange("s", count=300)) == 300
            r.xreadgroup("g", "c", {"s": "0"}, count=300)
            assert len(r.xread({"s": "0"}, count=300)[0][1]) == 300
    finally:
        gc.set_threshold(*old)
        gc.collect()
    assert seen, "no finalizer ran during the reads"
    assert r.xlen("fin") == len(seen)


@pytest.mark.parametrize("transaction", [True, False])
@pytest.mark.parametrize("kwargs", [{}, {"decode_responses": True}, {"protocol": 2},
                                    {"protocol": 3}, {"legacy_responses": False}])  # fmt: skip
def test_native_pipeline_equals_the_python_path(kwargs, transaction):
    def run(native: bool) -> list:
        r = Redis(store=xstreams.Store(clock_ms=1_700_000_000_000), **kwargs)
        if not native:
            r._native_off()
        r.xadd("s", {"a": "1"}, id="1-1")
        r.xgroup_create("s", "g", "0")
        p = r.pipeline(transaction=transaction)
        p.xadd("s", {"f": "v", "g": "w"}, id="2-1")
        p.xadd("s", {"f": "v2"})
        p.xrange("s")
        p.xrevrange("s", count=1)
        p.xread({"s": "0"}, count=2)
        p.xreadgroup("g", "c", {"s": ">"}, count=10)
        p.xack("s", "g", "1-1", "2-1")
        p.xlen("s")
        p.xdel("s", "1-1")
        p.exists("s", "nope")
        p.type("s")
        p.xinfo_groups("s")
        p.xpending("s", "g")
        p.delete("nope")
        p.execute_command("XADD s 1700000000001-1 f v")
        return p.execute()

    assert Redis(store=xstreams.Store(), **kwargs)._native_on()
    assert run(True) == run(False)


def test_native_pipeline_errors_as_redis_py():
    r = Redis(store=xstreams.Store())
    r.xadd("s", {"f": "v"}, id="5-1")
    p = r.pipeline(transaction=False)
    p.xadd("s", {"f": "v"}, id="1-1")  # smaller than the last ID
    p.xlen("s")
    with pytest.raises(xstreams.exceptions.ResponseError) as e:
        p.execute()
    assert str(e.value).startswith("Command # 1 (XADD s 1-1 f v) of pipeline caused error: ")
    p.xadd("s", {"f": "v"}, id="1-1")
    p.xlen("s")
    got = p.execute(raise_on_error=False)
    assert isinstance(got[0], xstreams.exceptions.ResponseError) and got[1] == 1
    # A transaction with an unknown command is discarded whole.
    p = r.pipeline()
    p.xadd("s", {"f": "v"})
    p.execute_command("NOSUCHCOMMAND")
    with pytest.raises(xstreams.exceptions.ResponseError):
        p.execute()
    assert r.xlen("s") == 1


def test_reads_of_changing_sizes_reuse_nothing_stale():
    # A read's buffers are kept for the thread's next read: each read must still give
    # exactly its own entries, after a larger one and after a failed one.
    store = xstreams.Store()
    r = Redis(store=store)
    ids = [r.xadd("s", {f"f{i % 3}": "v" * (i % 7), "g": str(i)}) for i in range(400)]
    r.xgroup_create("s", "g", "0")
    for count in (300, 1, 50, 400, 2):
        got = r.xrange("s", count=count)
        assert [e[0] for e in got] == ids[:count]
        assert got[-1][1] == {
            f"f{(count - 1) % 3}".encode(): b"v" * ((count - 1) % 7),
            b"g": str(count - 1).encode(),
        }
        with pytest.raises(xstreams.ResponseError):
            r.xrange("s", min="bad")
        rev = r.xrevrange("s", count=count)
        assert [e[0] for e in rev] == ids[::-1][:count]
    got = r.xreadgroup("g", "c", {"s": ">"}, count=10)
    assert [e[0] for e in got[0][1]] == ids[:10]
    assert r.xack("s", "g", *ids[:10]) == 10
    assert r.xread({"s": ids[-3]}) == [[b"s", [(i, r.xrange("s", i, i)[0][1]) for i in ids[-2:]]]]


def _python_queue(p, *args, **kwargs):
    # The Python method of the same name (what the native queueing must equal).
    from xstreams.client.streams import StreamCommands

    return StreamCommands.xadd(p, *args, **kwargs)


@pytest.mark.parametrize(
    "args, kwargs",
    [
        (("s", {"f": "v"}), {}),
        ((b"s", {b"f": b"v", "g": 1, 2.5: bytearray(b"x")}), {}),
        (("s", {"f": "v"}), {"id": "9-1"}),
        (("s", {"f": "v"}, "9-2", 5), {}),
        (("s", {"f": "v"}), {"maxlen": 3}),
        (("s", {"f": "v"}), {"nomkstream": True}),
        (("s", {"f": "v"}), {"idmpauto": "p"}),
    ],
)
def test_pipeline_xadd_queues_what_the_python_method_queues(args, kwargs):
    # Two stores on one fixed clock: the same auto IDs.
    native = Redis(store=xstreams.Store(clock_ms=1_700_000_000_000)).pipeline()
    python = Redis(store=xstreams.Store(clock_ms=1_700_000_000_000)).pipeline()
    assert native.xadd(*args, **kwargs) is native
    assert _python_queue(python, *args, **kwargs) is python
    assert native.command_stack == python.command_stack
    assert [type(a) for a in native.command_stack[0][0]] == [
        type(a) for a in python.command_stack[0][0]
    ]
    assert native.execute() == python.execute()


@pytest.mark.parametrize(
    "fields, error",
    [({}, "XADD fields must be a non-empty dict"), ([("f", "v")], "non-empty dict")],
)
def test_pipeline_xadd_bad_fields_raise_as_the_python_method(fields, error):
    p = Redis(store=xstreams.Store()).pipeline()
    with pytest.raises(xstreams.DataError, match=error):
        p.xadd("s", fields)
    assert p.command_stack == []


def test_pipeline_xadd_while_watching_runs_at_once_and_subclasses_keep_their_hook():
    r = Redis(store=xstreams.Store())
    p = r.pipeline()
    p.watch("w")
    got = p.xadd("s", {"f": "v"})  # immediate while watching, before MULTI
    assert isinstance(got, bytes) and r.xlen("s") == 1 and p.command_stack == []
    p.multi()
    assert p.xadd("s", {"f": "v"}) is p and len(p.command_stack) == 1
    assert len(p.execute()) == 1 and r.xlen("s") == 2

    seen = []

    class Recording(Pipeline):
        def execute_command(self, *args, **options):
            seen.append(args)
            return super().execute_command(*args, **options)

    q = Recording(r, True, None)
    q.xadd("s", {"f": "v"})
    assert seen == [("XADD", "s", "*", "f", "v")] and len(q.command_stack) == 1
