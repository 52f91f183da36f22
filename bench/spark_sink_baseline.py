#!/usr/bin/env python
"""The streaming sink's executor-side writes against the design they replaced, for the
issue-44 bench (``bench/bench_spark_cluster.py`` or a rough check by hand).

    python bench/spark_sink_baseline.py --url redis://127.0.0.1:6379 \\
        [--baseline-url redis://127.0.0.1:6380] [--rows 200000] [--streams 64] [--master local[2]]
        [--partitions 4] [--only driver|executor]

Functions (each runs one ``Trigger.AvailableNow`` query over a streaming DataFrame of
``k`` (the stream key) and ``n`` columns, returns ``{"rows", "seconds", "rows_per_s",
"driver_peak_rss"}``):

* :func:`driver_side_commit`: the old sink's design as a ``foreachBatch``: the batch is
  collected to the driver (Arrow, ``toArrow``) and written there in one ``MULTI``/``EXEC``
  over one connection (one server: a transaction cannot span a cluster's shards), with a
  marker of the batch id in the same transaction;
* :func:`executor_side`: ``writeStream.format("xstreams")`` with ``keyColumn``: every
  task writes its own rows to the target (a server or a Redis Cluster).

``driver_peak_rss`` is the driver JVM's peak resident set (``VmHWM`` of
``/proc/<pid>/status``; ``None`` without ``/proc``); run each contender in its own session
(a fresh JVM) when comparing it across batch sizes. :func:`source` writes the input store.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from typing import Any, Dict, Optional


def source(path: str, rows: int, streams: int) -> None:
    """A store at ``path`` with ``rows`` entries in stream ``in`` (fields ``k``, ``n``),
    keys ``s:0`` .. ``s:<streams-1>`` in turn."""
    import pyarrow as pa
    import xstreams

    s = xstreams.Store(path)
    step = 500_000
    for lo in range(0, rows, step):
        hi = min(rows, lo + step)
        s.xadd_batch(
            "in",
            pa.table({"k": [f"s:{i % streams}" for i in range(lo, hi)], "n": list(range(lo, hi))}),
        )
    s.close()


def _stream(spark: Any, path: str) -> Any:
    return (
        spark.readStream.format("xstreams").option("path", path).option("stream", "in").load()
        .selectExpr("fields['k'] AS k", "fields['n'] AS n")
    )  # fmt: skip


def _driver_rss(spark: Any) -> Optional[int]:
    """The driver JVM's peak resident set in bytes (``VmHWM``)."""
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _run(spark: Any, writer: Any, rows: int, checkpoint: str) -> Dict[str, Any]:
    t0 = time.perf_counter()
    q = writer.option("checkpointLocation", checkpoint).trigger(availableNow=True).start()
    q.awaitTermination()
    seconds = time.perf_counter() - t0
    if q.exception() is not None:
        raise RuntimeError(f"the query failed: {q.exception()}")
    return {"rows": rows, "seconds": seconds, "rows_per_s": rows / seconds,
            "driver_peak_rss": _driver_rss(spark)}  # fmt: skip


class _DriverCommit:
    """``foreachBatch``: collect, then one MULTI/EXEC with a marker (the old sink)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def __call__(self, df: Any, batch_id: int) -> None:
        import redis
        from xstreams.spark_io import RowShape

        table = df.toArrow()
        shape = RowShape({"keyColumn": "k"}, ["k", "n"])
        r = redis.Redis.from_url(self.url)
        try:
            marker = "bench:driver-commit:marker"
            with r.pipeline(transaction=True) as pipe:
                pipe.watch(marker)
                if int(pipe.get(marker) or -1) >= batch_id:
                    return
                pipe.multi()
                from xstreams.spark_io import stream_parts

                for key, part in stream_parts(table, "k", None):
                    for b in part.to_batches(max_chunksize=20_000):
                        for argv in shape.commands(key, b):
                            pipe.execute_command(*argv)
                pipe.set(marker, batch_id)
                pipe.execute()
        finally:
            r.close()


def driver_side_commit(
    spark: Any, path: str, url: str, rows: int, checkpoint: str
) -> Dict[str, Any]:
    w = _stream(spark, path).writeStream.foreachBatch(_DriverCommit(url))
    return _run(spark, w, rows, checkpoint)


def executor_side(
    spark: Any, path: str, url: str, rows: int, checkpoint: str, partitions: int = 0
) -> Dict[str, Any]:
    """``partitions``: a ``repartition`` before the sink (0: none; a store source of a
    small batch may come as one task)."""
    df = _stream(spark, path)
    if partitions:
        df = df.repartition(partitions)
    w = df.writeStream.format("xstreams").option("url", url)
    return _run(spark, w.option("keyColumn", "k"), rows, checkpoint)


def _flush(url: str) -> None:
    from xstreams.spark_conn import connect, primaries

    c = connect(url)
    for node in primaries(c):
        node.flushall()
    c.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True, help="the executor-side target (server or cluster)")
    ap.add_argument("--baseline-url", help="one server for the driver-side commit (default --url)")
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--streams", type=int, default=64)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--partitions", type=int, default=4, help="tasks of the executor side")
    ap.add_argument("--only", choices=["driver", "executor"])
    a = ap.parse_args()
    from pyspark.sql import SparkSession

    work = tempfile.mkdtemp(prefix="xstreams-sink-bench-")
    try:
        src = os.path.join(work, "src")
        source(src, a.rows, a.streams)
        spark = (
            SparkSession.builder.master(a.master).appName("xstreams-sink-baseline")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.execution.arrow.maxBytesPerBatch", "2147483647")
            .config("spark.driver.maxResultSize", "0")
            .getOrCreate()
        )  # fmt: skip
        spark.sparkContext.setLogLevel("ERROR")
        runs = [
            ("executor", a.url),
            ("driver", a.baseline_url or a.url),
        ]
        for name, url in runs:
            if a.only and a.only != name:
                continue
            _flush(url)
            ck = os.path.join(work, f"ck-{name}")
            if name == "executor":
                got = executor_side(spark, src, url, a.rows, ck, a.partitions)
            else:
                got = driver_side_commit(spark, src, url, a.rows, ck)
            rss = got["driver_peak_rss"]
            mib = rss / 2**20 if rss else float("nan")
            print(
                f"{name:9s} {got['rows']} rows {got['seconds']:.2f} s "
                f"{got['rows_per_s']:,.0f} rows/s, driver peak RSS {mib:.0f} MiB",
                flush=True,
            )
        spark.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
