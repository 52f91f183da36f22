"""The ``xstreams`` Structured Streaming source and sink on a local[2] SparkSession.

* the source reads a durable store beside a running writer, and live servers (a real
  redis-server and ``xstreams serve``), each entry exactly once, micro-batches capped by
  ``maxEntriesPerTrigger``;
* group mode (``group``/``consumer``): a query SIGKILLed part-way and restarted from its
  checkpoint delivers every entry, loses none, and re-reads what its consumer had pending;
* the sink: a query SIGKILLed mid-batch and restarted leaves every input row in the
  stream exactly once (store directory and server, with and without IDMP options);
* bad options fail with an error naming the option.

No test calls ``xstreams.spark.register``: ``format("xstreams")`` is found by PySpark's
data source lookup (``pyspark_xstreams``). Kill tests run the query in a child process
(``spark_stream_child.py``) in its own process group and SIGKILL the group.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest
import xstreams
from server_support import ServerProcess
from spark_stream_child import build
from spark_support import spark  # noqa: F401
from xstreams.spark_io import parse_id

pytest_plugins = ("client_support.fixtures",)
pytestmark = pytest.mark.spark

CHILD = Path(__file__).resolve().parent / "spark_stream_child.py"


def wait_for(
    cond: Callable[[], bool], timeout: float = 90, what: str = "", detail: Any = None
) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            more = f" ({detail()})" if detail else ""
            raise AssertionError(f"timed out waiting for {what}{more}")
        time.sleep(0.2)


def alive(q: Any) -> bool:
    """True while the query runs; its error if it stopped with one."""
    if not q.isActive and q.exception() is not None:
        raise AssertionError(f"the query failed: {q.exception()}")
    return True


def connect(url: str) -> Any:
    import redis

    return redis.Redis.from_url(url)


@pytest.fixture(scope="module")
def serve_url():
    with ServerProcess(debug=False) as srv:
        yield f"redis://127.0.0.1:{srv.port}"


@pytest.fixture(params=["redis", "serve"])
def server_url(request, redis_server):
    if request.param == "redis":
        url = f"redis://{redis_server.host}:{redis_server.port}"
    else:
        url = request.getfixturevalue("serve_url")
    r = connect(url)
    r.flushall()
    r.close()
    return url


def memory_rows(spark, name: str) -> List[Any]:  # noqa: F811
    return spark.sql(f"SELECT * FROM {name}").collect()


def run_child(cfg: Dict[str, Any], tmp_path: Path) -> subprocess.Popen:
    log = open(tmp_path / "child.log", "wb")
    return subprocess.Popen(
        [sys.executable, str(CHILD), json.dumps(cfg)],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=str(tmp_path),
        start_new_session=True,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
    )


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


def child_failed(proc: subprocess.Popen, tmp_path: Path) -> str:
    if proc.poll() is None:
        return ""
    return (tmp_path / "child.log").read_bytes().decode(errors="replace")[-3000:]


# ----------------------------------------------------------------------------- source


def test_source_from_a_store_beside_a_running_writer(spark, tmp_path):  # noqa: F811
    path = str(tmp_path / "store")
    writer = xstreams.Store(path, fsync="always")
    try:
        for i in range(300):
            writer.execute_command("XADD", "ev", "*", "n", i)
        q = (
            spark.readStream.format("xstreams")
            .option("path", path)
            .option("stream", "ev")
            .option("maxEntriesPerTrigger", 120)
            .load()
            .writeStream.format("memory")
            .queryName("src_path")
            .option("checkpointLocation", str(tmp_path / "ck"))
            .trigger(processingTime="100 milliseconds")
            .start()
        )
        try:
            wait_for(lambda: len(memory_rows(spark, "src_path")) >= 300, what="first 300")
            for i in range(300, 500):
                writer.execute_command("XADD", "ev", "*", "n", i)
            wait_for(lambda: len(memory_rows(spark, "src_path")) >= 500, what="500 rows")
            time.sleep(0.5)
            sizes = [p["numInputRows"] for p in q.recentProgress]
        finally:
            q.stop()
        want = [e[0].decode() for e in writer.execute_command("XRANGE", "ev", "-", "+")]
    finally:
        writer.close()
    rows = memory_rows(spark, "src_path")
    assert sorted((r.ms, r.seq) for r in rows) == [tuple(map(int, i.split("-"))) for i in want]
    assert sorted(int(r.fields["n"]) for r in rows) == list(range(500))
    assert max(sizes) <= 120 and sum(sizes) == 500


def _batches(reader: Any, cap: int) -> List[Dict[str, str]]:
    """The offsets a streaming reader plans from ``0`` until nothing is left."""
    from pyspark.sql.streaming.datasource import ReadMaxRows

    start = reader.initialOffset()
    offsets = [start]
    while True:
        end = reader.latestOffset(start, ReadMaxRows(cap))
        if end == start:
            return offsets
        offsets.append(end)
        start = end


def _counts(store: Any, offsets: List[Dict[str, str]]) -> List[int]:
    """Entries in each planned batch ``(start, end]`` (over all streams)."""
    return [
        sum(
            len(store.execute_command("XRANGE", s, f"({a[s]}", b[s])) if b[s] != a[s] else 0
            for s in b
        )
        for a, b in zip(offsets, offsets[1:])
    ]


def _two_streams(path: str, b_entries: int) -> Any:
    """A durable store (left open) with 1,000 entries in ``a`` and ``b_entries`` in
    ``b``, each ``n <i>``, added in turns."""
    st = xstreams.Store(path, fsync="no")
    for i in range(1000):
        st.execute_command("XADD", "a", "*", "n", i)
        if i < b_entries:
            st.execute_command("XADD", "b", "*", "n", i)
    return st


def test_source_caps_a_compacted_store_from_its_node_index(tmp_path):
    """With ``maxEntriesPerTrigger`` on a compacted store, batches are planned from the
    snapshot's node index (no load): each ends at a node's last ID, holds at most the cap,
    and together they hold every entry once. A log touching a stream, or a cap below a
    node's size, plans entry by entry, exactly at the cap (planned again from the index
    once the touched stream has nothing left to read)."""
    from pyspark.sql.types import StructType
    from xstreams.spark_source import StreamReader

    path = str(tmp_path / "store")
    st = _two_streams(path, 350)
    st.execute_command("XDEL", "a", st.execute_command("XRANGE", "a", "-", "+", "COUNT", 1)[0][0])
    st.compact()
    st.close()
    opts = {"path": path, "streams": '["a", "b"]'}
    reader = StreamReader(opts, StructType())
    assert reader._capped_at_nodes(["a", "b"], {"a": "0-0", "b": "0-0"}, 250) is not None
    chk = xstreams.Store(path, read_only=True)
    try:
        offsets = _batches(reader, 250)
        counts = _counts(chk, offsets)
        nodes = {s: {p[3] for p in _node_parts(path, s)} for s in "ab"}
    finally:
        chk.close()
    assert sum(counts) == 999 + 350 and max(counts) <= 250 and min(counts) > 0
    for off in offsets[1:]:
        for s, last in off.items():
            assert last == "0-0" or last in nodes[s]  # a node's last ID
    # Small caps (below a node's 100 entries) and logs after the snapshot: exact batches.
    assert reader._capped_at_nodes(["a", "b"], {"a": "0-0", "b": "0-0"}, 30) is None
    assert _counts_of(path, reader, 30) == [30] * 44 + [29]  # 1349 entries
    st = xstreams.Store(path, fsync="no")
    st.execute_command("XADD", "b", "*", "n", 350)
    st.close()
    assert reader._capped_at_nodes(["a", "b"], {"a": "0-0", "b": "0-0"}, 250) is None
    got = _counts_of(path, reader, 250)
    # b (touched) has entries left in the first three batches: exact; then a alone, from
    # its index again (its first batch counts the node it starts in whole).
    assert sum(got) == 999 + 351 and got[:3] == [250] * 3 and max(got) == 250


def test_source_splits_a_small_batch_for_every_core(tmp_path):
    """A micro-batch under ``rowsPerPartition`` is still split ``minPartitions`` ways
    (shared among the streams with entries), into even parts that read every entry once;
    the default is the machine's cores."""
    from pyspark.sql.types import StructType
    from xstreams.spark import DEFAULT_SCHEMA
    from xstreams.spark_source import StreamReader

    path = str(tmp_path / "store")
    st = _two_streams(path, 300)
    st.compact()
    st.close()
    assert StreamReader({"path": path, "stream": "a"}, StructType()).min_parts == (
        os.cpu_count() or 1
    )

    def plan(opts: Dict[str, str], end: Dict[str, str]) -> List[int]:
        reader = StreamReader({"path": path, **opts}, DEFAULT_SCHEMA)
        parts = reader.partitions({"a": "0-0", "b": "0-0"}, end)
        got = [b for p in parts for b in reader.read(p)]
        assert sum(b.num_rows for b in got) == sum(
            len(chk.execute_command("XRANGE", s, "-", e)) for s, e in end.items()
        )
        ids = [(s, i) for b in got for s, i in zip(b.column("stream").to_pylist(),
                                                    b.column("id").to_pylist())]  # fmt: skip
        assert len(ids) == len(set(ids))
        return [p.part[4] for p in parts]

    chk = xstreams.Store(path, read_only=True)
    try:
        last = {s: chk.execute_command("XREVRANGE", s, "+", "-", "COUNT", 1)[0][0].decode()
                for s in "ab"}  # fmt: skip
        # 1,000 entries in 10 nodes of 100.
        assert plan({"stream": "a", "minPartitions": "4"}, {"a": last["a"]}) == [300, 200, 300, 200]
        assert plan({"stream": "a", "minPartitions": "1"}, {"a": last["a"]}) == [1000]
        assert plan({"stream": "a", "minPartitions": "2", "rowsPerPartition": "300"},
                    {"a": last["a"]}) == [300, 200, 300, 200]  # fmt: skip
        # Two streams share the minimum: 2 parts each.
        got = plan({"streams": '["a", "b"]', "minPartitions": "4"}, last)
        assert got == [500, 500, 200, 100]
    finally:
        chk.close()


def _node_parts(path: str, stream: str) -> List[Any]:
    from xstreams import _xstreams

    return _xstreams._replay_plan(path, [stream.encode()], rows_per_part=1)[1]


def _counts_of(path: str, reader: Any, cap: int) -> List[int]:
    chk = xstreams.Store(path, read_only=True)
    try:
        return _counts(chk, _batches(reader, cap))
    finally:
        chk.close()


def _id_key(entry_id: str) -> tuple:
    ms, seq = entry_id.split("-")
    return int(ms), int(seq)


@pytest.mark.cluster
def test_source_from_servers_two_streams_typed(spark, server_url, tmp_path):  # noqa: F811
    r = connect(server_url)
    ids = {"a": [], "b": []}
    for i in range(200):
        for s in ("a", "b"):
            ids[s].append(r.xadd(s, {"n": i, "tag": f"{s}{i}"}).decode())
    q = (
        spark.readStream.format("xstreams")
        .schema("stream string, id string, ms long, seq long, n long, tag string")
        .option("url", server_url)
        .option("streams", '["a", "b"]')
        .option("startingId", ids["a"][49])  # entries after it (b's IDs are all above)
        .option("maxEntriesPerTrigger", 100)
        .load()
        .writeStream.format("memory")
        .queryName("src_url")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(processingTime="100 milliseconds")
        .start()
    )
    try:
        # IDs compared as (ms, seq): as strings "...-10" < "...-9", and a fast server
        # puts many entries in one millisecond.
        start = _id_key(ids["a"][49])
        want = len(ids["a"][50:]) + len([i for i in ids["b"] if _id_key(i) > start])
        wait_for(lambda: len(memory_rows(spark, "src_url")) >= want, what=f"{want} rows")
        time.sleep(0.5)
        sizes = [p["numInputRows"] for p in q.recentProgress]
    finally:
        q.stop()
    rows = memory_rows(spark, "src_url")
    got = {(x.stream, x.id) for x in rows}
    assert len(rows) == len(got) == want
    assert {i for s, i in got if s == "a"} == set(ids["a"][50:])
    assert all(x.tag == f"{x.stream}{x.n}" for x in rows)
    assert max(sizes) <= 100
    r.close()


# ------------------------------------------------------------------------- group mode


@pytest.mark.slow
def _last_delivered(r: Any) -> str:
    got = r.execute_command("XINFO", "GROUPS", "ev")[0]
    fields = dict(zip(got[::2], got[1::2])) if isinstance(got, list) else got
    v = fields.get(b"last-delivered-id", fields.get("last-delivered-id"))
    return v.decode() if isinstance(v, bytes) else str(v)


def test_group_mode_kill_and_restart(spark, redis_server, tmp_path):  # noqa: F811
    url = f"redis://{redis_server.host}:{redis_server.port}"
    r = connect(url)
    r.flushall()
    all_ids = [r.xadd("ev", {"n": i}).decode() for i in range(400)]
    cfg = {
        "source": {"url": url, "stream": "ev", "group": "g", "consumer": "c1",
                   "maxEntriesPerTrigger": "50", "checkpointLocation": str(tmp_path / "ck")},
        "select": ["id", "fields['n'] AS n"],
        "slow": 0.3,
        "json": str(tmp_path / "out"),
        "checkpoint": str(tmp_path / "ck"),
    }  # fmt: skip
    proc = run_child(cfg, tmp_path)
    pending_at_kill: List[str] = []
    try:

        def some_acked_some_pending() -> bool:
            assert not child_failed(proc, tmp_path), child_failed(proc, tmp_path)
            info = r.xinfo_groups("ev")
            delivered = int(info[0]["entries-read"] or 0) if info else 0
            pending = len(r.xpending_range("ev", "g", "-", "+", 1000, "c1")) if info else 0
            return delivered >= 150 and 0 < pending < delivered

        wait_for(some_acked_some_pending, 240, what="acknowledged and pending entries")
        pending_at_kill = [
            p["message_id"].decode() for p in r.xpending_range("ev", "g", "-", "+", 1000, "c1")
        ]
    finally:
        kill_group(proc)
    assert pending_at_kill
    # Once the query is dead, what it holds:
    pending_now = [
        p["message_id"].decode() for p in r.xpending_range("ev", "g", "-", "+", 1000, "c1")
    ]
    # Nothing was acknowledged that the sink had not committed (Spark's file sink: the
    # files its log lists, which spark.read.json reads).
    committed = {x.id for x in spark.read.json(str(tmp_path / "out")).collect()}
    delivered = [i for i in all_ids if parse_id(i) <= parse_id(_last_delivered(r))]
    acked = set(delivered) - set(pending_now)
    assert acked <= committed, sorted(acked - committed)[:5]
    # Restart from the checkpoint in this session: everything, exactly once, in the output.
    cfg.pop("slow")
    q = build(spark, cfg)
    try:
        wait_for(
            lambda: (
                alive(q)
                and len(r.xpending_range("ev", "g", "-", "+", 1000, "c1")) <= 50
                and int(r.xinfo_groups("ev")[0]["entries-read"]) == 400
            ),
            what="the restarted query to catch up",
        )
        wait_for(lambda: len(spark.read.json(str(tmp_path / "out")).collect()) >= 400)
    finally:
        q.stop()
    out = spark.read.json(str(tmp_path / "out")).collect()
    got = [x.id for x in out]
    assert sorted(got) == sorted(all_ids)  # none lost, none twice (file sink + checkpoint)
    assert set(pending_at_kill) <= set(got)
    # The reader had the checkpoint: the last batch was acknowledged when it stopped.
    assert r.xpending_range("ev", "g", "-", "+", 1000, "c1") == []
    r.close()


# ---------------------------------------------------------------------------- the sink


def _sink_store_rows(path: str, key: str) -> List[Dict[bytes, bytes]]:
    s = xstreams.Store(path, read_only=True)
    try:
        if not s.execute_command("EXISTS", key):
            return []
        return [
            dict(zip(fv[::2], fv[1::2])) for _, fv in s.execute_command("XRANGE", key, "-", "+")
        ]
    finally:
        s.close()


def _sink_url_rows(url: str, key: str) -> List[Dict[bytes, bytes]]:
    r = connect(url)
    try:
        return [fv for _, fv in r.xrange(key)]
    finally:
        r.close()


def _has_idmp(r: Any) -> bool:
    import redis

    try:
        r.execute_command("XADD", "probe", "IDMP", "p", "i", "*", "f", "v")
    except redis.ResponseError:
        return False
    r.delete("probe")
    return True


@pytest.mark.slow
@pytest.mark.parametrize("where,idmp", [("path", False), ("redis", True)])
def test_sink_exactly_once_after_a_kill_mid_batch(
    spark,  # noqa: F811
    tmp_path,
    redis_server,
    where,
    idmp,  # noqa: F811
):
    src = str(tmp_path / "src")
    w = xstreams.Store(src)
    for i in range(600):
        w.execute_command("XADD", "in", "*", "n", i, "pid", f"p{i % 7}")
    w.close()
    if where == "path":
        sink = {"path": str(tmp_path / "dst"), "stream": "out"}
        rows: Callable[[], List[Dict[bytes, bytes]]] = lambda: _sink_store_rows(  # noqa: E731
            str(tmp_path / "dst"), "out"
        )
    else:
        url = f"redis://{redis_server.host}:{redis_server.port}"
        probe = connect(url)
        probe.flushall()
        if idmp and not _has_idmp(probe):
            # An older redis-server (no XADD IDMP, < 8.6): the marker transaction is what
            # this test is about, so run it without IDMP options rather than not at all.
            idmp = False
        sink = {"url": url, "stream": "out"}
        rows = lambda: _sink_url_rows(url, "out")  # noqa: E731
    if idmp:
        sink.update({"producer": "pid", "iid": "n"})
    cfg = {
        "source": {"path": src, "stream": "in", "maxEntriesPerTrigger": "100"},
        "select": ["fields['n'] AS n", "fields['pid'] AS pid"],
        "slow": 0.4,
        "sink": sink,
        "checkpoint": str(tmp_path / "ck"),
    }
    proc = run_child(cfg, tmp_path)
    try:

        def part_way() -> bool:
            assert not child_failed(proc, tmp_path), child_failed(proc, tmp_path)
            try:
                n = len(rows())
            except Exception:  # a store being written: try again
                return False
            return 150 <= n < 600

        wait_for(part_way, timeout=300, what="the child to have written part of the input")
    finally:
        kill_group(proc)
    cfg.pop("slow")
    q = build(spark, cfg)
    try:
        wait_for(
            lambda: alive(q) and len(rows()) >= 600,
            what="the restarted query to catch up",
            detail=lambda: f"{len(rows())} rows; progress {q.recentProgress[-3:]}",
        )
        time.sleep(1)  # a duplicate would show up now
    finally:
        q.stop()
    assert q.exception() is None
    got = sorted(int(x[b"n"]) for x in rows())
    assert got == list(range(600))


def test_sink_commit_writes_typed_rows_as_the_per_row_commands(tmp_path):
    """The path sink's commit appends typed columns with one ``xadd_batch`` call: the
    stream gets the entries the per-row XADD commands give (fields in column order,
    values converted alike, nulls left out, IDMP duplicates dropped, trimming), the
    marker once, and a re-run batch is skipped."""
    import pyarrow as pa
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType
    from xstreams.spark_sink import SinkMessage, StreamWriter
    from xstreams.spark_sink_store import stage

    schema = StructType(
        [StructField("pid", StringType()), StructField("iid", StringType()),
         StructField("n", LongType()), StructField("x", DoubleType())]
    )  # fmt: skip

    def table(lo: int, hi: int) -> Any:
        ids = range(lo, hi)
        return pa.table(
            {
                "pid": [f"p{i % 4}" for i in ids],
                "iid": [f"e{i % 40}" for i in ids],  # 40 (pid, iid) pairs: 60 duplicates
                "n": pa.array([None if i % 5 == 0 else i for i in ids], pa.int64()),
                "x": [i / 3 for i in ids],
            }
        )

    opts = {"stream": "out", "producer": "pid", "iid": "iid", "maxlen": "30"}
    dst = str(tmp_path / "dst")
    w = StreamWriter({**opts, "path": dst}, schema, False)
    tables = [table(0, 50), table(50, 100)]

    def staged_messages() -> List[Any]:
        return [
            SinkMessage(p, 50, "q", staged_file=stage(dst, "q", 0, p, 0, t))
            for p, t in enumerate(tables)
        ]

    w.commit(staged_messages(), 0)
    assert not os.path.exists(os.path.join(dst, "spark-staging"))  # removed by the commit
    w.commit(staged_messages(), 0)  # Spark re-ran batch 0 after a restart: skipped
    got = _sink_store_rows(dst, "out")

    ref = xstreams.Store()
    key = b"out"
    for t in tables:
        for b in t.to_batches():
            for argv in w.shape.commands(key, b):
                ref.execute_command(*argv)
    want = [dict(zip(fv[::2], fv[1::2])) for _, fv in ref.execute_command("XRANGE", key, "-", "+")]
    assert got == want
    assert len(got) == 30  # 40 entries added, trimmed to MAXLEN 30
    assert any(b"n" not in e for e in got) and all(list(e)[:2] == [b"pid", b"iid"] for e in got)
    s = xstreams.Store(str(tmp_path / "dst"), read_only=True)
    try:
        info = s.execute_command("XINFO", "STREAM", "out")
        info = dict(zip(info[::2], info[1::2]))
        assert info[b"entries-added"] == 40 and info[b"iids-duplicates"] == 60
        markers = [k for k in s.execute_command("KEYS", "xstreams:sink:*")]
        assert len(markers) == 1
        assert s.execute_command("XLEN", markers[0]) == 1
    finally:
        s.close()


def test_sink_commit_keeps_the_store_open_between_commits(tmp_path):
    """The path sink's commits keep the store open (a load of the store per micro-batch
    otherwise) and its write lock held until ``holdStore`` seconds pass without a
    commit; ``holdStore`` 0 closes it after each commit; a bad value names the option."""
    import pyarrow as pa
    from pyspark.sql.types import LongType, StructField, StructType
    from xstreams.exceptions import StoreLockedError
    from xstreams.spark_sink import SinkMessage, StreamWriter
    from xstreams.spark_sink_store import stage

    schema = StructType([StructField("n", LongType())])
    path = str(tmp_path / "dst")

    def commit(hold: str, batch: int) -> None:
        w = StreamWriter({"path": path, "stream": "out", "holdStore": hold}, schema, False)
        rows = pa.table({"n": pa.array(range(batch * 3, batch * 3 + 3), pa.int64())})
        w.commit([SinkMessage(0, 3, "q", staged_file=stage(path, "q", batch, 0, 0, rows))], batch)

    def free() -> bool:
        try:
            xstreams.Store(path).close()
        except StoreLockedError:
            return False
        return True

    commit("30", 0)
    assert not free()  # held after the commit
    commit("0.5", 1)  # the held store, written again
    assert [int(e[b"n"]) for e in _sink_store_rows(path, "out")] == list(range(6))
    wait_for(free, timeout=30, what="the held store to be closed after holdStore seconds")
    commit("0", 2)
    assert free()  # closed right after the commit
    commit("0", 1)  # a re-run batch: skipped
    assert [int(e[b"n"]) for e in _sink_store_rows(path, "out")] == list(range(9))
    for bad in ("-1", "soon"):
        with pytest.raises(ValueError, match='option\\("holdStore"\\)'):
            StreamWriter({"path": path, "stream": "out", "holdStore": bad}, schema, False)


# ---------------------------------------------------------------------- batch writes


@pytest.mark.cluster
def test_batch_write_to_a_store_and_a_server(spark, tmp_path, serve_url):  # noqa: F811
    df = spark.createDataFrame(
        [(f"p{i % 3}", f"i{i % 50}", i, float(i) / 2) for i in range(120)],
        "pid string, iid string, n long, x double",
    )
    path = str(tmp_path / "dst")
    for _ in range(2):  # a re-run adds nothing: IDMP
        df.write.format("xstreams").option("path", path).option("stream", "s").option(
            "producer", "pid"
        ).option("iid", "iid").mode("append").save()
    got = _sink_store_rows(path, "s")
    assert len(got) == len({(i % 3, i % 50) for i in range(120)})
    assert {(r[b"n"], r[b"x"]) for r in got} <= {
        (str(i).encode(), repr(float(i) / 2).encode()) for i in range(120)
    }
    r = connect(serve_url)
    r.flushall()
    df.selectExpr("map('n', CAST(n AS STRING)) AS fields").write.format("xstreams").option(
        "url", serve_url
    ).option("stream", "m").option("maxlen", 100).mode("append").save()
    assert r.xlen("m") == 100
    assert {int(fv[b"n"]) for _, fv in r.xrange("m")} <= set(range(120))
    r.close()


# ------------------------------------------------------------------------ bad options


def test_bad_options_name_the_option(spark, tmp_path):  # noqa: F811
    from pyspark.sql.types import StructType
    from xstreams.spark import DEFAULT_SCHEMA
    from xstreams.spark_sink import StreamWriter
    from xstreams.spark_source import StreamReader

    base = {"path": str(tmp_path), "stream": "s"}
    reader_cases = [
        ({"maxEntriesPerTrigger": "ten"}, "maxEntriesPerTrigger"),
        ({"maxEntriesPerTrigger": "0"}, "maxEntriesPerTrigger"),
        ({"startingId": "yesterday"}, "startingId"),
        ({"group": "g"}, "consumer"),
        ({"group": "g", "consumer": "c"}, "group"),
        ({"streams": "[1,"}, "streams"),
        ({"url": "http://x"}, "url"),
        ({"minPartitions": "0"}, "minPartitions"),
        ({"rowsPerPartition": "many"}, "rowsPerPartition"),
    ]
    for extra, name in reader_cases:
        with pytest.raises(ValueError, match=f'option\\("{name}"\\)'):
            StreamReader({**base, **extra}, DEFAULT_SCHEMA)
    with pytest.raises(ValueError, match="url"):
        StreamReader({"stream": "s"}, DEFAULT_SCHEMA)
    schema = StructType.fromJson(
        {"type": "struct", "fields": [
            {"name": "pid", "type": "string", "nullable": True, "metadata": {}},
            {"name": "v", "type": "string", "nullable": True, "metadata": {}}]}
    )  # fmt: skip
    writer_cases = [
        ({"producer": "pid"}, "iid"),
        ({"producer": "nope", "iid": "v"}, "producer"),
        ({"maxlen": "-1"}, "maxlen"),
        ({"maxlen": "5", "minid": "1-1"}, "minid"),
        ({"minid": "x"}, "minid"),
        ({"fsync": "sometimes"}, "fsync"),
    ]
    for extra, name in writer_cases:
        with pytest.raises(ValueError, match=f'option\\("{name}"\\)'):
            StreamWriter({**base, **extra}, schema, False)
    with pytest.raises(ValueError, match="overwrite"):
        StreamWriter(base, schema, True)
    # Through Spark: the query fails with the same message.
    q = (
        spark.readStream.format("xstreams")
        .option("path", str(tmp_path))
        .option("stream", "s")
        .option("maxEntriesPerTrigger", "lots")
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .start()
    )
    with pytest.raises(Exception, match="maxEntriesPerTrigger"):
        q.awaitTermination(60)
    q.stop()
