"""``xstreams serve`` with Debian's redis-cli (package redis-tools): one-shot commands,
RESP3, AUTH, database selection, errors, piped input and --pipe mass insertion."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from server_support import ServerProcess, require_serve

REDIS_CLI = shutil.which("redis-cli")
pytestmark = pytest.mark.skipif(
    REDIS_CLI is None, reason="redis-cli not installed (apt-get install redis-tools)"
)


def cli(port, *args, stdin=None, password=None):
    argv = [REDIS_CLI, "-h", "127.0.0.1", "-p", str(port)]
    if password:
        argv += ["-a", password, "--no-auth-warning"]
    proc = subprocess.run(
        argv + list(args), input=stdin, capture_output=True, text=True, timeout=60
    )
    return proc.stdout.strip(), proc.returncode


def cli_all(port, *args, password=None):
    """stdout and stderr together (redis-cli reports AUTH failures on stderr)."""
    argv = [REDIS_CLI, "-h", "127.0.0.1", "-p", str(port)]
    if password:
        argv += ["-a", password, "--no-auth-warning"]
    proc = subprocess.run(argv + list(args), capture_output=True, text=True, timeout=60)
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def server():
    require_serve()
    with ServerProcess() as srv:
        yield srv


def test_commands(server):
    p = server.port
    assert cli(p, "PING") == ("PONG", 0)
    assert cli(p, "FLUSHALL") == ("OK", 0)
    assert cli(p, "XADD", "s", "1-1", "a", "1") == ("1-1", 0)
    assert cli(p, "XADD", "s", "1-2", "b", "2") == ("1-2", 0)
    assert cli(p, "XLEN", "s") == ("2", 0)
    assert cli(p, "XRANGE", "s", "-", "+")[0].split("\n") == ["1-1", "a", "1", "1-2", "b", "2"]
    assert cli(p, "--no-raw", "XLEN", "s")[0] == "(integer) 2"
    out, _ = cli(p, "NOSUCH", "x")
    assert out == "ERR unknown command 'NOSUCH', with args beginning with: 'x'"
    assert cli(p, "-n", "2", "XLEN", "s") == ("0", 0)
    assert cli(p, "-3", "XRANGE", "s", "-", "+", "COUNT", "1")[0].split("\n") == ["1-1", "a", "1"]
    out, _ = cli(p, "-3", "HELLO", "3")
    assert "8.8.0" in out
    out, _ = cli(p, "INFO", "server")
    assert "redis_version:8.8.0" in out
    assert cli(p, "XGROUP", "CREATE", "s", "g", "0") == ("OK", 0)
    out, _ = cli(p, "XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">")
    assert out.split("\n") == ["s", "1-1", "a", "1"]
    out, _ = cli(p, "XREAD", "BLOCK", "100", "STREAMS", "s", "$")
    assert out == ""


def test_stdin_and_pipe(server):
    p = server.port
    cli(p, "FLUSHALL")
    script = "".join(f"XADD piped {i}-1 f v\n" for i in range(1, 101))
    out, code = cli(p, stdin=script)
    assert code == 0 and out.split("\n")[-1] == "100-1"
    proto = "".join(
        f"*5\r\n$4\r\nXADD\r\n$4\r\nmass\r\n${len(str(i)) + 2}\r\n{i}-1\r\n$1\r\nf\r\n$1\r\nv\r\n"
        for i in range(1, 1001)
    )
    out, code = cli(p, "--pipe", stdin=proto)
    assert code == 0 and "errors: 0, replies: 1000" in out
    assert cli(p, "XLEN", "mass") == ("1000", 0)


def test_interactive_help_and_command_docs(server):
    # redis-cli fetches COMMAND DOCS when started interactively.
    out, code = cli(server.port, stdin="PING\nXLEN nope\n")
    assert code == 0 and out.split("\n") == ["PONG", "0"]


def test_auth():
    require_serve()
    with ServerProcess(requirepass="pw") as srv:
        out, _ = cli(srv.port, "XLEN", "s")
        assert out == "NOAUTH Authentication required."
        assert cli(srv.port, "XLEN", "s", password="pw") == ("0", 0)
        out = cli_all(srv.port, "PING", password="bad")
        assert "AUTH failed" in out and "NOAUTH Authentication required." in out
