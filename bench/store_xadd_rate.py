#!/usr/bin/env python
"""XADD rate of one embedded store, one ``execute_command`` call per entry: for A/Bs of
two builds of the core (install one wheel, run, install the other, run, in turns).

    python bench/store_xadd_rate.py [--n 300000] [--label NAME]

Prints the best of three timed loops (after a 20,000-entry warm-up) for an in-memory
store and for durable stores under ``fsync="everysec"`` and ``fsync="no"``.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import xstreams


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=300_000, help="entries per timed loop")
    ap.add_argument("--label", default="", help="a name printed first (the build)")
    a = ap.parse_args()
    rates = {
        name: max(rate(fsync, a.n) for _ in range(3))
        for name, fsync in (("memory", None), ("everysec", "everysec"), ("no", "no"))
    }
    print(a.label, " ".join(f"{k}={v:,.0f}/s" for k, v in rates.items()))


if __name__ == "__main__":
    main()
