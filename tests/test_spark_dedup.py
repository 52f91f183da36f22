"""``xstreams.spark.dedup`` on a local[2] SparkSession, checked row for row against a
single-process ``Store`` fed the same XADDs with a pinned clock.

The reference is what one redis-server would answer if every producer sent its rows to
its own stream (``XADD <pid> IDMP <pid> <iid> * ...`` or ``IDMPAUTO <pid>`` over the
content columns), all producers interleaved in global event-time order, the server clock
at each row's time. Spark partitions by producer and runs each producer's rows in its own
task: the answers must be the same. Cases: retries inside and outside the IDMP duration,
maxsize eviction, ties broken by an order column or by iid, IDMPAUTO over typed content
with nulls, a timestamp time column.
"""

from __future__ import annotations

import math
import random
from typing import Any, Dict, List, Optional

import pytest
import xstreams
import xstreams.spark as xs
from pyspark.errors import PythonException
from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType
from spark_support import spark  # noqa: F401

pytestmark = pytest.mark.spark

NOW = 1_700_000_000_000
ALL = list(xs._DEDUP_COLUMNS)
NAN, INF = float("nan"), float("inf")


def _first_kernel(batches, producer, iid, content, time, ties, duration, maxsize, keep_first,
                  large, columns):  # fmt: skip
    """The worker's first way: the dedup kernel on a partition as it came (``None``:
    input it does not take)."""
    from xstreams import _xstreams

    order = None if ties in ([iid], list(content or [])) else ties[0]
    kernel = _xstreams._Dedup(
        producer=producer, iid=iid, content=content, time=time, order=order,
        duration=duration, maxsize=maxsize, carry=False,
    )  # fmt: skip
    return kernel.partition(batches, keep_first, large, columns)


def _sorted_kernel(batches, producer, time, iid, content, duration, maxsize, keep_first, large,
                   columns):  # fmt: skip
    """The worker's second way: the kernel on a partition sorted by (producer, time,
    ties)."""
    from xstreams import _xstreams

    kernel = _xstreams._Dedup(
        producer=producer, iid=iid, content=content, time=time, order=None,
        duration=duration, maxsize=maxsize, carry=False,
    )  # fmt: skip
    return kernel.partition_sorted(batches, keep_first, large, columns)


def make_events(seed: int, producers: int = 5, per_producer: int = 120) -> List[Dict[str, Any]]:
    rng = random.Random(seed)
    rows = []
    rid = 0
    for p in range(producers):
        t = NOW + rng.randint(0, 2000)
        for _ in range(per_producer):
            t += rng.choice([0, 0, 1, 3, 150, 700, 1200, 2600])  # ties, near and far
            rows.append(
                {
                    "rid": rid,
                    "pid": f"p{p}",
                    "iid": f"e{rng.randint(0, 25)}",
                    "ts": t,
                    "ord": rng.randint(0, 10**6),
                    "kind": rng.choice(["a", "b", None]),
                    "amount": rng.choice([1, 2, None]),
                    "price": rng.choice([0.5, 1.25]),
                }
            )
            rid += 1
    rng.shuffle(rows)
    return rows


SCHEMA = (
    "rid long, pid string, iid string, ts long, ord long, kind string, amount long, price double"
)


def _dups(store: xstreams.Store, key: str) -> int:
    info = store.execute_command("XINFO", "STREAM", key)
    return int(dict(zip(info[::2], info[1::2]))[b"iids-duplicates"])


def reference(
    rows: List[Dict[str, Any]],
    *,
    iid: Optional[str] = None,
    content: Optional[List[str]] = None,
    order: Optional[str] = None,
    duration: int,
    maxsize: int,
) -> Dict[int, tuple]:
    store = xstreams.Store(
        config={"stream-idmp-duration": duration, "stream-idmp-maxsize": maxsize}
    )

    def tie(r: Dict[str, Any]) -> tuple:
        if order:
            return (r[order],)
        if iid:
            return (r[iid],)
        return tuple((r[c] is not None, r[c]) for c in content or [])

    out = {}
    for r in sorted(rows, key=lambda r: (r["ts"], r["pid"], *tie(r))):
        store.set_clock_ms(r["ts"])
        if iid:
            args = ["XADD", r["pid"], "IDMP", r["pid"], r[iid], "*", iid, r[iid]]
        else:
            args = ["XADD", r["pid"], "IDMPAUTO", r["pid"], "*"]
            for c in content or []:
                if r[c] is not None:
                    args += [c, r[c]]
        before = _dups(store, r["pid"]) if store.execute_command("EXISTS", r["pid"]) else 0
        reply = store.execute_command(*args).decode()
        out[r["rid"]] = (reply, _dups(store, r["pid"]) > before)
    return out


def run(spark, rows, **kw) -> Dict[int, tuple]:  # noqa: F811
    df = spark.createDataFrame([tuple(r[c] for c in SCHEMA_COLS) for r in rows], SCHEMA)
    if kw.pop("timestamp", False):
        df = df.withColumn("ts", F.expr("timestamp_millis(ts)"))
    out = xs.dedup(df, columns=["entry_id", "duplicate"], **kw)
    assert out.columns == [*df.columns, "entry_id", "duplicate"]
    got = out.select("rid", "entry_id", "duplicate").collect()
    assert len(got) == len(rows)
    return {r.rid: (r.entry_id, r.duplicate) for r in got}


SCHEMA_COLS = [c.split()[0] for c in SCHEMA.split(", ")]


@pytest.mark.cluster
def test_iid_mode_matches_single_store(spark):  # noqa: F811
    rows = make_events(1)
    got = run(spark, rows, producer="pid", iid="iid", time="ts", duration=2, maxsize=6, order="ord")
    want = reference(rows, iid="iid", order="ord", duration=2, maxsize=6)
    assert got == want
    dups = sum(d for _, d in want.values())
    assert 0 < dups < len(rows)
    # Some IIDs came back after eviction (time or size) and were added again.
    per_iid: Dict[tuple, set] = {}
    for r in rows:
        per_iid.setdefault((r["pid"], r["iid"]), set()).add(want[r["rid"]][0])
    assert any(len(v) > 1 for v in per_iid.values())


def test_ties_by_iid_and_timestamp_time_column(spark):  # noqa: F811
    rows = make_events(2, producers=3, per_producer=80)
    got = run(
        spark, rows, producer="pid", iid="iid", time="ts", duration=1, maxsize=100,
        timestamp=True, partitions=3,
    )  # fmt: skip
    assert got == reference(rows, iid="iid", duration=1, maxsize=100)


def test_idmpauto_content_mode(spark):  # noqa: F811
    rows = make_events(3, producers=4, per_producer=100)
    content = ["kind", "amount", "price"]
    got = run(
        spark, rows, producer="pid", content=content, time="ts", duration=3, maxsize=5,
        order="ord",
    )  # fmt: skip
    want = reference(rows, content=content, order="ord", duration=3, maxsize=5)
    assert got == want
    assert any(d for _, d in want.values())


def test_argument_checks(spark):  # noqa: F811
    df = spark.createDataFrame([(1, "p", "i", NOW)], "rid long, pid string, iid string, ts long")
    with pytest.raises(ValueError, match="not in the DataFrame"):
        xs.dedup(df, time="nope")
    with pytest.raises(ValueError, match="iid or content"):
        xs.dedup(df, iid="iid", content=["rid"])
    with pytest.raises(ValueError, match="maxsize"):
        xs.dedup(df, maxsize=0)


def test_keep_first_is_the_rows_that_are_not_duplicates(spark):  # noqa: F811
    rows = make_events(4, producers=4, per_producer=90)
    want = reference(rows, iid="iid", order="ord", duration=2, maxsize=8)
    df = spark.createDataFrame([tuple(r[c] for c in SCHEMA_COLS) for r in rows], SCHEMA)
    out = xs.dedup(df, producer="pid", iid="iid", time="ts", duration=2, maxsize=8, order="ord",
                   keep="first", columns=["entry_id"])  # fmt: skip
    assert out.columns == [*df.columns, "entry_id"]
    got = {r.rid: r.entry_id for r in out.select("rid", "entry_id").collect()}
    assert got == {rid: eid for rid, (eid, dup) in want.items() if not dup}
    assert len(got) < len(rows)
    # By default: dropDuplicates' shape, the kept rows and nothing added.
    bare = xs.dedup(df, producer="pid", iid="iid", time="ts", duration=2, maxsize=8, order="ord",
                    keep="first")  # fmt: skip
    assert bare.columns == df.columns
    assert sorted(r.rid for r in bare.select("rid").collect()) == sorted(got)
    with pytest.raises(ValueError, match="keep"):
        xs.dedup(df, keep="last")


def test_answer_columns_chosen(spark):  # noqa: F811
    """``columns`` picks and orders the answer columns; each holds the reference's
    answer; a wrong name, a repeat, a bare string or no column with keep="all" is
    refused naming ``columns``; only a chosen column may clash with the input's."""
    rows = make_events(5, producers=4, per_producer=90)
    want = reference(rows, iid="iid", order="ord", duration=2, maxsize=8)
    df = spark.createDataFrame([tuple(r[c] for c in SCHEMA_COLS) for r in rows], SCHEMA)
    kw = dict(producer="pid", iid="iid", time="ts", duration=2, maxsize=8, order="ord")
    flag = xs.dedup(df, **kw)  # the default: the flag on every row, as a row_number flag
    assert flag.columns == [*df.columns, "duplicate"]
    assert flag.schema == xs.dedup(df, columns=["duplicate"], **kw).schema
    assert dict(flag.select("rid", "duplicate").collect()) == {
        rid: dup for rid, (_, dup) in want.items()
    }
    two = xs.dedup(df, columns=["original_id", "duplicate"], **kw)
    assert two.columns == [*df.columns, "original_id", "duplicate"]
    # The answers, the producer, the IID and the time are never null, and the schema
    # says so (Spark then skips a validity check per value); the other input fields keep
    # their own nullability.
    nullable_df = spark.createDataFrame(df.rdd, StructType([
        StructField(f.name, f.dataType, True) for f in df.schema.fields
    ]))  # fmt: skip
    every = xs.dedup(nullable_df, columns=["entry_id", "duplicate", "original_id"], **kw).schema
    assert [(f.name, f.nullable) for f in every.fields] == [
        (c, c not in ("pid", "iid", "ts")) for c in df.columns
    ] + [("entry_id", False), ("duplicate", False), ("original_id", False)]  # fmt: skip
    assert [f.dataType for f in every.fields[: len(df.columns)]] == [
        f.dataType for f in df.schema.fields
    ]
    with pytest.raises(PythonException, match="the producer column 'pid' is null on row 0"):
        nulls = spark.createDataFrame([(None, "x", 1000)], "pid string, iid string, ts long")
        xs.dedup(nulls, producer="pid", iid="iid", time="ts").collect()
    # original_id: the entry_id answer again, under the name a join may want.
    assert {r.rid: (r.original_id, r.duplicate) for r in two.collect()} == want
    for bad in (["entry_id", "entry_id"], ["id"], "duplicate", []):
        with pytest.raises(ValueError, match="columns"):
            xs.dedup(df, columns=bad, **kw)
    clash = df.withColumnRenamed("kind", "entry_id")
    with pytest.raises(ValueError, match="already has a column 'entry_id'"):
        xs.dedup(clash, columns=["entry_id", "duplicate"], **kw)
    assert xs.dedup(clash, **kw).columns == [*clash.columns, "duplicate"]


def _partition_rows(seed: int, n: int = 600, long_iids: bool = False) -> Any:
    """One partition as Spark hands it over: several Arrow batches, producers mixed;
    ``long_iids``: IIDs of 1 to 60 bytes whose order differs from their numbers'."""
    import pyarrow as pa

    rng = random.Random(seed)
    cols: Dict[str, list] = {"rid": [], "pid": [], "iid": [], "ts": [], "ord": []}
    t = {p: rng.randint(-3000, 3000) for p in range(6)}
    for rid in range(n):
        p = rng.randrange(6)
        t[p] += rng.choice([0, 0, 1, 7, 400, 999, 1000, 2500])
        cols["rid"].append(rid)
        cols["pid"].append(f"p{p}")
        k = rng.randint(0, 20)
        cols["iid"].append(f"{'z' * (k * 37 % 59)}e{k}" if long_iids else f"e{k}")
        cols["ts"].append(t[p])
        cols["ord"].append(rng.choice([None, *range(5)]))
    table = pa.table(cols)
    table = table.set_column(4, "ord", table.column("ord").cast(pa.int64()))
    return table.to_batches(max_chunksize=97)


# (keep, columns): the defaults, and answer columns chosen, reordered or left out.
KEEP_COLUMNS = [("all", None), ("all", ALL), ("all", ["duplicate"]),
                ("all", ["original_id", "duplicate"]),
                ("first", None), ("first", ["entry_id"]),
                ("first", ["duplicate", "entry_id"])]  # fmt: skip


@pytest.mark.parametrize("seed", [11, 12, 13])
@pytest.mark.parametrize("order", [None, "ord"])
@pytest.mark.parametrize("keep,columns", KEEP_COLUMNS)
@pytest.mark.parametrize("long_iids", [False, True])
def test_rust_kernel_matches_the_store_path(seed, order, keep, columns, long_iids, monkeypatch):
    """The one-call Rust kernel, the kernel of the sorted partition and the store path
    (a private Store fed by xadd_batch) give the same rows and answer columns, for times
    around the epoch, equal times, ties by iid (short, or long and of mixed lengths) or
    by an order column with nulls, size and time eviction."""
    import pyarrow as pa

    batches = _partition_rows(seed, long_iids=long_iids)
    answer = xs._answer_columns(columns, keep)
    fn = xs._DedupPartition(
        "pid", "iid", None, "ts", [order or "iid"], duration=2, maxsize=4, large=False, keep=keep,
        columns=answer,
    )  # fmt: skip
    assert _first_kernel(batches, "pid", "iid", None, "ts", [order or "iid"], 2, 4,
                                 keep == "first", False, answer) is not None  # fmt: skip
    fast = pa.Table.from_batches(list(fn(iter(batches)))).sort_by("rid")
    monkeypatch.setattr(xs._DedupPartition, "_unsorted", lambda *a: None)
    # The second kernel, on the partition sorted by Arrow, answers the same.
    sorted_ = pa.Table.from_batches(list(fn(iter(batches)))).sort_by("rid")
    monkeypatch.setattr(xs._DedupPartition, "_sorted_answers", lambda *a: None)
    slow = pa.Table.from_batches(list(fn(iter(batches)))).sort_by("rid")
    assert fast.column_names == slow.column_names == [*batches[0].schema.names, *answer]
    assert fast.schema == sorted_.schema == slow.schema
    assert fast.to_pydict() == sorted_.to_pydict() == slow.to_pydict()
    n = sum(b.num_rows for b in batches)
    if keep == "all":
        assert fast.num_rows == n
        dups = slow.column("duplicate").to_pylist() if "duplicate" in answer else None
        assert dups is None or 0 < sum(dups) < n
    else:
        assert 0 < fast.num_rows < n
        if "duplicate" in answer:
            assert not any(fast.column("duplicate").to_pylist())


def _values(table: Any) -> Dict[str, list]:
    """A table's columns as lists, NaN spelled "nan" (NaN != NaN would fail equal lists)."""
    return {
        name: ["nan" if isinstance(v, float) and math.isnan(v) else v for v in values]
        for name, values in table.to_pydict().items()
    }


def _typed_partition(seed: int, n: int = 500) -> Any:
    """One partition with typed content columns holding nulls (text, int, float with
    -0.0 and NaN, bool, binary), an integer IID column, a float (with NaN, infinities
    and both zeros) and an integer order column."""
    import pyarrow as pa

    rng = random.Random(seed)
    content = ("kind", "amount", "price", "ok", "blob")
    cols: Dict[str, list] = {c: [] for c in ("rid", "pid", "ts", *content, "num_iid", "fo", "io")}
    t = {p: rng.randint(-3000, 3000) for p in range(5)}
    for rid in range(n):
        p = rng.randrange(5)
        t[p] += rng.choice([0, 0, 1, 400, 999, 1000, 2500])
        k = rng.randint(0, 5)  # the content follows k, each value null one time in 8
        row = {
            "rid": rid,
            "pid": f"p{p}",
            "ts": t[p],
            "num_iid": k,
            "kind": "ab"[k % 2],
            "amount": k - 2,
            "price": rng.choice([-0.0, 0.0]) if k == 0 else (NAN if k == 5 else k / 4),
            "ok": k > 2,
            "blob": b"\x00k%d" % k,
            # Every place Arrow's sort gives a float: null, NaN, -inf, -0.0 = 0.0, inf.
            "fo": rng.choice([None, 0.5, k / 3, NAN, -INF, INF, -0.0, 0.0]),
            "io": rng.choice([None, 0, 1, 2]),
        }
        for c in content:
            if rng.random() < 0.125:
                row[c] = None
        if row["price"] is None or all(row[c] is None for c in ("kind", "amount", "ok", "blob")):
            row["kind"] = "ab"[k % 2]  # no row without fields in the cases below
        for c, v in row.items():
            cols[c].append(v)
    types = {"amount": pa.int64(), "price": pa.float64(), "ok": pa.bool_(), "blob": pa.binary(),
             "fo": pa.float64(), "io": pa.int64()}  # fmt: skip
    table = pa.table({c: pa.array(v, type=types.get(c)) for c, v in cols.items()})
    return table.to_batches(max_chunksize=97)


# (content, order): IDMPAUTO the first kernel takes -- ties by the content columns
# (text, int, float, bool, binary, with nulls), or by an integer or float order column.
FIRST_CASES = [
    (["kind", "amount", "ok", "blob"], None),
    (["kind", "amount", "price", "ok", "blob"], None),  # a float among the ties
    (["blob", "kind", "price"], "io"),
    (["price", "kind"], "io"),
    (["price", "kind"], "fo"),  # a float order column
]


@pytest.mark.parametrize("seed", [21, 22, 23])
@pytest.mark.parametrize("content,order", FIRST_CASES)
@pytest.mark.parametrize("keep,columns", [("all", None), ("all", ALL), ("first", None)])
def test_first_kernel_takes_idmpauto_and_matches_both_other_paths(
    seed, content, order, keep, columns, monkeypatch
):
    """IDMPAUTO over typed content with nulls in the one-call kernel: the same rows and
    answers as the kernel of the Arrow-sorted partition and as the store path."""
    import pyarrow as pa

    batches = _typed_partition(seed)
    answer = xs._answer_columns(columns, keep)
    ties = [order] if order else list(content)
    assert _first_kernel(batches, "pid", None, content, "ts", ties, 2, 3,
                                 keep == "first", False, answer) is not None  # fmt: skip
    fn = xs._DedupPartition("pid", None, content, "ts", ties, 2, 3, False, keep, answer)
    first = pa.Table.from_batches(list(fn(iter(batches)))).sort_by("rid")
    monkeypatch.setattr(xs._DedupPartition, "_unsorted", lambda *a: None)
    sorted_ = pa.Table.from_batches(list(fn(iter(batches)))).sort_by("rid")
    monkeypatch.setattr(xs._DedupPartition, "_sorted_answers", lambda *a: None)
    slow = pa.Table.from_batches(list(fn(iter(batches)))).sort_by("rid")
    assert first.schema == sorted_.schema == slow.schema
    assert first.column_names == [*batches[0].schema.names, *answer]
    assert _values(first) == _values(sorted_) == _values(slow)
    if keep == "all" and "duplicate" in answer:
        dups = first.column("duplicate").to_pylist()
        assert 0 < sum(dups) < len(dups)


SORTED_CASES = [  # (iid, content, order): input the first kernel leaves
    ("num_iid", None, None),  # an integer IID
    ("num_iid", None, "fo"),
    ("num_iid", None, "io"),
]


@pytest.mark.parametrize("seed", [21, 22])
@pytest.mark.parametrize("iid,content,order", SORTED_CASES)
@pytest.mark.parametrize("keep,columns", [("all", None), ("all", ALL), ("first", None)])
def test_sorted_partition_kernel_matches_the_store_path(
    seed, iid, content, order, keep, columns, monkeypatch
):
    """An integer IID (with integer and float order columns): the kernel of the sorted
    partition gives the rows and answers of the store path, and it (not the store)
    answered them."""
    import pyarrow as pa

    batches = _typed_partition(seed)
    answer = xs._answer_columns(columns, keep)
    ties = [order] if order else ([iid] if iid else list(content))
    fn = xs._DedupPartition("pid", iid, content, "ts", ties, 2, 3, False, keep, answer)
    # An integer IID: the first kernel leaves the partition.
    assert _first_kernel(batches, "pid", iid, content, "ts", ties, 2, 3, False, False,
                                 answer) is None  # fmt: skip
    table = fn._sorted(pa.Table.from_batches(batches))
    assert _sorted_kernel(table.to_batches(), "pid", "ts", iid, content, 2, 3,
                                        keep == "first", False, answer) is not None  # fmt: skip
    fast = pa.Table.from_batches(list(fn(iter(batches)))).sort_by("rid")
    monkeypatch.setattr(xs._DedupPartition, "_sorted_answers", lambda *a: None)
    slow = pa.Table.from_batches(list(fn(iter(batches)))).sort_by("rid")
    assert fast.schema == slow.schema
    assert fast.column_names == [*batches[0].schema.names, *answer]
    assert _values(fast) == _values(slow)
    if keep == "all" and "duplicate" in answer:
        dups = fast.column("duplicate").to_pylist()
        assert 0 < sum(dups) < len(dups)


def test_sorted_partition_kernel_leaves_error_rows_to_the_store():
    """A row with no content value, an empty IID or a producer that is not text: the
    sorted-partition kernel answers None, and the worker raises the store's error."""
    import pyarrow as pa

    no_field = pa.record_batch({"pid": ["a", "a"], "ts": [5, 6], "c": [1, None]})
    args = ("pid", "ts", None, ["c"], 2, 4, False, False, ["entry_id"])
    assert _sorted_kernel([no_field], *args) is None
    assert _sorted_kernel([no_field.slice(0, 1)], *args) is not None
    fn = xs._DedupPartition("pid", None, ["c"], "ts", ["c"], 2, 4, False, "all", ["entry_id"])
    with pytest.raises(ValueError, match="wrong number of arguments"):
        list(fn(iter([no_field])))
    empty = pa.record_batch({"pid": ["a"], "ts": [5], "i": [""]})
    assert _sorted_kernel([empty], "pid", "ts", "i", None, 2, 4, False, False,
                                        ["entry_id"]) is None  # fmt: skip
    ints = pa.record_batch({"pid": [1, 2], "ts": [5, 6], "i": ["x", "y"]})
    assert _sorted_kernel([ints], "pid", "ts", "i", None, 2, 4, False, False,
                                        ["entry_id"]) is None  # fmt: skip
    # A producer's rows apart (not sorted by producer) or out of time order: refused.
    apart = pa.record_batch({"pid": ["a", "b", "a"], "ts": [5, 6, 7], "i": ["x", "y", "z"]})
    late = pa.record_batch({"pid": ["a", "a"], "ts": [7, 6], "i": ["x", "y"]})
    for b in (apart, late):
        assert _sorted_kernel([b], "pid", "ts", "i", None, 2, 4, False, False,
                                            ["entry_id"]) is None  # fmt: skip


@pytest.mark.parametrize("float_type", ["float64", "float32"])
def test_rust_kernel_orders_float_ties_as_arrows_sort(float_type):
    """Rows of one producer and one time, ordered by a float column: nulls, then NaN,
    then the numbers, -0.0 and 0.0 equal (the row decides), as Arrow's stable sort
    orders them. Each row's IID is its own, so its ID's sequence is its place."""
    import pyarrow as pa

    o = [1.0, NAN, None, 0.0, -0.0, -INF, INF, None, -1.5, NAN]
    batch = pa.record_batch(
        {
            "pid": ["a"] * len(o),
            "iid": [f"r{i}" for i in range(len(o))],
            "ts": [1] * len(o),
            "o": pa.array(o, type=getattr(pa, float_type)()),
        }
    )
    places = [2, 7, 1, 9, 5, 8, 3, 4, 0, 6]  # rows in the order they are added
    want = [""] * len(o)
    for seq, row in enumerate(places):
        want[row] = f"1-{seq}"
    got = _first_kernel([batch], "pid", "iid", None, "ts", ["o"], 2, 100, False,
                                False, ["entry_id"])  # fmt: skip
    assert got is not None, "the kernel left float ties to another path"
    got = list(got)
    assert got[0].column("entry_id").to_pylist() == want
    # The reference agrees: Arrow's sort of the same rows, answered by the store path.
    fn = xs._DedupPartition("pid", "iid", None, "ts", ["o"], 2, 100, False, "all", ["entry_id"])
    table = fn._sorted(pa.Table.from_batches([batch]))
    assert table.column("iid").to_pylist() == [f"r{r}" for r in places]


def test_rust_kernel_leaves_what_it_does_not_take_to_the_store_path():
    """Nulls, an empty IID, a producer that is not text, an IDMPAUTO row with no content
    value go the general path, which raises the store's error or answers as before."""
    import pyarrow as pa

    def kernel(batches: Any) -> Any:
        return _first_kernel(batches, "pid", "iid", None, "ts", ["iid"], 2, 4, False,
                                     False, ALL)  # fmt: skip

    ok = pa.record_batch({"pid": ["a", "a"], "iid": ["x", "x"], "ts": [5, 6]})
    got = list(kernel([ok]))
    assert got[0].column("entry_id").to_pylist() == ["5-0", "5-0"]
    assert got[0].column("duplicate").to_pylist() == [False, True]
    assert got[0].column("original_id").to_pylist() == ["5-0", "5-0"]
    for bad in (
        pa.record_batch({"pid": ["a", None], "iid": ["x", "y"], "ts": [5, 6]}),
        pa.record_batch({"pid": ["a", "a"], "iid": ["x", ""], "ts": [5, 6]}),
        pa.record_batch({"pid": ["a", "a"], "iid": ["x", "y"], "ts": [5, None]}),
        pa.record_batch({"pid": [1, 2], "iid": ["x", "y"], "ts": [5, 6]}),
    ):
        assert kernel([bad]) is None
        # A batch it does not take after others it does take (or a batch of another
        # schema) still leaves the whole partition to the store's path, which answers
        # every row; the kernel reads an iterator to its end first.
        later = iter([ok, ok, bad])
        assert kernel(later) is None
        assert next(later, None) is None  # it read them all
    other = pa.record_batch({"pid": ["a"], "iid": ["z"], "ts": [7], "n": [1]})
    assert kernel([ok, other]) is None
    no_field = pa.record_batch({"pid": ["a", "a"], "ts": [5, 6], "c": [1, None]})
    auto = ("pid", None, ["c"], "ts", ["c"], 2, 4, False, False, ALL)
    assert _first_kernel([no_field], *auto) is None
    assert _first_kernel([no_field.slice(0, 1)], *auto) is not None
    with pytest.raises(ValueError, match="give iid or content"):
        _first_kernel([ok], "pid", None, None, "ts", ["iid"], 2, 4, False, False, ALL)
    fn = xs._DedupPartition("pid", "iid", None, "ts", ["iid"], 2, 4, False, "all", ALL)
    nulls = pa.record_batch({"pid": ["a", "a"], "iid": ["y", "x"], "ts": [None, 8]})
    # The row as the task received it (the sort would have put the null time first).
    with pytest.raises(ValueError, match="the time column 'ts' is null on row 4 of a"):
        list(fn(iter([ok, pa.record_batch({"pid": [], "iid": [], "ts": []}), ok, nulls])))
    for col, role, row in (("pid", "producer", 3), ("iid", "IID", 1)):
        bad = {"pid": ["b", "a", "a", "c"], "iid": ["x", "y", "x", "z"], "ts": [9, 8, 7, 6]}
        bad[col][row] = None
        with pytest.raises(ValueError, match=f"the {role} column '{col}' is null on row {row} "):
            list(fn(iter([pa.record_batch(bad)])))
    empty_iid = pa.record_batch({"pid": ["a", "a"], "iid": ["x", ""], "ts": [5, 6]})
    with pytest.raises(ValueError, match="non-empty idempotent ID"):
        list(fn(iter([empty_iid])))


@pytest.mark.parametrize("large", [False, True])
@pytest.mark.parametrize("keep", ["all", "first"])
def test_rust_kernel_output_columns(large, keep):
    """The kernel returns the input columns unchanged, then ``entry_id``, ``duplicate``
    and ``original_id`` when asked for all three (the same IDs: Spark adds no projection
    after it), or with ``keep="first"`` the kept rows with ``entry_id`` when asked;
    string or large string IDs as Spark's ``useLargeVarTypes`` asks, without nulls."""
    import pyarrow as pa

    t = NOW
    batches = [
        pa.record_batch(
            {"pid": ["a", "b", "a"], "iid": ["x", "x", "x"], "ts": [t + 7, t + 8, t + 1009]}
        ),
        pa.record_batch({"pid": ["b", "a"], "iid": ["y", "x"], "ts": [t + 8, t + 3500]}),
    ]
    out = _first_kernel(
        batches,
        "pid",
        "iid",
        None,
        "ts",
        ["iid"],
        2,
        4,
        keep == "first",
        large,
        ALL if keep == "all" else ["entry_id"],
    )
    table = pa.Table.from_batches(out)
    id_type = pa.large_string() if large else pa.string()
    if keep == "all":
        assert table.column_names == ["pid", "iid", "ts", "entry_id", "duplicate", "original_id"]
        assert table.column("pid").to_pylist() == ["a", "b", "a", "b", "a"]
        # a: x at 7 (new), x at 1009 (duplicate), x at 3500 (expired after 2 s: new);
        # b: x at 8 and y at 8 (same ms: the next sequence).
        want = [f"{t + 7}-0", f"{t + 8}-0", f"{t + 7}-0", f"{t + 8}-1", f"{t + 3500}-0"]
        assert table.column("entry_id").to_pylist() == want
        assert table.column("duplicate").to_pylist() == [False, False, True, False, False]
        assert table.column("original_id").to_pylist() == table.column("entry_id").to_pylist()
        assert table.schema.field("original_id").type == id_type
        assert table.column("duplicate").null_count == 0
    else:
        assert table.column_names == ["pid", "iid", "ts", "entry_id"]
        want = [f"{t + 7}-0", f"{t + 8}-0", f"{t + 8}-1", f"{t + 3500}-0"]
        assert table.column("entry_id").to_pylist() == want
    assert table.schema.field("entry_id").type == id_type
    assert table.column("entry_id").null_count == 0
    assert not any(table.schema.field(c).nullable for c in table.column_names[3:])


@pytest.mark.parametrize("sorted_kernel", [False, True])
def test_rust_kernel_makes_each_output_batch_when_asked(sorted_kernel):
    """Both kernels answer with an iterator that makes each output batch as the worker
    asks for it (so the worker can send one while the next is made): one batch per input
    batch with rows left, in input order, none left empty with ``keep="first"``, then
    ``StopIteration`` for good; an empty partition is an iterator that ends at once."""
    import pyarrow as pa

    t = NOW
    batches = [
        pa.record_batch({"pid": ["a", "a"], "iid": ["x", "y"], "ts": [t + 1, t + 2]}),
        pa.record_batch({"pid": ["a", "a"], "iid": ["x", "y"], "ts": [t + 3, t + 4]}),
        pa.record_batch({"pid": ["a"], "iid": ["z"], "ts": [t + 5]}),
    ]

    def kernel(parts, keep_first, columns):
        if sorted_kernel:
            return _sorted_kernel(parts, "pid", "ts", "iid", None, 2, 10,
                                                keep_first, False, columns)  # fmt: skip
        return _first_kernel(parts, "pid", "iid", None, "ts", ["iid"], 2, 10,
                                     keep_first, False, columns)  # fmt: skip

    out = kernel(batches, False, ["entry_id", "duplicate"])
    assert iter(out) is out
    first = next(out)
    assert first.column("entry_id").to_pylist() == [f"{t + 1}-0", f"{t + 2}-0"]
    assert first.column("duplicate").to_pylist() == [False, False]
    second = next(out)
    assert second.column("entry_id").to_pylist() == [f"{t + 1}-0", f"{t + 2}-0"]
    assert second.column("duplicate").to_pylist() == [True, True]
    assert next(out).column("entry_id").to_pylist() == [f"{t + 5}-0"]
    for _ in range(2):
        with pytest.raises(StopIteration):
            next(out)
    # keep="first": the second batch is all duplicates and gives no batch.
    kept = list(kernel(batches, True, ["entry_id"]))
    assert [b.num_rows for b in kept] == [2, 1]
    assert kept[1].column("iid").to_pylist() == ["z"]
    assert list(kernel([], False, ["duplicate"])) == []


def test_rust_kernel_ids_of_every_width():
    """Entry IDs as ``<ms>-<seq>`` text for times of every width (the common 13 digits
    and a one-digit sequence are written by a fixed-width path, the rest by another;
    the kernel keeps IDs of more than 43 bits of ms aside): 12 new IIDs in one
    millisecond take sequences 0 to 11 (1 to 12 at time 0: a stream's first ID is above
    0-0), and each IID sent again in that millisecond is a duplicate answered with its
    first ID."""
    import pyarrow as pa

    times = [0, 7, 999_999_999_999, 1_000_000_000_000, 1_234_567_890_109,
             2**43 - 2, 2**43 - 1, 2**43, 9_999_999_999_999, 10_000_000_000_000,
             2**63 - 1]  # fmt: skip
    pids, iids, ts, want, dup = [], [], [], [], []
    for p, t in enumerate(times):
        for k in range(12):
            for again in (False, True):  # ties in one millisecond go by IID, then row
                pids.append(f"p{p}")
                iids.append(f"e{k:02}")
                ts.append(t)
                want.append(f"{t}-{k + (t == 0)}")
                dup.append(again)
    batch = pa.record_batch({"pid": pids, "iid": iids, "ts": ts})
    for keep_first in (False, True):
        out = _first_kernel([batch], "pid", "iid", None, "ts", ["iid"], 2, 100,
                                    keep_first, False, ALL)  # fmt: skip
        table = pa.Table.from_batches(out)
        kept = [w for w, d in zip(want, dup) if not (keep_first and d)]
        assert table.column("entry_id").to_pylist() == kept
        assert table.column("original_id").to_pylist() == kept
        assert table.column("duplicate").to_pylist() == [d for d in dup if not (keep_first and d)]


def test_rust_kernel_sequences_past_twenty_bits():
    """A producer's 2**20 + 3 new IIDs in one millisecond take sequences 0 to 2**20 + 2,
    past the 20 bits the kernel packs a sequence in (the rest are kept aside), and a
    resend of the last one is a duplicate answered with its ID."""
    import pyarrow as pa

    n = 2**20 + 3
    t = 1_700_000_000_000
    iids = pa.array([f"e{k}" for k in range(n)] + [f"e{n - 1}"])
    batch = pa.record_batch({
        "pid": pa.array(["p"] * (n + 1)), "iid": iids, "ts": pa.array([t] * (n + 1)),
        "row": pa.array(range(n + 1)),
    })  # fmt: skip
    # Ties by the row: the IIDs' text order is not their numbers'.
    out = _first_kernel([batch], "pid", "iid", None, "ts", ["row"], 2, n + 1,
                                False, False, ["entry_id", "duplicate"])  # fmt: skip
    table = pa.Table.from_batches(out)
    assert table.column("entry_id").to_pylist() == [f"{t}-{k}" for k in range(n)] + [f"{t}-{n - 1}"]
    assert table.column("duplicate").to_pylist() == [False] * n + [True]


@pytest.mark.parametrize("kernel", [True, False])
def test_partition_pauses_the_garbage_collector_and_restores_it(kernel, monkeypatch):
    """The worker function turns Python's cyclic GC off while it answers a partition,
    kernel or store path, and puts it back as it found it: on after a partition that
    ends, after one that raises, and after one that is closed half read; left off when
    it was off."""
    import gc

    import pyarrow as pa

    if not kernel:
        monkeypatch.setattr(xs._DedupPartition, "_unsorted", lambda *a: None)
        monkeypatch.setattr(xs._DedupPartition, "_sorted_answers", lambda *a: None)
    fn = xs._DedupPartition("pid", "iid", None, "ts", ["iid"], 2, 4, False, "all", ALL)
    ok = pa.record_batch({"pid": ["a", "a"], "iid": ["x", "x"], "ts": [5, 6]})
    assert gc.isenabled()
    try:
        out = fn(iter([ok, ok]))
        first = next(out)
        assert not gc.isenabled()
        rest = list(out)
        assert gc.isenabled()
        dups = [d for b in [first, *rest] for d in b.column("duplicate").to_pylist()]
        assert dups == [False, True, True, True]
        half = fn(iter([ok, ok]))
        next(half)
        assert not gc.isenabled()
        half.close()
        assert gc.isenabled()
        bad = pa.record_batch({"pid": ["a", "a"], "iid": ["x", ""], "ts": [5, 6]})
        with pytest.raises(ValueError, match="non-empty idempotent ID"):
            list(fn(iter([bad])))
        assert gc.isenabled()
        gc.disable()
        assert len(list(fn(iter([ok])))) == 1
        assert not gc.isenabled()
    finally:
        gc.enable()


_FREEZE_PROBE = """
import gc, json, pyarrow as pa, xstreams.spark as xs
fn = xs._DedupPartition("pid", "iid", None, "ts", ["iid"], 2, 4, False, "all", ["duplicate"])
batch = pa.record_batch({"pid": ["a", "a"], "iid": ["x", "x"], "ts": [5, 6]})
before = gc.get_freeze_count()
first = [d for b in fn(iter([batch])) for d in b.column("duplicate").to_pylist()]
after_first = gc.get_freeze_count()
made_since = [[i] for i in range(1000)]  # new container objects, tracked by the GC
second = [d for b in fn(iter([batch])) for d in b.column("duplicate").to_pylist()]
print(json.dumps([before, after_first, gc.get_freeze_count(), first, second, gc.isenabled()]))
"""


@pytest.mark.parametrize("reused", [True, False])
def test_a_reused_worker_freezes_what_it_holds_once(reused):
    """In a worker PySpark reuses (``SPARK_REUSE_WORKER``, whose daemon collects after
    every task), the first partition freezes the objects alive then, and a later one
    freezes nothing more; elsewhere (a driver, a test process) nothing is frozen. The
    answers are the same either way."""
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "SPARK_REUSE_WORKER"}
    if reused:
        env["SPARK_REUSE_WORKER"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", _FREEZE_PROBE], env=env, capture_output=True, text=True,
        check=True, timeout=120,
    )  # fmt: skip
    before, after_first, after_second, first, second, enabled = json.loads(out.stdout)
    assert before == 0
    assert first == second == [False, True]
    assert enabled
    if reused:
        assert after_first > 1000  # the modules' objects, at least
        assert after_second == after_first  # the 1000 lists made since stay in sight
    else:
        assert after_first == after_second == 0
