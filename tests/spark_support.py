"""Shared SparkSession of the Spark tests (``tests/test_spark_*.py``).

One ``local[2]`` session per test process (starting one takes ~9 s): every test module
imports the ``spark`` fixture from here, and all of them get the same session. Python
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
from typing import Any, Optional

import pytest

_SESSION: Optional[Any] = None


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


def get_spark() -> Any:
    global _SESSION
    if _SESSION is None:
        os.environ["PYSPARK_PYTHON"] = sys.executable
        os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
        use_spark_home()
        from pyspark.sql import SparkSession

        _SESSION = (
            SparkSession.builder.master("local[2]")
            .appName("xstreams-tests")
            .config("spark.sql.shuffle.partitions", "4")
            .config("spark.default.parallelism", "2")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.driver.extraJavaOptions", "-Dlog4j.rootLogger=ERROR")
            .getOrCreate()
        )
        _SESSION.sparkContext.setLogLevel("ERROR")
        atexit.register(_SESSION.stop)
    return _SESSION


@pytest.fixture(scope="session")
def spark() -> Any:
    return get_spark()
