"""The Spark connector's per-row work on the wire, in Rust: a server's reply as an Arrow
batch (``_reply_arrow``) and a batch's XADDs packed (``_xadd_wire``), against what the
rest of the project already answers: ``Store.xrange_arrow`` of the same entries, and
redis-py's packing of the sink's own argv (``RowShape.commands``). No Spark session."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest
import redis
import xstreams
from xstreams._xstreams import _reply_arrow, _xadd_wire
from xstreams.spark_io import RowShape


def _store_with(entries):
    s = xstreams.Store()
    for eid, fv in entries:
        s.execute_command("XADD", "s", eid, *fv)
    return s


def _random_entries(rng: random.Random, n: int):
    out = []
    for i in range(n):
        k = rng.randint(1, 4)
        names = [rng.choice([b"a", b"b", b"c"]) for _ in range(k)]  # fields may repeat
        fv = []
        for name in names:
            fv += [name, bytes(rng.choice(b"xyz\xff0123") for _ in range(rng.randint(0, 5)))]
        out.append((f"{i + 1}-{rng.randint(0, 3)}".encode(), fv))
    return out


@pytest.mark.parametrize("seed", range(20))
def test_reply_arrow_is_xrange_arrow_of_the_same_entries(seed):
    rng = random.Random(seed)
    entries = _random_entries(rng, rng.randint(0, 40))
    s = _store_with(entries)
    reply = s.execute_command("XRANGE", "s", "-", "+")  # the server's shape: [id, [f, v, ...]]
    got, kept = _reply_arrow("s", reply, None, decode=False)
    want = s.xrange_arrow("s", decode=False)
    assert kept == len(entries)
    assert got.column("stream").to_pylist() == [b"s"] * len(entries)
    for name in ("id", "fields"):
        assert got.column(name).to_pylist() == want.column(name).to_pylist()
    assert got.column("ms").to_pylist() == want.column("ms").to_pylist()
    # `end` keeps the reply's entries up to it (an XRANGE reply may run past a part's end).
    if entries:
        cut = rng.randrange(len(entries))
        part, kept = _reply_arrow("s", reply, entries[cut][0], decode=False)
        assert kept == cut + 1 and part.num_rows == cut + 1


def test_reply_arrow_typed_columns_and_deleted_history_entries():
    schema = pa.schema([pa.field("n", pa.int64()), pa.field("x", pa.string())])
    reply = [[b"1-0", [b"n", b"1", b"n", b"7", b"x", b"a"]], [b"2-0", None], [b"3-0", [b"x", b"b"]]]
    got, kept = _reply_arrow(b"s", reply, "+", schema=schema)
    assert kept == 3
    assert got.column("n").to_pylist() == [7, None, None]  # a repeated field's last value
    assert got.column("x").to_pylist() == ["a", None, "b"]
    assert got.column("seq").type == pa.int64()
    with pytest.raises(ValueError, match="not a stream ID"):
        _reply_arrow("s", [[b"nope", [b"f", b"v"]]])
    with pytest.raises(ValueError, match="odd number"):
        _reply_arrow("s", [[b"1-0", [b"f"]]])


def _random_table(rng: random.Random, n: int) -> pa.Table:
    def maybe(v):
        return None if rng.random() < 0.2 else v

    return pa.table(
        {
            "s": pa.array([maybe(rng.choice(["", "é", "abc"])) for _ in range(n)], pa.string()),
            "b": pa.array([maybe(bytes([rng.randrange(256)])) for _ in range(n)], pa.binary()),
            "i": pa.array([maybe(rng.randint(-(2**40), 2**40)) for _ in range(n)], pa.int64()),
            "f": pa.array([maybe(rng.choice([0.1, -2.5, 1e20, 3.0])) for _ in range(n)]),
            "t": pa.array([maybe(rng.random() < 0.5) for _ in range(n)], pa.bool_()),
            "pid": pa.array([f"p{rng.randrange(3)}" for _ in range(n)]),
            "iid": pa.array([f"i{k}" for k in range(n)]),
        }
    )


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"producer": "pid", "iid": "iid"},
        {"maxlen": "10", "approximate": "true"},
        {"minid": "5-0"},
    ],
)
def test_xadd_wire_packs_what_redis_py_packs_of_the_sink_argv(seed, options):
    rng = random.Random(seed)
    table = _random_table(rng, rng.randint(0, 30))
    shape = RowShape(options, table.column_names)
    conn = redis.Connection()
    argv = list(shape.commands(b"k", table))
    want = b"".join(conn.pack_commands(argv)) if argv else b""
    got, n = shape.packed(b"k", table, conn)
    assert (got, n) == (want, len(argv))


def test_xadd_wire_refuses_a_null_idmp_column():
    table = pa.table({"pid": ["p", None], "iid": ["a", "b"], "v": ["1", "2"]})
    with pytest.raises(ValueError, match='producer column "pid" is null on row 1'):
        _xadd_wire(b"k", table, ["v"], producer="pid", iid="iid")


def test_drain_reads_every_queued_reply_and_keeps_the_first_error(serve_session):
    """The sink's read of MULTI's replies straight from redis-py's hiredis reader: the
    first error of the queued commands, and the connection left at EXEC's reply."""
    from xstreams.spark_sink_redis import drain

    client = redis.Redis(host="127.0.0.1", port=serve_session.port, protocol=2)
    conn = client.connection_pool.get_connection()
    try:
        assert hasattr(conn._parser, "_reader")  # the reader path (hiredis installed)
        conn.send_command("MULTI")
        assert conn.read_response() in (b"OK", "OK")
        cmds = [["XADD", "wire:k", "*", "f", str(i)] for i in range(2500)]
        cmds.insert(1000, ["XADD", "wire:k"])  # refused when queued (wrong arity)
        conn.send_packed_command(conn.pack_commands(cmds))
        err = drain(conn, len(cmds))
        assert isinstance(err, redis.ResponseError) and "wrong number" in str(err)
        conn.send_command("EXEC")
        with pytest.raises(redis.exceptions.ExecAbortError):
            conn.read_response()
    finally:
        client.connection_pool.release(conn)
        client.close()


def test_drain_without_a_reader_reads_through_read_response():
    from xstreams.spark_sink_redis import drain

    class Conn:  # a connection whose parser has no hiredis reader
        def __init__(self):
            self.replies = [
                b"QUEUED",
                redis.ResponseError("ERR one"),
                b"QUEUED",
                redis.ResponseError("ERR two"),
            ]

        def read_response(self):
            r = self.replies.pop(0)
            if isinstance(r, Exception):
                raise r
            return r

    c = Conn()
    assert str(drain(c, 4)) == "ERR one" and c.replies == []
