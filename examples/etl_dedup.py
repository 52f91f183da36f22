#!/usr/bin/env python
"""A small ETL job on Spark with xstreams: dedup, load, replay.

    PYSPARK_PYTHON=$(which python) python examples/etl_dedup.py [--events N] [--dir DIR]

1. Generate sensor readings from 8 devices. The network retries some sends: a retry
   carries the same idempotent ID (``iid``) and arrives 50 ms to 4 s later.
2. ``xstreams.spark.dedup``: what Redis would answer to ``XADD <device> IDMP <device>
   <iid> * ...`` with the server clock at each reading's time and a 2 s IDMP window:
   retries within 2 s are duplicates (their ``entry_id`` is the original's), later ones
   are not (Redis has forgotten the IID by then), exactly as a real server would decide.
3. ``xstreams.spark.load``: append the first occurrences to the stream ``readings`` of a
   durable store, from one task, with IDMP passed through (the dedup ``entry_id`` as the
   IID), so re-running the job adds nothing: shown by loading twice.
4. A ``billing`` consumer group reads and acknowledges part of the stream.
5. ``spark.read.format("xstreams")`` replays what ``billing`` has not acknowledged.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from typing import Any, Dict, Optional

BASE_MS = 1_700_000_000_000


def build_session() -> Any:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("xstreams-etl-dedup")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main(spark: Any = None, workdir: Optional[str] = None, events: int = 4000) -> Dict[str, int]:
    import xstreams
    import xstreams.spark as xs
    from pyspark.sql import functions as F

    own = spark is None
    if own:
        spark = build_session()
    workdir = workdir or tempfile.mkdtemp(prefix="xstreams-etl-")
    path = os.path.join(workdir, "store")

    # 1. Readings, 37 ms apart per device, and retries of every 7th one.
    readings = spark.range(events).select(
        F.concat(F.lit("dev-"), (F.col("id") % 8).cast("string")).alias("device"),
        F.concat(F.lit("r-"), F.col("id").cast("string")).alias("iid"),
        (F.lit(BASE_MS) + F.col("id") * 37).alias("ts"),
        F.round(F.rand(seed=1) * 100, 2).alias("celsius"),
    )
    retries = readings.where(F.col("iid").endswith("7")).select(
        "device",
        "iid",
        (F.col("ts") + F.when(F.hash("iid") % 2 == 0, 50).otherwise(4000)).alias("ts"),
        "celsius",
    )
    sent = readings.unionByName(retries)

    # 2. Dedup as Redis would: per device, in time order, 2 s window. The duplicate flag
    #    and, asked for here, the reply itself: each reading's entry ID.
    deduped = xs.dedup(sent, producer="device", iid="iid", time="ts", duration=2,
                       maxsize=10_000, columns=["entry_id", "duplicate"])  # fmt: skip
    deduped.cache()
    counts = deduped.groupBy("duplicate").count().collect()
    dup = sum(r["count"] for r in counts if r["duplicate"])
    kept = deduped.where(~F.col("duplicate")).drop("duplicate")
    print(f"sent {sent.count()} readings ({retries.count()} retries): {dup} duplicates")

    # 3. Load the first occurrences (twice: the second run adds nothing). Their dedup
    #    entry_id identifies each one (a late retry has its own), so it is the load's IID.
    opts = dict(producer="device", iid="entry_id", fields=["device", "iid", "ts", "celsius"],
                idmp_maxsize=10_000, idmp_duration=86_400)  # fmt: skip
    first = xs.load(kept, path, "readings", **opts)
    again = xs.load(kept, path, "readings", **opts)
    print(f"loaded {first['added']} entries; re-run added {again['added']}")

    # 4. Billing consumes 1000 entries and acknowledges 600 of them.
    r = xstreams.Redis(store=xstreams.Store(path), decode_responses=True)
    r.xgroup_create("readings", "billing", id="0")
    batch = r.xreadgroup("billing", "worker-1", {"readings": ">"}, count=1000)
    r.xack("readings", "billing", *[entry_id for entry_id, _ in batch[0][1][:600]])
    length = r.xlen("readings")
    r.store.close()

    # 5. Replay what billing has not acknowledged.
    unacked = (
        spark.read.format("xstreams")
        .option("path", path)
        .option("stream", "readings")
        .option("group", "billing")
        .schema("id string, ms long, seq long, device string, celsius double")
        .load()
    )
    n_unacked = unacked.count()
    print(f"stream has {length} entries; billing has not acknowledged {n_unacked}")
    unacked.orderBy("ms", "seq").show(5)
    result = {
        "sent": sent.count(),
        "duplicates": dup,
        "loaded": first["added"],
        "reloaded": again["added"],
        "length": length,
        "unacked": n_unacked,
        "unacked_without_device": unacked.where(F.col("device").isNull()).count(),
    }
    deduped.unpersist()
    if own:
        spark.stop()
    return result


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=4000)
    ap.add_argument("--dir", default=None, help="work directory (default: a temporary one)")
    a = ap.parse_args()
    main(workdir=a.dir, events=a.events)
