"""A throw-away Redis Cluster of three masters (no replicas) on 127.0.0.1, from the
oracle's redis-server (``$XSTREAMS_REDIS_SERVER``) and the redis-cli beside it, joined
with ``redis-cli --cluster create``; and one plain redis-server with extra settings
(``requirepass``, ACL users). Every process started here is stopped by the context
manager that started it (SIGTERM, then SIGKILL after a bounded wait)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from typing import List, Optional, Sequence

import pytest
from differential.servers import find_redis_server
from server_support import free_port


def require_redis_server() -> str:
    binary = find_redis_server()
    if not binary:
        pytest.skip("no redis-server binary (set XSTREAMS_REDIS_SERVER)")
    return binary


def require_redis_cli(binary: str) -> str:
    cli = os.path.join(os.path.dirname(binary), "redis-cli")
    if not os.access(cli, os.X_OK):
        cli = shutil.which("redis-cli") or ""
    if not cli:
        pytest.skip(f"no redis-cli beside {binary} or on PATH to join a cluster")
    return cli


def _wait_ping(port: int, proc: subprocess.Popen, password: Optional[str] = None) -> None:
    import redis

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"redis-server on port {port} exited with {proc.returncode}")
        try:
            redis.Redis(port=port, password=password, socket_timeout=1).ping()
            return
        except redis.AuthenticationError:
            return
        except (redis.ConnectionError, redis.TimeoutError, OSError):
            time.sleep(0.05)
    raise RuntimeError(f"redis-server on port {port} did not answer PING")


def _stop(procs: Sequence[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(10)


class RedisProcess:
    """One redis-server on 127.0.0.1 with extra ``--name value`` settings."""

    def __init__(self, *args: str, password: Optional[str] = None) -> None:
        self.binary = require_redis_server()
        self.args = list(args)
        self.password = password
        self.port = 0
        self.dir = ""
        self.proc: Optional[subprocess.Popen] = None

    def __enter__(self) -> RedisProcess:
        self.dir = tempfile.mkdtemp(prefix="xstreams-redis-")
        self.port = free_port()
        argv = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--dir", self.dir, *self.args]  # fmt: skip
        if self.password:
            argv += ["--requirepass", self.password]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_ping(self.port, self.proc, self.password)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            _stop([self.proc])
        shutil.rmtree(self.dir, ignore_errors=True)


class RedisCluster3:
    """Three cluster-mode masters joined into one cluster covering every slot."""

    def __init__(self, masters: int = 3) -> None:
        self.binary = require_redis_server()
        self.cli = require_redis_cli(self.binary)
        self.masters = masters
        self.ports: List[int] = []
        self.procs: List[subprocess.Popen] = []
        self.dir = ""

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.ports[0]}"

    def __enter__(self) -> RedisCluster3:
        self.dir = tempfile.mkdtemp(prefix="xstreams-cluster-")
        try:
            for i in range(self.masters):
                port = free_port()
                d = os.path.join(self.dir, str(i))
                os.mkdir(d)
                # The bus port by default is port + 10000, past 65535 for a high port.
                argv = [self.binary, "--port", str(port), "--bind", "127.0.0.1",
                        "--cluster-port", str(free_port()), "--cluster-enabled", "yes",
                        "--cluster-config-file", "nodes.conf",
                        "--cluster-node-timeout", "5000", "--save", "", "--appendonly", "no",
                        "--dir", d]  # fmt: skip
                p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                self.procs.append(p)
                self.ports.append(port)
                _wait_ping(port, p)
            out = subprocess.run(
                [self.cli, "--cluster", "create",
                 *[f"127.0.0.1:{p}" for p in self.ports],
                 "--cluster-replicas", "0", "--cluster-yes"],
                capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            if out.returncode != 0:
                if "cluster support disabled" in (out.stdout + out.stderr):
                    pytest.skip(f"{self.binary} has no cluster mode")
                raise RuntimeError(f"redis-cli --cluster create failed: {out.stdout}{out.stderr}")
            self.wait_ok()
        except BaseException:
            self.__exit__()
            raise
        return self

    def wait_ok(self, timeout: float = 30) -> None:
        """Until every master says ``cluster_state:ok`` and knows every master."""
        import redis

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ok = True
            for port in self.ports:
                info = redis.Redis(port=port).execute_command("CLUSTER", "INFO")
                text = info.decode() if isinstance(info, bytes) else str(info)
                if (
                    "cluster_state:ok" not in text
                    or f"cluster_known_nodes:{len(self.ports)}" not in text
                ):
                    ok = False
            if ok:
                return
            time.sleep(0.1)
        raise RuntimeError("the cluster did not reach cluster_state:ok")

    def node_id(self, port: int) -> str:
        import redis

        got = redis.Redis(port=port).execute_command("CLUSTER", "MYID")
        return got.decode() if isinstance(got, bytes) else str(got)

    def owner(self, slot: int) -> int:
        """The port of the master that owns ``slot``."""
        import redis

        for lo, hi, master, *_ in redis.Redis(port=self.ports[0]).execute_command(
            "CLUSTER", "SLOTS"
        ):
            if lo <= slot <= hi:
                return int(master[1])
        raise RuntimeError(f"no master owns slot {slot}")

    def __exit__(self, *exc: object) -> None:
        _stop(self.procs)
        shutil.rmtree(self.dir, ignore_errors=True)
