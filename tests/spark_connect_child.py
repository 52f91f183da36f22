"""A Spark Connect client for ``test_spark_connect.py``, in a process of its own (a
Connect session turns every ``pyspark.sql.functions`` call of its process into a Connect
one, so it cannot share the test process with the classic sessions).

    python spark_connect_child.py CONNECT_URL SCENARIO ARGS_JSON

Prints one line of JSON: what the scenario read back (the test asserts on it).
Scenario: ``dedup`` (``xstreams.spark.dedup`` of the events of
``test_spark_dedup.make_events``).
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


if __name__ == "__main__":
    from pyspark.sql import SparkSession

    url, scenario, raw = sys.argv[1:4]
    session = SparkSession.builder.remote(url).getOrCreate()
    try:
        out = {"dedup": dedup}[scenario](session, json.loads(raw))
        out["remote"] = type(session).__module__
    finally:
        session.stop()
    print(json.dumps(out))
