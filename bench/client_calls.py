"""Per-call cost of the client's XADD, sync and awaited, for comparing two wheels.

    PYTHONPATH=<unpacked wheel> python bench/client_calls.py [sync] [async] [readack]

Best of REPS (default 20) runs of N (default 50,000) calls of
``Redis.xadd(b"s", {b"f": v})`` and ``await xstreams.asyncio.Redis.xadd(...)`` on a fresh
store, 1,024 distinct values of 8, 64 and 512 bytes; ``readack``: XREADGROUP COUNT 100 +
XACK cycles over 100,000 entries, sync and awaited. Short runs and their minimum: on a
machine whose speed swings, run two wheels alternately a few times and compare the
smallest figures (the table stage of ``run.py`` is wall time over longer runs).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

import xstreams
from xstreams import asyncio as xa

N = int(os.environ.get("N", "50000"))
REPS = int(os.environ.get("REPS", "20"))
MASK = 1023


def values(size: int) -> list:
    return [os.urandom(size) for _ in range(MASK + 1)]


def sync_xadd(size: int) -> float:
    v = values(size)
    best = float("inf")
    for _ in range(REPS):
        add = xstreams.Redis(store=xstreams.Store()).xadd
        t = time.perf_counter()
        for i in range(N):
            add(b"s", {b"f": v[i & MASK]})
        best = min(best, (time.perf_counter() - t) / N)
    return best * 1e9


def async_xadd(size: int) -> float:
    v = values(size)

    async def run() -> float:
        best = float("inf")
        for _ in range(REPS):
            add = xa.Redis(store=xstreams.Store()).xadd
            t = time.perf_counter()
            for i in range(N):
                await add(b"s", {b"f": v[i & MASK]})
            best = min(best, (time.perf_counter() - t) / N)
        return best

    return asyncio.run(run()) * 1e9


def readack(awaited: bool) -> float:
    entries, cycles = 100_000, 1_000

    async def arun(r: xa.Redis) -> float:
        t = time.perf_counter()
        for _ in range(cycles):
            got = await r.xreadgroup("g", "c", {"s": ">"}, count=100)
            await r.xack("s", "g", *[e[0] for e in got[0][1]])
        return (time.perf_counter() - t) / cycles

    best = float("inf")
    for _ in range(max(1, REPS // 4)):
        store = xstreams.Store()
        r = xstreams.Redis(store=store)
        for _ in range(entries):
            r.xadd("s", {"f": b"x" * 64})
        r.xgroup_create("s", "g", "0")
        if awaited:
            per = asyncio.run(arun(xa.Redis(store=store)))
        else:
            t = time.perf_counter()
            for _ in range(cycles):
                got = r.xreadgroup("g", "c", {"s": ">"}, count=100)
                r.xack("s", "g", *[e[0] for e in got[0][1]])
            per = (time.perf_counter() - t) / cycles
        best = min(best, per)
    return best * 1e6


def main() -> None:
    what = sys.argv[1:] or ["sync", "async", "readack"]
    out = []
    if "sync" in what:
        out += [f"sync{s}={sync_xadd(s):.0f}ns" for s in (8, 64, 512)]
    if "async" in what:
        out += [f"async{s}={async_xadd(s):.0f}ns" for s in (8, 64, 512)]
    if "readack" in what:
        out += [f"readack={readack(False):.2f}us", f"readack_async={readack(True):.2f}us"]
    print(" ".join(out), flush=True)


if __name__ == "__main__":
    main()
