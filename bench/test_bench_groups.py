"""XNACK + XREADGROUP CLAIM cycles on a large PEL (Redis 8.8; not in redis-server 8.2.3)."""

from __future__ import annotations

from bench_workloads import first_ids
from conftest import as_text, needs, pending_count, pending_entries

M = 2_000
KEY = b"nc"


def test_xnack_claim_cycle(benchmark, driver):
    needs(driver, "xnack", "claim")
    n = 5  # cycles per call: XNACK FAIL of 100 IDs, XREADGROUP CLAIM re-delivering them
    benchmark.group = f"XNACK 100 + XREADGROUP CLAIM (x{n} cycles, PEL of {M:,})"
    benchmark.extra_info["ops_per_call"] = n
    b = driver.backend
    b.fill(KEY, 1, M + 1, 64)
    b.group_create(KEY, b"g")
    b.read_all(KEY, b"g", b"c1", M)
    state = {"held": first_ids(100)}
    calls = {"n": 0}

    def run():
        driver.nackclaim(KEY, b"g", n, state)
        calls["n"] += 1

    benchmark(run)
    # the PEL keeps its size; the 100 IDs went c1 -> NACK zone -> c2, once per cycle
    assert pending_count(b, KEY, b"g") == M
    held = [as_text(i) for i in state["held"]]
    assert held == [as_text(i) for i in first_ids(100)]
    got = pending_entries(b, KEY, b"g", first_ids(1)[0], 100)
    assert [e[0] for e in got] == held
    assert {e[1] for e in got} == {"c2"}
    # FAIL keeps the delivery count; each CLAIM re-delivery adds one
    assert {e[2] for e in got} == {1 + n * calls["n"]}
