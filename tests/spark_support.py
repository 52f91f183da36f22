"""Shared SparkSession of the Spark tests (``tests/test_spark_*.py``).

One ``local[2]`` session per test process (starting one takes ~9 s): every test module
imports the ``spark`` fixture from here, and all of them get the same session. Python
workers run ``sys.executable`` (``PYSPARK_PYTHON``), so they import the xstreams wheel
installed in the test environment. No test registers the ``xstreams`` data source:
PySpark finds it (the ``pyspark_xstreams`` module of the wheel).
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import Any, Optional

import pytest

_SESSION: Optional[Any] = None


def get_spark() -> Any:
    global _SESSION
    if _SESSION is None:
        os.environ["PYSPARK_PYTHON"] = sys.executable
        os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
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
