"""The consumer-group source's executor-side delivery, driven as Spark's driver drives
it (no JVM) against redis-server 8.8: a partition's ``XREADGROUP ... >`` reads that pass
the batch's end leave the extra entries pending for the next batch, a re-run partition
reads the same rows, and a row cap holds under ``AvailableNow``."""

from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest
from redis_cluster_support import RedisProcess

redis = pytest.importorskip("redis")
pytest.importorskip("pyspark")

from pyspark.sql.streaming.datasource import ReadMaxRows  # noqa: E402
from pyspark.sql.types import StructType  # noqa: E402
from xstreams import spark_source_server  # noqa: E402
from xstreams.spark import XStreamsDataSource  # noqa: E402
from xstreams.spark_source import StreamReader  # noqa: E402


@pytest.fixture(scope="module")
def redis8():
    with RedisProcess() as srv:
        yield f"redis://127.0.0.1:{srv.port}"


def reader(opts: Dict[str, str]) -> StreamReader:
    schema = XStreamsDataSource(opts).schema()
    return StreamReader(opts, StructType.fromJson(schema.jsonValue()))


def ids_of(rd: StreamReader, part: Any) -> List[str]:
    return [i for b in rd.read(part) for i in b.column("id").to_pylist()]


def batch_ids(rd: StreamReader, start: Dict[str, str], end: Dict[str, str]) -> List[str]:
    return [i for p in rd.partitions(start, end) for i in ids_of(rd, p)]


def xadd_many(r: Any, key: str, n: int) -> List[str]:
    p = r.pipeline(transaction=False)
    for i in range(n):
        p.execute_command("XADD", key, "*", "n", str(i))
    return list(p.execute())


def pending(r: Any, key: str, consumer: str = "c") -> List[str]:
    return [p["message_id"] for p in r.xpending_range(key, "g", "-", "+", 100_000, consumer)]


def planned(url: str, key: str, n: int) -> Any:
    """A fresh stream ``key`` of ``n`` entries and a group reader's first batch planned
    on it: the client, the entries' IDs, the options, the reader, the batch's offsets."""
    r = redis.Redis.from_url(url, decode_responses=True)
    r.delete(key)
    first = xadd_many(r, key, n)
    opts = {"url": url, "stream": key, "group": "g", "consumer": "c"}
    planner = reader(opts)
    start = planner.initialOffset()
    return r, first, opts, planner, start, planner.latestOffset(start, None)


def test_a_read_past_the_end_stays_pending_for_the_next_batch(redis8):
    key = "over"
    r, first, opts, planner, start, end = planned(redis8, key, 100)
    assert end[key] == first[-1] and pending(r, key) == []  # planning delivers nothing
    # Entries appended while the batch runs; the partition's reads are sized for 60
    # entries (as after a read that took fewer, or a count that was off), so its reads
    # take them too.
    later = xadd_many(r, key, 50)
    (part,) = planner.partitions(start, end)
    part.fresh = 60
    assert ids_of(reader(opts), part) == first
    extra = pending(r, key)[len(first) :]
    assert pending(r, key)[: len(first)] == first
    assert extra and extra == later[: len(extra)]  # past the end: held, not output
    planner.commit(end)
    assert pending(r, key) == extra
    end2 = planner.latestOffset(end, None)
    assert end2[key] == later[-1]
    assert batch_ids(planner, end, end2) == later
    planner.commit(end2)
    assert planner.latestOffset(end2, None) == end2
    assert pending(r, key) == [] and r.xinfo_groups(key)[0]["lag"] == 0
    r.close()


def test_a_batch_planned_by_another_reader_is_counted(redis8):
    key = "restart"
    r, first, opts, _planner, start, end = planned(redis8, key, 100)
    xadd_many(r, key, 50)
    (part,) = reader(opts).partitions(start, end)  # a driver restarted: no estimate
    assert part.fresh == 100
    assert ids_of(reader(opts), part) == first and pending(r, key) == first
    r.close()


def test_the_planned_estimate_stops_the_reads_at_the_end(redis8):
    key = "est"
    r, first, _opts, rd, start, end = planned(redis8, key, 300)
    later = xadd_many(r, key, 20)
    assert batch_ids(rd, start, end) == first
    assert pending(r, key) == first  # the appended entries were not delivered
    assert r.xinfo_groups(key)[0]["lag"] == len(later)
    r.close()


def test_a_rerun_partition_reads_the_same_rows(redis8, monkeypatch):
    monkeypatch.setattr(spark_source_server, "READ_CHUNK", 100)
    r = redis.Redis.from_url(redis8, decode_responses=True)
    key = "rerun"
    r.delete(key)
    first = xadd_many(r, key, 250)
    rd = reader({"url": redis8, "stream": key, "group": "g", "consumer": "c"})
    start = rd.initialOffset()
    end = rd.latestOffset(start, ReadMaxRows(240))
    (part,) = rd.partitions(start, end)
    # A first attempt fails after its first Arrow batch (100 entries delivered).
    it = rd.read(part)
    assert next(it).column("id").to_pylist() == first[:100]
    it.close()
    xadd_many(r, key, 30)
    # The re-run reads them back as history, then has the rest delivered; a third
    # attempt reads everything back.
    assert ids_of(rd, part) == first[:240]
    assert ids_of(rd, part) == first[:240]
    assert pending(r, key) == first[:240]
    # An entry claimed by a consumer outside the query is left out.
    r.xclaim(key, "g", "outsider", 0, [first[6]])
    assert ids_of(rd, part) == first[:6] + first[7:240]
    r.close()


@pytest.mark.parametrize("consumers", [1, 2])
def test_the_cap_holds_under_available_now(redis8, consumers):
    r = redis.Redis.from_url(redis8, decode_responses=True)
    keys = [f"capan:{consumers}:{i}" for i in range(3)]
    opts = {"url": redis8, "streams": json.dumps(keys), "group": "g", "consumer": "c",
            "consumers": str(consumers), "maxEntriesPerTrigger": "700"}  # fmt: skip
    names = ["c"] if consumers == 1 else ["c-0", "c-1"]
    first = {}
    for k in keys:
        r.delete(k)
        first[k] = xadd_many(r, k, 900)
        r.xgroup_create(k, "g", "0")
    # An earlier batch's reads went past its end: the second stream's consumer holds
    # 400 entries no batch output yet.
    r.xreadgroup("g", names[1 % consumers], {keys[1]: ">"}, count=400)
    rd = reader(opts)
    rd.prepareForTriggerAvailableNow()
    start = rd.initialOffset()
    sizes, rows = [], []
    while True:
        end = rd.latestOffset(start, ReadMaxRows(700))
        if end == start:
            break
        for k in keys:
            xadd_many(r, k, 25)  # after the run started: not in it
        got = batch_ids(rd, start, end)
        sizes.append(len(got))
        rows += got
        rd.commit(end)
        start = end
    assert all(n <= 700 for n in sizes) and sizes[:-1] == [700] * (len(sizes) - 1)
    assert sorted(rows) == sorted(i for k in keys for i in first[k])
    assert len(rows) == len(set(rows))
    for k in keys:
        assert sum(len(pending(r, k, n)) for n in names) == 0
        assert r.xinfo_groups(k)[0]["lag"] == 25 * len(sizes)
    r.close()
