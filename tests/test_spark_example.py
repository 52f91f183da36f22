"""``examples/etl_dedup.py`` runs (on the shared SparkSession) and its numbers add up."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from spark_support import spark  # noqa: F401

pytestmark = pytest.mark.spark

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "etl_dedup.py"


def test_etl_dedup_example(spark, tmp_path):  # noqa: F811
    spec = importlib.util.spec_from_file_location("etl_dedup", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    res = mod.main(spark, str(tmp_path), events=2000)
    retries = 200  # ids ending in 7
    assert res["sent"] == 2000 + retries
    assert 0 < res["duplicates"] < retries  # retries after 4 s are outside the 2 s window
    assert res["loaded"] == res["sent"] - res["duplicates"] == res["length"]
    assert res["reloaded"] == 0
    assert res["unacked"] == res["length"] - 600
