"""``xstreams.spark.dedup``, the batch sink and reader, and a streaming query, from a
Spark Connect client.

A Connect server (``SparkConnectServer``, what ``sbin/start-connect-server.sh`` starts)
runs its driver on the standalone cluster of the ``spark_standalone`` fixture; the client
(``spark_connect_child.py``, a process of its own) only holds a gRPC channel to it.
``format("xstreams")`` is found by the server's data source lookup (the wheel's
``pyspark_xstreams``), the client registers nothing. dedup's answers are checked
against the single-store reference of ``test_spark_dedup``; what the sinks wrote to
``xstreams serve`` is read back with redis-py.
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


def _client_of(srv: Any) -> Any:
    import redis

    return redis.Redis(host="127.0.0.1", port=srv.port, protocol=2)


def test_batch_write_and_read_from_a_connect_client(connect_url, serve_session):
    url = f"redis://127.0.0.1:{serve_session.port}"
    got = client(connect_url, "write_read", url=url, n=1000, prefix="connect:wr:")["rows"]
    r = _client_of(serve_session)
    want = []
    for i in range(4):
        key = f"connect:wr:{i}"
        entries = r.xrange(key)
        assert sorted(int(f[b"n"]) for _, f in entries) == list(range(i, 1000, 4))
        want += [[key, f[b"n"].decode()] for _, f in entries]
    assert got == sorted(want) and len(got) == 1000


def test_group_stream_query_from_a_connect_client(connect_url, serve_session, tmp_path):
    url = f"redis://127.0.0.1:{serve_session.port}"
    r = _client_of(serve_session)
    for i in range(450):
        r.xadd("connect:src", {"n": str(i)})
    got = client(
        connect_url, "stream", url=url, src="connect:src", dst="connect:dst",
        checkpoint=str(tmp_path / "ck"),
    )  # fmt: skip
    assert got["batches"] >= 5  # maxEntriesPerTrigger 100 holds under AvailableNow
    assert [int(f[b"n"]) for _, f in r.xrange("connect:dst")] == list(range(450))
    assert r.xpending("connect:src", "g")["pending"] == 0  # the last batch acked too
