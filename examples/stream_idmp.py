"""A streaming pipeline on Redis streams with Spark Structured Streaming and xstreams.

    python examples/stream_idmp.py [--url redis://host:port] [--seconds 20]

1. **Producers with retries**: Spark's ``rate`` source stands in for devices sending
   events; every 5th event is sent twice (a retry after a lost acknowledgement), with the
   same ``(pid, iid)``.
2. **Ingest, exactly once**: a streaming query writes every row to the stream ``events``
   with ``XADD events IDMP <pid> <iid> * ...`` (``format("xstreams")`` with
   ``producer``/``iid`` options): the server drops the retries as Redis's IDMP does, and
   the sink's marker makes a restarted query write nothing twice.
3. **Consume with a consumer group**: a second query reads ``events`` as consumer
   ``c1`` of group ``billing`` (``XREADGROUP``; ``XACK`` after each checkpointed batch)
   and writes Parquet files.

No registration call: ``format("xstreams")`` is found by PySpark once xstreams is
installed. Without ``--url`` the example starts ``xstreams serve`` (in memory) on a free
port and stops it at the end; any Redis >= 8.6 works too (IDMP).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, Optional


def start_server() -> tuple[subprocess.Popen, str]:
    """``xstreams serve`` on a free loopback port (in memory)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "xstreams.server", "--port", str(port), "--bind", "127.0.0.1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, f"redis://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("xstreams serve did not start")


def consumed_rows(spark: Any, out_dir: str) -> int:
    """Rows the consumer query has written so far (0 before its first file)."""
    from pyspark.errors import AnalysisException

    try:
        return spark.read.parquet(out_dir).count()
    except AnalysisException:  # no Parquet file yet
        return 0


def main(spark: Any, workdir: str, url: str, rows_per_s: int = 200, seconds: float = 20) -> Dict:
    import redis
    from pyspark.sql import functions as F

    r = redis.Redis.from_url(url)
    # 1. Devices: 4 producers; every 5th event is sent a second time (same pid and iid).
    sent = (
        spark.readStream.format("rate")
        .option("rowsPerSecond", rows_per_s)
        .load()
        .select(
            F.concat(F.lit("dev"), (F.col("value") % 4).cast("string")).alias("pid"),
            F.concat(F.lit("e"), F.col("value").cast("string")).alias("iid"),
            F.col("value").alias("n"),
            F.explode(
                F.when(F.col("value") % 5 == 0, F.array(F.lit(0), F.lit(1))).otherwise(
                    F.array(F.lit(0))
                )
            ).alias("attempt"),
        )
    )
    # 2. Ingest into the stream "events", deduplicated by the server's IDMP.
    ingest = (
        sent.writeStream.format("xstreams")
        .option("url", url)
        .option("stream", "events")
        .option("producer", "pid")
        .option("iid", "iid")
        .option("checkpointLocation", os.path.join(workdir, "ck-ingest"))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    # 3. Consume "events" with a consumer group into Parquet.
    consumed = (
        spark.readStream.format("xstreams")
        .option("url", url)
        .option("stream", "events")
        .option("group", "billing")
        .option("consumer", "c1")
        .option("maxEntriesPerTrigger", 5000)
        .schema("stream string, id string, ms long, seq long, pid string, iid string, n long")
        .load()
    )
    out_dir = os.path.join(workdir, "billing")
    consume = (
        consumed.writeStream.format("parquet")
        .option("path", out_dir)
        .option("checkpointLocation", os.path.join(workdir, "ck-billing"))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    try:
        t0 = time.monotonic()
        # Run for `seconds` (and until the first micro-batch is in: starting takes a while).
        while time.monotonic() - t0 < seconds or (r.xlen("events") == 0 and ingest.isActive):
            if time.monotonic() - t0 > seconds + 120:
                raise RuntimeError("the ingest query wrote nothing in two minutes")
            time.sleep(0.5)
        ingest.stop()
        if ingest.exception() is not None:
            raise RuntimeError(f"ingest failed: {ingest.exception()}")
        # Let the consumer catch up with what was ingested, then stop it. A write task of
        # the batch the stop aborted may still land its XADDs after stop() returns (Redis
        # cannot take an append back; the IDMP identities make a re-run harmless), so the
        # length is read again until it has held still across a check.
        length = -1
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            now = r.xlen("events")
            if now == length and consumed_rows(spark, out_dir) >= length:
                break
            length = now
            if not consume.isActive:
                raise RuntimeError(f"the consumer failed: {consume.exception()}")
            time.sleep(0.5)
    finally:
        ingest.stop()
        consume.stop()
    out = spark.read.parquet(out_dir)
    sent_rows = sum(p["numInputRows"] for p in ingest.recentProgress)
    res = {
        "length": r.xlen("events"),
        "consumed": out.count(),
        "distinct_consumed": out.select("id").distinct().count(),
        "retried_iids": out.groupBy("pid", "iid").count().where("count > 1").count(),
        "sent_in_recent_batches": sent_rows,
    }
    out.groupBy("pid").agg(F.count("*").alias("events"), F.max("n").alias("last_n")).orderBy(
        "pid"
    ).show()
    r.close()
    return res


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", default=None, help="redis://host:port (default: start xstreams serve)")
    ap.add_argument("--seconds", type=float, default=20)
    args = ap.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.master("local[2]").appName("xstreams-stream").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    server: Optional[subprocess.Popen] = None
    url = args.url
    if url is None:
        server, url = start_server()
    try:
        print(main(spark, tempfile.mkdtemp(prefix="xstreams-stream-"), url, seconds=args.seconds))
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
        spark.stop()
