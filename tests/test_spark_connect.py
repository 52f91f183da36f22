"""``xstreams.spark.dedup`` from a Spark Connect client.

A Connect server (``SparkConnectServer``, what ``sbin/start-connect-server.sh`` starts)
runs its driver on the standalone cluster of the ``spark_standalone`` fixture; the client
(``spark_connect_child.py``, a process of its own) only holds a gRPC channel to it.
``format("xstreams")`` is found by the server's data source lookup (the wheel's
``pyspark_xstreams``), the client registers nothing. dedup's answers are checked
against the single-store reference of ``test_spark_dedup``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import pytest
from spark_support import stop_spark
from test_spark_dedup import make_events, reference

pytestmark = pytest.mark.spark
pytest.importorskip("grpc", reason="Spark Connect's client needs grpcio (pyspark[connect])")

CHILD = Path(__file__).resolve().parent / "spark_connect_child.py"


@pytest.fixture(scope="module")
def connect_url(spark_standalone):
    from cluster_support import ConnectServer

    stop_spark()  # the standalone worker's cores go to the Connect server's application
    server = ConnectServer(spark_standalone.url, spark_standalone.env, spark_standalone.base)
    conf = spark_standalone.session_conf("xstreams-connect-server")
    conf.pop("spark.master")
    conf.pop("spark.app.name")
    server.start(conf)
    try:
        yield server.url
    finally:
        server.stop()


def client(remote: str, scenario: str, **args: Any) -> Dict[str, Any]:
    out = subprocess.run(
        [sys.executable, str(CHILD), remote, scenario, json.dumps(args)],
        capture_output=True,
        text=True,
        timeout=480,
        cwd=str(CHILD.parent),
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
    )
    assert out.returncode == 0, out.stderr[-4000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["remote"].startswith("pyspark.sql.connect"), got["remote"]
    return got


def test_dedup_from_a_connect_client(connect_url):
    got = client(connect_url, "dedup")["answers"]
    want = reference(make_events(1), iid="iid", order="ord", duration=2, maxsize=6)
    assert {int(k): tuple(v) for k, v in got.items()} == want
