"""The ``xstreams`` sink's executor-side writes (issue 44): each task writes its own rows to
a server, a 3-shard Redis Cluster or a store directory, exactly once.

* the task writer on its own (no Spark): a retry skips what its marker covers, a retry
  with other rows (a re-partitioned re-run) fails, concurrent attempts of one task write
  once, the driver's look finds markers of partitions that did not write this run;
* ``keyColumn`` over many streams on a cluster, each stream's rows in order per task,
  with and without IDMP options; null and empty keys refused;
* a task's Python worker killed mid-write: the query fails and its restart from the
  checkpoint writes every row once; with task retries (``local[2,4]``, a child process)
  the retry writes the rest once, for the streaming and the batch sink;
* a 400,000-row micro-batch under ``spark.driver.maxResultSize=1m``: no row reaches the
  driver.

The Redis Cluster is three masters of the oracle's binary (``XSTREAMS_REDIS_SERVER``) on
loopback (``redis_cluster_support.RedisCluster3``); skipped with the reason when that
binary cannot run one. A slot moved under a task's stale slot map (``MOVED``) is
followed. The ``keyColumn`` and worker-death tests carry ``@pytest.mark.cluster``: they
run on ``local[2]`` and on the standalone cluster's session (executors in JVMs of their
own, where Spark retries the dead worker's task).
"""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
import xstreams
from server_support import ServerProcess
from spark_support import spark  # noqa: F401
from test_spark_stream import child_failed, kill_group, run_child

pytest_plugins = ("client_support.fixtures",)
pytestmark = pytest.mark.spark

pa = pytest.importorskip("pyarrow")
redis = pytest.importorskip("redis")


# ---------------------------------------------------------------------------- targets


@pytest.fixture(scope="module")
def cluster(redis_cluster) -> Any:
    """The session's 3-master Redis Cluster (``conftest.redis_cluster``)."""
    return redis_cluster


@pytest.fixture(scope="module")
def cluster_url(cluster) -> str:
    return cluster.url


def _flush(url: str) -> None:
    from xstreams.spark_conn import connect, primaries

    c = connect(url)
    for node in primaries(c):
        node.flushall()
    c.close()


@pytest.fixture(params=["redis", "cluster", "serve"])
def url(request, redis_server) -> str:
    if request.param == "redis":
        u = f"redis://{redis_server.host}:{redis_server.port}"
    elif request.param == "cluster":
        u = request.getfixturevalue("cluster_url")
    else:
        u = request.getfixturevalue("serve_url")
    _flush(u)
    return u


@pytest.fixture(scope="module")
def serve_url() -> Iterator[str]:
    with ServerProcess(debug=False) as srv:
        yield f"redis://127.0.0.1:{srv.port}"


def _entries(url: str, key: str) -> List[Dict[bytes, bytes]]:
    from xstreams.spark_conn import connect

    c = connect(url)
    try:
        node = c
        if hasattr(c, "get_node_from_key"):
            node = c.get_redis_connection(c.get_node_from_key(key))
        reply = node.execute_command("XRANGE", key, "-", "+")
        return [dict(zip(fv[::2], fv[1::2])) for _, fv in reply]
    finally:
        c.close()


def _rows(n: int, keys: int) -> Any:
    return pa.table(
        {"k": [f"dev:{i % keys}" for i in range(n)], "n": list(range(n)),
         "pid": [f"p{i % 5}" for i in range(n)]}
    )  # fmt: skip


# ---------------------------------------------------------------- the task writer


def _task(client: Any, shape: Any, batch: int = 3, partition: int = 0) -> Any:
    from xstreams.spark_sink_redis import TaskWrite

    return TaskWrite(client, shape, "query-1", batch, partition)


def test_task_retry_skips_and_other_rows_fail(url):
    """A retry of a task finds its markers and writes nothing; a retry holding other rows
    (Spark re-partitioned the re-run batch) fails naming the batch; the driver's look
    finds a marker of a partition that wrote nothing this run."""
    from xstreams.spark_conn import connect
    from xstreams.spark_io import RowShape, stream_parts
    from xstreams.spark_sink_redis import SparkSinkError, check_partitions

    shape = RowShape({"keyColumn": "k"}, ["k", "n", "pid"])
    parts = stream_parts(_rows(2000, 12), "k", None)
    c = connect(url)
    try:
        first = _task(c, shape)
        first.run(parts)
        assert first.rows == 2000 and first.skipped == 0
        again = _task(c, shape)
        again.run(parts)
        assert again.rows == 0 and again.skipped == len(first.written)
        for i in range(12):
            assert [int(e[b"n"]) for e in _entries(url, f"dev:{i}")] == list(range(i, 2000, 12))
        other = stream_parts(_rows(1999, 12), "k", None)  # one row fewer in one stream
        with pytest.raises(SparkSinkError, match="batch 3 was written before by task 0"):
            _task(c, shape).run(other)
        assert again.groups == first.groups == first.written
        check_partitions(c, "query-1", 3, {0: again.groups}, 2)  # as written: fine
        with pytest.raises(SparkSinkError, match="re-partitioned"):
            check_partitions(c, "query-1", 3, {1: first.written}, 2)
        nxt = _task(c, shape, batch=4)  # the next batch writes again
        nxt.run(parts)
        assert nxt.rows == 2000
        assert len(_entries(url, "dev:0")) == 2 * len(range(0, 2000, 12))
    finally:
        c.close()


def test_concurrent_attempts_of_one_task_write_once(url):
    """Four attempts of one task at once (a retry racing a zombie, speculation): the
    marker's WATCH lets exactly one write each slot's rows."""
    from xstreams.spark_conn import connect
    from xstreams.spark_io import RowShape, stream_parts
    from xstreams.spark_sink_redis import groups

    shape = RowShape({"keyColumn": "k"}, ["k", "n", "pid"])
    parts = stream_parts(_rows(8000, 9), "k", None)
    done: List[Any] = []
    errors: List[BaseException] = []

    def attempt() -> None:
        c = connect(url)
        try:
            w = _task(c, shape)
            w.run(parts)
            done.append(w)
        except BaseException as e:  # reported below
            errors.append(e)
        finally:
            c.close()

    threads = [threading.Thread(target=attempt) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert sum(w.rows for w in done) == 8000
    written = [g for w in done for g in w.written]
    assert len(written) == len(set(written)) == len(groups(parts, done[0].cluster))
    assert sum(w.skipped for w in done) == 3 * len(written)  # the others skipped each group
    for i in range(9):
        assert [int(e[b"n"]) for e in _entries(url, f"dev:{i}")] == list(range(i, 8000, 9))


def test_a_slot_moved_under_a_task_is_followed(cluster):
    """The task's client learned the slot map, then the stream's slot moves to another
    master: the group's commands meet MOVED, the task reloads the map and writes the
    group (rows and marker) on the new owner, once."""
    from xstreams.spark_conn import connect, key_slot
    from xstreams.spark_io import RowShape, stream_parts

    _flush(cluster.url)
    c = connect(cluster.url)  # the slot map as it is now
    try:
        slot = key_slot("dev:0")
        old = cluster.owner(slot)
        new = next(p for p in cluster.ports if p != old)
        new_id, old_id = cluster.node_id(new), cluster.node_id(old)
        redis.Redis(port=new).execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", old_id)
        redis.Redis(port=old).execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", new_id)
        for p in cluster.ports:
            redis.Redis(port=p).execute_command("CLUSTER", "SETSLOT", slot, "NODE", new_id)
        cluster.wait_ok()
        assert cluster.owner(slot) == new
        shape = RowShape({"keyColumn": "k"}, ["k", "n", "pid"])
        w = _task(c, shape)
        w.run(stream_parts(_rows(500, 1), "k", None))
        assert w.rows == 500 and w.written == [(slot, b"dev:0")]
        assert redis.Redis(port=new).xlen("dev:0") == 500
        again = _task(c, shape)
        again.run(stream_parts(_rows(500, 1), "k", None))
        assert again.skipped == 1 and redis.Redis(port=new).xlen("dev:0") == 500
    finally:
        c.close()


def test_key_column_refuses_null_and_empty_keys(spark, tmp_path, serve_url):  # noqa: F811
    from pyspark.sql.types import StructType
    from xstreams.spark_io import stream_parts
    from xstreams.spark_sink import BatchWriter, StreamWriter

    t = pa.table({"k": ["a", None, "b"], "n": [1, 2, 3]})
    with pytest.raises(ValueError, match=r'keyColumn"\) column .k. is null in row 1'):
        stream_parts(t, "k", None)
    t = pa.table({"k": ["a", "b", ""], "n": [1, 2, 3]})
    with pytest.raises(ValueError, match="is empty in row 2"):
        stream_parts(t, "k", None)
    schema = StructType.fromJson(
        {"type": "struct", "fields": [
            {"name": "k", "type": "string", "nullable": True, "metadata": {}},
            {"name": "n", "type": "long", "nullable": True, "metadata": {}}]}
    )  # fmt: skip
    base = {"url": serve_url}
    for cls in (StreamWriter, BatchWriter):
        with pytest.raises(ValueError, match='option\\("keyColumn"\\) and option\\("stream"\\)'):
            cls({**base, "keyColumn": "k", "stream": "s"}, schema, False)
        with pytest.raises(ValueError, match='option\\("keyColumn"\\) names column .nope.'):
            cls({**base, "keyColumn": "nope"}, schema, False)
    df = spark.createDataFrame([("a", 1), (None, 2)], "k string, n long")
    for target in ({"url": serve_url}, {"path": str(tmp_path / "dst")}):
        with pytest.raises(Exception, match="is null in row"):
            df.write.format("xstreams").options(**target).option("keyColumn", "k").mode(
                "append"
            ).save()


# ------------------------------------------------------------------ through Spark


def _source(tmp_path: Path, n: int, keys: int) -> str:
    src = str(tmp_path / "src")
    s = xstreams.Store(src)
    s.xadd_batch("in", pa.table({"n": list(range(n)), "k": [f"dev:{i % keys}" for i in range(n)],
                                 "pid": [f"p{i % 5}" for i in range(n)]}))  # fmt: skip
    s.close()
    return src


@pytest.mark.cluster
@pytest.mark.parametrize("idmp", [False, True])
def test_stream_sink_key_column_on_a_cluster(spark, tmp_path, cluster_url, idmp):  # noqa: F811
    """Three batches of 1,000 rows, three tasks each, 16 streams over 3 shards: every row
    once, and within each task each stream's rows in the task's order."""
    _flush(cluster_url)
    src = _source(tmp_path, 3000, 16)

    def mark(batches: Iterator[Any]) -> Iterator[Any]:
        """Each row's task (stage and partition: one per micro-batch) and its place in
        the task's input (defined here: pickled by value for the Python workers)."""
        import pyarrow as pa
        from pyspark import TaskContext

        tc = TaskContext.get()
        task = f"{tc.stageId()}:{tc.partitionId()}"
        pos = 0
        for b in batches:
            n = b.num_rows
            b = b.append_column("task", pa.array([task] * n))
            yield b.append_column("pos", pa.array(range(pos, pos + n), pa.int64()))
            pos += n

    df = (
        spark.readStream.format("xstreams").option("path", src).option("stream", "in")
        .option("maxEntriesPerTrigger", 1000).load()
        .selectExpr("fields['k'] AS k", "CAST(fields['n'] AS LONG) AS n", "fields['pid'] AS pid")
        .repartition(3)
    )  # fmt: skip
    df = df.mapInArrow(mark, f"{df.schema.simpleString()[7:-1]}, task string, pos long")
    w = df.writeStream.format("xstreams").option("url", cluster_url).option("keyColumn", "k")
    if idmp:
        w = w.option("producer", "pid").option("iid", "n")
    q = w.option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True).start()
    q.awaitTermination(300)
    assert q.exception() is None
    seen = []
    for i in range(16):
        got = _entries(cluster_url, f"dev:{i}")
        assert all(b"k" not in e for e in got)  # the key column is not a field
        ns = [int(e[b"n"]) for e in got]
        assert sorted(ns) == list(range(i, 3000, 16))
        for task in {e[b"task"] for e in got}:  # each task's appends in its order
            mine = [int(e[b"pos"]) for e in got if e[b"task"] == task]
            assert mine == sorted(mine)
        seen += ns
    assert len(seen) == 3000


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.parametrize("where", ["cluster", "path"])
def test_worker_killed_mid_write_then_restart(spark, tmp_path, cluster_url, where):  # noqa: F811
    """A task's Python worker dies after writing two slot groups (or staging its file).
    On local[2], which does not retry tasks, the query fails and its restart from the
    checkpoint writes every row once; on the standalone cluster Spark retries the task
    in a new Python worker, and the retry writes every row once."""
    src = _source(tmp_path, 2000, 16)
    if where == "cluster":
        _flush(cluster_url)
        sink: Dict[str, Any] = {"url": cluster_url}
    else:
        sink = {"path": str(tmp_path / "dst")}

    def start(extra: Dict[str, Any]) -> Any:
        df = (
            spark.readStream.format("xstreams").option("path", src).option("stream", "in")
            .load().selectExpr("fields['k'] AS k", "fields['n'] AS n").repartition(2)
        )  # fmt: skip
        w = df.writeStream.format("xstreams").options(**sink, **extra).option("keyColumn", "k")
        w = w.option("checkpointLocation", str(tmp_path / "ck"))
        return w.trigger(availableNow=True).start()

    def rows() -> List[int]:
        out = []
        for i in range(16):
            if where == "cluster":
                out += [int(e[b"n"]) for e in _entries(cluster_url, f"dev:{i}")]
            elif os.path.exists(str(tmp_path / "dst" / "MANIFEST")):
                s = xstreams.Store(str(tmp_path / "dst"), read_only=True)
                if s.execute_command("EXISTS", f"dev:{i}"):
                    got = s.execute_command("XRANGE", f"dev:{i}", "-", "+")
                    out += [int(dict(zip(fv[::2], fv[1::2]))[b"n"]) for _, fv in got]
                s.close()
        return out

    from pyspark.errors import StreamingQueryException

    q = start({"testDieAfterGroups": 2})
    if spark.sparkContext.master.startswith("local"):
        with pytest.raises(StreamingQueryException):
            q.awaitTermination(300)
        if where == "cluster":
            assert 0 < len(rows()) < 2000  # some slots written before the worker died
        q = start({})
    q.awaitTermination(300)
    assert q.exception() is None
    assert sorted(rows()) == list(range(2000))


def _child_done(proc: subprocess.Popen, tmp_path: Path, timeout: float = 400) -> None:
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        raise AssertionError(f"the child did not finish: {child_failed(proc, tmp_path)}") from None
    assert rc == 0, (tmp_path / "child.log").read_bytes().decode(errors="replace")[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("batch", [False, True])
def test_task_retry_after_a_worker_death_writes_once(tmp_path, cluster_url, batch):
    """With task retries (``local[2,4]``): the first attempt of each task dies after
    two slot groups, the retry writes the rest, every row lands once; the streaming
    sink and ``df.write``."""
    _flush(cluster_url)
    src = _source(tmp_path, 2000, 16)
    cfg = {
        "master": "local[2,4]",
        "source": {"path": src, "stream": "in"},
        "select": ["fields['k'] AS k", "fields['n'] AS n"],
        "partitions": 2,
        "sink": {"url": cluster_url, "keyColumn": "k", "testDieAfterGroups": "2"},
        "checkpoint": str(tmp_path / "ck"),
        "trigger": "availableNow",
        "batch": batch,
    }
    _child_done(run_child(cfg, tmp_path), tmp_path)
    got = sorted(int(e[b"n"]) for i in range(16) for e in _entries(cluster_url, f"dev:{i}"))
    assert got == list(range(2000))


@pytest.mark.slow
def test_a_400k_row_micro_batch_stays_off_the_driver(tmp_path, redis_server):
    """One micro-batch of 400,000 rows with ``spark.driver.maxResultSize=1m``: the rows
    never reach the driver (the old sink failed this on maxResultSize)."""
    url = f"redis://{redis_server.host}:{redis_server.port}"
    _flush(url)
    src = _source(tmp_path, 400_000, 8)
    cfg = {
        "conf": {"spark.driver.maxResultSize": "1m"},
        "source": {"path": src, "stream": "in"},
        "select": ["fields['k'] AS k", "fields['n'] AS n"],
        "sink": {"url": url, "keyColumn": "k"},
        "checkpoint": str(tmp_path / "ck"),
        "trigger": "availableNow",
    }
    _child_done(run_child(cfg, tmp_path), tmp_path, timeout=500)
    r = redis.Redis.from_url(url)
    assert sum(r.xlen(f"dev:{i}") for i in range(8)) == 400_000
    assert len(r.keys("xstreams:sink:*")) >= 1  # markers: written by the tasks
    r.close()
