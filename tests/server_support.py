"""Helpers of the test_server_*.py tests: run ``xstreams serve`` (``python -m
xstreams.server`` of the installed package) on a free loopback port as a subprocess, and
talk to it with raw sockets.

Every server started here is stopped by the fixture or context manager that started it
(SHUTDOWN, then SIGTERM, then SIGKILL after bounded waits).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import List, Optional, Sequence

import pytest


def serve_available() -> Optional[str]:
    """None if the installed package has the server, else the reason it has not."""
    try:
        from xstreams import _xstreams
    except Exception as e:  # noqa: BLE001 - any import failure means "not built"
        return f"xstreams is not importable: {type(e).__name__}: {e}"
    if not hasattr(_xstreams, "serve"):
        return "the installed xstreams wheel has no server (rebuild it with maturin)"
    return None


def require_serve() -> None:
    reason = serve_available()
    if reason:
        pytest.skip(reason)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ping(port: int, password: Optional[str]) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            data = s.recv(64)
            return data.startswith(b"+PONG") or data.startswith(b"-NOAUTH")
    except OSError:
        return False


class ServerProcess:
    """``python -m xstreams.server`` on 127.0.0.1 and a free port."""

    def __init__(
        self,
        *args: str,
        dir: Optional[str] = None,
        requirepass: Optional[str] = None,
        debug: bool = True,
        port: Optional[int] = None,
    ) -> None:
        self.extra = list(args)
        self.dir = dir
        self.password = requirepass
        self.debug = debug
        self.port = port or 0
        self.proc: Optional[subprocess.Popen] = None
        self.log_path = ""

    def argv(self) -> List[str]:
        argv = [sys.executable, "-m", "xstreams.server", "--port", str(self.port)]
        argv += ["--bind", "127.0.0.1"]
        if self.dir:
            argv += ["--dir", self.dir]
        if self.password:
            argv += ["--requirepass", self.password]
        if self.debug:
            argv += ["--enable-debug-command", "local"]
        return argv + self.extra

    def start(self) -> ServerProcess:
        require_serve()
        last = ""
        fixed_port = bool(self.port)
        for _attempt in range(5):
            if not fixed_port:
                self.port = free_port()
            fd, self.log_path = tempfile.mkstemp(prefix="xstreams-serve-", suffix=".log")
            log = os.fdopen(fd, "wb")
            # Run from a neutral directory so the source tree's python/ is not importable.
            self.proc = subprocess.Popen(
                self.argv(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=tempfile.gettempdir(),
            )
            log.close()
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                if _ping(self.port, self.password):
                    return self
                time.sleep(0.02)
            last = self.log()
            self.stop()
        raise RuntimeError(f"xstreams serve did not start:\n{last[-3000:]}")

    def log(self) -> str:
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def shutdown(self, timeout: float = 20) -> int:
        """SHUTDOWN through the protocol; wait for the process to exit."""
        assert self.proc is not None
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
                if self.password:
                    s.sendall(resp_command(["AUTH", self.password]))
                    s.recv(64)
                s.sendall(resp_command(["SHUTDOWN"]))
                try:
                    s.recv(64)
                except OSError:
                    pass
        except OSError:
            pass
        return self.proc.wait(timeout)

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None

    def cleanup(self) -> None:
        self.stop()
        if self.log_path:
            try:
                os.unlink(self.log_path)
            except OSError:
                pass

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


def resp_command(args: Sequence) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        elif isinstance(a, int):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class RawConnection:
    """A socket speaking raw RESP, for malformed-input tests."""

    def __init__(self, port: int, timeout: float = 10) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def call(self, *args) -> bytes:
        self.send(resp_command(args))
        return self.read_line()

    def read_line(self) -> bytes:
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def closed(self, timeout: float = 10) -> bool:
        """True if the server closes the connection (EOF) within ``timeout``."""
        self.sock.settimeout(timeout)
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return True
                self.buf += chunk
        except ConnectionResetError:
            return True
        except OSError:
            return False

    def close(self) -> None:
        self.sock.close()
