"""The client's per-call cost in CPU time, for comparing two wheels on a shared machine.

    python bench/client_cpu.py          # with the xstreams wheel installed in this Python

Each workload is timed with ``time.process_time()`` (the CPU time of this process: time
it is preempted by other processes does not count), best of 5, so two wheels run one
after the other under a varying load compare fairly; the table stage of ``run.py``
(wall time, the figures the issue's targets are read from) needs a quiet machine.

- ``xadd``: ``Redis.xadd(b"k", {b"f": <8-byte value>})``, one call per entry;
- ``raw``: the same through ``Store.execute_command``;
- ``readack``: XREADGROUP COUNT 100 + XACK of the 100 IDs, on 100,000 entries of 64 B;
- ``pipeline``: 100 ``Pipeline.xadd`` then ``execute()``, per entry;
- ``burner``: burner-redis's ``await db.xadd(...)`` per entry (when installed), beside
  ``xadd`` in the same process: their ratio.
"""

from __future__ import annotations

import asyncio
import time
from typing import Callable

import xstreams

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
    print(f"readack   {best(readack, 2_000) * 1e6:9.2f} us per cycle")
    print(f"pipeline  {best(pipeline, N) * 1e9:9.1f} ns per entry")
    try:
        import burner_redis
    except ImportError:
        return
    loop = asyncio.new_event_loop()
    db = burner_redis.BurnerRedis()

    def burner(off: int) -> None:
        add = db.xadd

        async def go() -> None:
            for i in range(off, off + N):
                await add(b"bk", {b"f": VALUES[i & MASK]})

        loop.run_until_complete(go())

    b, c = best(burner, N), best(xadd, N)
    print(f"burner    {b * 1e9:9.1f} ns per call; xstreams.Redis.xadd {b / c:.2f}x its rate")


if __name__ == "__main__":
    main()
