"""Blocked readers are served right after the write that made them ready, before any
other command runs (as redis-server does), through ``xstreams serve``."""

from __future__ import annotations

import threading
import time

import pytest
from server_support import ServerProcess, require_serve

redis = pytest.importorskip("redis")


@pytest.fixture(scope="module")
def server():
    require_serve()
    with ServerProcess() as srv:
        yield srv


def wait_blocked(r, n):
    deadline = time.monotonic() + 10
    while r.info("clients")["blocked_clients"] != n:
        assert time.monotonic() < deadline
        time.sleep(0.002)


def test_blocked_reader_served_before_next_command(server):
    r = redis.Redis(port=server.port)
    for _ in range(30):
        r.flushall()
        r.xgroup_create("s", "g", id="$", mkstream=True)
        out = {}

        def reader(out=out):
            c = redis.Redis(port=server.port, socket_timeout=20)
            out["r"] = c.xreadgroup("g", "c", {"s": ">"}, block=500)
            c.close()

        t = threading.Thread(target=reader)
        t.start()
        wait_blocked(r, 1)
        p = r.pipeline(transaction=False)
        p.xadd("s", {"f": "v"}, id="1-1")
        p.xdel("s", "1-1")
        p.execute()
        t.join(20)
        assert out["r"], "the blocked reader missed 1-1"
