"""Malformed RESP against ``xstreams serve``: each bad request gets redis-server's exact
``-ERR Protocol error: ...`` reply and closes that connection only; commands sent before
it in the same packet run first; truncated frames and random garbage never disturb the
other clients (an idle one, a pipelining one and one blocked in XREAD)."""

from __future__ import annotations

import random
import socket
import time

import pytest
from server_support import RawConnection, ServerProcess, require_serve

CASES = [
    (b"*x\r\n", b"-ERR Protocol error: invalid multibulk length"),
    (b"*2147483648\r\n", b"-ERR Protocol error: invalid multibulk length"),
    (b"*99999999999999999999999\r\n", b"-ERR Protocol error: invalid multibulk length"),
    (b"*3\r\n$3\r\nSET\r\n$-2\r\n", b"-ERR Protocol error: invalid bulk length"),
    (b"*1\r\n$536870913\r\n", b"-ERR Protocol error: invalid bulk length"),
    (b"*1\r\n$99999999999999\r\n", b"-ERR Protocol error: invalid bulk length"),
    (b"*1\r\n$1x\r\n", b"-ERR Protocol error: invalid bulk length"),
    (b"*1\r\n+OK\r\n", b"-ERR Protocol error: expected '$', got '+'"),
    (b"*2\r\n$4\r\nECHO\r\nhello\r\n", b"-ERR Protocol error: expected '$', got 'h'"),
    (b"*1\r\n$" + b"1" * 70000, b"-ERR Protocol error: too big bulk count string"),
    (b"*" + b"1" * 70000, b"-ERR Protocol error: too big mbulk count string"),
    (b"A" * 70000, b"-ERR Protocol error: too big inline request"),
    (b'SET "a b\r\n', b"-ERR Protocol error: unbalanced quotes in request"),
    (b"SET 'a'b c\r\n", b"-ERR Protocol error: unbalanced quotes in request"),
]


@pytest.fixture(scope="module")
def server():
    require_serve()
    with ServerProcess() as srv:
        yield srv


class Bystanders:
    """An idle client, a client that pipelines, and a client blocked in XREAD."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.idle = RawConnection(port)
        assert self.idle.call("FLUSHALL") == b"+OK"
        self.busy = RawConnection(port)
        self.blocked = RawConnection(port, timeout=60)
        self.blocked.send(b"*6\r\n$5\r\nXREAD\r\n$5\r\nBLOCK\r\n$1\r\n0\r\n$7\r\nSTREAMS\r\n"
                          b"$6\r\nwakeme\r\n$1\r\n$\r\n")  # fmt: skip
        deadline = time.monotonic() + 10
        while b"blocked_clients:1" not in self.info():
            assert time.monotonic() < deadline
            time.sleep(0.01)

    def info(self) -> bytes:
        self.idle.send(b"*2\r\n$4\r\nINFO\r\n$7\r\nclients\r\n")
        header = self.idle.read_line()
        n = int(header[1:])
        while len(self.idle.buf) < n + 2:
            self.idle.buf += self.idle.sock.recv(65536)
        body, self.idle.buf = self.idle.buf[:n], self.idle.buf[n + 2 :]
        return body

    def check(self) -> None:
        assert self.idle.call("PING") == b"+PONG"
        cmds = b"".join(b"*2\r\n$4\r\nECHO\r\n$1\r\n%d\r\n" % (i % 10) for i in range(50))
        self.busy.send(cmds)
        for i in range(50):
            assert self.busy.read_line() == b"$1"
            assert self.busy.read_line() == b"%d" % (i % 10)

    def finish(self) -> None:
        assert self.idle.call("XADD", "wakeme", "1-1", "f", "v") == b"$3"
        assert self.idle.read_line() == b"1-1"
        assert self.blocked.read_line() == b"*1"  # the blocked read was never disturbed
        for c in (self.idle, self.busy, self.blocked):
            c.close()


@pytest.mark.parametrize(("bad", "error"), CASES, ids=[c[1][21:].decode() for c in CASES])
def test_protocol_errors(server, bad, error):
    by = Bystanders(server.port)
    c = RawConnection(server.port)
    c.send(b"*1\r\n$4\r\nPING\r\n" + bad)
    assert c.read_line() == b"+PONG"
    assert c.read_line() == error
    assert c.closed()
    c.close()
    by.check()
    by.finish()


def test_unauthenticated_limits():
    require_serve()
    with ServerProcess(requirepass="pw") as srv:
        for bad, error in [
            (b"*11\r\n", b"-ERR Protocol error: unauthenticated multibulk length"),
            (b"*1\r\n$16385\r\n", b"-ERR Protocol error: unauthenticated bulk length"),
        ]:
            c = RawConnection(srv.port)
            c.send(bad)
            assert c.read_line() == error
            assert c.closed()
            c.close()
        c = RawConnection(srv.port)
        assert c.call("AUTH", "pw") == b"+OK"
        c.send(b"*11\r\n" + b"$1\r\nx\r\n" * 11)
        assert c.read_line().startswith(b"-ERR unknown command 'x'")
        c.close()


def test_truncated_frames_and_garbage(server):
    by = Bystanders(server.port)
    truncated = [
        b"*3\r\n$3\r\nSET\r\n$1",
        b"*3\r\n$3\r\nSET\r\n$1\r\nk",
        b"*1\r\n$536870912\r\nabc",  # a huge (allowed) argument that never arrives
        b"*2147483647\r\n",
        b"*1\r",
        b"PING",
        b'ECHO "unterminated',
    ]
    for frame in truncated:
        c = RawConnection(server.port, timeout=0.3)
        c.send(frame)
        with pytest.raises(socket.timeout):
            c.read_line()  # incomplete: no reply, the connection stays open
        c.close()
        by.check()
    rng = random.Random(8)
    for _ in range(200):
        c = RawConnection(server.port, timeout=5)
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
        try:
            c.send(data + b"\r\n")
            c.sock.shutdown(socket.SHUT_WR)
            c.closed(5)
        except OSError:
            pass
        c.close()
    by.check()
    by.finish()


def test_many_connections_come_and_go(server):
    by = Bystanders(server.port)
    conns = [RawConnection(server.port) for _ in range(200)]
    for i, c in enumerate(conns):
        if i % 3 == 0:
            c.send(b"*x\r\n")
        elif i % 3 == 1:
            c.send(b"*1\r\n$4\r\nPI")
    for c in conns:
        c.close()
    by.check()
    by.finish()
