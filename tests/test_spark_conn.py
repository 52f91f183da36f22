"""``xstreams.spark_conn``: options to a client of one server or a Redis Cluster, AUTH
and TLS, raw replies, SCAN over every shard, hash-slot helpers. Against ``xstreams
serve`` (plain, ``requirepass``, TLS with client certificates), redis-server 8.8 (ACL
users) and a 3-master Redis Cluster of redis-server 8.8."""

from __future__ import annotations

import pytest
from redis_cluster_support import RedisCluster3, RedisProcess
from server_support import ServerProcess, require_serve
from test_server_tls import TlsServer, certs  # noqa: F401 - the certificates fixture

redis = pytest.importorskip("redis")
spark_conn = pytest.importorskip("xstreams.spark_conn")


@pytest.fixture(scope="module")
def cluster():
    with RedisCluster3() as c:
        yield c


@pytest.fixture()
def serve():
    require_serve()
    s = ServerProcess().start()
    try:
        yield s
    finally:
        s.stop()


def test_server_url_gives_a_raw_plain_client(serve):
    r = spark_conn.connect({"url": f"redis://127.0.0.1:{serve.port}"})
    try:
        assert not spark_conn.is_cluster(r)
        r.execute_command("XADD", "s", "1-1", "f", "a", "f", "b")
        # Raw: the entry's repeated field survives (a dict would keep one).
        assert r.execute_command("XRANGE", "s", "-", "+") == [[b"1-1", [b"f", b"a", b"f", b"b"]]]
        assert spark_conn.primaries(r) == [r]
    finally:
        r.close()


def test_a_url_string_is_the_url_option(serve):
    r = spark_conn.connect(f"redis://127.0.0.1:{serve.port}")
    assert r.execute_command("PING") in (True, b"PONG")
    r.close()


def test_password_option_over_the_url():
    require_serve()
    s = ServerProcess(requirepass="s3cret").start()
    try:
        url = f"redis://127.0.0.1:{s.port}"
        with pytest.raises(redis.AuthenticationError):
            spark_conn.connect({"url": url}).execute_command("XLEN", "s")
        with pytest.raises(redis.AuthenticationError):
            spark_conn.connect({"url": url, "password": "wrong"})
        r = spark_conn.connect({"url": url, "password": "s3cret"})
        assert r.execute_command("XLEN", "s") == 0
        r.close()
        # The option wins over a wrong password inside the URL.
        r = spark_conn.connect({"url": f"redis://:bad@127.0.0.1:{s.port}", "password": "s3cret"})
        assert r.execute_command("XLEN", "s") == 0
        r.close()
        r = spark_conn.connect({"url": f"redis://:s3cret@127.0.0.1:{s.port}"})
        assert r.execute_command("XLEN", "s") == 0
        r.close()
    finally:
        s.stop()


def test_acl_user_and_password_on_redis_server():
    with RedisProcess("--user", "alice", "on", ">pw1", "~*", "&*", "+@all") as srv:
        url = f"redis://127.0.0.1:{srv.port}"
        r = spark_conn.connect({"url": url, "user": "alice", "password": "pw1"})
        assert r.execute_command("ACL", "WHOAMI") == b"alice"
        r.close()
        with pytest.raises(redis.AuthenticationError):
            spark_conn.connect({"url": url, "user": "alice", "password": "nope"})
        r = spark_conn.connect({"url": f"redis://alice:pw1@127.0.0.1:{srv.port}"})
        assert r.execute_command("ACL", "WHOAMI") == b"alice"
        r.close()


def test_tls_with_client_certificate(certs):  # noqa: F811
    srv = TlsServer(certs)
    try:
        srv.wait()
        url = f"rediss://127.0.0.1:{srv.tls_port}"
        opts = {
            "url": url,
            "tlsCaCertFile": str(certs / "ca.crt"),
            "tlsCertFile": str(certs / "client.crt"),
            "tlsKeyFile": str(certs / "client.key"),
        }
        r = spark_conn.connect(opts)
        r.execute_command("XADD", "t", "1-1", "f", "v")
        assert r.execute_command("XRANGE", "t", "-", "+") == [[b"1-1", [b"f", b"v"]]]
        r.close()
        # Without the CA the server's certificate is not trusted.
        with pytest.raises(redis.ConnectionError):
            spark_conn.connect({"url": url, "tlsCertFile": opts["tlsCertFile"],
                                "tlsKeyFile": opts["tlsKeyFile"]})  # fmt: skip
    finally:
        srv.stop()


@pytest.mark.parametrize(
    "opts, match",
    [
        ({}, r'give option\("url"'),
        ({"url": "http://x"}, r'option\("url"\) must be'),
        (
            {"url": "redis://127.0.0.1:1", "user": "u"},
            r'option\("user"\) needs option\("password"\)',
        ),
        ({"url": "redis://127.0.0.1:1", "tlsCaCertFile": "ca"}, r"needs a rediss:// URL"),
        ({"url": "rediss://127.0.0.1:1", "tlsCertFile": "c"}, r'option\("tlsKeyFile"\) is needed'),
        ({"url": "redis://127.0.0.1:1", "cluster": "maybe"}, r"must be auto, true or false"),
        ({"url": "unix:///nowhere", "cluster": "true"}, r"a cluster is reached over TCP"),
        ({"url": "redis://127.0.0.1:1/2", "cluster": "true"}, r"database 0 only"),
    ],
)
def test_bad_options_name_the_option(opts, match):
    with pytest.raises(ValueError, match=match):
        spark_conn.connect(opts)


def test_cluster_discovered_and_commands_go_to_each_keys_shard(cluster):
    r = spark_conn.connect({"url": cluster.url})
    try:
        assert spark_conn.is_cluster(r)
        keys = [f"events:{i}" for i in range(30)]
        owners = {cluster.owner(spark_conn.key_slot(k)) for k in keys}
        assert len(owners) == 3  # the keys span every shard
        for k in keys:
            r.execute_command("XADD", k, "1-1", "k", k, "k", "again")
        for k in keys:
            assert r.execute_command("XRANGE", k, "-", "+") == [
                [b"1-1", [b"k", k.encode(), b"k", b"again"]]
            ]
        # Each key lives on its owner only.
        for k in keys[:5]:
            owner = cluster.owner(spark_conn.key_slot(k))
            assert redis.Redis(port=owner).exists(k) == 1
        assert len(spark_conn.primaries(r)) == 3
        r.execute_command("SET", "events:not-a-stream", "x")
        assert spark_conn.scan_streams(r, "events:*") == sorted(keys)
        assert spark_conn.scan_streams(r, "nothing:*") == []
    finally:
        r.close()


def test_cluster_false_talks_to_the_node_alone(cluster):
    r = spark_conn.connect({"url": cluster.url, "cluster": "false"})
    assert not spark_conn.is_cluster(r)
    r.close()


def test_group_commands_on_cluster_are_raw(cluster):
    r = spark_conn.connect({"url": cluster.url})
    try:
        r.execute_command("XGROUP", "CREATE", "gk", "g", "0", "MKSTREAM")
        r.execute_command("XADD", "gk", "5-1", "a", "1")
        got = r.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "gk", ">")
        assert got == [[b"gk", [[b"5-1", [b"a", b"1"]]]]]
        assert r.execute_command("XPENDING", "gk", "g", "-", "+", 10, "c")[0][:2] == [b"5-1", b"c"]
        assert r.execute_command("XACK", "gk", "g", "5-1") == 1
    finally:
        r.close()


def test_key_slot_matches_the_server(cluster):
    r = redis.Redis(port=cluster.ports[0])
    for k in ["a", "events:1", "{user1}.x", "x{}y", "a{b", "{}", "é"]:
        assert spark_conn.key_slot(k) == r.execute_command("CLUSTER", "KEYSLOT", k)


def test_slot_marker_key_lands_in_the_keys_slot(cluster):
    r = redis.Redis(port=cluster.ports[0])
    for k in ["events:1", "{tenant}:a", "a}b", "x{}y", b"\xff\x00"]:
        m = spark_conn.slot_marker_key("xstreams:sink:q1", k)
        assert r.execute_command("CLUSTER", "KEYSLOT", m) == r.execute_command(
            "CLUSTER", "KEYSLOT", k
        )
    for slot in (0, 1, 8191, 16383):
        tag = spark_conn.slot_tag(slot)
        assert "{" not in tag and "}" not in tag
        assert r.execute_command("CLUSTER", "KEYSLOT", f"m{{{tag}}}") == slot
    with pytest.raises(ValueError, match="braces"):
        spark_conn.slot_marker_key("bad{name", "k")
    with pytest.raises(ValueError, match="0..16383"):
        spark_conn.slot_tag(16384)


def test_task_client_is_kept_between_tasks_and_dropped_when_broken(serve):
    """An executor's Python worker reuses one client across its tasks; a task that
    raises closes it (a half-read reply must not reach the next task), and a kept client
    whose server restarted answers the next task (the PING before reuse reconnects it, or
    a new client replaces it)."""
    opts = {"url": f"redis://127.0.0.1:{serve.port}"}
    with spark_conn.task_client(opts) as a:
        a.execute_command("XADD", "s", "1-1", "f", "v")
    with spark_conn.task_client(opts) as b:
        assert b is a  # the same client, its connection already open
        # Another task of the same worker at the same time gets its own client.
        with spark_conn.task_client(opts) as c:
            assert c is not b
    with pytest.raises(RuntimeError):
        with spark_conn.task_client(opts) as d:
            raise RuntimeError("the task failed")
    with spark_conn.task_client(opts) as e:
        assert e is not d
        assert e.execute_command("XLEN", "s") == 1
    # The server restarts on the same port: the next task's client talks to the new one.
    port = serve.port
    serve.stop()
    again = ServerProcess(port=port).start()
    try:
        with spark_conn.task_client(opts) as f:
            assert f.execute_command("XLEN", "s") == 0  # an in-memory server: empty again
    finally:
        again.stop()


def test_task_client_keeps_a_cluster_clients_slot_map(cluster):
    opts = {"url": cluster.url}
    with spark_conn.task_client(opts) as a:
        assert spark_conn.is_cluster(a)
        for k in ("a", "b", "c"):
            a.execute_command("XADD", f"kept:{k}", "*", "f", "v")
    with spark_conn.task_client(opts) as b:
        assert b is a
        assert sorted(spark_conn.scan_streams(b, "kept:*")) == ["kept:a", "kept:b", "kept:c"]
