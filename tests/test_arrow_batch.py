"""The Arrow batch paths: ``Store.xadd_batch``, ``xrange_arrow``, ``xrevrange_arrow``,
``xread_arrow`` (and the ``xstreams.Redis`` methods over them).

The central property: ``xadd_batch`` of a batch does exactly what the same rows sent one
XADD at a time do — the same replies (IDs, duplicates, errors, nil) and the same final
state (entries, counters, IDMP state, node layout), on in-memory and durable stores —
with the documented conversion of column values to arguments: UTF-8 strings, binary as
is, integers in decimal, floats as Python's ``repr``, booleans as ``1``/``0``, other
types through Arrow's cast to text; a null value leaves its field out; a null ID is
``*``.
"""

from __future__ import annotations

import datetime
import decimal
import math
import random
import struct
import threading
import time
from typing import Any, List, Optional

import pyarrow as pa
import pytest
import xstreams
from xstreams import exceptions as exc

NOW = 1_700_000_000_000
CONFIG = {"stream-node-max-entries": 5, "stream-idmp-maxsize": 4, "stream-idmp-duration": 2}


def raw(store: xstreams.Store, *args: Any) -> bytes:
    return bytes(store._execute_resp(list(args)))


def state(store: xstreams.Store, key: str = "s") -> List[bytes]:
    """Everything observable about a stream, as raw RESP replies."""
    return [
        raw(store, "XRANGE", key, "-", "+"),
        raw(store, "XINFO", "STREAM", key, "FULL"),
        raw(store, "TYPE", key),
    ]


def encode(v: Any) -> Optional[bytes]:
    """What the Python one-XADD-at-a-time caller sends for a value (redis-py's rules,
    plus the documented bool mapping)."""
    if v is None:
        return None
    if isinstance(v, bool):
        return b"1" if v else b"0"
    if isinstance(v, bytes):
        return v
    if isinstance(v, float):
        return repr(v).encode()
    return str(v).encode()


def one_by_one(
    store: xstreams.Store,
    key: str,
    columns: dict,
    *,
    fields: List[str],
    id_col: Optional[str] = None,
    options: List[Any] = (),
    trim: List[Any] = (),
    idmp: Optional[tuple] = None,
    clock: Optional[str] = None,
) -> List[tuple]:
    """Send each row as one XADD; returns (id or None, duplicate, error or None)."""
    n = len(next(iter(columns.values())))
    out = []
    for i in range(n):
        args: List[Any] = ["XADD", key, *options]
        if idmp is not None:
            kind, pcol, icol = idmp
            if kind == "IDMP":
                args += ["IDMP", encode(columns[pcol][i]), encode(columns[icol][i])]
            else:
                args += ["IDMPAUTO", encode(columns[pcol][i])]
        args += list(trim)
        rid = columns[id_col][i] if id_col else None
        args.append(encode(rid) if rid is not None else "*")
        for f in fields:
            v = encode(columns[f][i])
            if v is not None:
                args += [f, v]
        if clock:
            store.set_clock_ms(columns[clock][i])
        before = _dups(store, key)
        try:
            r = store.execute_command(*args)
        except exc.ResponseError as e:
            out.append((None, False, e.reply))
            continue
        out.append((r.decode() if r is not None else None, _dups(store, key) > before, None))
    return out


def _dups(store: xstreams.Store, key: str) -> int:
    try:
        info = store.execute_command("XINFO", "STREAM", key)
    except exc.ResponseError:
        return 0
    d = dict(zip(info[::2], info[1::2]))
    return int(d.get(b"iids-duplicates", 0))


def batch_result(res: pa.RecordBatch) -> List[tuple]:
    ids = res.column("id").to_pylist()
    dup = res.column("duplicate").to_pylist()
    err = res.column("error").to_pylist() if "error" in res.schema.names else [None] * len(ids)
    return list(zip(ids, dup, err))


def twin(durable_dir=None, tmp_path=None, config=CONFIG):
    if durable_dir is not None:
        a = xstreams.Store(str(durable_dir / "a"), config=config, clock_ms=NOW)
        b = xstreams.Store(str(durable_dir / "b"), config=config, clock_ms=NOW)
        return a, b
    return (
        xstreams.Store(config=config, clock_ms=NOW),
        xstreams.Store(config=config, clock_ms=NOW),
    )


# ------------------------------------------------------------------------------ xadd_batch


@pytest.mark.parametrize("durable", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_random_batches_match_one_xadd_at_a_time(tmp_path, durable, seed):
    rng = random.Random(seed)
    a, b = twin(tmp_path if durable else None)
    for rnd in range(4):
        n = rng.randint(1, 40)
        pids = [rng.choice(["p1", "p2", "p3"]) for _ in range(n)]
        iids = [rng.choice(["i1", "i2", "i3", "i4", "i5", "i6"]) for _ in range(n)]
        f1 = [rng.choice([None, "x", "yy", "zzz", "é"]) for _ in range(n)]
        f2 = [rng.choice([None, 1, -7, 2**40]) for _ in range(n)]
        f3 = [rng.choice([None, 0.5, 1e16, -0.0, 3.0]) for _ in range(n)]
        cols = {"pid": pids, "iid": iids, "f1": f1, "f2": f2, "f3": f3}
        table = pa.table(
            {
                "pid": pa.array(pids),
                "iid": pa.array(iids),
                "f1": pa.array(f1, pa.string()),
                "f2": pa.array(f2, pa.int64()),
                "f3": pa.array(f3, pa.float64()),
            }
        )
        mode = rng.choice(["plain", "idmp", "auto"])
        trim_kind = rng.choice([None, "maxlen", "maxlen~", "minid"])
        kw: dict = {}
        trim: List[Any] = []
        if trim_kind == "maxlen":
            kw.update(maxlen=6, approximate=False)
            trim = ["MAXLEN", "6"]
        elif trim_kind == "maxlen~":
            kw.update(maxlen=6, approximate=True)
            trim = ["MAXLEN", "~", "6"]
        elif trim_kind == "minid":
            kw.update(minid=f"{NOW + rnd}", approximate=False)
            trim = ["MINID", f"{NOW + rnd}"]
        idmp = None
        if mode == "idmp":
            kw.update(producer="pid", iid="iid")
            idmp = ("IDMP", "pid", "iid")
        elif mode == "auto":
            kw.update(producer="pid", idmpauto=True)
            idmp = ("IDMPAUTO", "pid", None)
        fields = ["f1", "f2", "f3"]
        res = a.xadd_batch("s", table, fields=fields, errors="return", **kw)
        want = one_by_one(b, "s", cols, fields=fields, trim=trim, idmp=idmp)
        assert batch_result(res) == want
        assert state(a) == state(b)
        a.advance_clock_ms(rng.choice([0, 1, 1500, 2500]))
        b.advance_clock_ms(0)
        b.set_clock_ms(a.now_ms())
    a.validate()
    if durable:
        path_a, now = a.path, a.now_ms()
        expect = state(a)
        a.close()
        b.close()
        reopened = xstreams.Store(path_a, read_only=True, clock_ms=now)
        assert state(reopened) == expect


def test_errors_nil_and_explicit_ids():
    a, b = twin()
    raw(a, "SET", "str", "v")
    raw(b, "SET", "str", "v")
    ids = [None, f"{NOW}-5", f"{NOW}-5", "bad", f"{NOW + 1}-*", "0-0", None]
    vals = ["a", "b", None, "d", "e", "f", "g"]
    table = pa.table({"id": pa.array(ids, pa.string()), "v": pa.array(vals, pa.string())})
    cols = {"id": ids, "v": vals}
    for key in ("s", "str"):
        res = a.xadd_batch(key, table, id="id", errors="return")
        want = one_by_one(b, key, cols, fields=["v"], id_col="id")
        assert batch_result(res) == want
        assert state(a, key) == state(b, key)
    errs = [r[2] for r in batch_result(a.xadd_batch("s", table, id="id", errors="return"))]
    assert any(e and "equal or smaller" in e for e in errs)
    assert "ERR wrong number of arguments for 'xadd' command" in errs
    # NOMKSTREAM on a missing key: a null id, no error.
    res = a.xadd_batch("nope", table.slice(0, 1), nomkstream=True, fields=["v"])
    assert res.column("id").to_pylist() == [None]
    assert raw(a, "EXISTS", "nope") == b":0\r\n"


def test_errors_raise_after_running_every_row():
    a = xstreams.Store(clock_ms=NOW)
    table = pa.table({"id": ["5-1", "1-1", "6-1"], "v": ["a", "b", "c"]})
    with pytest.raises(exc.ResponseError) as ei:
        a.xadd_batch("s", table, id="id")
    assert "equal or smaller" in str(ei.value)
    assert ei.value.row == 1
    assert ei.value.result.column("id").to_pylist() == ["5-1", None, "6-1"]
    assert a.execute_command("XLEN", "s") == 2


def test_idmp_explicit_id_and_empty_iid_errors():
    a, b = twin()
    table = pa.table({"p": ["p", "p", "", "p"], "i": ["x", "", "y", "x"], "v": ["1"] * 4})
    cols = {"p": ["p", "p", "", "p"], "i": ["x", "", "y", "x"], "v": ["1"] * 4}
    res = a.xadd_batch("s", table, producer="p", iid="i", fields=["v"], errors="return")
    assert batch_result(res) == one_by_one(b, "s", cols, fields=["v"], idmp=("IDMP", "p", "i"))
    res = a.xadd_batch("s", table, producer="p", iid="i", id="v", fields=["v"], errors="return")
    want = one_by_one(b, "s", cols, fields=["v"], id_col="v", idmp=("IDMP", "p", "i"))
    assert batch_result(res) == want
    assert all(e is not None for _, _, e in want)
    assert state(a) == state(b)


def test_duplicate_flag_and_constant_pid():
    s = xstreams.Store(clock_ms=NOW)
    table = pa.table({"iid": ["a", "b", "a", "c", "b"], "v": list("12345")})
    res = s.xadd_batch("s", table, pid="prod", iid="iid", fields=["v"])
    ids = res.column("id").to_pylist()
    assert res.column("duplicate").to_pylist() == [False, False, True, False, True]
    assert ids[2] == ids[0] and ids[4] == ids[1]
    info = s.execute_command("XINFO", "STREAM", "s")
    d = dict(zip(info[::2], info[1::2]))
    assert d[b"iids-duplicates"] == 2 and d[b"iids-added"] == 3


def test_per_row_clock_matches_pinned_clock():
    a, b = twin()
    ts = [NOW, NOW, NOW + 1000, NOW + 3500, NOW + 3500, NOW + 9000]
    iids = ["a", "b", "a", "a", "b", "b"]
    table = pa.table({"ts": pa.array(ts, pa.int64()), "iid": iids, "pid": ["p"] * 6})
    res = a.xadd_batch("s", table, producer="pid", iid="iid", fields=["iid"], clock="ts")
    cols = {"ts": ts, "iid": iids, "pid": ["p"] * 6}
    want = one_by_one(b, "s", cols, fields=["iid"], idmp=("IDMP", "pid", "iid"), clock="ts")
    assert batch_result(res) == want
    assert a.now_ms() == NOW  # restored
    # Timestamp columns are converted to ms (floor).
    c = xstreams.Store(config=CONFIG, clock_ms=NOW)
    t2 = table.set_column(0, "ts", pa.array(ts, pa.int64()).cast(pa.timestamp("ms")))
    t2 = t2.set_column(0, "ts", t2.column("ts").cast(pa.timestamp("us", tz="UTC")))
    res2 = c.xadd_batch("s", t2, producer="pid", iid="iid", fields=["iid"], clock="ts")
    assert batch_result(res2) == want


def test_per_row_clock_refused_on_durable_store(tmp_path):
    s = xstreams.Store(str(tmp_path / "d"))
    with pytest.raises(exc.ResponseError, match="in-memory"):
        s.xadd_batch("s", pa.table({"t": [1], "v": ["x"]}), clock="t")
    s.close()


def test_read_only_store_refuses_rows(tmp_path):
    w = xstreams.Store(str(tmp_path / "d"))
    w.execute_command("XADD", "s", "*", "f", "v")
    w.close()
    r = xstreams.Store(str(tmp_path / "d"), read_only=True)
    res = r.xadd_batch("s", pa.table({"v": ["x"]}), errors="return")
    assert res.column("error")[0].as_py().startswith("READONLY")


# ---------------------------------------------------------------------- column conversion


def test_value_conversions_match_python_clients():
    rng = random.Random(7)
    floats = [rng.uniform(-1e6, 1e6) for _ in range(200)]
    floats += [struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0] for _ in range(300)]
    floats += [1e16, 1e15, 1e-5, 1e-4, 123456789.0, 5e-324, 1.7976931348623157e308, 0.1]
    floats = [f for f in floats if not math.isnan(f)] + [math.inf, -math.inf]
    s = xstreams.Store()
    s.xadd_batch("f", pa.table({"x": pa.array(floats, pa.float64())}))
    got = [e[1][b"x"] if False else dict(zip(e[1][::2], e[1][1::2]))[b"x"]
           for e in s.execute_command("XRANGE", "f", "-", "+")]  # fmt: skip
    assert got == [repr(f).encode() for f in floats]
    nan = s.xadd_batch("n", pa.table({"x": pa.array([math.nan])}))
    assert nan.num_rows == 1
    assert s.execute_command("XRANGE", "n", "-", "+")[0][1] == [b"x", b"nan"]
    # Every other type.
    table = pa.table(
        {
            "i8": pa.array([-5], pa.int8()),
            "u64": pa.array([2**64 - 1], pa.uint64()),
            "f32": pa.array([0.1], pa.float32()),
            "b": pa.array([True], pa.bool_()),
            "b0": pa.array([False], pa.bool_()),
            "bin": pa.array([b"\x00\xff"], pa.binary()),
            "lstr": pa.array(["large"], pa.large_string()),
            "fixed": pa.array([b"ab"], pa.binary(2)),
            "dict": pa.array(["cat"]).dictionary_encode(),
            "date": pa.array([datetime.date(2024, 1, 2)], pa.date32()),
            "ts": pa.array([datetime.datetime(2024, 1, 2, 3, 4, 5)], pa.timestamp("s")),
            "dec": pa.array([decimal.Decimal("1.25")], pa.decimal128(5, 2)),
            "none": pa.array([None], pa.null()),
        }
    )
    s.xadd_batch("t", table)
    entry = s.execute_command("XRANGE", "t", "-", "+")[0][1]
    got = dict(zip(entry[::2], entry[1::2]))
    assert got == {
        b"i8": b"-5",
        b"u64": b"18446744073709551615",
        b"f32": b"0.1",
        b"b": b"1",
        b"b0": b"0",
        b"bin": b"\x00\xff",
        b"lstr": b"large",
        b"fixed": b"ab",
        b"dict": b"cat",
        b"date": b"2024-01-02",
        b"ts": b"2024-01-02T03:04:05",
        b"dec": b"1.25",
    }
    assert entry[::2] == list(got)  # field order = column order; the null field left out


def test_inputs_pandas_record_batch_and_chunked_table():
    pd = pytest.importorskip("pandas")
    s = xstreams.Store(clock_ms=NOW)
    df = pd.DataFrame({"a": ["x", "y"], "n": [1, 2]}, index=[10, 20])
    assert s.xadd_batch("s", df).column("id").to_pylist() == [f"{NOW}-0", f"{NOW}-1"]
    entry = s.execute_command("XRANGE", "s", "-", "+")[0][1]
    assert entry == [b"a", b"x", b"n", b"1"]  # the index is not a field
    rb = pa.record_batch({"a": ["z"]})
    s.xadd_batch("s", rb)
    chunked = pa.Table.from_batches([pa.record_batch({"a": ["1"]}), pa.record_batch({"a": ["2"]})])
    res = s.xadd_batch("s", chunked)
    assert res.num_rows == 2 and s.execute_command("XLEN", "s") == 5
    with pytest.raises(TypeError):
        s.xadd_batch("s", [1, 2, 3])
    with pytest.raises(ValueError, match="not in the batch"):
        s.xadd_batch("s", rb, fields=["nope"])
    with pytest.raises(ValueError, match="null"):
        s.xadd_batch(
            "s",
            pa.table({"p": ["a", None], "i": ["1", "2"], "v": ["x", "y"]}),
            producer="p",
            iid="i",
        )


def test_blocked_reader_is_woken():
    s = xstreams.Store()
    got: list = []

    def reader():
        got.append(s.execute_command("XREAD", "BLOCK", "5000", "STREAMS", "s", "$"))

    t = threading.Thread(target=reader)
    t.start()
    time.sleep(0.2)
    s.xadd_batch("s", pa.table({"v": ["x", "y"]}))
    t.join(5)
    assert not t.is_alive()
    assert got and got[0][0][0] == b"s"


# ------------------------------------------------------------------------------- reading


def fill(s: xstreams.Store) -> None:
    s.execute_command("XADD", "s", "1-1", "a", "1", "b", "x")
    s.execute_command("XADD", "s", "1-2", "a", "2")
    s.execute_command("XADD", "s", "2-0", "b", "y", "b", "z")
    s.execute_command("XADD", "s", "3-0", "c", "3.5")


def as_pairs(batch: pa.RecordBatch) -> List[tuple]:
    return [(i, [tuple(p) for p in f]) for i, f in zip(batch["id"].to_pylist(),
                                                       batch["fields"].to_pylist())]  # fmt: skip


def test_xrange_arrow_matches_xrange():
    s = xstreams.Store()
    fill(s)
    b = s.xrange_arrow("s")
    assert b.schema.names == ["id", "ms", "seq", "fields"]
    assert b.schema.field("ms").type == pa.uint64()
    assert b.schema.field("fields").type == pa.map_(pa.string(), pa.string())
    for args in [("-", "+"), ("1", "1"), ("(1-1", "+"), ("1-2", "(3"), ("2", "2"), ("4", "+")]:
        for count in (None, 1, 2, 0, -1):
            c = ["COUNT", count] if count is not None else []
            want = s.execute_command("XRANGE", "s", *args, *c)
            got = s.xrange_arrow("s", *args, count)
            assert as_pairs(got) == [
                (i.decode(), [(f.decode(), v.decode()) for f, v in zip(fv[::2], fv[1::2])])
                for i, fv in (want or [])
            ]
            want_r = s.execute_command("XREVRANGE", "s", args[1], args[0], *c)
            got_r = s.xrevrange_arrow("s", args[1], args[0], count)
            assert got_r["id"].to_pylist() == [i.decode() for i, _ in (want_r or [])]
    assert b["ms"].to_pylist() == [1, 1, 2, 3] and b["seq"].to_pylist() == [1, 2, 0, 0]
    assert s.xrange_arrow("missing").num_rows == 0
    with pytest.raises(exc.ResponseError, match="Invalid stream ID"):
        s.xrange_arrow("s", "x", "+")
    s.execute_command("SET", "str", "v")
    with pytest.raises(exc.WrongTypeError):
        s.xrange_arrow("str")


def test_xrange_arrow_typed_schema_and_binary():
    s = xstreams.Store()
    fill(s)
    schema = pa.schema([("a", pa.int64()), ("b", pa.string()), ("c", pa.float64())])
    b = s.xrange_arrow("s", schema=schema)
    assert b.schema.names == ["id", "ms", "seq", "a", "b", "c"]
    assert b["a"].to_pylist() == [1, 2, None, None]
    assert b["b"].to_pylist() == ["x", None, "z", None]  # the last of a repeated field
    assert b["c"].to_pylist() == [None, None, None, 3.5]
    with pytest.raises(ValueError, match="cannot be read"):
        s.xrange_arrow("s", schema=pa.schema([("b", pa.int64())]))
    s.execute_command("XADD", "bin", "1-1", b"\xff", b"\x00\xfe")
    with pytest.raises(ValueError, match="decode=False"):
        s.xrange_arrow("bin")
    bb = s.xrange_arrow("bin", decode=False)
    assert bb["fields"].to_pylist() == [[(b"\xff", b"\x00\xfe")]]
    # Typed round trip of what xadd_batch writes.
    t = pa.table({"n": pa.array([1, None], pa.int64()), "x": [0.25, 1e16], "ok": [True, False]})
    s.xadd_batch("rt", t)
    back = s.xrange_arrow("rt", schema=t.schema)
    assert back.select(["n", "x", "ok"]).to_pylist() == t.to_pylist()


def test_xread_arrow():
    s = xstreams.Store()
    fill(s)
    s.execute_command("XADD", "t", "5-0", "k", "v")
    b = s.xread_arrow({"s": "1-2", "t": "0"}, count=2)
    assert b.schema.names == ["stream", "id", "ms", "seq", "fields"]
    assert list(zip(b["stream"].to_pylist(), b["id"].to_pylist())) == [
        ("s", "2-0"),
        ("s", "3-0"),
        ("t", "5-0"),
    ]
    t0 = time.monotonic()
    empty = s.xread_arrow({"s": "$"}, block=100)
    assert empty.num_rows == 0 and time.monotonic() - t0 >= 0.09
    assert empty.schema.names == b.schema.names
    # XREADGROUP: a pending entry deleted since has null fields.
    s.execute_command("XGROUP", "CREATE", "s", "g", "0")
    first = s.xread_arrow({"s": ">"}, group="g", consumer="c")
    assert first.num_rows == 4
    s.execute_command("XDEL", "s", "1-2")
    hist = s.xread_arrow({"s": "0"}, group="g", consumer="c")
    assert hist["id"].to_pylist() == ["1-1", "1-2", "2-0", "3-0"]
    assert hist["fields"].is_null().to_pylist() == [False, True, False, False]
    with pytest.raises(exc.NoGroupError):
        s.xread_arrow({"s": ">"}, group="nope", consumer="c")


def test_redis_client_methods():
    r = xstreams.Redis(store=xstreams.Store(clock_ms=NOW), db=3)
    res = r.xadd_batch("s", pa.table({"v": ["a", "b"]}))
    assert res.column("id").to_pylist() == [f"{NOW}-0", f"{NOW}-1"]
    assert r.xlen("s") == 2
    assert r.xrange_arrow("s")["id"].to_pylist() == [f"{NOW}-0", f"{NOW}-1"]
    assert r.xrevrange_arrow("s", count=1)["id"].to_pylist() == [f"{NOW}-1"]
    assert r.xread_arrow({"s": 0}).num_rows == 2
    r.xgroup_create("s", "g", id="0")
    assert r.xreadgroup_arrow("g", "c", {"s": ">"}, count=1)["id"].to_pylist() == [f"{NOW}-0"]
    assert xstreams.Store(clock_ms=NOW).execute_command("XLEN", "s") == 0  # db 3 used
