"""``xstreams import`` and ``xstreams export``: RDB files of a real redis-server 8.8.

An RDB file written by redis-server (``SAVE``) imports into a durable store with the
same streams, strings and expiries (other types skipped and counted); a file we export
is loaded by a fresh redis-server started on it, with the same contents.
"""

from __future__ import annotations

import os
import subprocess
import time

import pytest
import xstreams
from test_rdb_dump import NODE_CONFIG, SCENARIOS, _is_88, redis_views, store_views
from xstreams import cli

pytest_plugins = ("client_support.fixtures",)

redis = pytest.importorskip("redis")


@pytest.fixture
def r(redis_server):
    if not _is_88(redis_server):
        pytest.skip(f"needs redis-server 8.8 (RDB v14), have {redis_server.version}")
    c = redis.Redis(host=redis_server.host, port=redis_server.port)
    c.flushall()
    c.config_set("stream-node-max-entries", 3)
    yield c
    c.config_set("stream-node-max-entries", 100)
    c.flushall()
    c.close()


def fill_redis(r):
    """Every scenario as its own key in db 0, strings with and without expiry, a hash and
    a list (skipped on import), and a stream in db 3."""
    for name, cmds in SCENARIOS.items():
        for cmd in cmds:
            r.execute_command(*[name if a == "s" else a for a in cmd])
    r.set("plain-string", "hello")
    r.set("expiring", "soon", px=3_600_000)
    r.hset("a-hash", mapping={"f": "v"})
    r.rpush("a-list", "x", "y")
    r.execute_command("SELECT", 3)
    r.execute_command("XADD", "other-db", "1-1", "f", "v")
    r.execute_command("SELECT", 0)


def test_import_rdb_saved_by_redis(r, tmp_path, capsys):
    fill_redis(r)
    r.save()
    rdb = os.path.join(r.config_get("dir")["dir"], r.config_get("dbfilename")["dbfilename"])
    store_dir = tmp_path / "store"
    assert cli.main(["import", rdb, str(store_dir)]) == 0
    out = capsys.readouterr().out
    assert f"imported {len(SCENARIOS) + 3} keys" in out, out
    assert "skipped: 1 hash, 1 list" in out, out
    store = xstreams.Store(str(store_dir), config=NODE_CONFIG)
    try:
        for name in SCENARIOS:
            assert store_views(store, name) == redis_views(r, name), name
        assert store.execute_command("GET", "plain-string") == b"hello"
        assert store.execute_command("EXISTS", "a-hash", "a-list") == 0
        assert store.execute_command("XRANGE", "other-db", "-", "+", db=3) == [
            [b"1-1", [b"f", b"v"]]
        ]
        # The expiry came along: an hour from now, not before.
        now = int(time.time() * 1000)
        store.set_clock_ms(now + 3_500_000)
        assert store.execute_command("EXISTS", "expiring") == 1
        store.set_clock_ms(now + 3_700_000)
        assert store.execute_command("EXISTS", "expiring") == 0
        store.validate()
    finally:
        store.close()


def test_import_rejects_damaged_file(r, tmp_path, capsys):
    r.set("k", "v" * 100)
    r.save()
    rdb = os.path.join(r.config_get("dir")["dir"], r.config_get("dbfilename")["dbfilename"])
    data = bytearray(open(rdb, "rb").read())
    data[-20] ^= 0xFF
    bad = tmp_path / "bad.rdb"
    bad.write_bytes(bytes(data))
    assert cli.main(["import", str(bad), str(tmp_path / "s")]) == 1
    assert "damaged RDB file" in capsys.readouterr().err


def test_export_loads_in_redis(r, tmp_path, capsys):
    store_dir = tmp_path / "store"
    store = xstreams.Store(str(store_dir), config=NODE_CONFIG)
    for name, cmds in SCENARIOS.items():
        for cmd in cmds:
            store.execute_command(*[name if a == "s" else a for a in cmd])
    store.execute_command("SET", "str", "value")
    store.execute_command("SET", "ttl", "v", "PX", 3_600_000)
    store.execute_command("XADD", "db5", "1-1", "f", "v", db=5)
    expected = {name: store_views(store, name) for name in SCENARIOS}
    store.close()
    from client_support.fixtures import _free_port, _ping, redis_server_binary  # noqa: PLC0415

    out = tmp_path / "export.rdb"
    assert cli.main(["export", str(store_dir), str(out)]) == 0
    port = _free_port()
    proc = subprocess.Popen(
        [
            redis_server_binary(),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(tmp_path),
            "--dbfilename",
            "export.rdb",
            "--appendonly",
            "no",
            "--save",
            "",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not _ping(port):
            time.sleep(0.02)
        c = redis.Redis(host="127.0.0.1", port=port)
        for name, views in expected.items():
            assert redis_views(c, name) == views, name
        assert c.get("str") == b"value"
        assert 3_500_000 < c.pttl("ttl") <= 3_600_000
        c.execute_command("SELECT", 5)
        assert c.xrange("db5") == [(b"1-1", {b"f": b"v"})]
        c.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
