"""What only the asyncio client has: the event loop keeps running while a read blocks or a
reply waits for an fsync, cancellation, async pipelines and transactions, redis.asyncio's
construction API. (Every value is checked against redis.asyncio on redis-server by the
client suites' ``async`` flavor: client_support/fixtures.py.)"""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import Any, List

import pytest
import xstreams
import xstreams.asyncio
from xstreams.exceptions import WatchError


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def _ticker(ticks: List[float]) -> None:
    while True:
        ticks.append(time.monotonic())
        await asyncio.sleep(0.01)


def test_a_blocked_xread_keeps_the_loop_running_and_wakes_on_a_write(s) -> None:
    r = xstreams.asyncio.Redis(store=s)

    async def main() -> Any:
        await r.xadd("s", {"old": 1}, id="1-1")
        ticks: List[float] = []
        ticker = asyncio.create_task(_ticker(ticks))
        start = time.monotonic()
        reader = asyncio.create_task(r.xread({"s": "$"}, block=2000))
        await asyncio.sleep(0.3)
        assert not reader.done()
        ticks_while_blocked = len(ticks)
        written = await r.xadd("s", {"new": 2})
        got = await asyncio.wait_for(reader, 1.0)
        woke_after = time.monotonic() - start
        ticker.cancel()
        return ticks_while_blocked, written, got, woke_after

    ticks, written, got, woke_after = run(main())
    assert ticks >= 10, "the ticker stalled while the read was blocked"
    assert got == [[b"s", [(written, {b"new": b"2"})]]]
    assert woke_after < 1.5, "the read waited for its timeout instead of the write"


def test_a_blocked_xreadgroup_times_out_with_the_sync_value(s) -> None:
    r = xstreams.asyncio.Redis(store=s)
    sync = xstreams.Redis(store=s)
    sync.xgroup_create("s", "g", "$", mkstream=True)

    async def main() -> Any:
        start = time.monotonic()
        got = await r.xreadgroup("g", "c", {"s": ">"}, block=100)
        return got, time.monotonic() - start

    got, took = run(main())
    assert got == sync.xreadgroup("g", "c", {"s": ">"}, block=1)
    assert 0.09 <= took < 1.0


def test_a_cancelled_blocked_read_is_served_nothing(s) -> None:
    r = xstreams.asyncio.Redis(store=s)
    sync = xstreams.Redis(store=s)
    sync.xgroup_create("s", "g", "$", mkstream=True)

    async def main() -> Any:
        reader = asyncio.create_task(r.xreadgroup("g", "gone", {"s": ">"}, block=0))
        await asyncio.sleep(0.1)
        reader.cancel()
        with pytest.raises(asyncio.CancelledError):
            await reader
        # Longer than a wait slice: the slice running at the cancellation has ended.
        await asyncio.sleep(2 * xstreams.asyncio.WAIT_SLICE)
        entry = await r.xadd("s", {"f": "v"})
        later = await r.xreadgroup("g", "next", {"s": ">"}, block=1000)
        return entry, later

    entry, later = run(main())
    s.validate()
    assert later == [[b"s", [(entry, {b"f": b"v"})]]]
    consumers = {c["name"]: c["pending"] for c in sync.xinfo_consumers("s", "g")}
    assert consumers.get(b"gone", 0) == 0
    assert consumers[b"next"] == 1


def test_many_blocked_readers_are_served_in_the_order_they_blocked(s) -> None:
    r = xstreams.asyncio.Redis(store=s)
    xstreams.Redis(store=s).xgroup_create("s", "g", "$", mkstream=True)
    n = 12  # more than the default executor's threads on a small machine

    async def main() -> Any:
        readers = []
        for i in range(n):
            readers.append(
                asyncio.create_task(r.xreadgroup("g", f"c{i}", {"s": ">"}, count=1, block=5000))
            )
            await asyncio.sleep(0.01)
        ids = [await r.xadd("s", {"i": i}) for i in range(n)]
        got = await asyncio.wait_for(asyncio.gather(*readers), 5)
        return ids, got

    ids, got = run(main())
    served = [reply[0][1][0][0] for reply in got]
    assert served == ids
    s.validate()


def test_fsync_always_replies_wait_off_the_loop(tmp_path) -> None:
    store = xstreams.Store(str(tmp_path / "db"), fsync="always")
    r = xstreams.asyncio.Redis(store=store)

    async def main() -> Any:
        ticks: List[float] = []
        ticker = asyncio.create_task(_ticker_fast(ticks))
        for i in range(20):
            await r.xadd("s", {"i": i})
        n = len(ticks)
        ticker.cancel()
        return n, await r.xlen("s")

    n, length = run(main())
    store.close()
    assert length == 20
    assert n >= 10, "the writes ran on the event loop's thread"


async def _ticker_fast(ticks: List[float]) -> None:
    while True:
        ticks.append(time.monotonic())
        await asyncio.sleep(0)


def test_non_blocking_calls_answer_without_yielding(s) -> None:
    """A plain command never leaves the loop's thread (no task runs meanwhile)."""
    r = xstreams.asyncio.Redis(store=s)

    async def main() -> Any:
        ticks: List[float] = []
        ticker = asyncio.create_task(_ticker_fast(ticks))
        for i in range(50):
            await r.xadd("s", {"i": i})
        await r.xrange("s")
        await r.xread({"s": "0"})
        n = len(ticks)
        ticker.cancel()
        return n

    assert run(main()) == 0


def test_a_task_cancelled_mid_pipeline_leaves_nothing(s) -> None:
    r = xstreams.asyncio.Redis(store=s)

    async def worker(started: asyncio.Event) -> None:
        async with r.pipeline() as pipe:
            await pipe.watch("s")
            pipe.multi()
            pipe.xadd("s", {"f": "v"})
            started.set()
            await asyncio.sleep(10)
            await pipe.execute()

    async def main() -> Any:
        started = asyncio.Event()
        task = asyncio.create_task(worker(started))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # Nothing ran, nothing stays watched: a transaction on the key still commits.
        async with r.pipeline() as pipe:
            await pipe.watch("s")
            pipe.multi()
            pipe.xadd("s", {"g": "w"}, id="5-1")
            out = await pipe.execute()
        return out, await r.xlen("s")

    out, length = run(main())
    assert out == [b"5-1"]
    assert length == 1
    s.validate()


def test_transaction_takes_a_coroutine_and_retries_on_a_touched_key(s) -> None:
    r = xstreams.asyncio.Redis(store=s)
    other = xstreams.Redis(store=s)
    calls = []

    async def body(pipe: Any) -> None:
        n = await pipe.xlen("s")
        calls.append(n)
        if len(calls) == 1:
            other.xadd("s", {"by": "other"})  # touch the watched key once
        pipe.multi()
        pipe.xadd("s", {"n": n})

    async def main() -> Any:
        return await r.transaction(body, "s")

    out = run(main())
    assert calls == [0, 1]
    assert len(out) == 1 and isinstance(out[0], bytes)
    assert other.xlen("s") == 2


def test_a_watched_change_raises_watch_error(s) -> None:
    r = xstreams.asyncio.Redis(store=s)

    async def main() -> None:
        pipe = r.pipeline()
        await pipe.watch("k")
        await r.set("k", "changed")
        pipe.multi()
        pipe.set("k", "mine")
        with pytest.raises(WatchError):
            await pipe.execute()
        await pipe.reset()

    run(main())
    assert xstreams.Redis(store=s).get("k") == b"changed"


def test_construction_follows_redis_asyncio(s) -> None:
    redis_asyncio = pytest.importorskip("redis.asyncio")

    async def main() -> Any:
        async with xstreams.asyncio.Redis(store=s, decode_responses=True) as r:
            await r.set("k", "v")
            got = await r.get("k")
        url = xstreams.asyncio.Redis.from_url("redis://localhost:6379/3?decode_responses=1")
        r2 = await xstreams.asyncio.Redis(store=s, auto_close_connection_pool=True)
        await r2.aclose()
        return got, url

    got, url = run(main())
    assert got == "v"
    assert url.db == 3 and url.get_connection_kwargs()["decode_responses"] is True
    ours = inspect.signature(xstreams.Redis.__init__).parameters
    theirs = inspect.signature(redis_asyncio.Redis.__init__).parameters
    for name in ("protocol", "legacy_responses", "socket_timeout", "decode_responses", "db"):
        assert ours[name].default == theirs[name].default, name


def test_every_sync_command_is_a_coroutine_and_every_pipeline_one_queues(s) -> None:
    from xstreams.client.asyncio import command_names

    r = xstreams.asyncio.Redis(store=s)
    names = command_names()
    assert {"xadd", "xreadgroup", "xack", "xautoclaim", "set", "scan"} <= set(names)
    for name in names:
        method = getattr(r, name)
        assert inspect.iscoroutinefunction(method) or inspect.isasyncgenfunction(method), name
    pipe = r.pipeline()
    assert pipe.xadd("s", {"f": "v"}) is pipe
    assert pipe.xlen("s") is pipe
    assert len(pipe) == 2
