"""A stand-in for ``xstreams.Store`` that forwards every command to a real redis-server.

It has exactly the contract of the Rust store::

    execute_command(*args, db=0, protocol=2) -> raw reply
    execute_many(commands, db=0, atomic=True, protocol=2, watch=None) -> raw replies | None
    watch(*keys, db=0) -> a watch for execute_many

Raw replies are what the store returns: ``bytes`` for bulk and status replies, ``int``,
``list``, ``None``; with ``protocol=3`` maps are ``dict`` (bytes keys), sets are lists,
doubles are ``float`` and booleans ``bool``. A command error raises (``execute_command``)
or fills its slot (``execute_many``) with ``xstreams.exceptions.error_from_reply(line)``.

A transaction (``atomic=True``) is sent as MULTI / commands / EXEC. When redis-server
discards it (EXECABORT: a command was rejected while queued), nothing ran, and the
result list holds each rejected command's own error in its slot and the EXECABORT error
in every other slot.

``watch`` sends WATCH on a connection of its own, kept by the returned
:class:`SocketWatch` until a transaction runs with it (EXEC: ``None`` when redis-server
aborted it) or it is unwatched or collected (UNWATCH). One watch per transaction.

Connections are pooled, so several threads can use one backend at once (a blocking
XREAD in one thread does not stop an XADD in another). Each connection remembers its
selected database and protocol and switches (SELECT, HELLO) only when needed.
"""

from __future__ import annotations

import socket
import threading
from typing import Any, List, Optional, Sequence

from xstreams.exceptions import ConnectionError as XConnectionError
from xstreams.exceptions import DataError, ResponseError, error_from_reply

__all__ = ["SocketBackend"]

_CRLF = b"\r\n"


def _encode_arg(value: Any) -> bytes:
    """Convert one argument as ``xstreams.Store`` does (redis-py's Encoder, strict UTF-8)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(value).encode()
    if isinstance(value, str):
        return value.encode("utf-8")
    raise DataError(
        f"Invalid input of type: '{type(value).__name__}'. "
        "Convert to a bytes, string, int or float first."
    )


def pack_command(args: Sequence[Any]) -> bytes:
    """RESP encoding of one command (an array of bulk strings)."""
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = _encode_arg(arg)
        parts.append(b"$%d\r\n" % len(data))
        parts.append(data)
        parts.append(_CRLF)
    return b"".join(parts)


class _Connection:
    def __init__(self, host: str, port: int, timeout: Optional[float]) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.rfile = self.sock.makefile("rb")
        self.db: Optional[int] = 0
        self.protocol = 2

    def close(self) -> None:
        try:
            self.rfile.close()
        finally:
            self.sock.close()

    # -- reading --------------------------------------------------------------------------

    def _line(self) -> bytes:
        line = self.rfile.readline()
        if not line.endswith(_CRLF):
            raise XConnectionError("Connection closed by server.")
        return line[:-2]

    def _bulk(self, length: int) -> bytes:
        data = self.rfile.read(length + 2)
        if len(data) != length + 2:
            raise XConnectionError("Connection closed by server.")
        return data[:-2]

    def read_reply(self) -> Any:
        """Read one reply; error replies are returned as exception instances."""
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest
        if kind == b"-":
            return error_from_reply(rest.decode("utf-8", errors="replace"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._bulk(n)
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.read_reply() for _ in range(n)]
        # RESP3
        if kind == b"_":
            return None
        if kind == b"%":
            result = {}
            for _ in range(int(rest)):
                key = self.read_reply()
                result[key] = self.read_reply()
            return result
        if kind in (b"~", b">"):
            return [self.read_reply() for _ in range(int(rest))]
        if kind == b",":
            return float(rest)
        if kind == b"#":
            return rest == b"t"
        if kind == b"(":
            return int(rest)
        if kind == b"=":
            return self._bulk(int(rest))[4:]
        if kind == b"!":
            return error_from_reply(self._bulk(int(rest)).decode("utf-8", errors="replace"))
        if kind == b"|":
            for _ in range(int(rest)):  # attributes: skip them
                self.read_reply()
                self.read_reply()
            return self.read_reply()
        raise XConnectionError(f"Protocol error: {line!r}")

    # -- commands -------------------------------------------------------------------------

    def send(self, commands: Sequence[Sequence[Any]]) -> None:
        self.sock.sendall(b"".join(pack_command(c) for c in commands))

    def prepare(self, db: int, protocol: int) -> None:
        """Switch protocol and database if this connection is not on them yet."""
        setup: List[Sequence[Any]] = []
        if protocol != self.protocol:
            setup.append((b"HELLO", protocol))
        if db != self.db:
            setup.append((b"SELECT", db))
        if not setup:
            return
        self.send(setup)
        replies = [self.read_reply() for _ in setup]
        for command, reply in zip(setup, replies):
            if isinstance(reply, Exception):
                raise reply
            if command[0] == b"HELLO":
                self.protocol = protocol
            else:
                self.db = db

    def after(self, commands: Sequence[Sequence[Any]]) -> None:
        """Forget the cached state if a command may have changed it."""
        for command in commands:
            name = _encode_arg(command[0]).upper() if command else b""
            if name in (b"SELECT", b"SWAPDB", b"RESET"):
                self.db = None
            if name in (b"HELLO", b"RESET"):
                self.protocol = -1


class SocketWatch:
    """Keys WATCHed on a connection pinned to this object (``xstreams.Watch``'s stand-in)."""

    def __init__(self, backend: SocketBackend, conn: _Connection, db: int) -> None:
        self.backend = backend
        self.conn: Optional[_Connection] = conn
        self.db = db

    def take(self) -> _Connection:
        """The pinned connection, for the EXEC (which unwatches)."""
        conn, self.conn = self.conn, None
        if conn is None:
            raise DataError("this watch was already used or unwatched")
        return conn

    def unwatch(self) -> None:
        conn, self.conn = self.conn, None
        if conn is None:
            return
        try:
            conn.send([(b"UNWATCH",)])
            conn.read_reply()
        except BaseException:
            conn.close()
            raise
        self.backend._release(conn)

    def __del__(self) -> None:
        try:
            self.unwatch()
        except Exception:  # noqa: BLE001 - nothing to report to at collection time
            pass


class SocketBackend:
    """Store stand-in backed by a redis-server at ``host:port``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 6379, timeout: Optional[float] = None):
        self.host = host
        self.port = port
        self.timeout = timeout
        self._idle: List[_Connection] = []
        self._lock = threading.Lock()
        self._closed = False

    def __repr__(self) -> str:
        return f"SocketBackend({self.host}:{self.port})"

    def _acquire(self) -> _Connection:
        with self._lock:
            if self._closed:
                raise XConnectionError("The backend is closed.")
            if self._idle:
                return self._idle.pop()
        try:
            return _Connection(self.host, self.port, self.timeout)
        except OSError as e:
            raise XConnectionError(f"Error connecting to {self.host}:{self.port}: {e}") from e

    def _release(self, conn: _Connection) -> None:
        with self._lock:
            if not self._closed:
                self._idle.append(conn)
                return
        conn.close()

    def _with_connection(self, db: int, protocol: int, commands: Sequence[Sequence[Any]], fn):
        conn = self._acquire()
        try:
            conn.prepare(db, protocol)
            result = fn(conn)
            conn.after(commands)
        except ResponseError:
            self._release(conn)
            raise
        except BaseException:
            conn.close()
            raise
        self._release(conn)
        return result

    def execute_command(self, *args: Any, db: int = 0, protocol: int = 2) -> Any:
        """Run one command; raise its error, else return the raw reply."""

        def run(conn: _Connection) -> Any:
            conn.send([args])
            return conn.read_reply()

        reply = self._with_connection(db, protocol, [args], run)
        if isinstance(reply, ResponseError):
            raise reply
        return reply

    def watch(self, *keys: Any, db: int = 0) -> SocketWatch:
        """WATCH ``keys`` on a connection pinned to the returned watch."""
        conn = self._acquire()
        try:
            conn.prepare(db, conn.protocol if conn.protocol in (2, 3) else 2)
            conn.send([(b"WATCH", *keys)])
            reply = conn.read_reply()
        except BaseException:
            conn.close()
            raise
        if isinstance(reply, Exception):
            self._release(conn)
            raise reply
        return SocketWatch(self, conn, db)

    def execute_many(
        self,
        commands: Sequence[Sequence[Any]],
        db: int = 0,
        atomic: bool = True,
        protocol: int = 2,
        watch: Any = None,
    ) -> Optional[List[Any]]:
        """Run several commands in order (in MULTI/EXEC when ``atomic``); with a
        ``watch``, on its connection, and ``None`` when a watched key changed."""
        commands = [tuple(c) for c in commands]
        if isinstance(watch, (tuple, list)):
            if len(watch) != 1:
                raise DataError("the socket backend runs one WATCH per transaction")
            watch = watch[0]
        if watch is not None:
            conn = watch.take()
            try:
                conn.prepare(db, protocol)
                conn.send([(b"MULTI",), *commands, (b"EXEC",)])
                multi = conn.read_reply()
                queued = [conn.read_reply() for _ in commands]
                result = conn.read_reply()
                conn.after(commands)
            except BaseException:
                conn.close()
                raise
            self._release(conn)
            if isinstance(multi, Exception):
                raise multi
            if isinstance(result, Exception):
                return [q if isinstance(q, Exception) else result for q in queued]
            return None if result is None else list(result)

        def run(conn: _Connection) -> List[Any]:
            if not atomic:
                conn.send(commands)
                return [conn.read_reply() for _ in commands]
            conn.send([(b"MULTI",), *commands, (b"EXEC",)])
            multi = conn.read_reply()
            queued = [conn.read_reply() for _ in commands]
            result = conn.read_reply()
            if isinstance(multi, Exception):
                raise multi
            if isinstance(result, Exception):
                return [q if isinstance(q, Exception) else result for q in queued]
            if result is None:
                raise ResponseError("EXEC returned a null reply")
            return list(result)

        return self._with_connection(db, protocol, commands, run)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
