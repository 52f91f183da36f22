"""Limits as redis-server names them, through redis-py, on ``xstreams serve`` and on
redis-server (the oracle, when one is found): maxmemory under noeviction, maxclients,
timeout, client-output-buffer-limit, proto-max-bulk-len."""

from __future__ import annotations

import socket
import time

import pytest
from differential.servers import RedisServer, find_redis_server
from server_support import ServerProcess, require_serve

redis = pytest.importorskip("redis")

OOM = "command not allowed when used memory > 'maxmemory'."


@pytest.fixture(params=["xstreams", "redis"])
def port(request):
    if request.param == "xstreams":
        require_serve()
        with ServerProcess() as srv:
            yield srv.port
    else:
        if not find_redis_server():
            pytest.skip("no redis-server binary (set XSTREAMS_REDIS_SERVER)")
        with RedisServer() as srv:
            yield srv.port


def client(port, **kw):
    return redis.Redis(port=port, decode_responses=True, **kw)


def test_maxmemory_noeviction(port):
    r = client(port)
    r.xadd("s", {"f": "v"})
    used = int(r.info("memory")["used_memory"])
    # Just under what is used now: every write that may grow memory is refused.
    r.config_set("maxmemory", str(used // 2))
    assert r.config_get("maxmemory") == {"maxmemory": str(used // 2)}
    info = r.info("memory")
    assert info["maxmemory"] == used // 2
    assert info["maxmemory_policy"] == "noeviction"
    with pytest.raises(redis.exceptions.OutOfMemoryError, match="maxmemory"):
        r.xadd("s", {"f": "v"})
    with pytest.raises(redis.exceptions.ResponseError) as e:
        r.set("k", "v")
    assert str(e.value) == OOM
    # Reads and deletes go on.
    assert r.xlen("s") == 1
    assert r.xrange("s")[0][1] == {"f": "v"}
    assert r.delete("s") == 1
    r.config_set("maxmemory", "0")
    assert r.xadd("s", {"f": "v"})


def test_maxclients(port):
    r = client(port)
    r.config_set("maxclients", "2")
    other = client(port)
    other.ping()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        assert s.recv(100).startswith(b"-ERR max number of clients reached")
    other.close()
    r.config_set("maxclients", "10000")


def test_timeout_closes_idle_clients(port):
    r = client(port)
    r.config_set("timeout", "1")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"PING\r\n")
        assert s.recv(100) == b"+PONG\r\n"
        t = time.monotonic()
        assert s.recv(100) == b""  # closed by the server
        assert time.monotonic() - t >= 0.9
    r = client(port)
    r.config_set("timeout", "0")


def test_output_buffer_hard_limit(port):
    r = client(port)
    r.config_set("client-output-buffer-limit", "normal 100kb 0 0")
    p = r.pipeline(transaction=False)
    for _ in range(300):
        p.xadd("s", {"f": "v" * 1000})
    p.execute()
    assert len(r.xrange("s", count=10)) == 10
    big = client(port)
    with pytest.raises(redis.exceptions.ConnectionError):
        big.xrange("s")
    stats = r.info("stats")
    # (redis-py retries a failed command: one disconnection or more)
    assert stats["client_output_buffer_limit_disconnections"] >= 1
    r.config_set("client-output-buffer-limit", "normal 0 0 0")


def test_proto_max_bulk_len(port):
    r = client(port)
    r.config_set("proto-max-bulk-len", "1mb")
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"*2\r\n$4\r\nECHO\r\n$1048577\r\n")
        data = b""
        while not data.endswith(b"\r\n"):
            chunk = s.recv(100)
            if not chunk:
                break
            data += chunk
        assert data == b"-ERR Protocol error: invalid bulk length\r\n"
        assert s.recv(100) == b""


def test_embedded_store_maxmemory(tmp_path):
    """``Store(config={"maxmemory": ...})``: the engine refuses growing writes itself."""
    import xstreams

    s = xstreams.Store(config={"maxmemory": "2mb"})
    assert s.config_get("maxmemory") == str(2 * 1024 * 1024)
    assert s.config_get("maxmemory-policy") == "noeviction"
    refused = None
    for i in range(5000):
        try:
            s.execute_command("XADD", "s", "*", "f", "v" * 1000)
        except xstreams.ResponseError as e:
            refused = (i, e)
            break
    assert refused is not None, "never refused"
    assert refused[0] > 100
    assert refused[1].reply == "OOM " + OOM
    assert s.execute_command("XLEN", "s") == refused[0]
    assert s.execute_command("XTRIM", "s", "MAXLEN", "0") == refused[0]
    assert s.execute_command("XADD", "s", "*", "f", "v")
    with pytest.raises(ValueError):
        xstreams.Store(config={"maxmemory-policy": "allkeys-lru"})
    # A limit is not data: a durable store does not keep it.
    d = str(tmp_path / "db")
    durable = xstreams.Store(d, config={"maxmemory": "2mb"})
    assert durable.config_get("maxmemory") == str(2 * 1024 * 1024)
    durable.close()
    reopened = xstreams.Store(d)
    assert reopened.config_get("maxmemory") == "0"
    reopened.close()
