#!/usr/bin/env python
"""XADD rate of one embedded store, one ``execute_command`` call per entry: for A/Bs of
two builds of the core (install one wheel, run, install the other, run, in turns).

    python bench/store_xadd_rate.py [--n 300000] [--label NAME]
    python bench/store_xadd_rate.py --always [--label NAME]

Prints the best of three timed loops (after a 20,000-entry warm-up) for an in-memory
store and for durable stores under ``fsync="everysec"`` and ``fsync="no"``. With
``--always``: the XADD rate of 1, 2, 4 and 8 threads calling at once on one durable
store under ``fsync="always"`` (a 2 s loop each; every call waits for an fsync, which the
threads waiting at the same time share).
"""

from __future__ import annotations

import argparse
import tempfile
import time

import xstreams
from bench_persist import measure_threads, xadd_key  # bench/ is on sys.path (script dir)


def rate(fsync: str | None, n: int) -> float:
    with tempfile.TemporaryDirectory() as d:
        s = xstreams.Store() if fsync is None else xstreams.Store(d + "/s", fsync=fsync)
        x = s.execute_command
        for _ in range(20_000):
            x("XADD", "w", "*", "f", "v")
        t = time.perf_counter()
        for _ in range(n):
            x("XADD", "s", "*", "f", "v")
        dt = time.perf_counter() - t
        s.close()
    return n / dt


def always_rate(threads: int, seconds: float = 2.0) -> float:
    with tempfile.TemporaryDirectory() as d:
        s = xstreams.Store(d + "/s", fsync="always")
        try:
            calls = [xadd_key(s.execute_command, f"s{i}") for i in range(threads)]
            return measure_threads(calls, seconds, 1)["ops"]
        finally:
            s.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=300_000, help="entries per timed loop")
    ap.add_argument("--label", default="", help="a name printed first (the build)")
    ap.add_argument("--always", action="store_true", help="threads on an always store")
    a = ap.parse_args()
    if a.always:
        rates = {f"{n} threads": always_rate(n) for n in (1, 2, 4, 8)}
        print(a.label, "always:", " ".join(f"{k}={v:,.0f}/s" for k, v in rates.items()))
        return
    rates = {
        name: max(rate(fsync, a.n) for _ in range(3))
        for name, fsync in (("memory", None), ("everysec", "everysec"), ("no", "no"))
    }
    print(a.label, " ".join(f"{k}={v:,.0f}/s" for k, v in rates.items()))


if __name__ == "__main__":
    main()
