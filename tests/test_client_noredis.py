"""The client works when redis-py is not installed, and raises xstreams' own errors.

A subprocess hides the ``redis`` package (``sys.modules["redis"] = None`` makes every
``import redis`` fail) before importing xstreams, then uses the client with a canned
store and, when a redis-server is available, with the socket backend.
``XSTREAMS_PYTHON_DIR`` points the subprocess at another copy of the package.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

pytest_plugins = ("client_support.fixtures",)

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))

PRELUDE = f"""
import sys
sys.modules["redis"] = None
sys.path[:0] = [{TESTS_DIR!r}]  # the installed xstreams wheel, the tests' helpers
import xstreams.exceptions as xe
from xstreams.client import Redis
assert xe.HAVE_REDIS_PY is False
for cls in (xe.ResponseError, xe.DataError, xe.ConnectionError, xe.WrongTypeError):
    assert all(not c.__module__.startswith("redis") for c in cls.__mro__), cls.__mro__

def raises(exc_type, fn, message=None):
    try:
        fn()
    except exc_type as e:
        assert type(e).__module__ == "xstreams.exceptions", type(e)
        if message is not None:
            assert str(e) == message, str(e)
        return e
    raise AssertionError(f"{{fn}} did not raise {{exc_type}}")
"""

CANNED = """
class Canned:
    def __init__(self):
        self.calls = []
    def execute_command(self, *args, db=0, protocol=2):
        self.calls.append(args)
        if args[0] == b"XLEN":
            raise xe.error_from_reply("WRONGTYPE Operation against a key holding the wrong kind")
        return [[b"1-1", [b"f", b"v"]]]
    def execute_many(self, commands, db=0, atomic=True, protocol=2):
        return [xe.error_from_reply("ERR no") if c[0] == b"XLEN" else b"OK" for c in commands]

store = Canned()
r = Redis(store=store)
assert r.xrange("s") == [(b"1-1", {b"f": b"v"})]
assert Redis(store=store, decode_responses=True).xrange("s") == [("1-1", {"f": "v"})]
raises(xe.WrongTypeError, lambda: r.xlen("s"))
raises(xe.ResponseError, lambda: r.xlen("s"))
raises(xe.DataError, lambda: r.xadd("s", {}), "XADD fields must be a non-empty dict")
raises(xe.DataError, lambda: r.xadd("s", {"a": True}))
raises(xe.ConnectionError, lambda: Redis(store=store, protocol=9), "protocol must be either 2 or 3")
raises(xe.XStreamsError, lambda: r.pipeline(transaction=False).set("a", 1).multi())
assert r.pipeline().set("a", 1).execute() == [True]
e = raises(xe.ResponseError, lambda: r.pipeline().set("a", 1).xlen("s").execute())
assert str(e) == "Command # 2 (XLEN s) of pipeline caused error: no", str(e)
assert "redis" not in [m.split(".")[0] for m, v in sys.modules.items() if v is not None]
print("CANNED OK")
"""

SERVER = """
from client_support.socket_backend import SocketBackend
r = Redis(store=SocketBackend(port=PORT), db=9)
r.flushdb()
assert r.xadd("s", {"a": 1}, id="1-1") == b"1-1"
assert r.xrange("s") == [(b"1-1", {b"a": b"1"})]
r.set("str", "v")
raises(xe.WrongTypeError, lambda: r.xlen("str"),
       "WRONGTYPE Operation against a key holding the wrong kind of value")
raises(xe.ResponseError, lambda: r.xadd("s", {"a": 1}, id="1-0"),
       "The ID specified in XADD is equal or smaller than the target stream top item")
raises(xe.BusyGroupError, lambda: [r.xgroup_create("s", "g"), r.xgroup_create("s", "g")])
raises(xe.NoGroupError, lambda: r.xreadgroup("nope", "c", {"s": ">"}))
assert r.pipeline().xadd("s", {"b": 2}, id="2-2").xlen("s").execute() == [b"2-2", 2]
assert r.xread({"s": "$"}, block=10) == []
r.flushdb()
print("SERVER OK")
"""


def _run(script: str) -> str:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return proc.stdout


def test_client_without_redis_py():
    assert "CANNED OK" in _run(textwrap.dedent(PRELUDE) + textwrap.dedent(CANNED))


def test_client_without_redis_py_on_a_server(redis_server):
    script = textwrap.dedent(PRELUDE) + textwrap.dedent(SERVER).replace(
        "PORT", str(redis_server.port)
    )
    assert "SERVER OK" in _run(script)
