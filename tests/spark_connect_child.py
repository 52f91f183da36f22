"""A Spark Connect client for ``test_spark_connect.py``, in a process of its own (a
Connect session turns every ``pyspark.sql.functions`` call of its process into a Connect
one, so it cannot share the test process with the classic sessions).

    python spark_connect_child.py CONNECT_URL SCENARIO ARGS_JSON

Prints one line of JSON: what the scenario read back (the test asserts on it).
Scenarios: ``dedup`` (``xstreams.spark.dedup`` of the events of
``test_spark_dedup.make_events``); ``write_read`` (``df.write.format("xstreams")`` of
``n`` rows over four streams of a server by ``keyColumn``, then
``spark.read.format("xstreams")`` of them); ``stream`` (a consumer-group query from one
stream of a server into another, ``Trigger.AvailableNow``).
"""

from __future__ import annotations

import json
import sys
from typing import Any, Dict


def dedup(spark: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    from test_spark_dedup import make_events, run

    got = run(
        spark,
        make_events(1),
        producer="pid",
        iid="iid",
        time="ts",
        duration=2,
        maxsize=6,
        order="ord",
    )
    got = {str(rid): list(v) for rid, v in got.items()}
    return {"answers": got}


def write_read(spark: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    url, n, prefix = args["url"], args["n"], args["prefix"]
    df = spark.range(n).selectExpr(
        f"concat('{prefix}', cast(id % 4 as string)) as k", "cast(id as string) as n"
    )
    df.write.format("xstreams").option("url", url).option("keyColumn", "k").mode("append").save()
    keys = [f"{prefix}{i}" for i in range(4)]
    back = spark.read.format("xstreams").option("url", url).option("streams", json.dumps(keys))
    rows = back.load().selectExpr("stream", "fields['n'] as n").collect()
    return {"rows": sorted([r["stream"], r["n"]] for r in rows)}


def stream(spark: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    q = (
        spark.readStream.format("xstreams")
        .option("url", args["url"])
        .option("stream", args["src"])
        .option("group", "g")
        .option("consumer", "c")
        .option("maxEntriesPerTrigger", "100")
        .load()
        .selectExpr("fields['n'] as n")
        .writeStream.format("xstreams")
        .option("url", args["url"])
        .option("stream", args["dst"])
        .option("checkpointLocation", args["checkpoint"])
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination()
    return {"batches": len(q.recentProgress)}


if __name__ == "__main__":
    from pyspark.sql import SparkSession

    url, scenario, raw = sys.argv[1:4]
    session = SparkSession.builder.remote(url).getOrCreate()
    try:
        out = {"dedup": dedup, "write_read": write_read, "stream": stream}[scenario](
            session, json.loads(raw)
        )
        out["remote"] = type(session).__module__
    finally:
        session.stop()
    print(json.dumps(out))
