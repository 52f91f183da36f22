"""A streaming query the kill tests of ``test_spark_stream.py`` run in a child process and
SIGKILL part-way (then restart from the checkpoint in the test's own session).

    python spark_stream_child.py CONFIG_JSON

``CONFIG_JSON`` (see :func:`build`): ``source`` options, ``sink`` options or
``"json": DIR`` (Spark's file sink), ``checkpoint``, ``slow`` (seconds each task sleeps
per partition index, so that a batch is caught part-way), ``trigger``
(``"availableNow"`` or a processing-time interval), ``partitions`` (a repartition
before the sink), and for :func:`session` ``master`` (default ``local[2]``;
``local[2,4]`` retries a failed task) and ``conf`` (Spark settings). ``"batch": true``
runs ``spark.read`` and ``df.write`` of the same options instead, once.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Dict, Iterator, Optional

from spark_support import use_spark_home


class _Slow:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        from pyspark import TaskContext

        time.sleep(self.seconds * (1 + TaskContext.get().partitionId()))
        yield from batches


def build(spark: Any, cfg: Dict[str, Any]) -> Any:
    """Start the configured query on ``spark`` (no registration call: auto-discovered)."""
    reader = spark.readStream.format("xstreams")
    for k, v in cfg["source"].items():
        reader = reader.option(k, v)
    df = reader.load()
    if cfg.get("select"):
        df = df.selectExpr(*cfg["select"])
    if cfg.get("slow"):
        df = df.repartition(2).mapInArrow(_Slow(cfg["slow"]), df.schema)
    if cfg.get("partitions"):
        df = df.repartition(int(cfg["partitions"]))
    if "json" in cfg:
        w = df.writeStream.format("json").option("path", cfg["json"])
    else:
        w = df.writeStream.format("xstreams")
        for k, v in cfg["sink"].items():
            w = w.option(k, v)
    w = w.option("checkpointLocation", cfg["checkpoint"])
    trig = cfg.get("trigger", "200 milliseconds")
    w = w.trigger(availableNow=True) if trig == "availableNow" else w.trigger(processingTime=trig)
    return w.start()


def batch_write(spark: Any, cfg: Dict[str, Any]) -> None:
    """``spark.read`` of the source options, ``df.write`` to the sink options."""
    reader = spark.read.format("xstreams")
    for k, v in cfg["source"].items():
        reader = reader.option(k, v)
    df = reader.load()
    if cfg.get("select"):
        df = df.selectExpr(*cfg["select"])
    if cfg.get("partitions"):
        df = df.repartition(int(cfg["partitions"]))
    w = df.write.format("xstreams").mode("append")
    for k, v in cfg["sink"].items():
        w = w.option(k, v)
    w.save()


def session(cfg: Optional[Dict[str, Any]] = None) -> Any:
    cfg = cfg or {}
    os.environ["PYSPARK_PYTHON"] = sys.executable
    use_spark_home()  # the parent's SPARK_HOME if it set one (inherited), else the same
    from pyspark.sql import SparkSession

    b = (
        SparkSession.builder.master(cfg.get("master", "local[2]"))
        .appName("xstreams-kill-child")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
    )
    for k, v in cfg.get("conf", {}).items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


if __name__ == "__main__":
    config = json.loads(sys.argv[1])
    if config.get("batch"):
        batch_write(session(config), config)
    else:
        q = build(session(config), config)
        q.awaitTermination()
