"""Fixtures every test module here shares."""

import pytest
from support_streams import new_store


@pytest.fixture
def s():
    """A fresh in-memory store, checked for internal consistency after the test."""
    store = new_store()
    yield store
    store.validate()


# ------------------------------------------------ many processes (cluster_support.py)
# Session-scoped and started only when a test asks: a standalone Spark master and worker,
# a 3-master Redis Cluster, ``xstreams serve``. ``@pytest.mark.cluster`` on a test that
# takes ``spark`` runs it on local[2] and on the standalone cluster's session, the tests of
# each kind together (one session switch per kind, not per test).


def pytest_generate_tests(metafunc):
    if metafunc.definition.get_closest_marker("cluster") and "spark" in metafunc.fixturenames:
        metafunc.parametrize("spark", ["local", "cluster"], indirect=True, scope="session")


@pytest.fixture(scope="session")
def spark_standalone():
    from cluster_support import SparkStandalone

    with SparkStandalone() as cluster:
        yield cluster


@pytest.fixture(scope="session")
def redis_cluster():
    """Three masters of a Redis Cluster (skips with the reason without cluster mode)."""
    from redis_cluster_support import RedisCluster3

    with RedisCluster3() as cluster:
        yield cluster


@pytest.fixture(scope="session")
def serve_session():
    """``xstreams serve`` on a free loopback port for the whole session."""
    from server_support import ServerProcess

    with ServerProcess(debug=False) as srv:
        yield srv
