"""The drivers of the benchmark: the timed loops, one class per way of talking to a peer
(the backends they drive are in bench_peers.py).

A driver implements the same workload loops for every peer; each loop runs ``n``
operations and is written the way that peer's users would write it, so that what is
timed is the peer's own cost.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from bench_peers import (
    BATCH,
    CLAIM_IDLE_MS,
    MASK,
    Backend,
    BurnerBackend,
    Unsupported,
    XStreamsBackend,
    _ids_of,
    _stream_entries,
    iids,
    values,
)


class Driver:
    """One way of driving a backend. ``name`` is the column of the results table."""

    name = "?"
    batched = False
    #: Runs only some workloads by design (the others are not missing features).
    partial = False

    def __init__(self, backend: Backend, name: str) -> None:
        self.backend = backend
        self.name = name

    @property
    def caps(self) -> set:
        return self.backend.caps

    def na_reason(self, need: str) -> str:
        b = self.backend
        if b.family == "redis":
            return f"n/a ({b.version})"
        return "n/a"

    # Each loop runs n operations; ``off`` numbers the operations of a run so values,
    # IIDs and producers rotate without repeating too soon.
    def xadd(self, key, size, n, off, mode=None, pids=None):
        raise NotImplementedError

    def xrange(self, key, starts, n, off):
        raise NotImplementedError

    def readack(self, key, group, consumer, n, state):
        """n cycles of XREADGROUP COUNT 100 '>' + XACK of what was read."""
        raise NotImplementedError

    def nackclaim(self, key, group, n, state):
        """n cycles of XNACK FAIL (100 IDs) + XREADGROUP CLAIM that re-delivers them."""
        raise NotImplementedError

    def xpending(self, key, group, n):
        raise NotImplementedError

    def xpending_range(self, key, group, starts, n, off):
        raise NotImplementedError

    def reset_group(self, key, group):
        if "setid" in self.caps:
            self.backend.raw(b"XGROUP", b"SETID", key, group, b"0")
        else:
            raise Unsupported("no XGROUP SETID")


def _pid_iid(i: int, pids: Optional[list], iid: list) -> tuple:
    if pids is None:
        return b"p1", iid[i & MASK]
    np_ = len(pids)
    return pids[i % np_], iid[(i // np_) & MASK]


class RawDriver(Driver):
    """``xstreams.Store.execute_command``: raw RESP2-shaped replies."""

    def __init__(self, backend: XStreamsBackend, name: str = "xstreams raw") -> None:
        super().__init__(backend, name)
        self.ex = backend.store.execute_command

    def xadd(self, key, size, n, off, mode=None, pids=None):
        ex = self.ex
        vals = values(size)
        if mode is None:
            for i in range(off, off + n):
                ex(b"XADD", key, b"*", b"f", vals[i & MASK])
        elif mode == "idmpauto":
            for i in range(off, off + n):
                ex(b"XADD", key, b"IDMPAUTO", b"p1", b"*", b"f", vals[i & MASK])
        elif pids is None:
            iid = iids()
            for i in range(off, off + n):
                ex(b"XADD", key, b"IDMP", b"p1", iid[i & MASK], b"*", b"f", vals[i & MASK])
        else:
            iid = iids()
            for i in range(off, off + n):
                pid, ii = _pid_iid(i, pids, iid)
                ex(b"XADD", key, b"IDMP", pid, ii, b"*", b"f", vals[i & MASK])

    def xrange(self, key, starts, n, off):
        ex = self.ex
        m = len(starts) - 1
        for i in range(off, off + n):
            ex(b"XRANGE", key, starts[i & m], b"+", b"COUNT", b"100")

    def readack(self, key, group, consumer, n, state):
        ex = self.ex
        for _ in range(n):
            r = ex(b"XREADGROUP", b"GROUP", group, consumer, b"COUNT", b"100",
                   b"STREAMS", key, b">")  # fmt: skip
            if not r:
                self.reset_group(key, group)
                continue
            ids = [e[0] for e in r[0][1]]
            ex(b"XACK", key, group, *ids)
            state["entries"] = state.get("entries", 0) + len(ids)

    def nackclaim(self, key, group, n, state):
        ex = self.ex
        held = state["held"]
        for _ in range(n):
            ex(b"XNACK", key, group, b"FAIL", b"IDS", b"%d" % len(held), *held)
            r = ex(b"XREADGROUP", b"GROUP", group, b"c2", b"COUNT", b"100",
                   b"CLAIM", b"%d" % CLAIM_IDLE_MS, b"STREAMS", key, b">")  # fmt: skip
            held = [e[0] for e in r[0][1]]
        state["held"] = held

    def xpending(self, key, group, n):
        ex = self.ex
        for _ in range(n):
            ex(b"XPENDING", key, group)

    def xpending_range(self, key, group, starts, n, off):
        ex = self.ex
        m = len(starts) - 1
        for i in range(off, off + n):
            ex(b"XPENDING", key, group, starts[i & m], b"+", b"100")


class ManyDriver(Driver):
    """``xstreams.Store.execute_many``: batches of ``BATCH`` commands per call."""

    batched = True

    def __init__(self, backend: XStreamsBackend, name: str = "xstreams batch") -> None:
        super().__init__(backend, name)
        self.em = backend.store.execute_many

    def _run(self, gen: Callable[[int], tuple], n: int, off: int) -> None:
        em = self.em
        end = off + n
        for lo in range(off, end, BATCH):
            em([gen(i) for i in range(lo, min(lo + BATCH, end))])

    def xadd(self, key, size, n, off, mode=None, pids=None):
        # the batches are built inline, as a user would write them
        em = self.em
        vals = values(size)
        iid = iids()
        end = off + n
        for lo in range(off, end, BATCH):
            r = range(lo, min(lo + BATCH, end))
            if mode is None:
                em([(b"XADD", key, b"*", b"f", vals[i & MASK]) for i in r])
            elif mode == "idmpauto":
                em([(b"XADD", key, b"IDMPAUTO", b"p1", b"*", b"f", vals[i & MASK]) for i in r])
            elif pids is None:
                em([(b"XADD", key, b"IDMP", b"p1", iid[i & MASK], b"*", b"f", vals[i & MASK])
                    for i in r])  # fmt: skip
            else:
                np_ = len(pids)
                em([(b"XADD", key, b"IDMP", pids[i % np_], iid[(i // np_) & MASK], b"*", b"f",
                     vals[i & MASK]) for i in r])  # fmt: skip

    def xrange(self, key, starts, n, off):
        m = len(starts) - 1
        self._run(lambda i: (b"XRANGE", key, starts[i & m], b"+", b"COUNT", b"100"), n, off)

    def readack(self, key, group, consumer, n, state):
        em = self.em
        read = (b"XREADGROUP", b"GROUP", group, consumer, b"COUNT", b"100", b"STREAMS", key, b">")
        ids = state.get("unacked")
        for _ in range(n):
            if ids:
                _, r = em([(b"XACK", key, group, *ids), read])
                state["entries"] = state.get("entries", 0) + len(ids)
            else:
                (r,) = em([read])
            if not r:
                self.reset_group(key, group)
                ids = None
                continue
            ids = [e[0] for e in r[0][1]]
        state["unacked"] = ids

    def nackclaim(self, key, group, n, state):
        em = self.em
        held = state["held"]
        claim = (b"XREADGROUP", b"GROUP", group, b"c2", b"COUNT", b"100",
                 b"CLAIM", b"%d" % CLAIM_IDLE_MS, b"STREAMS", key, b">")  # fmt: skip
        for _ in range(n):
            _, r = em([(b"XNACK", key, group, b"FAIL", b"IDS", b"%d" % len(held), *held), claim])
            held = [e[0] for e in r[0][1]]
        state["held"] = held

    def xpending(self, key, group, n):
        cmd = (b"XPENDING", key, group)
        self._run(lambda i: cmd, n, 0)

    def xpending_range(self, key, group, starts, n, off):
        m = len(starts) - 1
        self._run(lambda i: (b"XPENDING", key, group, starts[i & m], b"+", b"100"), n, off)


class _PartialDriver(Driver):
    """A driver of a few workloads only: the others raise ``Unsupported`` ("—")."""

    partial = True
    only = ""

    @property
    def caps(self) -> set:
        # Only the workloads this driver is for: the others are left out, not missing.
        return set()

    def na_reason(self, need: str) -> str:
        return "—"

    def _no(self) -> None:
        raise Unsupported(self.only)

    def xadd(self, key, size, n, off, mode=None, pids=None):
        self._no()

    def xrange(self, key, starts, n, off):
        self._no()

    def readack(self, key, group, consumer, n, state):
        self._no()

    def nackclaim(self, key, group, n, state):
        self._no()

    def xpending(self, key, group, n):
        self._no()

    def xpending_range(self, key, group, starts, n, off):
        self._no()


class ArrowDriver(_PartialDriver):
    """``Store.xrange_arrow(key, start, "+", 100, decode=False)``: XRANGE COUNT 100 as a
    pyarrow RecordBatch (binary columns, as the raw path's bytes). XRANGE only."""

    only = "xrange_arrow runs XRANGE only"

    def __init__(self, backend: XStreamsBackend, name: str = "xstreams arrow") -> None:
        super().__init__(backend, name)
        self.xa = backend.store.xrange_arrow

    def xrange(self, key, starts, n, off):
        xa = self.xa
        m = len(starts) - 1
        for i in range(off, off + n):
            xa(key, starts[i & m], b"+", 100, decode=False)


class RustLoopDriver(_PartialDriver):
    """The physical limit: the typed XADD in a Rust loop, reached through the public batch
    path (``Store.xadd_batch``: one call for the ``n`` rows, no Python per row) on the same
    store, so it is timed with the same reps, load and stream as the Python drivers.
    Plain XADD only. (``cargo run --release --example quickbench limit`` times the bare
    loop, without the Arrow column.)"""

    only = "the Rust loop runs plain XADD only"

    def __init__(self, backend: XStreamsBackend, name: str = "xstreams rust loop") -> None:
        super().__init__(backend, name)
        self._pools: Dict[int, Any] = {}

    def xadd(self, key, size, n, off, mode=None, pids=None):
        import numpy as np
        import pyarrow as pa

        if mode is not None:
            self._no()
        pool = self._pools.get(size)
        if pool is None:
            pool = self._pools[size] = pa.array(values(size), type=pa.binary())
        column = pool.take(pa.array((np.arange(off, off + n) & MASK).astype(np.int64)))
        self.backend.store.xadd_batch(key, pa.record_batch({"f": column}))


class PyClientDriver(Driver):
    """A redis-py compatible client (redis.Redis, fakeredis.FakeRedis, xstreams.Redis)."""

    def __init__(self, backend: Backend, name: str, client: Any) -> None:
        super().__init__(backend, name)
        self.client = client

    def xadd(self, key, size, n, off, mode=None, pids=None):
        xadd = self.client.xadd
        vals = values(size)
        if mode is None:
            for i in range(off, off + n):
                xadd(key, {b"f": vals[i & MASK]})
        elif mode == "idmpauto":
            for i in range(off, off + n):
                xadd(key, {b"f": vals[i & MASK]}, idmpauto=b"p1")
        else:
            iid = iids()
            for i in range(off, off + n):
                xadd(key, {b"f": vals[i & MASK]}, idmp=_pid_iid(i, pids, iid))

    def xrange(self, key, starts, n, off):
        xrange = self.client.xrange
        m = len(starts) - 1
        for i in range(off, off + n):
            xrange(key, starts[i & m], b"+", count=100)

    def readack(self, key, group, consumer, n, state):
        c = self.client
        xreadgroup, xack = c.xreadgroup, c.xack
        streams = {key: b">"}
        for _ in range(n):
            r = xreadgroup(group, consumer, streams, count=100)
            if not r:
                self.reset_group(key, group)
                continue
            ids = _ids_of(_stream_entries(r))
            xack(key, group, *ids)
            state["entries"] = state.get("entries", 0) + len(ids)

    def nackclaim(self, key, group, n, state):
        c = self.client
        xnack, xreadgroup = c.xnack, c.xreadgroup
        streams = {key: b">"}
        held = state["held"]
        for _ in range(n):
            xnack(key, group, "FAIL", *held)
            r = xreadgroup(group, b"c2", streams, count=100, claim_min_idle_time=CLAIM_IDLE_MS)
            held = _ids_of(_stream_entries(r))
        state["held"] = held

    def xpending(self, key, group, n):
        xpending = self.client.xpending
        for _ in range(n):
            xpending(key, group)

    def xpending_range(self, key, group, starts, n, off):
        xpr = self.client.xpending_range
        m = len(starts) - 1
        for i in range(off, off + n):
            xpr(key, group, starts[i & m], b"+", 100)


class PyPipelineDriver(Driver):
    """redis-py compatible pipelines (transaction=False), ``BATCH`` commands per round trip."""

    batched = True

    def __init__(self, backend: Backend, name: str, client: Any) -> None:
        super().__init__(backend, name)
        self.client = client

    def _run(self, fn: Callable[[Any, int], None], n: int, off: int) -> None:
        pipeline = self.client.pipeline
        end = off + n
        for lo in range(off, end, BATCH):
            p = pipeline(transaction=False)
            for i in range(lo, min(lo + BATCH, end)):
                fn(p, i)
            p.execute()

    def xadd(self, key, size, n, off, mode=None, pids=None):
        vals = values(size)
        iid = iids()
        if mode is None:
            self._run(lambda p, i: p.xadd(key, {b"f": vals[i & MASK]}), n, off)
        elif mode == "idmpauto":
            self._run(lambda p, i: p.xadd(key, {b"f": vals[i & MASK]}, idmpauto=b"p1"), n, off)
        else:
            self._run(
                lambda p, i: p.xadd(key, {b"f": vals[i & MASK]}, idmp=_pid_iid(i, pids, iid)),
                n, off,
            )  # fmt: skip

    def xrange(self, key, starts, n, off):
        m = len(starts) - 1
        self._run(lambda p, i: p.xrange(key, starts[i & m], b"+", count=100), n, off)

    def readack(self, key, group, consumer, n, state):
        pipeline = self.client.pipeline
        streams = {key: b">"}
        ids = state.get("unacked")
        for _ in range(n):
            p = pipeline(transaction=False)
            if ids:
                p.xack(key, group, *ids)
            p.xreadgroup(group, consumer, streams, count=100)
            res = p.execute()
            if ids:
                state["entries"] = state.get("entries", 0) + len(ids)
            r = res[-1]
            if not r:
                self.reset_group(key, group)
                ids = None
                continue
            ids = _ids_of(_stream_entries(r))
        state["unacked"] = ids

    def nackclaim(self, key, group, n, state):
        pipeline = self.client.pipeline
        streams = {key: b">"}
        held = state["held"]
        for _ in range(n):
            p = pipeline(transaction=False)
            p.xnack(key, group, "FAIL", *held)
            p.xreadgroup(group, b"c2", streams, count=100, claim_min_idle_time=CLAIM_IDLE_MS)
            held = _ids_of(_stream_entries(p.execute()[1]))
        state["held"] = held

    def xpending(self, key, group, n):
        self._run(lambda p, i: p.xpending(key, group), n, 0)

    def xpending_range(self, key, group, starts, n, off):
        m = len(starts) - 1
        self._run(lambda p, i: p.xpending_range(key, group, starts[i & m], b"+", 100), n, off)


class BurnerDriver(Driver):
    """burner-redis, one ``await`` per command (its API is async only).

    burner-redis takes stream IDs only as ``str`` (keys, groups, values may be bytes).
    """

    def __init__(self, backend: BurnerBackend, name: str) -> None:
        super().__init__(backend, name)
        self.db = backend.db
        self.run = backend.run
        self._str: dict = {}

    def str_ids(self, ids: list) -> list:
        """The same IDs as ``str`` (converted once per list, outside the timed loops)."""
        got = self._str.get(id(ids))
        if got is None or got[0] is not ids:
            got = self._str[id(ids)] = (ids, [i.decode() for i in ids])
        return got[1]

    def reset_group(self, key, group):
        db = self.db
        self.run(db.xgroup_destroy(key, group))
        self.run(db.xgroup_create(key, group, id="0"))

    def xadd(self, key, size, n, off, mode=None, pids=None):
        if mode is not None:
            raise Unsupported("no IDMP")
        self.backend.keys.add(key)
        xadd = self.db.xadd
        vals = values(size)

        async def go() -> None:
            for i in range(off, off + n):
                await xadd(key, {b"f": vals[i & MASK]})

        self.run(go())

    def xrange(self, key, starts, n, off):
        xrange = self.db.xrange
        starts = self.str_ids(starts)
        m = len(starts) - 1

        async def go() -> None:
            for i in range(off, off + n):
                await xrange(key, starts[i & m], "+", count=100)

        self.run(go())

    def readack(self, key, group, consumer, n, state):
        db = self.db
        streams = {key: ">"}

        async def go() -> None:
            for _ in range(n):
                r = await db.xreadgroup(group, consumer, streams, count=100)
                if not r:
                    await db.xgroup_destroy(key, group)
                    await db.xgroup_create(key, group, id="0")
                    continue
                ids = _ids_of(_stream_entries(r))
                await db.xack(key, group, *ids)
                state["entries"] = state.get("entries", 0) + len(ids)

        self.run(go())

    def nackclaim(self, key, group, n, state):
        raise Unsupported("no XNACK")

    def xpending(self, key, group, n):
        xpending = self.db.xpending

        async def go() -> None:
            for _ in range(n):
                await xpending(key, group)

        self.run(go())

    def xpending_range(self, key, group, starts, n, off):
        xpr = self.db.xpending_range
        starts = self.str_ids(starts)
        m = len(starts) - 1

        async def go() -> None:
            for i in range(off, off + n):
                await xpr(key, group, starts[i & m], "+", 100)

        self.run(go())


class BurnerPipelineDriver(BurnerDriver):
    """burner-redis pipelines (one native call per ``BATCH`` commands)."""

    batched = True

    def _run(self, fn: Callable[[Any, int], None], n: int, off: int) -> None:
        pipeline = self.db.pipeline
        end = off + n

        async def go() -> None:
            for lo in range(off, end, BATCH):
                p = pipeline()
                for i in range(lo, min(lo + BATCH, end)):
                    fn(p, i)
                await p.execute()

        self.run(go())

    def xadd(self, key, size, n, off, mode=None, pids=None):
        if mode is not None:
            raise Unsupported("no IDMP")
        self.backend.keys.add(key)
        vals = values(size)
        self._run(lambda p, i: p.xadd(key, {b"f": vals[i & MASK]}), n, off)

    def xrange(self, key, starts, n, off):
        starts = self.str_ids(starts)
        m = len(starts) - 1
        self._run(lambda p, i: p.xrange(key, starts[i & m], "+", count=100), n, off)

    def readack(self, key, group, consumer, n, state):
        db = self.db
        streams = {key: ">"}
        ids = state.get("unacked")

        async def go(ids: Any) -> Any:
            for _ in range(n):
                p = db.pipeline()
                if ids:
                    p.xack(key, group, *ids)
                p.xreadgroup(group, consumer, streams, count=100)
                res = await p.execute()
                if ids:
                    state["entries"] = state.get("entries", 0) + len(ids)
                r = res[-1]
                if not r:
                    await db.xgroup_destroy(key, group)
                    await db.xgroup_create(key, group, id="0")
                    ids = None
                    continue
                ids = _ids_of(_stream_entries(r))
            return ids

        state["unacked"] = self.run(go(ids))

    def xpending(self, key, group, n):
        self._run(lambda p, i: p.xpending(key, group), n, 0)

    def xpending_range(self, key, group, starts, n, off):
        starts = self.str_ids(starts)
        m = len(starts) - 1
        self._run(lambda p, i: p.xpending_range(key, group, starts[i & m], "+", 100), n, off)


class AsyncClientDriver(BurnerDriver):
    """``xstreams.asyncio.Redis``, one ``await`` per command: the same loops as
    burner-redis's (the asyncio API both share), on the xstreams store."""

    def __init__(self, backend: XStreamsBackend, name: str) -> None:
        import asyncio

        import xstreams.asyncio

        Driver.__init__(self, backend, name)
        self.loop = asyncio.new_event_loop()
        self.db = xstreams.asyncio.Redis(store=backend.store)
        self.run = self.loop.run_until_complete
        self._str = {}

    @property
    def caps(self) -> set:
        return set()

    def reset_group(self, key, group):
        self.backend.raw(b"XGROUP", b"SETID", key, group, b"0")

    def xadd(self, key, size, n, off, mode=None, pids=None):
        if mode is not None:
            raise Unsupported("asyncio column: plain XADD only")
        xadd = self.db.xadd
        vals = values(size)

        async def go() -> None:
            for i in range(off, off + n):
                await xadd(key, {b"f": vals[i & MASK]})

        self.run(go())

    def readack(self, key, group, consumer, n, state):
        db = self.db
        streams = {key: b">"}

        async def go() -> None:
            for _ in range(n):
                r = await db.xreadgroup(group, consumer, streams, count=100)
                if not r:
                    self.reset_group(key, group)
                    continue
                ids = _ids_of(_stream_entries(r))
                await db.xack(key, group, *ids)
                state["entries"] = state.get("entries", 0) + len(ids)

        self.run(go())
