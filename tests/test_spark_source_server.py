"""The ``xstreams`` streaming source's reader against live servers, driven as Spark's
driver drives it (``initialOffset``, ``latestOffset``, ``partitions``, ``read`` of each
partition, ``commit``) without a JVM: ID-range partitions of one stream, a 3-master
Redis Cluster (``streamPattern`` over every shard, a slot moved between masters during a
read), the consumer-group mode with several consumers, and admission control
(``maxEntriesPerTrigger``, ``maxBytesPerTrigger``, ``AvailableNow``)."""

from __future__ import annotations

import bisect
import random
import subprocess
from typing import Any, Dict, List, Tuple

import pytest
from redis_cluster_support import RedisCluster3, RedisProcess
from server_support import ServerProcess, require_serve

redis = pytest.importorskip("redis")
pytest.importorskip("pyspark")

from pyspark.sql.streaming.datasource import ReadMaxBytes, ReadMaxRows  # noqa: E402
from pyspark.sql.types import StructType  # noqa: E402
from xstreams import spark_conn  # noqa: E402
from xstreams.spark import XStreamsDataSource  # noqa: E402
from xstreams.spark_source import StreamReader  # noqa: E402
from xstreams.spark_source_server import split_range  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    with RedisCluster3() as c:
        yield c


@pytest.fixture(scope="module")
def redis8():
    with RedisProcess() as srv:
        yield f"redis://127.0.0.1:{srv.port}"


@pytest.fixture(scope="module")
def serve():
    require_serve()
    with ServerProcess(debug=False) as srv:
        yield f"redis://127.0.0.1:{srv.port}"


def reader(opts: Dict[str, str]) -> StreamReader:
    schema = XStreamsDataSource(opts).schema()
    return StreamReader(opts, StructType.fromJson(schema.jsonValue()))


def read_batch(rd: StreamReader, start: Dict[str, str], end: Dict[str, str]) -> List[Any]:
    """Each partition's rows ``(stream, id)``, as the executors would read them."""
    out = []
    for p in rd.partitions(start, end):
        rows = []
        for b in rd.read(p):
            rows += list(zip(b.column("stream").to_pylist(), b.column("id").to_pylist()))
        out.append((p, rows))
    return out


def run_batches(
    rd: StreamReader, limit: Any = None, most: int = 1000
) -> List[List[Tuple[str, str]]]:
    """Batches planned and read until nothing is left; each batch's rows."""
    start = rd.initialOffset()
    batches = []
    for _ in range(most):
        end = rd.latestOffset(start, limit)
        if end == start:
            return batches
        rows = [r for _p, part in read_batch(rd, start, end) for r in part]
        batches.append(rows)
        rd.commit(end)
        start = end
    raise AssertionError("the reader never ran out of entries")


def xadd_many(r: Any, key: str, n: int, size: int = 8) -> List[str]:
    p = r.pipeline(transaction=False)
    for i in range(n):
        p.execute_command("XADD", key, "*", "n", str(i), "pad", "x" * size)
    return [x.decode() if isinstance(x, bytes) else x for x in p.execute()]


# ------------------------------------------------------------------ ID-range partitions


class ListProbe:
    """:class:`RangeProbe` over a sorted list of IDs."""

    def __init__(self, ids: List[Tuple[int, int]]) -> None:
        self.ids = ids

    def first_in(self, ms0: int, ms1: int):
        i = bisect.bisect_left(self.ids, (ms0, 0))
        return self.ids[i] if i < len(self.ids) and self.ids[i][0] <= ms1 else None

    def last_seq(self, ms: int):
        i = bisect.bisect_right(self.ids, (ms, 1 << 64)) - 1
        return self.ids[i][1] if i >= 0 and self.ids[i][0] == ms else None


def _history(rng: random.Random) -> List[Tuple[int, int]]:
    """IDs as XADD * makes them: steady, bursty (thousands in a millisecond, then a
    pause), or all in one millisecond."""
    kind = rng.choice(["steady", "bursts", "one"])
    ids, ms = [], rng.randrange(1, 10**6)
    n = rng.randrange(50, 5000)
    while len(ids) < n:
        if kind == "one":
            ids.append((ms, len(ids)))
            continue
        per = rng.randrange(1, 4) if kind == "steady" else rng.randrange(200, 3000)
        ids += [(ms, s) for s in range(per)]
        ms += rng.randrange(1, 3) if kind == "steady" else rng.randrange(5, 400)
    return ids[:n]


def _id(pair: Tuple[int, int]) -> str:
    return f"{pair[0]}-{pair[1]}"


def test_split_range_covers_the_range_once_and_evenly():
    rng = random.Random(44)
    for _ in range(300):
        ids = _history(rng)
        probe = ListProbe(ids)
        parts = rng.randrange(1, 9)
        cut = rng.randrange(0, len(ids) // 2)
        start = "0-0" if cut == 0 else _id(ids[cut - 1])
        end = _id(ids[-1])
        got = split_range(start, _id(ids[cut]), end, parts, probe)
        assert 1 <= len(got) <= parts
        assert got[0][0] == start and got[-1][1] == end
        for (_lo, hi), (lo2, _hi2) in zip(got, got[1:]):
            assert hi == lo2
        # Every entry of the range in exactly one part, and the parts about even.
        bounds = [tuple(int(x) for x in hi.split("-")) for _lo, hi in got]
        assert bounds == sorted(set(bounds))
        counts = [0] * len(got)
        for x in ids[cut:]:
            counts[bisect.bisect_left(bounds, x)] += 1
        assert sum(counts) == len(ids) - cut
        if parts > 1 and len(ids) - cut >= 40 * parts:
            assert len(got) == parts and max(counts) <= 2.2 * (len(ids) - cut) / parts, counts
        assert got == split_range(start, _id(ids[cut]), end, parts, ListProbe(ids))


@pytest.mark.parametrize("where", ["serve", "redis8"])
def test_one_stream_is_read_by_several_partitions(where, request):
    url = request.getfixturevalue(where)
    r = redis.Redis.from_url(url)
    r.delete("hot")
    ids = xadd_many(r, "hot", 5000)
    # Explicit IDs in one millisecond too: split by sequence.
    for i in range(1, 301):
        r.execute_command("XADD", "same", f"99999999999999-{i}", "f", "v")
    r.close()
    for key, n in (("hot", 5000), ("same", 300)):
        rd = reader({"url": url, "stream": key, "minPartitions": "4"})
        start = rd.initialOffset()
        end = rd.latestOffset(start, None)
        parts = read_batch(rd, start, end)
        assert len(parts) == 4
        sizes = [len(rows) for _p, rows in parts]
        assert all(sizes), sizes
        got = [i for _p, rows in parts for _s, i in rows]
        assert len(got) == n and len(set(got)) == n
        if key == "hot":
            assert got == ids  # partitions in ID order, each in order
        # The same offsets plan the same partitions (a re-run batch).
        again = read_batch(reader({"url": url, "stream": key, "minPartitions": "4"}), start, end)
        assert [rows for _p, rows in again] == [rows for _p, rows in parts]


# ---------------------------------------------------------------------- Redis Cluster


def test_cluster_source_reads_every_shard_with_a_pattern(cluster):
    r = spark_conn.connect({"url": cluster.url})
    keys = [f"events:{i}" for i in range(12)]
    assert len({cluster.owner(spark_conn.key_slot(k)) for k in keys}) == 3
    expect = set()
    for k in keys:
        expect |= {(k, i) for i in xadd_many(r, k, 300)}
    r.execute_command("XADD", "other:1", "*", "f", "v")
    rd = reader({"url": cluster.url, "streamPattern": "events:*", "minPartitions": "2"})
    start = rd.initialOffset()
    assert sorted(start) == sorted(keys)
    end = rd.latestOffset(start, ReadMaxRows(1000))
    first = [x for _p, rows in read_batch(rd, start, end) for x in rows]
    assert len(first) == 1000
    # A key made between triggers is picked up, from its first entry.
    late = {("events:late", i) for i in xadd_many(r, "events:late", 50)}
    rows = first + [x for b in _continue(rd, end, ReadMaxRows(1000)) for x in b]
    assert len(rows) == len(set(rows))
    assert set(rows) == expect | late
    r.close()


def _continue(rd: StreamReader, start: Dict[str, str], limit: Any) -> List[List[Any]]:
    out = []
    while True:
        end = rd.latestOffset(start, limit)
        if end == start:
            return out
        out.append([x for _p, rows in read_batch(rd, start, end) for x in rows])
        rd.commit(end)
        start = end


def test_cluster_group_mode_with_three_consumers(cluster):
    r = spark_conn.connect({"url": cluster.url})
    keys = [f"grp:{i}" for i in range(6)]
    expect = set()
    for k in keys:
        expect |= {(k, i) for i in xadd_many(r, k, 400)}
    opts = {"url": cluster.url, "streamPattern": "grp:*", "group": "g", "consumer": "q",
            "consumers": "3"}  # fmt: skip
    rd = reader(opts)
    start = rd.initialOffset()
    end = rd.latestOffset(start, ReadMaxRows(900))
    parts = read_batch(rd, start, end)
    got = [x for _p, rows in parts for x in rows]
    assert len(got) == 900 and len(set(got)) == 900
    # Each partition holds what its consumer was delivered, and every consumer has a share.
    for p, rows in parts:
        mine = r.execute_command("XPENDING", p.stream, "g", "-", "+", 10_000, p.consumer)
        held = {x[0].decode() for x in mine}
        assert {i for _s, i in rows} == {i for i in held if _between(i, p.start, p.end)}
    assert {p.consumer for p, rows in parts if rows} == {"q-0", "q-1", "q-2"}
    # The batch is not acknowledged until committed; then nothing of it stays pending.
    assert sum(_pending(r, k) for k in keys) == 900
    rest = _continue(rd, end, ReadMaxRows(900))
    assert all(len(b) <= 900 for b in rest)
    rows = got + [x for b in rest for x in b]
    assert len(rows) == len(set(rows)) and set(rows) == expect
    # The last batch is acknowledged by the final look for new data (latestOffset).
    assert sum(_pending(r, k) for k in keys) == 0
    r.close()


def _between(i: str, lo: str, hi: str) -> bool:
    def key(x: str) -> Tuple[int, int]:
        a, _, b = x.partition("-")
        return int(a), int(b or 0)

    return key(lo) < key(i) <= key(hi)


def _pending(r: Any, key: str, group: str = "g") -> int:
    got = r.execute_command("XPENDING", key, group)
    return int(got["pending"] if isinstance(got, dict) else got[0])


def test_cluster_read_while_a_slot_moves(cluster):
    """A stream's slot migrates to another master (CLUSTER SETSLOT IMPORTING/MIGRATING,
    MIGRATE, SETSLOT NODE) between planning a batch and reading it, and in the middle
    of its read: the client follows ASK and MOVED; no entry is lost or read twice."""
    r = spark_conn.connect({"url": cluster.url})
    key = "moving"
    ids = xadd_many(r, key, 30_000, size=2)
    slot = spark_conn.key_slot(key)
    src = cluster.owner(slot)
    dst = next(p for p in cluster.ports if p != src)
    rd = reader({"url": cluster.url, "stream": key, "minPartitions": "3"})
    start = rd.initialOffset()
    end = rd.latestOffset(start, None)
    parts = rd.partitions(start, end)
    got: List[str] = []
    a, b = redis.Redis(port=src), redis.Redis(port=dst)
    b.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", cluster.node_id(src))
    a.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", cluster.node_id(dst))
    # First partition read while the slot is migrating (its key still on the source).
    for batch in rd.read(parts[0]):
        got += batch.column("id").to_pylist()
    a.execute_command("MIGRATE", "127.0.0.1", dst, "", 0, 5000, "KEYS", key)
    # Now the key is on the target and the source answers ASK.
    it = rd.read(parts[1])
    got += next(it).column("id").to_pylist()
    for port in cluster.ports:
        redis.Redis(port=port).execute_command(
            "CLUSTER", "SETSLOT", slot, "NODE", cluster.node_id(dst)
        )
    for batch in it:
        got += batch.column("id").to_pylist()
    for p in parts[2:]:
        for batch in rd.read(p):
            got += batch.column("id").to_pylist()
    assert cluster.owner(slot) == dst
    assert got == ids
    r.close()


def test_cluster_needs_a_binary_with_cluster_mode_or_skips(cluster):
    out = subprocess.run([cluster.cli, "-p", str(cluster.ports[0]), "CLUSTER", "INFO"],
                         capture_output=True, text=True, check=True)  # fmt: skip
    assert "cluster_state:ok" in out.stdout


# ------------------------------------------------------------------ admission control


@pytest.mark.parametrize("group", [False, True])
def test_available_now_stops_at_the_start_and_caps_hold(redis8, group):
    r = redis.Redis.from_url(redis8, protocol=2, decode_responses=True)
    key = f"an:{group}"
    r.delete(key)
    first = xadd_many(r, key, 2500)
    opts = {"url": redis8, "stream": key, "maxEntriesPerTrigger": "1000"}
    if group:
        opts.update(group="g", consumer="c")
    rd = reader(opts)
    rd.prepareForTriggerAvailableNow()
    start = rd.initialOffset()
    end = rd.latestOffset(start, ReadMaxRows(1000))
    later = xadd_many(r, key, 10)  # after the run started: not in it
    batches = [[i for _s, i in x] for p, x in read_batch(rd, start, end)]
    sizes = [sum(len(b) for b in batches)]
    rows = [i for b in batches for i in b]
    rd.commit(end)
    for b in _continue(rd, end, ReadMaxRows(1000)):
        sizes.append(len(b))
        rows += [i for _s, i in b]
    assert sizes == [1000, 1000, 500]
    assert rows == first and not set(later) & set(rows)
    if group:
        assert _pending(r, key, "g") == 0
        # The entries added later were never delivered.
        info = r.xinfo_groups(key)[0]
        assert info["lag"] == 10
    r.close()


@pytest.mark.parametrize("group", [False, True])
def test_max_bytes_per_trigger(redis8, group):
    r = redis.Redis.from_url(redis8)
    key = f"mb:{group}"
    r.delete(key)
    ids = xadd_many(r, key, 1000, size=100)
    one = len(ids[0]) + len("n") + len("pad") + 100  # the digits of n: 1-3 bytes
    opts = {"url": redis8, "stream": key, "maxBytesPerTrigger": str(50 * one)}
    if group:
        opts.update(group="g", consumer="c")
    rd = reader(opts)
    assert isinstance(rd.getDefaultReadLimit(), ReadMaxBytes)
    batches = run_batches(rd, rd.getDefaultReadLimit())
    assert [i for b in batches for _s, i in b] == ids
    assert all(45 <= len(b) <= 51 for b in batches[:-1]), [len(b) for b in batches]
    r.close()


# ------------------------------------------------------------------ the batch reader


def test_batch_reader_of_a_cluster_in_id_ranges(cluster):
    from xstreams.spark_batch_server import ServerBatchReader, exclusive_start, inclusive_end

    r = spark_conn.connect({"url": cluster.url})
    keys = [f"batch:{i}" for i in range(5)]
    ids = {k: xadd_many(r, k, 700) for k in keys}
    opts = {"url": cluster.url, "streamPattern": "batch:*", "minPartitions": "10"}
    schema = XStreamsDataSource(opts).schema()
    rd = ServerBatchReader(opts, schema)
    parts = rd.partitions()
    assert len(parts) == 10  # two ID ranges for each of the five streams
    got: Dict[str, List[str]] = {}
    for p in parts:
        for b in rd.read(p):
            for s, i in zip(b.column("stream").to_pylist(), b.column("id").to_pylist()):
                got.setdefault(s, []).append(i)
    assert got == ids
    # XRANGE's bounds: inclusive, exclusive, incomplete.
    k = keys[0]
    lo, hi = ids[k][100], ids[k][200]
    one = {"url": cluster.url, "stream": k, "start": lo, "end": f"({hi}"}
    rd = ServerBatchReader(one, schema)
    rows = [i for p in rd.partitions() for b in rd.read(p) for i in b.column("id").to_pylist()]
    assert rows == ids[k][100:200]
    assert exclusive_start("5-0") == "4-18446744073709551615"
    assert exclusive_start("(5-3") == "5-3" and exclusive_start("-") == "0-0"
    assert inclusive_end("7", "9-9") == "7-18446744073709551615"
    assert inclusive_end("+", "9-9") == "9-9"
    with pytest.raises(ValueError, match=r'option\("start"\)'):
        ServerBatchReader({**one, "start": "x-y"}, schema)
    with pytest.raises(ValueError, match=r'option\("group"\)'):
        ServerBatchReader({**one, "group": "g"}, schema)
    r.close()
