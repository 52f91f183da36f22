"""``examples/etl_dedup.py`` runs (on the shared SparkSession) and its numbers add up."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from spark_support import spark  # noqa: F401

pytest_plugins = ("client_support.fixtures",)

pytestmark = pytest.mark.spark

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "etl_dedup.py"


def test_etl_dedup_example(spark, tmp_path):  # noqa: F811
    spec = importlib.util.spec_from_file_location("etl_dedup", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    res = mod.main(spark, str(tmp_path), events=2000)
    retries = 200  # ids ending in 7
    assert res["sent"] == 2000 + retries
    assert 0 < res["duplicates"] < retries  # retries after 4 s are outside the 2 s window
    assert res["loaded"] == res["sent"] - res["duplicates"] == res["length"]
    assert res["reloaded"] == 0
    assert res["unacked"] == res["length"] - 600
    assert res["unacked_without_device"] == 0  # the load writes the device field


STREAM_EXAMPLE = EXAMPLE.parent / "stream_idmp.py"


def _server_for_the_stream_example(redis_server) -> tuple[object, str]:
    """``xstreams serve`` if it has WATCH (the sink's transaction needs it), else the
    test redis-server if it has XADD IDMP (8.6+)."""
    import redis
    from server_support import ServerProcess

    srv = ServerProcess(debug=False).start()
    url = f"redis://127.0.0.1:{srv.port}"
    r = redis.Redis.from_url(url)
    try:
        r.execute_command("WATCH", "k")
        r.close()
        return srv, url
    except redis.ResponseError:
        r.close()
        srv.stop()
    url = f"redis://{redis_server.host}:{redis_server.port}"
    r = redis.Redis.from_url(url)
    try:
        r.flushall()
        r.execute_command("XADD", "probe", "IDMP", "p", "i", "*", "f", "v")
        r.flushall()
    except redis.ResponseError:
        pytest.skip(f"xstreams serve has no WATCH and redis-server {redis_server.version} no IDMP")
    finally:
        r.close()
    return None, url


def test_stream_idmp_example(spark, tmp_path, redis_server):  # noqa: F811
    srv, url = _server_for_the_stream_example(redis_server)
    try:
        spec = importlib.util.spec_from_file_location("stream_idmp", STREAM_EXAMPLE)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        res = mod.main(spark, str(tmp_path), url, rows_per_s=100, seconds=8)
    finally:
        if srv is not None:
            srv.stop()
    assert res["length"] > 0
    assert res["consumed"] == res["distinct_consumed"] == res["length"]
    assert res["retried_iids"] == 0  # the retries were dropped by IDMP
