"""The consumer-group mode of the ``xstreams`` source under Spark: batches bounded by
``maxEntriesPerTrigger`` under ``Trigger.AvailableNow``, and nothing left pending once a
query has stopped after its batches were committed (AvailableNow's end, ``query.stop()``
with the reader given the checkpoint). Against redis-server 8.8 and ``xstreams serve``.
(A kill before a batch's commit: ``test_spark_stream.py::test_group_mode_kill_and_restart``.)
"""

from __future__ import annotations

import time
from typing import Any, List

import pytest
from redis_cluster_support import RedisProcess
from server_support import ServerProcess, require_serve
from spark_support import spark  # noqa: F401

redis = pytest.importorskip("redis")

pytestmark = pytest.mark.spark


@pytest.fixture(params=["redis", "serve"])
def url(request):
    if request.param == "redis":
        with RedisProcess() as srv:
            yield f"redis://127.0.0.1:{srv.port}"
    else:
        require_serve()
        with ServerProcess(debug=False) as srv:
            yield f"redis://127.0.0.1:{srv.port}"


def _client(url: str) -> Any:
    return redis.Redis.from_url(url, protocol=2, decode_responses=True)


def _add(r: Any, key: str, n: int) -> None:
    p = r.pipeline(transaction=False)
    for i in range(n):
        p.xadd(key, {"n": i})
    p.execute()


def _group(r: Any, key: str) -> Any:
    return r.xinfo_groups(key)[0]


def _run_available_now(spark, url: str, ck: str) -> List[int]:  # noqa: F811
    q = (
        spark.readStream.format("xstreams")
        .option("url", url)
        .option("stream", "ev")
        .option("group", "g")
        .option("consumer", "c")
        .option("maxEntriesPerTrigger", "10000")
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", ck)
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination(300)
    assert not q.isActive and q.exception() is None, q.exception()
    return [p["numInputRows"] for p in q.recentProgress if p["numInputRows"]]


def test_available_now_batches_are_capped_and_all_acked(spark, url, tmp_path):  # noqa: F811
    r = _client(url)
    _add(r, "ev", 30_000)
    ck = str(tmp_path / "ck")
    assert _run_available_now(spark, url, ck) == [10_000, 10_000, 10_000]
    g = _group(r, "ev")
    assert (g["pending"], g["lag"], g["entries-read"]) == (0, 0, 30_000)
    # A second run from the same checkpoint: only the new entries, all acknowledged.
    _add(r, "ev", 100)
    assert _run_available_now(spark, url, ck) == [100]
    g = _group(r, "ev")
    assert (g["pending"], g["lag"], g["entries-read"]) == (0, 0, 30_100)
    # And a run with nothing new: no batch, nothing changes.
    assert _run_available_now(spark, url, ck) == []
    assert _group(r, "ev")["pending"] == 0
    r.close()


@pytest.mark.parametrize("give_checkpoint", [True, False])
def test_query_stop_leaves_nothing_pending(spark, url, tmp_path, give_checkpoint):  # noqa: F811
    """A query stopped between triggers after its last batch was committed: with
    ``checkpointLocation`` given to the reader too, that batch is acknowledged when the
    query stops; without it, it stays pending until the next run's first trigger."""
    r = _client(url)
    _add(r, "ev", 2500)
    ck = str(tmp_path / "ck")
    reader = (
        spark.readStream.format("xstreams")
        .option("url", url)
        .option("stream", "ev")
        .option("group", "g")
        .option("consumer", "c")
        .option("maxEntriesPerTrigger", "1000")
    )
    if give_checkpoint:
        reader = reader.option("checkpointLocation", ck)
    q = (
        reader.load()
        .writeStream.format("noop")
        .option("checkpointLocation", ck)
        .trigger(processingTime="600 seconds")
        .start()
    )
    try:
        deadline = time.monotonic() + 240
        # One trigger each 10 minutes: the first batch (1000 entries) runs, then the query waits.
        while not any(p["numInputRows"] for p in q.recentProgress):
            assert q.isActive and time.monotonic() < deadline, q.exception()
            time.sleep(0.2)
        time.sleep(1)
    finally:
        q.stop()
    g = _group(r, "ev")
    assert g["entries-read"] == 1000
    assert g["pending"] == (0 if give_checkpoint else 1000)
    r.close()


def test_spark_redacts_the_password_and_url_options(spark):  # noqa: F811
    """The AUTH options' names are ones Spark's default redaction patterns hide: the
    ``password`` option by ``spark.redaction.regex``, the ``url`` option in plans by
    ``spark.sql.redaction.options.regex``; a ``user`` option is not a secret."""
    import re

    jvm = spark.sparkContext._jvm
    config = getattr(getattr(jvm.org.apache.spark.internal.config, "package$"), "MODULE$")
    core = spark.sparkContext._jsc.sc().conf().get(config.SECRET_REDACTION_PATTERN()).toString()
    sql = (
        spark._jsparkSession.sessionState()
        .conf()
        .getConfString("spark.sql.redaction.options.regex")
    )
    assert re.search(core, "password") and not re.search(core, "user")
    assert re.search(sql, "url")
    assert not re.search(core, "tlsCaCertFile")  # a path, shown as it is


@pytest.mark.cluster
def test_cluster_group_source_available_now(spark, redis_cluster, tmp_path):  # noqa: F811
    """A Redis Cluster read by a group with two consumers per stream (``consumers``),
    streams found by ``streamPattern`` on every shard, under ``AvailableNow`` with a cap:
    every entry once in the output, batches under the cap, and nothing pending or lagging
    once the run has ended. On local[2] and on the standalone cluster's executors."""
    from xstreams import spark_conn

    url = redis_cluster.url
    r = spark_conn.connect({"url": url})
    run = tmp_path.name.replace("[", "_").replace("]", "_")
    keys = [f"acks:{run}:{i}" for i in range(6)]
    assert len({redis_cluster.owner(spark_conn.key_slot(k)) for k in keys}) == 3
    ids = []
    for k in keys:
        for i in range(500):
            ids.append((k, r.execute_command("XADD", k, "*", "n", i).decode()))
    out = str(tmp_path / "out")
    q = (
        spark.readStream.format("xstreams")
        .option("url", url)
        .option("streamPattern", f"acks:{run}:*")
        .option("group", "g")
        .option("consumer", "c")
        .option("consumers", "2")
        .option("maxEntriesPerTrigger", "1000")
        .load()
        .select("stream", "id")
        .writeStream.format("json")
        .option("path", out)
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination(300)
    assert not q.isActive and q.exception() is None, q.exception()
    sizes = [p["numInputRows"] for p in q.recentProgress if p["numInputRows"]]
    assert sum(sizes) == 3000 and max(sizes) <= 1000 and len(sizes) == 3
    got = [(x.stream, x.id) for x in spark.read.json(out).collect()]
    assert sorted(got) == sorted(ids)
    for k in keys:
        assert int(r.execute_command("XPENDING", k, "g")[0]) == 0
        groups = r.execute_command("XINFO", "GROUPS", k)[0]
        info = dict(zip(groups[::2], groups[1::2]))
        assert info[b"lag"] == 0 and info[b"entries-read"] == 500
    r.close()
