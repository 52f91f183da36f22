"""The public ``xstreams.Store`` API: argument and reply conversion, errors and their
Python classes, batches, the injectable clock, settings, thread safety, and blocking reads
that wait without the GIL and wake on writes, deletes, group destruction and close."""

from __future__ import annotations

import threading
import time

import pytest
import xstreams
from xstreams import exceptions as exc


@pytest.fixture
def store() -> xstreams.Store:
    s = xstreams.Store(clock_ms=1_700_000_000_000)
    yield s
    s.validate()
    s.close()


def test_reply_types_match_raw_resp2(store):
    assert store.execute_command("XADD", "s", "1-1", "f", "v") == b"1-1"
    assert store.execute_command("XADD", b"s", b"2-1", b"f", 42) == b"2-1"
    assert store.execute_command("XADD", "s", "3-1", "f", 1.5) == b"3-1"
    assert store.execute_command("XLEN", "s") == 2 + 1
    assert store.execute_command("XRANGE", "s", "-", "+", "COUNT", 1) == [[b"1-1", [b"f", b"v"]]]
    assert store.execute_command("XRANGE", "s", "3", "3") == [[b"3-1", [b"f", b"1.5"]]]
    assert store.execute_command("XRANGE", "s", "-", "+", "COUNT", 0) is None
    assert store.execute_command("GET", "missing") is None
    assert store.execute_command("SET", "k", "v") == b"OK"
    assert store.execute_command("TYPE", "s") == b"stream"
    assert store.execute_command("PING") == b"PONG"
    info = store.execute_command("XINFO", "STREAM", "s")
    assert isinstance(info, list) and info[0] == b"length" and info[1] == 3


def test_protocol3_maps_are_dicts(store):
    store.execute_command("XADD", "s", "1-1", "f", "v")
    info = store.execute_command("XINFO", "STREAM", "s", protocol=3)
    assert info[b"length"] == 1 and info[b"last-generated-id"] == b"1-1"
    read = store.execute_command("XREAD", "STREAMS", "s", "0", protocol=3)
    assert read == {b"s": [[b"1-1", [b"f", b"v"]]]}
    assert store.execute_command("XREAD", "STREAMS", "s", "0") == [[b"s", [[b"1-1", [b"f", b"v"]]]]]


def test_errors_raise_typed_exceptions(store):
    store.execute_command("SET", "str", "x")
    with pytest.raises(exc.WrongTypeError) as e:
        store.execute_command("XADD", "str", "*", "f", "v")
    assert e.value.code == "WRONGTYPE"
    assert e.value.reply == "WRONGTYPE Operation against a key holding the wrong kind of value"
    assert str(e.value) == e.value.reply
    with pytest.raises(exc.ResponseError) as e:
        store.execute_command("XADD", "s", "0-0", "f", "v")
    assert str(e.value) == "The ID specified in XADD must be greater than 0-0"
    assert e.value.reply == "ERR The ID specified in XADD must be greater than 0-0"
    with pytest.raises(exc.NoGroupError):
        store.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "nokey", ">")
    store.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    with pytest.raises(exc.BusyGroupError):
        store.execute_command("XGROUP", "CREATE", "s", "g", "$")
    with pytest.raises(exc.ResponseError, match="unknown command 'NOPE'"):
        store.execute_command("NOPE", "a")
    if exc.HAVE_REDIS_PY:
        import redis

        with pytest.raises(redis.exceptions.ResponseError):
            store.execute_command("XLEN")


def test_bad_argument_types_raise_data_error(store):
    with pytest.raises(exc.DataError):
        store.execute_command("XADD", "s", "*", "f", True)
    with pytest.raises(exc.DataError):
        store.execute_command("XADD", "s", "*", "f", object())
    assert store.execute_command("XADD", "s", "1-1", bytearray(b"f"), memoryview(b"v")) == b"1-1"


def test_execute_many_atomic_and_execabort(store):
    res = store.execute_many(
        [("XADD", "s", "1-1", "f", "v"), ("XLEN", "s"), ("XLEN", "s", "x")], atomic=False
    )
    assert res[0] == b"1-1" and res[1] == 1
    assert isinstance(res[2], exc.ResponseError)
    # Atomic batch with a command rejected before running: nothing runs.
    res = store.execute_many([("XADD", "s", "2-1", "f", "v"), ("XLEN",)], atomic=True)
    assert res[0].code == "EXECABORT" and "wrong number of arguments" in str(res[1])
    assert store.execute_command("XLEN", "s") == 1
    # A runtime error inside an atomic batch does not undo the others (as in EXEC).
    res = store.execute_many([("XADD", "s", "1-1", "f", "v"), ("XADD", "s", "2-1", "f", "v")])
    assert isinstance(res[0], exc.ResponseError) and res[1] == b"2-1"


def test_execute_resp_is_exact_bytes(store):
    assert store._execute_resp([b"XADD", b"s", b"1-1", b"f", b"v"]) == b"$3\r\n1-1\r\n"
    assert store._execute_resp([b"XRANGE", b"s", b"-", b"+", b"COUNT", b"0"]) == b"*-1\r\n"
    assert (
        store._execute_resp([b"XRANGE", b"s", b"-", b"+", b"COUNT", b"0"], protocol=3) == b"_\r\n"
    )
    assert store._execute_resp([b"XADD", b"s"]) == (
        b"-ERR wrong number of arguments for 'xadd' command\r\n"
    )


def test_pinned_clock_drives_ids_and_idle(store):
    assert store.now_ms() == 1_700_000_000_000
    assert store.execute_command("XADD", "s", "*", "f", "v") == b"1700000000000-0"
    assert store.execute_command("XADD", "s", "*", "f", "v") == b"1700000000000-1"
    store.execute_command("XGROUP", "CREATE", "s", "g", "0")
    store.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    store.advance_clock_ms(1234)
    pending = store.execute_command("XPENDING", "s", "g", "-", "+", "10")
    assert [p[2] for p in pending] == [1234, 1234]
    store.set_clock_ms(1_800_000_000_000)
    assert store.execute_command("XADD", "s", "*", "f", "v") == b"1800000000000-0"


def test_config_settings():
    s = xstreams.Store(config={"stream-node-max-entries": 2, "stream-idmp-maxsize": 5})
    assert s.config_get("stream-node-max-entries") == "2"
    for i in range(1, 6):
        s.execute_command("XADD", "s", f"{i}-0", "f", "v")
    info = s.execute_command("XINFO", "STREAM", "s", protocol=3)
    assert info[b"radix-tree-keys"] == 3 and info[b"idmp-maxsize"] == 5
    s.config_set("stream-node-max-bytes", "4kb")
    assert s.config_get("stream-node-max-bytes") == "4096"
    with pytest.raises(ValueError):
        s.config_set("stream-idmp-duration", 0)
    with pytest.raises(ValueError):
        xstreams.Store(config={"no-such-setting": 1})
    assert s.config_get("nope") is None


def test_databases_are_separate(store):
    store.execute_command("XADD", "s", "1-1", "f", "v", db=3)
    assert store.execute_command("XLEN", "s") == 0
    assert store.execute_command("XLEN", "s", db=3) == 1
    with pytest.raises(exc.ResponseError, match="DB index is out of range"):
        store.execute_command("PING", db=16)


def test_concurrent_writers_lose_nothing():
    s = xstreams.Store()
    per_thread, threads = 2000, 4

    def work(t: int) -> None:
        for i in range(per_thread):
            s.execute_command("XADD", "s", "*", "t", t, "i", i)

    ts = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert s.execute_command("XLEN", "s") == per_thread * threads
    entries = s.execute_command("XRANGE", "s", "-", "+")
    ids = [e[0] for e in entries]
    assert len(set(ids)) == len(ids)
    s.validate()


def _reader(fn, out: list) -> threading.Thread:
    def run() -> None:
        try:
            out.append(fn())
        except Exception as e:  # noqa: BLE001 - the test inspects the exception
            out.append(e)

    t = threading.Thread(target=run)
    t.start()
    return t


def test_blocking_xread_wakes_on_xadd(store):
    store.execute_command("XADD", "s", "1-1", "f", "v")
    out: list = []
    t = _reader(lambda: store.execute_command("XREAD", "BLOCK", 0, "STREAMS", "s", "$"), out)
    time.sleep(0.2)
    assert out == [] and t.is_alive()
    store.execute_command("XADD", "other", "1-1", "f", "v")
    time.sleep(0.1)
    assert out == []
    store.execute_command("XADD", "s", "2-1", "g", "w")
    t.join(5)
    assert out == [[[b"s", [[b"2-1", [b"g", b"w"]]]]]]


def test_blocking_xread_times_out(store):
    start = time.monotonic()
    assert store.execute_command("XREAD", "BLOCK", 150, "STREAMS", "s", "$") is None
    assert time.monotonic() - start >= 0.14


def test_blocking_xreadgroup_wakes_and_errors(store):
    store.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    out: list = []
    cmd = ("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s", ">")
    t = _reader(lambda: store.execute_command(*cmd), out)
    time.sleep(0.2)
    store.execute_command("XADD", "s", "5-1", "f", "v")
    t.join(5)
    assert out == [[[b"s", [[b"5-1", [b"f", b"v"]]]]]]
    # Destroying the group wakes the reader with NOGROUP, as redis-server does.
    out.clear()
    t = _reader(lambda: store.execute_command(*cmd), out)
    time.sleep(0.2)
    store.execute_command("XGROUP", "DESTROY", "s", "g")
    t.join(5)
    assert isinstance(out[0], exc.NoGroupError)
    # Deleting the key does too.
    store.execute_command("XGROUP", "CREATE", "s", "g", "$")
    out.clear()
    t = _reader(lambda: store.execute_command(*cmd), out)
    time.sleep(0.2)
    store.execute_command("DEL", "s")
    t.join(5)
    assert isinstance(out[0], exc.NoGroupError)


def test_blocking_claim_wakes_when_clock_passes_min_idle(store):
    store.execute_command("XADD", "s", "1-1", "f", "v")
    store.execute_command("XGROUP", "CREATE", "s", "g", "0")
    store.execute_command("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    out: list = []
    cmd = ("XREADGROUP", "GROUP", "g", "b", "BLOCK", 0, "CLAIM", 500, "STREAMS", "s", ">")
    t = _reader(lambda: store.execute_command(*cmd), out)
    time.sleep(0.2)
    assert out == []
    store.advance_clock_ms(600)
    t.join(5)
    assert out == [[[b"s", [[b"1-1", [b"f", b"v"], 600, 1]]]]]


def test_close_wakes_blocked_readers():
    s = xstreams.Store()
    out: list = []
    t = _reader(lambda: s.execute_command("XREAD", "BLOCK", 0, "STREAMS", "s", "$"), out)
    time.sleep(0.2)
    s.close()
    t.join(5)
    assert isinstance(out[0], exc.ResponseError) and "closed" in str(out[0])
    assert s.closed
    with pytest.raises(exc.ResponseError):
        s.execute_command("PING")


def test_blocked_read_inside_batch_does_not_wait(store):
    start = time.monotonic()
    res = store.execute_many([("XREAD", "BLOCK", 0, "STREAMS", "s", "$")])
    assert res == [None] and time.monotonic() - start < 1


def test_auto_iid_and_command_names():
    iid = xstreams.auto_iid([b"f1", b"v1", b"f2", b"v2"])
    assert len(iid) == 16 and iid == xstreams.auto_iid([b"f2", b"v2", b"f1", b"v1"])
    names = xstreams.command_names()
    for c in ("xadd", "xreadgroup", "xnack", "xcfgset", "xidmprecord"):
        assert c in names


def test_default_store_is_shared():
    a = xstreams.default_store()
    assert xstreams.default_store() is a
    a.execute_command("DEL", "shared-key")
    xstreams.Redis().xadd("shared-key", {"f": "v"})
    assert xstreams.Redis().xlen("shared-key") == 1


def test_validate_raises_the_typed_invariant_error(store):
    # A violation cannot be produced through the API; the class and its place in the
    # exception tree are what callers catch.
    assert xstreams.InvariantError is exc.InvariantError
    assert issubclass(exc.InvariantError, exc.XStreamsError)
    assert not issubclass(exc.InvariantError, AssertionError)
    store.execute_command("XADD", "s", "*", "f", "v")
    assert store.validate() is None


def test_errors_inside_replies_carry_the_class_of_their_kind(store):
    """An error that is a reply's value (one command of a batch) gets its class, code and
    exact line from the engine's typed error, as a raised one does."""
    store.execute_command("SET", "str", "v")
    store.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    out = store.execute_many(
        [
            ("XADD", "str", "*", "f", "v"),
            ("XREADGROUP", "GROUP", "nope", "c", "STREAMS", "s", ">"),
            ("XGROUP", "CREATE", "s", "g", "$"),
            ("XADD", "s", "MAXLEN", "1", "MINID", "0", "*", "f", "v"),
            ("XLEN", "s"),
        ],
        atomic=False,
    )
    wrong, nogroup, busy, syntax, length = out
    assert type(wrong) is exc.WrongTypeError and wrong.code == "WRONGTYPE"
    assert wrong.reply == "WRONGTYPE Operation against a key holding the wrong kind of value"
    assert type(nogroup) is exc.NoGroupError and nogroup.code == "NOGROUP"
    assert type(busy) is exc.BusyGroupError
    assert busy.reply == "BUSYGROUP Consumer Group name already exists"
    assert type(syntax) is exc.ResponseError and syntax.code == "ERR"
    assert str(syntax) == (
        "syntax error, MAXLEN and MINID options at the same time are not compatible"
    )
    assert length == 0
    with pytest.raises(exc.WrongTypeError) as raised:
        store.execute_command("XADD", "str", "*", "f", "v")
    assert raised.value.reply == wrong.reply
