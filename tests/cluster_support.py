"""Many processes on loopback for the cluster tests and benchmarks: a standalone Spark
cluster (a ``Master`` and a ``Worker`` started with pip pyspark's ``bin/spark-class``, each
application's executors in their own JVMs and Python workers), a 3-master Redis Cluster
from the oracle's ``redis-server`` (``XSTREAMS_REDIS_SERVER``, ``redis-cli`` beside it),
and a Spark Connect server in front of the standalone master.

Everything binds 127.0.0.1 on free ports, keeps its logs and work directories in one
temporary directory, and is stopped by ``stop()`` (SIGTERM, then SIGKILL of the process
group after a bounded wait). Used by ``tests/conftest.py``'s session fixtures and by
``bench/bench_spark_cluster.py`` (which puts ``tests/`` on ``sys.path``).

The same classes are a recipe for a real deployment: the argv each one runs is what a
user types on each node (docs/spark.md, "Running on a cluster" -> "Deployment").
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from typing import Any, Dict, List, Optional

from spark_support import spark_home

LOOPBACK = "127.0.0.1"
# What one standalone worker offers: two task slots (the machine's cores) and the
# memory of two 512 MiB executors plus their Python workers.
WORKER_CORES = 2
WORKER_MEMORY = "2g"
EXECUTOR_MEMORY = "512m"
DAEMON_MEMORY = "256m"  # the Master's and Worker's own heaps (SPARK_DAEMON_MEMORY)


def free_port(also: int = 0) -> int:
    """A free loopback port; with ``also``, one whose ``port + also`` is free too (the
    Redis Cluster bus listens on port + 10000)."""
    for _ in range(100):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((LOOPBACK, 0))
            port = s.getsockname()[1]
        if not also:
            return port
        if port + also < 65536:
            try:
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                    s.bind((LOOPBACK, port + also))
                return port
            except OSError:
                pass
    raise RuntimeError("no free loopback port pair")


def _wait(cond: Any, timeout: float, what: str, log: Any = None) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if cond():
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            more = f"\n{log()[-3000:]}" if log else ""
            raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}{more}")
        time.sleep(0.2)


def _stop(proc: Optional[subprocess.Popen], timeout: float = 20) -> None:
    """SIGTERM the process group ``proc`` leads, then SIGKILL it after ``timeout``."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(10)


def _pong(port: int) -> bool:
    with socket.create_connection((LOOPBACK, port), timeout=1) as s:
        s.sendall(b"*1\r\n$4\r\nPING\r\n")
        return s.recv(64).startswith(b"+PONG")


def _tail(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read().decode(errors="replace")
    except OSError:
        return ""


# ---------------------------------------------------------------------- Spark standalone


def spark_env(base: str) -> Dict[str, str]:
    """The environment of the cluster's daemons: loopback only, logs and work under
    ``base``, the test ``SPARK_HOME`` (see ``spark_support.spark_home``), and this
    interpreter as every Python worker's (the same venv path on every node)."""
    env = dict(os.environ)
    home = spark_home()
    if home is None:
        import pyspark

        home = os.environ.get("SPARK_HOME") or os.path.dirname(os.path.abspath(pyspark.__file__))
    env.update(
        SPARK_HOME=home,
        SPARK_LOCAL_IP=LOOPBACK,
        SPARK_LOCAL_HOSTNAME="localhost",
        SPARK_LOG_DIR=os.path.join(base, "logs"),
        SPARK_WORKER_DIR=os.path.join(base, "work"),
        SPARK_LOCAL_DIRS=os.path.join(base, "local"),
        SPARK_DAEMON_MEMORY=DAEMON_MEMORY,
        SPARK_NO_DAEMONIZE="1",
        PYSPARK_PYTHON=sys.executable,
    )
    for d in ("logs", "work", "local"):
        os.makedirs(os.path.join(base, d), exist_ok=True)
    return env


class SparkStandalone:
    """A standalone ``Master`` and one ``Worker`` (``WORKER_CORES`` cores,
    ``WORKER_MEMORY``) on 127.0.0.1, each a JVM of its own."""

    def __init__(self, cores: int = WORKER_CORES, memory: str = WORKER_MEMORY) -> None:
        self.cores = cores
        self.memory = memory
        self.base = tempfile.mkdtemp(prefix="xstreams-spark-cluster-")
        self.env = spark_env(self.base)
        self.home = self.env["SPARK_HOME"]
        self.master: Optional[subprocess.Popen] = None
        self.worker: Optional[subprocess.Popen] = None
        self.port = 0
        self.ui_port = 0
        self.work_dir = self.env["SPARK_WORKER_DIR"]

    @property
    def url(self) -> str:
        return f"spark://{LOOPBACK}:{self.port}"

    def _spawn(self, name: str, argv: List[str]) -> subprocess.Popen:
        log = open(os.path.join(self.base, "logs", f"{name}.out"), "wb")
        try:
            return subprocess.Popen(
                [os.path.join(self.home, "bin", "spark-class"), *argv],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.base,
                start_new_session=True,
            )
        finally:
            log.close()

    def log(self, name: str = "master") -> str:
        return _tail(os.path.join(self.base, "logs", f"{name}.out"))

    def state(self) -> Dict[str, Any]:
        """The master's JSON status page (workers, applications)."""
        with urllib.request.urlopen(f"http://{LOOPBACK}:{self.ui_port}/json/", timeout=2) as r:
            return json.loads(r.read())

    def start(self) -> SparkStandalone:
        self.port, self.ui_port = free_port(), free_port()
        self.master = self._spawn(
            "master",
            [
                "org.apache.spark.deploy.master.Master",
                "--host",
                LOOPBACK,
                "--port",
                str(self.port),
                "--webui-port",
                str(self.ui_port),
            ],
        )
        try:
            _wait(lambda: self.state() is not None, 90, "the Spark master", self.log)
            self.worker = self._spawn(
                "worker",
                [
                    "org.apache.spark.deploy.worker.Worker",
                    "--host",
                    LOOPBACK,
                    "--webui-port",
                    str(free_port()),
                    "--cores",
                    str(self.cores),
                    "--memory",
                    self.memory,
                    "--work-dir",
                    self.work_dir,
                    self.url,
                ],
            )
            _wait(
                lambda: any(w.get("state") == "ALIVE" for w in self.state().get("workers", [])),
                90,
                "the Spark worker to register",
                lambda: self.log("worker"),
            )
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        _stop(self.worker)
        _stop(self.master)
        self.worker = self.master = None
        shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> SparkStandalone:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def session_conf(self, app: str = "xstreams-cluster-tests") -> Dict[str, str]:
        """The settings of a SparkSession on this cluster: two executors of one core
        (two JVMs, so killing one leaves the other), driver on loopback."""
        return {
            "spark.master": self.url,
            "spark.app.name": app,
            "spark.driver.host": LOOPBACK,
            "spark.driver.bindAddress": LOOPBACK,
            "spark.executor.cores": "1",
            "spark.cores.max": str(self.cores),
            "spark.executor.memory": EXECUTOR_MEMORY,
            "spark.driver.memory": "1g",
            "spark.sql.shuffle.partitions": "4",
            "spark.default.parallelism": str(self.cores),
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.execution.arrow.pyspark.enabled": "true",
            "spark.sql.session.timeZone": "UTC",
            "spark.driver.extraJavaOptions": "-Dlog4j.rootLogger=ERROR",
            "spark.pyspark.python": sys.executable,
            "spark.pyspark.driver.python": sys.executable,
            # Executors lost to a kill are replaced; a task is retried on another one.
            "spark.task.maxFailures": "4",
            "spark.deploy.maxExecutorRetries": "10",
        }

    def executor_pids(self, app_id: Optional[str] = None) -> List[int]:
        """The pids of the live executor JVMs (``CoarseGrainedExecutorBackend``), of
        ``app_id`` only when given, read from /proc."""
        pids = []
        for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
            try:
                with open(cmdline, "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if b"org.apache.spark.executor.CoarseGrainedExecutorBackend" not in argv:
                continue
            if b"--app-id" in argv and (
                app_id is None or argv[argv.index(b"--app-id") + 1].decode() == app_id
            ):
                pids.append(int(cmdline.split("/")[2]))
        return sorted(pids)


# ---------------------------------------------------------------------- Redis Cluster


class ClusterUnsupported(RuntimeError):
    """The redis-server binary does not run in cluster mode (a node exited at start)."""


def cluster_binaries() -> Any:
    """``(redis-server, redis-cli)`` to run a Redis Cluster with, or the reason why not (a
    string). Whether the server has cluster mode shows when a node starts
    (:class:`ClusterUnsupported`)."""
    server = os.environ.get("XSTREAMS_REDIS_SERVER") or shutil.which("redis-server")
    if not server:
        return "no redis-server binary (set XSTREAMS_REDIS_SERVER)"
    cli = os.path.join(os.path.dirname(os.path.abspath(server)), "redis-cli")
    if not os.access(cli, os.X_OK):
        cli = shutil.which("redis-cli") or ""
    if not cli:
        return f"no redis-cli beside {server} nor on PATH"
    return server, cli


class RedisCluster:
    """``masters`` redis-server processes with ``--cluster-enabled yes`` joined by
    ``redis-cli --cluster create ... --cluster-replicas 0``: every slot served, each node
    a master of its share."""

    def __init__(self, masters: int = 3) -> None:
        found = cluster_binaries()
        if isinstance(found, str):
            raise RuntimeError(found)
        self.server, self.cli = found
        self.masters = masters
        self.base = tempfile.mkdtemp(prefix="xstreams-redis-cluster-")
        self.ports: List[int] = []
        self.procs: List[subprocess.Popen] = []

    @property
    def url(self) -> str:
        """A URL of one node: clients discover the others from it."""
        return f"redis://{LOOPBACK}:{self.ports[0]}"

    def _up(self, port: int, proc: subprocess.Popen) -> bool:
        if proc.poll() is not None:
            raise ClusterUnsupported(
                f"{self.server} --cluster-enabled yes exited with {proc.returncode}: "
                + self.log()[-500:]
            )
        return _pong(port)

    def log(self) -> str:
        return "\n".join(_tail(os.path.join(self.base, f"{p}.log"))[-1000:] for p in self.ports)

    def start(self) -> RedisCluster:
        try:
            for _ in range(self.masters):
                port = free_port(also=10000)
                d = os.path.join(self.base, str(port))
                os.makedirs(d)
                self.ports.append(port)
                self.procs.append(
                    subprocess.Popen(
                        [
                            self.server,
                            "--port",
                            str(port),
                            "--bind",
                            LOOPBACK,
                            "--cluster-enabled",
                            "yes",
                            "--cluster-config-file",
                            os.path.join(d, "nodes.conf"),
                            "--cluster-node-timeout",
                            "5000",
                            "--save",
                            "",
                            "--appendonly",
                            "no",
                            "--dir",
                            d,
                            "--daemonize",
                            "no",
                            "--logfile",
                            os.path.join(self.base, f"{port}.log"),
                        ],  # fmt: skip
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                        stdin=subprocess.DEVNULL,
                        start_new_session=True,
                    )
                )
            for port, proc in zip(self.ports, self.procs):
                _wait(lambda p=port, q=proc: self._up(p, q), 20, f"redis-server :{port}", self.log)
            nodes = [f"{LOOPBACK}:{p}" for p in self.ports]
            out = subprocess.run(
                [self.cli, "--cluster", "create", *nodes, "--cluster-replicas", "0"]
                + ["--cluster-yes"],
                capture_output=True,
                text=True,
                timeout=60,
                stdin=subprocess.DEVNULL,
            )
            if out.returncode != 0:
                raise RuntimeError(f"redis-cli --cluster create failed:\n{out.stdout}{out.stderr}")
            _wait(self.ready, 30, "cluster_state:ok on every node", self.log)
        except BaseException:
            self.stop()
            raise
        return self

    def info(self, port: int) -> Dict[str, str]:
        out = subprocess.run(
            [self.cli, "-h", LOOPBACK, "-p", str(port), "CLUSTER", "INFO"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout
        return dict(line.strip().split(":", 1) for line in out.splitlines() if ":" in line)

    def ready(self) -> bool:
        return all(
            self.info(p).get("cluster_state") == "ok"
            and self.info(p).get("cluster_known_nodes") == str(self.masters)
            for p in self.ports
        )

    def client(self) -> Any:
        """A redis-py ``RedisCluster`` client of this cluster."""
        from redis.cluster import RedisCluster as Client

        return Client(host=LOOPBACK, port=self.ports[0])

    def flushall(self) -> None:
        for port in self.ports:
            subprocess.run(
                [self.cli, "-h", LOOPBACK, "-p", str(port), "FLUSHALL"],
                capture_output=True,
                timeout=10,
            )

    def stop(self) -> None:
        for proc in self.procs:
            _stop(proc, 10)
        self.procs = []
        shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> RedisCluster:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class SingleRedis:
    """One plain redis-server (no cluster mode) on a free loopback port, for figures that
    compare a Redis Cluster with one server."""

    def __init__(self) -> None:
        found = cluster_binaries()
        if isinstance(found, str):
            raise RuntimeError(found)
        self.server = found[0]
        self.base = tempfile.mkdtemp(prefix="xstreams-redis-")
        self.port = 0
        self.proc: Optional[subprocess.Popen] = None

    @property
    def url(self) -> str:
        return f"redis://{LOOPBACK}:{self.port}"

    def start(self) -> SingleRedis:
        self.port = free_port()
        argv = [self.server, "--port", str(self.port), "--bind", LOOPBACK, "--save", ""]
        argv += ["--appendonly", "no", "--dir", self.base, "--daemonize", "no"]
        self.proc = subprocess.Popen(
            argv,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        _wait(lambda: _pong(self.port), 20, f"redis-server :{self.port}")
        return self

    def stop(self) -> None:
        _stop(self.proc, 10)
        self.proc = None
        shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> SingleRedis:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


# ---------------------------------------------------------------------- Spark Connect


class ConnectServer:
    """A Spark Connect server (``SparkConnectServer`` through ``spark-submit``, what
    ``sbin/start-connect-server.sh`` runs) on a free loopback port, its own driver
    running applications on ``master`` (a standalone cluster's URL, or ``local[2]``)."""

    def __init__(self, master: str, env: Dict[str, str], base: str) -> None:
        self.master = master
        self.env = env
        self.base = base
        self.port = 0
        self.proc: Optional[subprocess.Popen] = None
        self.log_path = os.path.join(base, "logs", "connect.out")

    @property
    def url(self) -> str:
        return f"sc://{LOOPBACK}:{self.port}"

    def log(self) -> str:
        return _tail(self.log_path)

    def start(self, conf: Optional[Dict[str, str]] = None) -> ConnectServer:
        self.port = free_port()
        settings = {
            "spark.connect.grpc.binding.address": LOOPBACK,
            "spark.connect.grpc.binding.port": str(self.port),
            **(conf or {}),
        }
        argv = [os.path.join(self.env["SPARK_HOME"], "bin", "spark-submit")]
        argv += ["--master", self.master]
        for k, v in settings.items():
            argv += ["--conf", f"{k}={v}"]
        argv += ["--class", "org.apache.spark.sql.connect.service.SparkConnectServer"]
        argv += ["spark-internal"]
        log = open(self.log_path, "wb")
        try:
            self.proc = subprocess.Popen(
                argv,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.base,
                start_new_session=True,
            )
        finally:
            log.close()

        def up() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"the Spark Connect server exited:\n{self.log()[-3000:]}")
            with socket.create_connection((LOOPBACK, self.port), timeout=1):
                return True

        try:
            _wait(up, 120, "the Spark Connect server", self.log)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        _stop(self.proc)
        self.proc = None
