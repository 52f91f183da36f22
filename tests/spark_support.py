"""Shared SparkSession of the Spark tests (``tests/test_spark_*.py``).

One session per test process at a time (starting one takes ~9 s): every test module
imports the ``spark`` fixture from here, and all of them get the same ``local[2]``
session. Tests marked ``@pytest.mark.cluster`` run twice, on ``local[2]`` and on a
session of the standalone cluster (``cluster_support.SparkStandalone``: executors in JVMs
of their own); ``XSTREAMS_SPARK_CLUSTER=1`` runs every Spark test on that cluster. Python
workers run ``sys.executable`` (``PYSPARK_PYTHON``), so they import the xstreams wheel
installed in the test environment. No test registers the ``xstreams`` data source:
PySpark finds it (the ``pyspark_xstreams`` module of the wheel).

Python workers import pyspark from the installed package (``spark_home()``), not from
the source-only ``pyspark.zip`` that pip's pyspark puts first on their ``PYTHONPATH``:
compiling pyspark afresh in every new worker made the streaming source's worker miss
Spark's fixed 10 s connect-back on a loaded 2-core machine ("Python worker failed to
connect back").
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import sys
import tempfile
from typing import Any, Dict, Optional, Tuple

import pytest

_SESSION: Optional[Any] = None
_KEY: Optional[Tuple[Any, ...]] = None

# The settings of the local[2] session.
LOCAL_CONF: Dict[str, str] = {
    "spark.master": "local[2]",
    "spark.app.name": "xstreams-tests",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.extraJavaOptions": "-Dlog4j.rootLogger=ERROR",
}


def spark_home() -> Optional[str]:
    """A ``SPARK_HOME`` for the test sessions: pip's pyspark package with every entry
    linked except ``python/lib/pyspark.zip``; ``None`` (leave Spark's own) when the
    environment sets ``SPARK_HOME`` or the package has no such zip.

    Spark puts ``$SPARK_HOME/python/lib/pyspark.zip`` first on every Python worker's
    ``PYTHONPATH`` (``PythonUtils.sparkPythonPath``). That zip holds sources only and
    zipimport caches no bytecode, so each new worker process compiles the pyspark modules
    it imports: ~1.1 s of CPU before it connects back, against ~0.3 s with the
    package's compiled files, and 5-6 s of wall clock at a load of 7 on 2 cores. Spark
    waits a fixed 10 s for a worker started without its daemon -- the streaming source's
    driver-side worker, one per query start -- then fails the query with "Python worker
    failed to connect back". Without the zip the workers import the same pyspark from
    the interpreter's site-packages, compiled once at install."""
    if os.environ.get("SPARK_HOME"):
        return None
    import pyspark

    real = os.path.dirname(os.path.abspath(pyspark.__file__))
    lib = os.path.join(real, "python", "lib")
    if not os.path.exists(os.path.join(lib, "pyspark.zip")):
        return None
    tag = hashlib.sha256(f"{real} {pyspark.__version__}".encode()).hexdigest()[:12]
    home = os.path.join(tempfile.gettempdir(), f"xstreams-spark-home-{os.getuid()}-{tag}")
    if os.path.isdir(home):
        return home
    build = tempfile.mkdtemp(prefix="xstreams-spark-home-")
    for name in os.listdir(real):
        if name != "python":
            os.symlink(os.path.join(real, name), os.path.join(build, name))
    os.makedirs(os.path.join(build, "python", "lib"))
    for name in os.listdir(lib):
        if name != "pyspark.zip":
            os.symlink(os.path.join(lib, name), os.path.join(build, "python", "lib", name))
    try:
        os.rename(build, home)  # atomic: a concurrent test process may have made it
    except OSError:
        shutil.rmtree(build, ignore_errors=True)
    return home


def use_spark_home() -> None:
    """Point this process (and the processes it starts) at :func:`spark_home`."""
    home = spark_home()
    if home is not None:
        os.environ["SPARK_HOME"] = home


def _build(conf: Dict[str, str]) -> Any:
    # PySpark's Python workers run $PYSPARK_PYTHON (not the spark.pyspark.python setting).
    os.environ["PYSPARK_PYTHON"] = conf.get("spark.pyspark.python", sys.executable)
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # loopback only
    use_spark_home()
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for k, v in conf.items():
        builder = builder.config(k, v)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def stop_spark() -> None:
    """Stop this process's session (the next :func:`get_spark` starts a new one)."""
    global _SESSION, _KEY
    if _SESSION is not None:
        _SESSION.stop()
    _SESSION, _KEY = None, None


def get_spark(conf: Optional[Dict[str, str]] = None) -> Any:
    """This process's SparkSession: ``local[2]`` (``conf`` None), else one built from
    ``conf`` (``spark.master`` among them, e.g. a standalone cluster's). A process has one
    SparkContext at a time: asking for a session of other settings stops the current one
    first, so tests of one kind should run together (``conftest.py`` groups them)."""
    global _SESSION, _KEY
    want = dict(LOCAL_CONF if conf is None else conf)
    key = tuple(sorted(want.items()))
    if _SESSION is not None and _KEY == key:
        return _SESSION
    stop_spark()
    _SESSION, _KEY = _build(want), key
    return _SESSION


atexit.register(stop_spark)


def spark_kind(request: Any) -> str:
    """``local`` or ``cluster``: the test's parameter (``@pytest.mark.cluster`` tests run
    with both), else ``cluster`` when ``XSTREAMS_SPARK_CLUSTER=1`` runs every Spark test on
    the standalone cluster session, else ``local``."""
    default = "cluster" if os.environ.get("XSTREAMS_SPARK_CLUSTER") == "1" else "local"
    return getattr(request, "param", default)


@pytest.fixture
def spark(request: Any) -> Any:
    """The session a test runs on: ``local[2]``, or one on the standalone cluster of the
    ``spark_standalone`` fixture (``conftest.py``) with executors in their own JVMs."""
    if spark_kind(request) == "cluster":
        return get_spark(request.getfixturevalue("spark_standalone").session_conf())
    return get_spark()
