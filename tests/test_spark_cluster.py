"""Spark on a standalone cluster: what ``local[2]`` (one JVM) cannot show.

The session of the ``spark_standalone`` fixture (``cluster_support.SparkStandalone``: a
``Master`` and a ``Worker`` JVM started with pip pyspark's ``bin/spark-class``, two
executors of one core, each a JVM of its own with its own Python workers):

* the executors are separate JVMs, and the Python workers that run xstreams are their
  children, not the driver's;
* an executor JVM SIGKILLed while it runs a task of a streaming micro-batch: Spark runs the
  task again on another executor, and the sink still leaves every row in the stream once;
* ``spark.archives`` with a venv packed by ``venv-pack``: the executors' Python is the
  unpacked archive's, not the driver's venv.

Tests that also run on local[2] carry ``@pytest.mark.cluster`` in their own modules
(dedup, the batch reader and writer, the streaming source and sink, ``load``).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List

import pytest
import xstreams
from spark_support import get_spark, stop_spark

pytestmark = pytest.mark.spark

# The executors do not have tests/ on their path (their working directory is the worker's):
# the functions of this module travel by value, as a user's notebook code does.
pytest.importorskip("pyspark").cloudpickle.register_pickle_by_value(sys.modules[__name__])


def wait_for(cond: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.2)


def ancestors(pid: int) -> List[int]:
    """``pid``'s parent, its parent, ... up to pid 1 (from /proc)."""
    out = []
    while pid > 1:
        try:
            with open(f"/proc/{pid}/stat") as f:
                # The command may hold spaces and parentheses: the fields follow the last ")".
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            break
        out.append(pid)
    return out


@pytest.fixture
def cluster_spark(spark_standalone):
    return get_spark(spark_standalone.session_conf())


def _worker_facts(_: Any) -> Iterator[Any]:
    import xstreams as xs

    yield (os.getpid(), sys.executable, xs.__file__)


def test_executors_are_jvms_of_their_own(cluster_spark, spark_standalone):
    """Two executor JVMs, neither the driver's; each task's Python worker descends from
    one of them, and it imports the xstreams the driver's venv has (same path)."""
    sc = cluster_spark.sparkContext
    facts = sc.parallelize(range(8), 8).mapPartitions(_worker_facts).collect()
    executors = spark_standalone.executor_pids(sc.applicationId)
    assert len(executors) == 2
    driver_jvm = sc._jvm.ProcessHandle.current().pid()
    assert driver_jvm not in executors
    for pid, exe, module in facts:
        assert set(ancestors(pid)) & set(executors), (pid, executors)
        assert driver_jvm not in ancestors(pid)
        assert os.path.normpath(exe) == os.path.normpath(sys.executable)
        assert module == xstreams.__file__


class _SlowFirstAttempt:
    """Each task writes ``<dir>/<partition>.<task attempt id>`` holding its pid, then
    sleeps ``seconds`` when it is the first to run its partition (long enough to be
    killed in); a partition run again (a task retry or a stage re-run) has two files."""

    def __init__(self, directory: str, seconds: float) -> None:
        self.directory = directory
        self.seconds = seconds

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        import glob

        from pyspark import TaskContext

        ctx = TaskContext.get()
        first = not glob.glob(os.path.join(self.directory, f"{ctx.partitionId()}.*"))
        name = os.path.join(self.directory, f"{ctx.partitionId()}.{ctx.taskAttemptId()}")
        with open(name, "w") as f:
            f.write(str(os.getpid()))
        if first:
            time.sleep(self.seconds)
        yield from batches


def test_executor_jvm_killed_mid_batch_the_sink_stays_exactly_once(
    cluster_spark, spark_standalone, serve_session, tmp_path
):
    """A streaming query reading a store directory and writing to ``xstreams serve``;
    while a task of its first micro-batch runs, its executor's JVM gets SIGKILL. Spark
    runs the lost work again (a task's next attempt or the stage's, on the other
    executor or a new one) and the sink's output holds every input row exactly once."""
    import redis

    n = 2_000
    src = str(tmp_path / "src")
    st = xstreams.Store(src, fsync="no")
    for i in range(n):
        st.execute_command("XADD", "in", "*", "n", i)
    st.close()
    marks = tmp_path / "marks"
    marks.mkdir()
    url = f"redis://127.0.0.1:{serve_session.port}"
    r = redis.Redis.from_url(url)
    r.flushall()

    df = cluster_spark.readStream.format("xstreams").option("path", src).option("stream", "in")
    df = df.load().selectExpr("map('n', fields['n']) AS fields").repartition(2)
    df = df.mapInArrow(_SlowFirstAttempt(str(marks), 60), df.schema)
    q = (
        df.writeStream.format("xstreams")
        .option("url", url)
        .option("stream", "out")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    app = cluster_spark.sparkContext.applicationId
    try:

        def started() -> List[Path]:
            if not q.isActive:
                raise AssertionError(f"the query stopped before the kill: {q.exception()}")
            return sorted(marks.iterdir())

        first = wait_for(started, 300, "a first task attempt")
        task_pid = int(first[0].read_text())
        before = spark_standalone.executor_pids(app)
        victim = [p for p in before if p in ancestors(task_pid)]
        assert len(victim) == 1, (task_pid, before)
        os.kill(victim[0], signal.SIGKILL)
        assert q.awaitTermination(240), "the query did not finish after the kill"
        assert q.exception() is None, q.exception()
    finally:
        q.stop()
    runs = [p.name.split(".")[0] for p in marks.iterdir()]
    assert any(runs.count(part) > 1 for part in runs), f"no partition was run again: {runs}"
    assert victim[0] not in spark_standalone.executor_pids(app)
    got = [int(fv[b"n"]) for _, fv in r.xrange("out")]
    r.close()
    assert len(got) == n and sorted(got) == list(range(n))


# ------------------------------------------------------------- shipping xstreams


# What executors import from the packed venv (with their dependencies): the rest of the
# test venv (build, lint and test tools) stays out of the archive.
EXECUTOR_PACKAGES = (
    "xstreams", "pyspark_xstreams", "pyspark", "py4j", "pyarrow", "pandas", "numpy",
    "numpy.libs", "dateutil", "pytz", "tzdata", "six", "redis", "typing_extensions",
)  # fmt: skip


def pack_environment(out: Path) -> Path:
    """This venv packed with ``venv-pack`` (the way docs/spark.md ships xstreams to
    executors), with only the packages executors import and the interpreter's links,
    without Spark's jars (the worker has its own) and bytecode caches."""
    venv_pack = pytest.importorskip("venv_pack", reason="venv-pack is not installed")
    site = "lib/python*/site-packages"
    filters = [("exclude", f"{site}/*")]
    for name in EXECUTOR_PACKAGES:
        filters += [("include", f"{site}/{name}/*"), ("include", f"{site}/{name}.py")]
        filters += [("include", f"{site}/{name}-*.dist-info/*")]
    filters += [("exclude", f"{site}/pyspark/jars/*"), ("exclude", "*/__pycache__/*")]
    filters += [("exclude", "bin/*"), ("include", "bin/python*")]
    venv_pack.pack(
        prefix=sys.prefix,
        output=str(out),
        format="tar.gz",
        compress_level=1,
        filters=filters,
        force=True,
    )
    return out


def _python_of(_: Any) -> Iterator[Any]:
    import pyarrow
    import xstreams as xs

    yield (sys.executable, os.path.realpath(xs.__file__), os.getcwd(), pyarrow.__version__)


@pytest.mark.slow
def test_executors_use_the_packed_environment_of_spark_archives(spark_standalone, tmp_path):
    """``spark.archives=pyenv.tar.gz#environment`` with
    ``spark.pyspark.python=./environment/bin/python``: the executors' Python workers run
    the interpreter of the unpacked archive (under their own working directory) and
    import xstreams from it; the driver keeps its own. A batch write through the data
    source works with it."""
    archive = pack_environment(tmp_path / "pyenv.tar.gz")
    conf: Dict[str, str] = {
        **spark_standalone.session_conf("xstreams-archives"),
        "spark.archives": f"{archive}#environment",
        "spark.pyspark.python": "./environment/bin/python",
        "spark.executorEnv.PYSPARK_PYTHON": "./environment/bin/python",
    }
    stop_spark()
    os.environ["PYSPARK_PYTHON"] = "./environment/bin/python"
    try:
        spark = get_spark(conf)
        facts = spark.sparkContext.parallelize(range(4), 4).mapPartitions(_python_of).collect()
        for exe, module, cwd, _ in facts:
            assert exe.startswith(os.path.join(cwd, "environment")), (exe, cwd)
            assert exe != sys.executable
            assert module.startswith(os.path.realpath(os.path.join(cwd, "environment")))
            assert not module.startswith(sys.prefix)
        path = str(tmp_path / "dst")
        spark.createDataFrame([(i,) for i in range(50)], "n long").write.format("xstreams").option(
            "path", path
        ).option("stream", "s").mode("append").save()
        st = xstreams.Store(path)
        got = sorted(int(fv[1]) for _, fv in st.execute_command("XRANGE", "s", "-", "+"))
        st.close()
        assert got == list(range(50))
    finally:
        os.environ["PYSPARK_PYTHON"] = sys.executable
        stop_spark()


def test_the_oracle_runs_a_three_shard_redis_cluster(redis_cluster):
    """The ``redis_cluster`` fixture: three masters sharing the 16384 slots; keys of
    different slots land on different nodes (the tests of the Redis Cluster source and
    sink rely on it)."""
    from redis.cluster import RedisCluster

    c = RedisCluster(host="127.0.0.1", port=redis_cluster.ports[0])
    try:
        shards = c.execute_command("CLUSTER", "SHARDS", target_nodes=c.get_random_node())
        assert len(shards) == 3
        owners = {c.get_node_from_key(f"events:{i}").port for i in range(30)}
        assert owners == set(redis_cluster.ports)
        for i in range(30):
            c.xadd(f"events:{i}", {"n": i})
        assert sum(c.xlen(f"events:{i}") for i in range(30)) == 30
        c.flushall(target_nodes=RedisCluster.PRIMARIES)
        assert c.dbsize(target_nodes=RedisCluster.PRIMARIES) == 0
    finally:
        c.close()
