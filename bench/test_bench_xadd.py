"""XADD, XADD IDMP and XADD IDMPAUTO: xstreams vs fakeredis vs redis-server."""

from __future__ import annotations

import pytest
from bench_peers import values
from conftest import Calls, needs, xinfo

N = 200  # XADDs per benchmarked call


@pytest.mark.parametrize("size", [8, 64, 512])
def test_xadd(benchmark, driver, size):
    benchmark.group = f"XADD {size} B (x{N})"
    benchmark.extra_info["ops_per_call"] = N
    key = b"xa"
    calls = Calls()

    def run():
        driver.xadd(key, size, N, calls.n * N)
        calls.n += 1

    benchmark(run)
    b = driver.backend
    assert b.raw(b"XLEN", key) == N * calls.n
    last = b.raw(b"XREVRANGE", key, b"+", b"-", b"COUNT", b"1")
    entry = last[0]
    fields = entry[1]
    value = fields[b"f"] if isinstance(fields, dict) else fields[1]
    assert value == values(size)[(N * calls.n - 1) & 0xFFFF]


@pytest.mark.parametrize("mode", ["idmp", "idmpauto"])
def test_xadd_idempotent(benchmark, driver, mode):
    needs(driver, "idmp", "xcfgset")
    benchmark.group = f"XADD {mode.upper()} 64 B (x{N})"
    benchmark.extra_info["ops_per_call"] = N
    key = b"xi"
    b = driver.backend
    b.raw(b"XADD", key, b"*", b"f", b"init")
    b.raw(b"XCFGSET", key, b"IDMP-MAXSIZE", b"10000")
    calls = Calls()

    def run():
        driver.xadd(key, 64, N, calls.n * N, mode)
        calls.n += 1

    benchmark(run)
    added = N * calls.n
    # every value and IID was new: nothing was deduplicated
    assert b.raw(b"XLEN", key) == added + 1
    info = xinfo(b, key)
    assert info["iids-tracked"] == min(added, 10_000)
    assert info["pids-tracked"] == 1
    # the same IDMP pair again is a duplicate: same ID, no new entry
    if mode == "idmp":
        a = b.raw(b"XADD", key, b"IDMP", b"p2", b"dup", b"*", b"f", b"x")
        again = b.raw(b"XADD", key, b"IDMP", b"p2", b"dup", b"*", b"f", b"y")
    else:
        a = b.raw(b"XADD", key, b"IDMPAUTO", b"p2", b"*", b"f", b"same")
        again = b.raw(b"XADD", key, b"IDMPAUTO", b"p2", b"*", b"f", b"same")
    assert a == again
    assert b.raw(b"XLEN", key) == added + 2
