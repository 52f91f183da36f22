"""XRANGE COUNT 100, XREADGROUP COUNT 100 + XACK, XPENDING: xstreams vs fakeredis vs redis."""

from __future__ import annotations

from bench_peers import ID_BASE
from bench_workloads import random_starts
from conftest import Calls, as_text, pending_count, pending_entries

M = 2_000  # entries in the read dataset
KEY = b"rd"


def _dataset(d, pel: bool = False) -> None:
    b = d.backend
    b.fill(KEY, 1, M + 1, 64)
    if pel:
        b.group_create(KEY, b"pe")
        b.read_all(KEY, b"pe", b"c1", M)


def test_xrange(benchmark, driver):
    n = 20
    benchmark.group = f"XRANGE COUNT 100 (x{n}, stream of {M:,})"
    benchmark.extra_info["ops_per_call"] = n
    _dataset(driver)
    starts = random_starts(1, M - 100)
    calls = Calls()

    def run():
        driver.xrange(KEY, starts, n, calls.n * n)
        calls.n += 1

    benchmark(run)
    # what every timed XRANGE returned: 100 consecutive entries from its start
    r = driver.backend.raw(b"XRANGE", KEY, starts[0], b"+", b"COUNT", b"100")
    first = int(starts[0].split(b"-")[0])
    assert [as_text(e[0]) for e in r] == [f"{first + i}-0" for i in range(100)]
    assert first - ID_BASE + 99 <= M


def test_xreadgroup_xack(benchmark, driver):
    n = 5  # cycles of XREADGROUP COUNT 100 + XACK per call
    benchmark.group = f"XREADGROUP COUNT 100 + XACK (x{n} cycles)"
    benchmark.extra_info["ops_per_call"] = n
    _dataset(driver)
    b = driver.backend
    b.group_create(KEY, b"g")
    state: dict = {}
    calls = Calls()

    def run():
        driver.readack(KEY, b"g", b"c1", n, state)
        calls.n += 1

    benchmark(run)
    if calls.n * n <= M // 100:  # no wrap-around: every cycle read and acked 100 entries
        unacked = len(state.get("unacked") or [])
        assert state.get("entries", 0) + unacked == calls.n * n * 100
    # what was read was acknowledged (batched drivers ack a read with the next one)
    assert pending_count(b, KEY, b"g") == len(state.get("unacked") or [])


def test_xpending_summary(benchmark, driver):
    n = 50
    benchmark.group = f"XPENDING summary (x{n}, PEL of {M:,})"
    benchmark.extra_info["ops_per_call"] = n
    _dataset(driver, pel=True)
    benchmark(lambda: driver.xpending(KEY, b"pe", n))
    assert pending_count(driver.backend, KEY, b"pe") == M


def test_xpending_range(benchmark, driver):
    n = 20
    benchmark.group = f"XPENDING start + 100 (x{n}, PEL of {M:,})"
    benchmark.extra_info["ops_per_call"] = n
    _dataset(driver, pel=True)
    starts = random_starts(1, M - 100)
    calls = Calls()

    def run():
        driver.xpending_range(KEY, b"pe", starts, n, calls.n * n)
        calls.n += 1

    benchmark(run)
    got = pending_entries(driver.backend, KEY, b"pe", starts[1], 100)
    first = int(starts[1].split(b"-")[0])
    assert [e[0] for e in got] == [f"{first + i}-0" for i in range(100)]
    assert {e[1] for e in got} == {"c1"}
