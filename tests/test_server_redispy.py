"""``xstreams serve`` with redis-py's own (synchronous) client: streams, groups, blocking
reads across clients, pipelines, MULTI/EXEC, SELECT, HELLO 3, AUTH, INFO, CONFIG,
CLIENT, COMMAND, SHUTDOWN and reopening the directory in-process."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest
from server_support import ServerProcess, free_port, require_serve

redis = pytest.importorskip("redis")


def text_dict(d):
    return {
        (k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
        for k, v in d.items()
    }


@pytest.fixture(scope="module")
def server():
    require_serve()
    with ServerProcess() as srv:
        yield srv


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def r(server, request):
    client = redis.Redis(port=server.port, protocol=request.param, socket_timeout=20)
    client.flushall()
    yield client
    client.close()


def test_streams(r):
    assert r.xadd("s", {"a": "1"}, id="1-1") == b"1-1"
    assert r.xadd("s", {"b": "2"}, id="1-2") == b"1-2"
    auto = r.xadd("s", {"c": "3"})
    assert auto.split(b"-")[0].isdigit()
    assert r.xlen("s") == 3
    assert r.xrange("s", count=2) == [(b"1-1", {b"a": b"1"}), (b"1-2", {b"b": b"2"})]
    assert r.xrevrange("s", count=1)[0][0] == auto
    assert r.xread({"s": "1-1"}, count=1) in (
        [[b"s", [(b"1-2", {b"b": b"2"})]]],
        {b"s": [[(b"1-2", {b"b": b"2"})]]},
    )
    assert r.xdel("s", "1-1") == 1
    assert r.xtrim("s", maxlen=1, approximate=False) == 1
    info = r.xinfo_stream("s")
    assert info["length"] == 1
    assert r.type("s") == b"stream"
    assert r.exists("s", "nope") == 1
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.set("str", "x")
        r.xadd("str", {"a": 1})
    with pytest.raises(redis.ResponseError, match="unknown command 'NOSUCHCMD'"):
        r.execute_command("NOSUCHCMD", "x")


def test_groups(r):
    for i in range(5):
        r.xadd("s", {"n": i}, id=f"{i + 1}-0")
    assert r.xgroup_create("s", "g", id="0") is True
    got = r.xreadgroup("g", "alice", {"s": ">"}, count=3)
    entries = got[0][1] if isinstance(got, list) else got[b"s"][0]
    assert [e[0] for e in entries] == [b"1-0", b"2-0", b"3-0"]
    assert r.xack("s", "g", "1-0", "2-0") == 2
    pending = r.xpending("s", "g")
    assert pending["pending"] == 1
    claimed = r.xclaim("s", "g", "bob", min_idle_time=0, message_ids=["3-0"])
    assert claimed[0][0] == b"3-0"
    auto = r.xautoclaim("s", "g", "carol", min_idle_time=0, start_id="0")
    assert auto[1][0][0] == b"3-0"
    groups = r.xinfo_groups("s")
    assert groups[0]["name"] == b"g"
    consumers = {c["name"] for c in r.xinfo_consumers("s", "g")}
    assert consumers == {b"alice", b"bob", b"carol"}
    with pytest.raises(redis.ResponseError, match="BUSYGROUP"):
        r.xgroup_create("s", "g", id="0")
    with pytest.raises(redis.ResponseError, match="NOGROUP"):
        r.xreadgroup("nope", "c", {"s": ">"})


def test_blocking_reads_across_clients(server, r):
    proto = r.get_connection_kwargs().get("protocol", 2)
    other = redis.Redis(port=server.port, protocol=proto, socket_timeout=20)
    result = {}

    def reader():
        result["xread"] = other.xread({"s": "$"}, block=0)

    t = threading.Thread(target=reader)
    t.start()
    deadline = time.monotonic() + 10
    while r.info("clients")["blocked_clients"] != 1:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    r.xadd("s", {"k": "v"}, id="7-7")
    t.join(10)
    assert not t.is_alive()
    got = result["xread"]
    entries = got[0][1] if isinstance(got, list) else got[b"s"][0]
    assert entries == [(b"7-7", {b"k": b"v"})]
    # A timeout returns nothing after about the timeout.
    start = time.monotonic()
    assert other.xread({"s": "$"}, block=150) in (None, [], {})
    assert time.monotonic() - start >= 0.14
    # Consumer groups: a blocked XREADGROUP is served by the next XADD, FIFO.
    r.xgroup_create("s", "g", id="$")
    out = []

    def group_reader(name):
        c = redis.Redis(port=server.port, protocol=proto, socket_timeout=20)
        out.append((name, c.xreadgroup("g", name, {"s": ">"}, count=1, block=5000)))
        c.close()

    threads = [threading.Thread(target=group_reader, args=(n,)) for n in ("c1", "c2")]
    for th in threads:
        th.start()
        deadline = time.monotonic() + 10
        want = threads.index(th) + 1
        while r.info("clients")["blocked_clients"] != want:
            assert time.monotonic() < deadline
            time.sleep(0.01)
    r.xadd("s", {"x": "1"}, id="8-1")
    r.xadd("s", {"x": "2"}, id="8-2")
    for th in threads:
        th.join(10)
    assert sorted(name for name, _ in out) == ["c1", "c2"]
    assert r.xpending("s", "g")["pending"] == 2
    other.close()


def test_xread_stays_blocked_when_key_type_changes(server):
    """A blocked XREAD ignores a SET over its key and is served by the next stream."""
    r = redis.Redis(port=server.port)
    r.flushall()
    r.xadd("k", {"f": "v"}, id="666-0")
    out = {}

    def reader():
        c = redis.Redis(port=server.port, socket_timeout=20)
        try:
            out["r"] = c.xread({"k": "$"}, block=0)
        except redis.ResponseError as e:
            out["r"] = e
        c.close()

    t = threading.Thread(target=reader)
    t.start()
    deadline = time.monotonic() + 10
    while r.info("clients")["blocked_clients"] != 1:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    r.set("k", "val1")
    r.delete("k")
    r.xadd("k", {"f": "v"}, id="667-0")
    t.join(20)
    got = out["r"]
    entries = got[0][1] if isinstance(got, list) else got
    assert entries == [(b"667-0", {b"f": b"v"})]


def test_pipeline_and_transactions(r):
    with r.pipeline(transaction=False) as p:
        for i in range(100):
            p.xadd("s", {"i": i}, id=f"1-{i + 1}")
        p.xlen("s")
        res = p.execute()
    assert res[:3] == [b"1-1", b"1-2", b"1-3"] and res[-1] == 100
    with r.pipeline(transaction=True) as p:
        p.xadd("t", {"a": 1}, id="1-1").xlen("t").xrange("t")
        assert p.execute() == [b"1-1", 1, [(b"1-1", {b"a": b"1"})]]
    with r.pipeline(transaction=True) as p:
        p.xadd("t", {"a": 1}, id="2-1")
        p.execute_command("NOSUCHCMD")
        # redis-py raises the queueing error (the server answered EXECABORT to EXEC).
        with pytest.raises(redis.ResponseError, match="unknown command 'NOSUCHCMD'"):
            p.execute()
    assert r.xlen("t") == 1
    with r.pipeline(transaction=True) as p:
        p.xadd("t", {"a": 1}, id="0-1")  # an error at run time does not abort the rest
        p.xlen("t")
        res = p.execute(raise_on_error=False)
    assert isinstance(res[0], redis.ResponseError) and res[1] == 1


def test_select_and_keyspace(server, r):
    proto = r.get_connection_kwargs().get("protocol", 2)
    r.xadd("s", {"a": 1}, id="1-1")
    db3 = redis.Redis(port=server.port, db=3, protocol=proto)
    assert db3.xlen("s") == 0
    db3.xadd("s", {"a": 1}, id="5-5")
    assert r.dbsize() == 1 and db3.dbsize() == 1
    assert r.move("s", 4) == 1
    assert sorted(r.keys()) == []
    assert r.swapdb(3, 0) is True
    assert r.xrange("s") == [(b"5-5", {b"a": b"1"})]
    assert r.rename("s", "s2") is True
    assert r.copy("s2", "s3") is True
    assert sorted(k for k in r.scan_iter()) == [b"s2", b"s3"]
    assert r.flushdb() is True and r.dbsize() == 0
    info = r.info("keyspace")
    assert "db4" in info and "db0" not in info
    with pytest.raises(redis.ResponseError, match="DB index is out of range"):
        redis.Redis(port=server.port, db=16).ping()
    db3.close()


def test_hello3_and_connection_commands(server):
    r = redis.Redis(port=server.port, protocol=3)
    hello = r.execute_command("HELLO", "3")
    assert hello[b"server"] == b"redis" and hello[b"version"] == b"8.8.0"
    assert hello[b"proto"] == 3
    assert r.client_setname("worker-1") is True
    assert r.client_getname() == b"worker-1"
    cid = r.client_id()
    assert isinstance(cid, int) and cid > 0
    assert any(c["name"] == "worker-1" for c in r.client_list())
    assert r.client_info()["id"] == cid
    assert r.ping() is True
    assert r.echo("hi") == b"hi"
    assert len(r.time()) == 2
    info = r.info()
    assert info["redis_version"] == "8.8.0"
    r.xadd("k", {"a": 1}, id="1-1")
    for section in ("server", "clients", "memory", "persistence", "stats", "keyspace"):
        assert r.info(section)
    assert r.info("keyspace")["db0"]["keys"] >= 1
    assert r.info("memory")["used_memory"] > 0
    assert text_dict(r.config_get("stream-node-max-entries")) == {"stream-node-max-entries": "100"}
    assert r.config_set("stream-node-max-entries", 7) is True
    assert text_dict(r.config_get("stream-node-*"))["stream-node-max-entries"] == "7"
    r.config_set("stream-node-max-entries", 100)
    with pytest.raises(redis.ResponseError, match="CONFIG SET failed"):
        r.config_set("stream-idmp-duration", 0)
    with pytest.raises(redis.ResponseError, match="Unknown option"):
        r.config_set("no-such-parameter", 1)
    with pytest.raises(redis.ResponseError, match="immutable"):
        r.config_set("databases", 4)
    assert r.config_resetstat() is True
    assert r.command_count() > 40
    info = r.command()
    assert info["xadd"]["arity"] == -5 and "write" in info["xadd"]["flags"]
    assert r.command_list(category="stream")
    assert r.command_getkeys("XREAD", "STREAMS", "a", "b", "0", "0") == [b"a", b"b"]
    conn = r.connection_pool.get_connection()
    try:
        conn.send_command("COMMAND", "DOCS", "XADD")  # (redis-py has no DOCS helper)
        docs = conn.read_response()
    finally:
        r.connection_pool.release(conn)
    assert b"xadd" in docs and docs[b"xadd"][b"group"] == b"stream"
    r.close()


def test_auth():
    require_serve()
    with ServerProcess(requirepass="s3cret") as srv:
        anon = redis.Redis(port=srv.port, protocol=2)
        with pytest.raises(redis.exceptions.AuthenticationError):
            anon.xlen("s")
        with pytest.raises(redis.exceptions.AuthenticationError):
            redis.Redis(port=srv.port, password="wrong", protocol=2).ping()
        for proto in (2, 3):
            ok = redis.Redis(port=srv.port, password="s3cret", protocol=proto)
            assert ok.xadd("s", {"a": 1}, id=f"{proto}-1") == f"{proto}-1".encode()
            ok.close()
        srv_user = redis.Redis(port=srv.port, username="default", password="s3cret")
        assert srv_user.xlen("s") == 2
        srv_user.close()


def test_protected_mode_and_bad_options():
    require_serve()
    # A public address without a password is refused before anything is bound.
    proc = subprocess.run(
        [sys.executable, "-m", "xstreams.server", "--bind", "0.0.0.0", "--port", "0"],
        capture_output=True,
        timeout=60,
        text=True,
    )
    assert proc.returncode == 1
    assert "protected mode" in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "xstreams.server", "--appendfsync", "sometimes"],
        capture_output=True,
        timeout=60,
        text=True,
    )
    assert proc.returncode == 2 and "appendfsync" in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "xstreams.server", "--help"],
        capture_output=True,
        timeout=60,
        text=True,
    )
    assert proc.returncode == 0 and "--requirepass" in proc.stdout


def test_durable_directory_shared_with_embedded_store(tmp_path):
    require_serve()
    import xstreams

    d = str(tmp_path / "store")
    with ServerProcess("--appendfsync", "always", dir=d) as srv:
        r = redis.Redis(port=srv.port)
        for i in range(50):
            r.xadd("events", {"i": i}, id=f"{i + 1}-0")
        r.xgroup_create("events", "g", id="0")
        r.xreadgroup("g", "c", {"events": ">"}, count=10)
        # The directory is locked while the server runs.
        with pytest.raises(xstreams.exceptions.StoreLockedError):
            xstreams.Store(d)
        assert srv.shutdown() == 0
        r.close()
    with xstreams.Store(d) as store:
        assert store.execute_command("XLEN", "events") == 50
        assert store.execute_command("XPENDING", "events", "g")[0] == 10
        store.validate()
        store.execute_command("XADD", "events", "100-0", "i", "x")
    # ... and the server reopens what the embedded store wrote.
    with ServerProcess(dir=d) as srv:
        r = redis.Redis(port=srv.port)
        assert r.xlen("events") == 51
        r.close()


def test_appendfsync_always_with_many_clients_keeps_every_reply(tmp_path):
    """Group commit: clients writing at once over ``--appendfsync always`` each get
    every reply (none lost or stuck waiting for an fsync), in order, and the directory
    holds exactly the entries, groups and acknowledgements they were told of."""
    require_serve()
    import xstreams

    d = str(tmp_path / "store")
    ids = {}
    with ServerProcess("--appendfsync", "always", dir=d) as srv:

        def writer(w: int) -> None:
            c = redis.Redis(port=srv.port, socket_timeout=30)
            mine = [c.xadd("events", {"w": w, "i": i}) for i in range(60)]
            p = c.pipeline(transaction=False)
            for i in range(60, 100):
                p.xadd("events", {"w": w, "i": i})
            mine += p.execute()
            ids[w] = mine
            c.close()

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        r = redis.Redis(port=srv.port)
        r.xgroup_create("events", "g", id="0")
        got = r.xreadgroup("g", "c", {"events": ">"}, count=300)
        assert r.xack("events", "g", *[e for e, _ in got[0][1][:100]]) == 100
        assert srv.shutdown() == 0
        r.close()
    assert sorted(ids) == list(range(8))
    for mine in ids.values():
        assert len(mine) == 100 and mine == sorted(
            mine, key=lambda e: tuple(map(int, e.split(b"-")))
        )
    with xstreams.Store(d) as store:
        rows = store.execute_command("XRANGE", "events", "-", "+")
        assert sorted(e for e, _ in rows) == sorted(e for m in ids.values() for e in m)
        assert store.execute_command("XPENDING", "events", "g")[0] == 200
        store.validate()


def test_sigterm_flushes_and_exits(tmp_path):
    require_serve()
    d = str(tmp_path / "store")
    srv = ServerProcess(dir=d).start()
    try:
        r = redis.Redis(port=srv.port)
        r.xadd("s", {"a": 1}, id="1-1")
        r.close()
        srv.proc.send_signal(15)
        assert srv.proc.wait(20) == 0
    finally:
        srv.cleanup()
    import xstreams

    with xstreams.Store(d) as store:
        assert store.execute_command("XLEN", "s") == 1


def test_python_serve_function(tmp_path):
    """``xstreams.server.serve()`` in a thread; SHUTDOWN ends it."""
    require_serve()
    from xstreams.server import serve

    port = free_port()
    ready = threading.Event()
    errors = []

    def run():
        try:
            serve(
                port=port,
                dir=os.fspath(tmp_path / "d"),
                quiet=True,
                on_ready=lambda addrs: ready.set(),
            )
        except Exception as e:  # noqa: BLE001
            errors.append(e)
            ready.set()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    assert ready.wait(20) and not errors
    r = redis.Redis(port=port)
    assert r.xadd("s", {"a": 1}, id="1-1") == b"1-1"
    try:
        r.shutdown()
    except redis.exceptions.ConnectionError:
        pass
    t.join(20)
    assert not t.is_alive()
