"""``xstreams.spark.load`` on a local[2] SparkSession: one task writes a DataFrame into a
durable store through ``xadd_batch``; with IDMP options, re-running the load (after it
finished, or after it failed part-way) adds no duplicates. Also: the IDMP window check,
IDMP settings of a new stream, and the refusal to load without IDMP options.
"""

from __future__ import annotations

import pytest
import xstreams
import xstreams.spark as xs
from spark_support import spark  # noqa: F401

pytestmark = pytest.mark.spark


def events(spark, n: int = 300, bad_row: int = -1):  # noqa: F811
    rows = [
        (f"dev{i % 4}", f"r{i}", None if i == bad_row else f"v{i}", None if i == bad_row else i)
        for i in range(n)
    ]
    return spark.createDataFrame(rows, "pid string, iid string, value string, n long")


def stream_rows(path: str, key: str = "events") -> list:
    s = xstreams.Store(path, read_only=True)
    try:
        return s.execute_command("XRANGE", key, "-", "+")
    finally:
        s.close()


@pytest.mark.cluster
def test_load_and_rerun_adds_no_duplicates(spark, tmp_path):  # noqa: F811
    path = str(tmp_path / "store")
    df = events(spark)
    res = xs.load(df, path, "events", producer="pid", iid="iid", idmp_maxsize=1000)
    assert res == {"rows": 300, "added": 300, "duplicates": 0, "nil": 0}
    first = stream_rows(path)
    assert len(first) == 300
    assert {dict(zip(fv[::2], fv[1::2]))[b"value"] for _, fv in first} == {
        f"v{i}".encode() for i in range(300)
    }
    res = xs.load(df, path, "events", producer="pid", iid="iid", idmp_maxsize=1000)
    assert res == {"rows": 300, "added": 0, "duplicates": 300, "nil": 0}
    assert stream_rows(path) == first
    s = xstreams.Store(path, read_only=True)
    assert s.execute_command("XIDMP", "CFGGET", "events") == [b"duration", 100, b"maxsize", 1000]
    # The store-wide settings are back to what they were.
    assert s.config_get("stream-idmp-maxsize") == "100"
    s.close()


def test_rerun_after_a_failure_part_way(spark, tmp_path):  # noqa: F811
    path = str(tmp_path / "store")
    bad = events(spark, bad_row=150)
    with pytest.raises(Exception, match="wrong number of arguments"):
        xs.load(bad, path, "events", producer="pid", iid="iid", idmp_maxsize=1000)
    partial = len(stream_rows(path))
    assert 0 < partial < 300
    res = xs.load(events(spark), path, "events", producer="pid", iid="iid", idmp_maxsize=1000)
    assert res["duplicates"] == partial and res["added"] == 300 - partial
    ids = [dict(zip(fv[::2], fv[1::2]))[b"value"] for _, fv in stream_rows(path)]
    assert len(ids) == 300 and len(set(ids)) == 300


def test_idmpauto_and_window_check(spark, tmp_path):  # noqa: F811
    path = str(tmp_path / "store")
    df = events(spark, n=40).select("pid", "value")
    xs.load(df, path, "auto", producer="pid", idmpauto=True)
    res = xs.load(df, path, "auto", producer="pid", idmpauto=True)
    assert res["duplicates"] == 40 and res["added"] == 0
    # 40 rows for one producer, a stream that remembers 10 IIDs per producer.
    with pytest.raises(Exception, match="remembers 10"):
        xs.load(df, path, "small", pid="one", idmpauto=True, idmp_maxsize=10)
    assert stream_rows(path, "small") == []
    with pytest.raises(Exception, match="forgets its IIDs"):
        xs.load(df, path, "auto", producer="pid", idmpauto=True, idmp_maxsize=50)


def test_refuses_to_load_without_idmp(spark, tmp_path):  # noqa: F811
    df = events(spark, n=5)
    with pytest.raises(ValueError, match="IDMP options"):
        xs.load(df, str(tmp_path / "s"), "events")
    res = xs.load(df, str(tmp_path / "s"), "events", allow_duplicates=True, fields=["value"])
    assert res["added"] == 5


def test_load_key_column_writes_each_stream_in_order(spark, tmp_path):  # noqa: F811
    """``key_column``: each row to the stream it names, in order, the IDMP settings on
    every stream the load creates, a re-run adds nothing; a null key is refused."""
    path = str(tmp_path / "store")
    df = events(spark).selectExpr("*", "concat('s:', CAST(n % 3 AS STRING)) AS key")
    kw = dict(key_column="key", producer="pid", iid="iid", idmp_maxsize=500)
    res = xs.load(df, path, **kw)
    assert res == {"rows": 300, "added": 300, "duplicates": 0, "nil": 0}
    assert xs.load(df, path, **kw)["duplicates"] == 300
    s = xstreams.Store(path, read_only=True)
    try:
        for k in range(3):
            got = s.execute_command("XRANGE", f"s:{k}", "-", "+")
            fields = [dict(zip(fv[::2], fv[1::2])) for _, fv in got]
            assert [int(f[b"n"]) for f in fields] == list(range(k, 300, 3))
            assert all(b"key" not in f for f in fields)
            cfg = s.execute_command("XIDMP", "CFGGET", f"s:{k}")
            assert dict(zip(cfg[::2], cfg[1::2]))[b"maxsize"] == 500
    finally:
        s.close()
    with pytest.raises(ValueError, match="stream .* or key_column"):
        xs.load(df, path, "events", **kw)
    nulls = spark.createDataFrame([("p", "i1", None)], "pid string, iid string, key string")
    with pytest.raises(Exception, match="is null in row 0"):
        xs.load(nulls, str(tmp_path / "other"), key_column="key", producer="pid", iid="iid")
