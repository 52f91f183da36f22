"""The client's per-call cost in CPU time, for comparing two wheels on a shared machine.

    python bench/client_cpu.py          # with the xstreams wheel installed in this Python

Each workload is timed with ``time.process_time()`` (the CPU time of this process: time
it is preempted by other processes does not count), best of 5, so two wheels run one
after the other under a varying load compare fairly; the table stage of ``run.py``
(wall time, the figures the issue's targets are read from) needs a quiet machine.

- ``xadd``: ``Redis.xadd(b"k", {b"f": <8-byte value>})``, one call per entry;
- ``raw``: the same through ``Store.execute_command``;
- ``awaited``: ``await xstreams.asyncio.Redis.xadd(...)`` the same way, on one event loop;
- ``readack``: XREADGROUP COUNT 100 + XACK of the 100 IDs, on 100,000 entries of 64 B;
- ``pipeline``: 100 ``Pipeline.xadd`` then ``execute()``, per entry;
- ``xpending`` / ``xpending_range``: the summary and ``<start> + 100`` of a PEL of
  100,000 entries, beside the same through ``Store.execute_command``: their ratio;
- ``burner``: burner-redis's ``await db.xadd(...)`` per entry and its XREADGROUP COUNT 100
  + XACK cycle (when installed), beside ``xadd`` and ``readack`` in the same process:
  their ratios.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

import xstreams
import xstreams.asyncio

N = 100_000
VALUES = [b"%08d" % i for i in range(65_536)]
MASK = 65_535


def best(fn: Callable[[int], None], n: int, reps: int = 5) -> float:
    """Seconds of CPU time per call of the fastest of ``reps`` runs of ``fn(n)``."""
    times = []
    for rep in range(reps):
        t0 = time.process_time()
        fn(rep * n)
        times.append(time.process_time() - t0)
    return min(times) / n


def awaited_xadds(
    loop: asyncio.AbstractEventLoop, add: Callable[..., Any], key: bytes
) -> Callable[[int], None]:
    """``fn(off)``: ``N`` calls of ``await add(key, {b"f": <value>})`` on ``loop`` (an
    asyncio client's ``xadd``, xstreams' or burner-redis's)."""

    def run(off: int) -> None:
        async def go() -> None:
            for i in range(off, off + N):
                await add(key, {b"f": VALUES[i & MASK]})

        loop.run_until_complete(go())

    return run


def main() -> None:
    store = xstreams.Store()
    r = xstreams.Redis(store=store)

    def xadd(off: int) -> None:
        add = r.xadd
        for i in range(off, off + N):
            add(b"k1", {b"f": VALUES[i & MASK]})

    def raw(off: int) -> None:
        ex = store.execute_command
        for i in range(off, off + N):
            ex(b"XADD", b"k2", b"*", b"f", VALUES[i & MASK])

    loop = asyncio.new_event_loop()
    awaited = awaited_xadds(loop, xstreams.asyncio.Redis(store=store).xadd, b"k4")

    def pipeline(off: int) -> None:
        for j in range(off, off + N, 100):
            p = r.pipeline(transaction=False)
            for i in range(j, j + 100):
                p.xadd(b"k3", {b"f": VALUES[i & MASK]})
            p.execute()

    value = b"x" * 64
    for i in range(1, N + 1, 1000):
        store.execute_many([(b"XADD", b"rd", b"%d-0" % j, b"f", value) for j in range(i, i + 1000)])
    store.execute_command(b"XGROUP", b"CREATE", b"rd", b"g", b"0")

    def readack(_off: int) -> None:
        read, ack = r.xreadgroup, r.xack
        streams = {b"rd": b">"}
        for _ in range(2_000):
            got = read(b"g", b"c1", streams, count=100)
            if not got:
                store.execute_command(b"XGROUP", b"SETID", b"rd", b"g", b"0")
                continue
            ack(b"rd", b"g", *[e[0] for e in got[0][1]])

    print(f"xadd      {best(xadd, N) * 1e9:9.1f} ns per call")
    print(f"raw       {best(raw, N) * 1e9:9.1f} ns per call")
    print(f"awaited   {best(awaited, N) * 1e9:9.1f} ns per call")
    print(f"readack   {best(readack, 2_000) * 1e6:9.2f} us per cycle")
    print(f"pipeline  {best(pipeline, N) * 1e9:9.1f} ns per entry")

    store.execute_command(b"XGROUP", b"CREATE", b"rd", b"pe", b"0")
    store.execute_command(b"XREADGROUP", b"GROUP", b"pe", b"c1", b"STREAMS", b"rd", b">")
    starts = [b"%d-0" % (1 + i * 7919 % (N - 100)) for i in range(1024)]

    def xpending(_off: int) -> None:
        pending = r.xpending
        for _ in range(N // 10):
            pending(b"rd", b"pe")

    def raw_xpending(_off: int) -> None:
        ex = store.execute_command
        for _ in range(N // 10):
            ex(b"XPENDING", b"rd", b"pe")

    def xpending_range(off: int) -> None:
        pr = r.xpending_range
        for i in range(off, off + 2_000):
            pr(b"rd", b"pe", starts[i & 1023], b"+", 100)

    def raw_xpending_range(off: int) -> None:
        ex = store.execute_command
        for i in range(off, off + 2_000):
            ex(b"XPENDING", b"rd", b"pe", starts[i & 1023], b"+", b"100")

    a, b = best(xpending, N // 10), best(raw_xpending, N // 10)
    print(f"xpending  {a * 1e9:9.1f} ns per call; {b / a:.2f}x the raw rate")
    a, b = best(xpending_range, 2_000), best(raw_xpending_range, 2_000)
    print(f"xpending_range {a * 1e6:6.2f} us per call; {b / a:.2f}x the raw rate")
    try:
        import burner_redis
    except ImportError:
        return
    db = burner_redis.BurnerRedis()
    burner = awaited_xadds(loop, db.xadd, b"bk")

    b, c, a = best(burner, N), best(xadd, N), best(awaited, N)
    print(
        f"burner    {b * 1e9:9.1f} ns per call; xstreams.Redis.xadd {b / c:.2f}x its rate,"
        f" awaited xstreams.asyncio {b / a:.2f}x"
    )

    async def fill() -> None:
        for i in range(1, N + 1):
            await db.xadd(b"brd", {b"f": value}, id=f"{i}-0")
        await db.xgroup_create(b"brd", "g", id="0")

    loop.run_until_complete(fill())

    def burner_readack(_off: int) -> None:
        async def go() -> None:
            for _ in range(2_000):
                got = await db.xreadgroup("g", "c1", {b"brd": ">"}, count=100)
                if not got:
                    await db.xgroup_destroy(b"brd", "g")
                    await db.xgroup_create(b"brd", "g", id="0")
                    continue
                first = next(iter(got.values())) if isinstance(got, dict) else got[0][1]
                if first and isinstance(first[0], list):
                    first = first[0]
                await db.xack(b"brd", "g", *[e[0] for e in first])

        loop.run_until_complete(go())

    b, c = best(burner_readack, 2_000), best(readack, 2_000)
    print(f"burner readack {b * 1e6:6.2f} us per cycle; xstreams.Redis {b / c:.2f}x its rate")


if __name__ == "__main__":
    main()
