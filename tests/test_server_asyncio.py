"""``xstreams serve`` with redis-py's asyncio client: concurrent blocking reads served in
FIFO order, pipelines and transactions, RESP2 and RESP3."""

from __future__ import annotations

import asyncio

import pytest
from server_support import ServerProcess, require_serve

redis = pytest.importorskip("redis")
aioredis = pytest.importorskip("redis.asyncio")


@pytest.fixture(scope="module")
def server():
    require_serve()
    with ServerProcess() as srv:
        yield srv


def entries_of(reply, key=b"s"):
    if isinstance(reply, dict):
        return reply[key][0]
    return reply[0][1]


@pytest.mark.parametrize("protocol", [2, 3])
def test_asyncio_streams_and_blocking(server, protocol):
    async def main():
        r = aioredis.Redis(port=server.port, protocol=protocol)
        await r.flushall()
        await r.xgroup_create("s", "g", id="$", mkstream=True)

        async def consumer(name):
            c = aioredis.Redis(port=server.port, protocol=protocol)
            try:
                got = await c.xreadgroup("g", name, {"s": ">"}, count=1, block=10000)
                return name, [e[0] for e in entries_of(got)]
            finally:
                await c.aclose()

        tasks = []
        for i in range(5):
            tasks.append(asyncio.create_task(consumer(f"c{i}")))
            for _ in range(1000):
                if (await r.info("clients"))["blocked_clients"] == i + 1:
                    break
                await asyncio.sleep(0.01)
        for i in range(5):
            await r.xadd("s", {"n": i}, id=f"1-{i + 1}")
        results = await asyncio.wait_for(asyncio.gather(*tasks), 20)
        # Every consumer got exactly one entry, each entry went to one consumer.
        assert sorted(e for _, ids in results for e in ids) == [
            f"1-{i + 1}".encode() for i in range(5)
        ]
        assert all(len(ids) == 1 for _, ids in results)
        assert (await r.xpending("s", "g"))["pending"] == 5

        async with r.pipeline(transaction=False) as p:
            for i in range(50):
                p.xadd("p", {"i": i}, id=f"2-{i + 1}")
            p.xlen("p")
            res = await p.execute()
        assert res[-1] == 50
        async with r.pipeline(transaction=True) as p:
            p.xadd("t", {"a": 1}, id="1-1")
            p.xrange("t")
            assert await p.execute() == [b"1-1", [(b"1-1", {b"a": b"1"})]]
        # Many clients at once, each with its own blocking read.
        readers = [aioredis.Redis(port=server.port, protocol=protocol) for _ in range(20)]
        waits = [asyncio.create_task(c.xread({"b": "$"}, block=10000)) for c in readers]
        for _ in range(1000):
            if (await r.info("clients"))["blocked_clients"] == 20:
                break
            await asyncio.sleep(0.01)
        await r.xadd("b", {"x": 1}, id="9-9")
        got = await asyncio.wait_for(asyncio.gather(*waits), 20)
        assert all(entries_of(g, b"b")[0][0] == b"9-9" for g in got)
        for c in readers:
            await c.aclose()
        await r.aclose()

    asyncio.run(main())


def test_fifo_order_under_back_to_back_writes(server):
    """redis-server hands the entries of consecutive XADDs to blocked readers in the
    order they blocked: c0 gets 1-1, c1 gets 1-2, ..."""

    async def main():
        r = aioredis.Redis(port=server.port)
        for _round in range(5):
            await r.flushall()
            await r.xgroup_create("s", "g", id="$", mkstream=True)

            async def consumer(name):
                c = aioredis.Redis(port=server.port)
                try:
                    got = await c.xreadgroup("g", name, {"s": ">"}, count=1, block=10000)
                    return name, [e[0] for e in entries_of(got)]
                finally:
                    await c.aclose()

            tasks = []
            for i in range(5):
                tasks.append(asyncio.create_task(consumer(f"c{i}")))
                for _ in range(1000):
                    if (await r.info("clients"))["blocked_clients"] == i + 1:
                        break
                    await asyncio.sleep(0.01)
            for i in range(5):
                await r.xadd("s", {"n": i}, id=f"1-{i + 1}")
            results = await asyncio.wait_for(asyncio.gather(*tasks), 20)
            assert results == [(f"c{i}", [f"1-{i + 1}".encode()]) for i in range(5)]
        await r.aclose()

    asyncio.run(main())
