"""``spark.read.format("xstreams")`` on a local[2] SparkSession: the DataFrame equals XRANGE
on the store reopened from its files, for streams whose entries live in the snapshot, in
the logs after it, and whose snapshot entries later log commands deleted or trimmed; with
``start``/``end``, with ``group`` (only what the group has not acknowledged), with a
typed schema, and while a writer holds the store open.
"""

from __future__ import annotations

import json
from typing import Any, List

import pytest
import xstreams
from arrow_support import expected
from spark_support import spark  # noqa: F401

pytestmark = pytest.mark.spark

NOW = 1_700_000_000_000


def rows_of(df) -> List[tuple]:
    got = [(r.stream, r.id, sorted(r.fields.items()) if r.fields else []) for r in df.collect()]
    return sorted(got, key=lambda t: (t[0], *map(int, t[1].split("-"))))


def norm(want: List[tuple]) -> List[tuple]:
    # A Spark map has no order and keeps one value per key: the last one.
    return sorted(
        ((s, i, sorted(dict(p).items())) for s, i, p in want),
        key=lambda t: (t[0], *map(int, t[1].split("-"))),
    )


@pytest.fixture(scope="module")
def store_path(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("replay") / "store")
    s = xstreams.Store(path, config={"stream-node-max-entries": 10}, clock_ms=NOW)
    for i in range(120):
        s.execute_command("XADD", "a", f"{1 + i}-1", "f", f"v{i}", "n", str(i))
    for i in range(40):
        s.execute_command("XADD", "b", f"{1 + i}-1", "f", f"w{i}")
    s.execute_command("XGROUP", "CREATE", "a", "billing", "0")
    s.execute_command("XREADGROUP", "GROUP", "billing", "c1", "COUNT", "50", "STREAMS", "a", ">")
    s.execute_command("XACK", "a", "billing", *[f"{1 + i}-1" for i in range(0, 50, 2)])
    s.compact()
    # After the snapshot: appends to a, deletes and a trim on b, a log-only stream c.
    for i in range(30):
        s.execute_command("XADD", "a", f"{500 + i}-1", "f", f"x{i}", "n", str(i))
    s.execute_command("XDEL", "b", "3-1", "4-1")
    s.execute_command("XTRIM", "b", "MINID", "10")
    for i in range(15):
        s.execute_command("XADD", "c", "*", "f", f"c{i}")
        s.advance_clock_ms(1)
    s.close()
    return path


def read(spark, path: str, **opts: Any):  # noqa: F811
    r = spark.read.format("xstreams").option("path", path)
    for k, v in opts.items():
        r = r.option(k, v)
    return r.load()


@pytest.mark.cluster
def test_snapshot_log_and_deletes(spark, store_path):  # noqa: F811
    df = read(spark, store_path, streams=json.dumps(["a", "b", "c"]), rowsPerPartition=25)
    assert df.columns == ["stream", "id", "ms", "seq", "fields"]
    assert df.rdd.getNumPartitions() > 4
    assert rows_of(df) == norm(expected(store_path, ["a", "b", "c"]))
    one = read(spark, store_path, stream="a").select("id", "ms", "seq").orderBy("ms").first()
    assert (one.id, one.ms, one.seq) == ("1-1", 1, 1)


def test_start_end(spark, store_path):  # noqa: F811
    df = read(spark, store_path, stream="a", start="(10", end="510", rowsPerPartition=20)
    assert rows_of(df) == norm(expected(store_path, ["a"], "(10", "510"))
    df = read(spark, store_path, stream="b", start="5", end="+")
    assert rows_of(df) == norm(expected(store_path, ["b"], "5", "+"))


def test_group(spark, store_path):  # noqa: F811
    df = read(spark, store_path, stream="a", group="billing", rowsPerPartition=20)
    want = norm(expected(store_path, ["a"], group="billing"))
    got = rows_of(df)
    assert got == want
    assert len(got) == 25 + 70 + 30  # unacked pending + never read + appended
    with pytest.raises(Exception, match="NOGROUP"):
        read(spark, store_path, stream="a", group="nope").collect()


def test_typed_schema(spark, store_path):  # noqa: F811
    df = (
        spark.read.format("xstreams")
        .schema("stream string, id string, n int, f string")
        .option("path", store_path)
        .option("stream", "a")
        .load()
    )
    got = sorted((r.id, r.n, r.f) for r in df.collect())
    want = sorted((i, int(dict(p)["n"]), dict(p)["f"]) for _, i, p in expected(store_path, ["a"]))
    assert got == want


def test_reading_while_a_writer_has_the_store_open(spark, tmp_path):  # noqa: F811
    path = str(tmp_path / "live")
    w = xstreams.Store(path, clock_ms=NOW)
    for i in range(20):
        w.execute_command("XADD", "s", "*", "i", str(i))
        w.advance_clock_ms(1)
    w.compact()
    w.execute_command("XADD", "s", "*", "i", "late")
    try:
        df = read(spark, path, stream="s")
        assert df.count() == 21
    finally:
        w.close()


def test_min_partitions_is_shared_among_streams_with_entries(spark, store_path):  # noqa: F811
    """``minPartitions`` is the read's: a stream with nothing to read takes no share, so
    ``a`` beside a missing stream is split as if read alone (4 snapshot parts, plus the
    tail part of its appends after the snapshot), and two streams split 2 + 2."""
    alone = read(spark, store_path, stream="a", minPartitions="4")
    beside = read(spark, store_path, streams=json.dumps(["a", "missing"]), minPartitions="4")
    assert alone.rdd.getNumPartitions() == beside.rdd.getNumPartitions() == 5
    want = rows_of(alone)
    assert rows_of(beside) == want and len(want) == 150
    both = read(spark, store_path, streams=json.dumps(["a", "b"]), minPartitions="4")
    # 2 + 1 parts each: a as above; b (deleted from after the snapshot) read from a full load
    assert both.rdd.getNumPartitions() == 6
