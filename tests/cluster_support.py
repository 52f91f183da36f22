"""Spark on many processes on loopback for the cluster tests and benchmarks: a standalone
Spark cluster (a ``Master`` and a ``Worker`` started with pip pyspark's ``bin/spark-class``,
each application's executors in their own JVMs and Python workers) and a Spark Connect
server in front of its master. The 3-master Redis Cluster beside them is
``redis_cluster_support.RedisCluster3``.

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


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


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


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM it when the process that started it dies
    (``PR_SET_PDEATHSIG``), so that a killed test run leaves no daemons behind."""
    import ctypes

    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)
    except OSError:
        pass


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
                preexec_fn=_die_with_parent,
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
        # The driver's heap is set when its JVM starts: --driver-memory, not a --conf.
        memory = settings.pop("spark.driver.memory", "1g")
        argv += ["--master", self.master, "--driver-memory", memory]
        for k, v in settings.items():
            argv += ["--conf", f"{k}={v}"]
        argv += ["--class", "org.apache.spark.sql.connect.service.SparkConnectServer"]
        argv += ["spark-internal"]
        log = open(self.log_path, "wb")
        try:
            env = {k: v for k, v in self.env.items() if k != "SPARK_DAEMON_MEMORY"}
            self.proc = subprocess.Popen(
                argv,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.base,
                start_new_session=True,
                preexec_fn=_die_with_parent,
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
