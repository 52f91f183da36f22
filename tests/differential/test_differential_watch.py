"""Differential tests of WATCH: which commands abort a watching transaction.

For every case, client B sets keys up, client A WATCHes keys, B runs the commands under
test, then A runs ``MULTI`` / body / ``EXEC``; redis-server 8.8 (the oracle) and xstreams
must agree on B's replies and on whether the EXEC was aborted (its nil reply). xstreams is
checked twice: through ``xstreams serve`` (two RESP connections, the EXEC reply compared
byte for byte) and in-process (``Store.watch`` then ``Store.execute_many(watch=...)``,
B's commands through the same store).

The cases cover every write command the engine has and its no-change variants (e.g. XDEL
of a missing ID), key expiry between WATCH and EXEC (and a key already expired when
watched), FLUSHDB/FLUSHALL/SWAPDB on present and missing keys, and the connection rules
of WATCH (inside MULTI, cleared by EXEC/DISCARD/UNWATCH/RESET), which 8.8's
``keyModified``/``touchWatchedKey`` rules decide. Older servers skip with the reason: the
stream touch rules compared here are 8.8's.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Iterator, List, Optional, Sequence, Tuple, Union

import pytest

from . import resp
from .servers import RedisServer, import_xstreams

MIN_VERSION = (8, 8, 0)
NIL_EXEC = (b"*-1\r\n", b"_\r\n")


@dataclass(frozen=True)
class Dump:
    """An argument replaced by the DUMP payload of ``key`` (taken just before use)."""

    key: str


Arg = Union[str, Dump]


@dataclass
class Case:
    name: str
    between: List[Sequence[Arg]]
    setup: List[Sequence[str]] = field(default_factory=list)
    watch: Sequence[str] = ("k",)
    #: database A selects before WATCH (its transaction runs there too)
    db: int = 0
    #: pause between WATCH and B's commands (expiry cases)
    sleep_ms: int = 0
    #: compare B's replies too (not when they carry idle times)
    same_replies: bool = True


def c(line: str) -> List[str]:
    return line.split()


GROUP = [c("XADD k 1-1 f v"), c("XADD k 2-1 f v"), c("XGROUP CREATE k g 0")]
READ = [*GROUP, c("XREADGROUP GROUP g c STREAMS k >")]


def stream_cases() -> List[Case]:
    return [
        Case("xadd", [c("XADD k * f v")], GROUP),
        Case("xadd-new-key", [c("XADD k * f v")]),
        Case("xadd-id-too-small", [c("XADD k 1-1 f v")], GROUP),
        Case("xadd-nomkstream-missing", [c("XADD k NOMKSTREAM * f v")]),
        Case("xadd-maxlen-trims", [c("XADD k MAXLEN 1 * f v")], GROUP),
        Case("xadd-wrongtype", [c("XADD k * f v")], [c("SET k v")]),
        Case(
            "xadd-idmp-duplicate",
            [c("XADD k IDMP p i1 * f v")],
            [c("XADD k IDMP p i1 * f v")],
        ),
        Case("xadd-idmp-new", [c("XADD k IDMP p i2 * f v")], [c("XADD k IDMP p i1 * f v")]),
        Case("xadd-other-key", [c("XADD k2 * f v")], GROUP),
        Case("xdel", [c("XDEL k 1-1")], GROUP),
        Case("xdel-missing-id", [c("XDEL k 9-9")], GROUP),
        Case("xdel-missing-key", [c("XDEL k 1-1")]),
        Case("xdelex", [c("XDELEX k IDS 1 1-1")], GROUP),
        Case("xdelex-missing-id", [c("XDELEX k IDS 1 9-9")], GROUP),
        Case("xdelex-acked-referenced", [c("XDELEX k ACKED IDS 1 1-1")], READ),
        Case("xdelex-delref", [c("XDELEX k DELREF IDS 1 1-1")], READ),
        Case("xtrim", [c("XTRIM k MAXLEN 0")], GROUP),
        Case("xtrim-nothing", [c("XTRIM k MAXLEN 10")], GROUP),
        Case("xtrim-minid", [c("XTRIM k MINID 2-0")], GROUP),
        Case("xack", [c("XACK k g 1-1")], READ),
        Case("xack-nothing", [c("XACK k g 9-9")], READ),
        Case("xackdel", [c("XACKDEL k g IDS 1 1-1")], READ),
        Case("xackdel-not-pending", [c("XACKDEL k g IDS 1 9-9")], READ),
        Case(
            "xackdel-acked-other-group",
            [c("XACKDEL k g ACKED IDS 1 1-1")],
            [*READ, c("XGROUP CREATE k g2 0"), c("XREADGROUP GROUP g2 c STREAMS k >")],
        ),
        Case("xnack", [c("XNACK k g SILENT IDS 1 1-1")], READ),
        Case("xclaim", [c("XCLAIM k g c2 0 1-1")], READ),
        Case("xclaim-justid", [c("XCLAIM k g c2 0 1-1 JUSTID")], READ),
        Case("xautoclaim", [c("XAUTOCLAIM k g c2 0 0")], READ),
        Case("xreadgroup", [c("XREADGROUP GROUP g c COUNT 1 STREAMS k >")], GROUP),
        Case("xreadgroup-history", [c("XREADGROUP GROUP g c STREAMS k 0")], READ),
        Case(
            "xreadgroup-claim",
            [c("XREADGROUP GROUP g c2 CLAIM 0 STREAMS k >")],
            READ,
            same_replies=False,
        ),
        Case("xread", [c("XREAD STREAMS k 0")], GROUP),
        Case("xgroup-create", [c("XGROUP CREATE k g2 0")], GROUP),
        Case("xgroup-create-busygroup", [c("XGROUP CREATE k g 0")], GROUP),
        Case("xgroup-create-mkstream-new", [c("XGROUP CREATE k g 0 MKSTREAM")]),
        Case("xgroup-create-mkstream-existing", [c("XGROUP CREATE k g2 0 MKSTREAM")], GROUP),
        Case("xgroup-setid", [c("XGROUP SETID k g 0")], READ),
        Case("xgroup-destroy", [c("XGROUP DESTROY k g")], READ),
        Case("xgroup-createconsumer", [c("XGROUP CREATECONSUMER k g c3")], GROUP),
        Case("xgroup-delconsumer", [c("XGROUP DELCONSUMER k g c")], READ),
        Case("xsetid", [c("XSETID k 5-5")], GROUP),
        Case("xcfgset", [c("XCFGSET k IDMP-DURATION 200")], GROUP),
        Case("xidmprecord", [c("XIDMPRECORD k p i9 1-1")], GROUP),
        Case(
            "reads",
            [c("XRANGE k - +"), c("XLEN k"), c("XINFO STREAM k"), c("XPENDING k g")],
            READ,
        ),
    ]


def keyspace_cases() -> List[Case]:
    S = [c("SET k v")]
    IN_DB1 = [c("SELECT 1"), c("SET k v"), c("SELECT 0")]
    return [
        Case("del", [c("DEL k")], S),
        Case("del-missing", [c("DEL k")]),
        Case("unlink", [c("UNLINK k x")], S),
        Case("set", [c("SET k v2")], S),
        Case("set-new-key", [c("SET k v")]),
        Case("set-nx-existing", [c("SET k v2 NX")], S),
        Case("set-xx-missing", [c("SET k v XX")]),
        Case("set-get", [c("SET k v2 GET")], S),
        Case("set-pxat-past-existing", [c("SET k v PXAT 1")], S),
        Case("set-pxat-past-missing", [c("SET k v PXAT 1")]),
        Case("set-keepttl", [c("SET k v2 KEEPTTL")], [c("SET k v EX 100")]),
        Case("rename-source", [c("RENAME k k2")], S),
        Case("rename-destination", [c("RENAME k k2")], S, watch=("k2",)),
        Case("rename-same", [c("RENAME k k")], S),
        Case("renamenx-taken", [c("RENAMENX k k2")], [*S, c("SET k2 w")], watch=("k", "k2")),
        Case("copy-destination", [c("COPY k k2")], S, watch=("k2",)),
        Case("copy-source", [c("COPY k k2")], S),
        Case("copy-taken", [c("COPY k k2")], [*S, c("SET k2 w")], watch=("k2",)),
        Case("copy-other-db", [c("COPY k k DB 1")], S, db=1),
        Case("move-source", [c("MOVE k 1")], S),
        Case("move-destination", [c("MOVE k 1")], S, db=1),
        Case("move-taken", [c("MOVE k 1")], [*S, c("SELECT 1"), c("SET k w"), c("SELECT 0")]),
        Case("restore", [["RESTORE", "k2", "0", Dump("k")]], S, watch=("k2",)),
        Case("restore-replace", [["RESTORE", "k", "0", Dump("k"), "REPLACE"]], S),
        Case("restore-busykey", [["RESTORE", "k", "0", Dump("k")]], S),
        Case("expire", [c("EXPIRE k 100")], S),
        Case("expire-missing", [c("EXPIRE k 100")]),
        Case("expire-nx-has-ttl", [c("EXPIRE k 100 NX")], [c("SET k v EX 50")]),
        Case("expire-past-deletes", [c("PEXPIREAT k 1")], S),
        Case("pexpire", [c("PEXPIRE k 100000")], S),
        Case("expireat", [c("EXPIREAT k 4102444800")], S),
        Case("persist", [c("PERSIST k")], [c("SET k v EX 100")]),
        Case("persist-no-ttl", [c("PERSIST k")], S),
        Case("flushdb", [c("FLUSHDB")], S),
        Case("flushdb-key-missing", [c("FLUSHDB")], [c("SET other v")]),
        Case("flushdb-other-db", [c("SELECT 1"), c("FLUSHDB"), c("SELECT 0")], S),
        Case("flushall", [c("FLUSHALL")], S),
        Case("flushall-key-missing", [c("FLUSHALL")], [c("SET other v")]),
        Case("swapdb", [c("SWAPDB 0 1")], S),
        Case("swapdb-key-in-other", [c("SWAPDB 0 1")], IN_DB1),
        Case("swapdb-key-in-neither", [c("SWAPDB 0 1")], [c("SET other v")]),
        Case("swapdb-same", [c("SWAPDB 0 0")], S),
        Case("reads", [c("GET k"), c("EXISTS k"), c("TYPE k"), c("TTL k"), c("DUMP k")], S),
        Case("other-db-same-name", [c("SELECT 1"), c("SET k v"), c("SELECT 0")], S),
    ]


def expiry_cases() -> List[Case]:
    return [
        Case("expires-after-watch", [c("PING")], [c("SET k v PX 60")], sleep_ms=150),
        Case("expires-after-watch-read", [c("GET k")], [c("SET k v PX 60")], sleep_ms=150),
        Case("expired-before-watch", [c("PING")], [c("SET k v PX 1")], sleep_ms=0),
        Case("expired-before-watch-deleted", [c("DEL k")], [c("SET k v PX 1")]),
        Case("expired-before-watch-recreated", [c("SET k v2")], [c("SET k v PX 1")]),
        Case("expired-before-watch-xadd", [c("XADD k * f v")], [c("SET k v PX 1")]),
        Case("expired-before-watch-flushdb", [c("FLUSHDB")], [c("SET k v PX 1")]),
    ]


ALL = stream_cases() + keyspace_cases() + expiry_cases()


def _bulk(raw: bytes) -> bytes:
    reply, _ = resp.parse_one(raw, 0)
    assert reply.kind == resp.BULK, raw
    return reply.value


class Connections:
    """Two RESP connections (A watches, B writes) to one server."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.a = resp.RespConnection("127.0.0.1", port)
        self.b = resp.RespConnection("127.0.0.1", port)

    def close(self) -> None:
        self.a.close()
        self.b.close()

    def b_call(self, args: Sequence[Arg]) -> bytes:
        real = [_bulk(self.b.call_raw(["DUMP", a.key])) if isinstance(a, Dump) else a for a in args]
        return self.b.call_raw(real)

    def run(self, case: Case) -> Tuple[List[bytes], bytes]:
        for conn in (self.a, self.b):
            conn.call_raw(["RESET"])
        self.b.call_raw(["FLUSHALL"])
        for cmd in case.setup:
            self.b_call(cmd)
        if case.setup:
            # Let keys set up with a millisecond TTL expire before the WATCH.
            time.sleep(0.005)
        self.a.call_raw(["SELECT", str(case.db)])
        assert self.a.call_raw(["WATCH", *case.watch]) == b"+OK\r\n"
        time.sleep(case.sleep_ms / 1000)
        between = [self.b_call(cmd) for cmd in case.between]
        assert self.a.call_raw(["MULTI"]) == b"+OK\r\n"
        assert self.a.call_raw(["PING"]) == b"+QUEUED\r\n"
        return between, self.a.call_raw(["EXEC"])


class InProcess:
    """An in-process store: A is ``Store.watch`` + ``execute_many(watch=)``."""

    def __init__(self) -> None:
        self.xs = import_xstreams()

    def run(self, case: Case) -> Tuple[List[bytes], bytes]:
        store = self.xs.Store()
        db = [0]

        def b_call(args: Sequence[Arg]) -> bytes:
            if args[0].upper() == "SELECT":
                db[0] = int(args[1])
                return b"+OK\r\n"
            real = [
                _bulk(store._execute_resp(["DUMP", a.key], db=db[0])) if isinstance(a, Dump) else a
                for a in args
            ]
            return store._execute_resp(real, db=db[0])

        for cmd in case.setup:
            b_call(cmd)
        if case.setup:
            time.sleep(0.005)
        db[0] = 0
        w = store.watch(*case.watch, db=case.db)
        time.sleep(case.sleep_ms / 1000)
        between = [b_call(cmd) for cmd in case.between]
        out = store.execute_many([["PING"]], db=case.db, watch=w)
        store.close()
        return between, b"*-1\r\n" if out is None else b"*1\r\n+PONG\r\n"


@pytest.fixture(scope="module")
def oracle_8_8(redis_binary: str) -> Iterator[Connections]:
    with RedisServer(redis_binary) as srv:
        if srv.version_tuple() < MIN_VERSION:
            pytest.skip(
                f"redis-server {srv.version} predates 8.8's WATCH rules for streams "
                "(set XSTREAMS_REDIS_SERVER to an 8.8 binary)"
            )
        conns = Connections(srv.port)
        yield conns
        conns.close()


@pytest.fixture(scope="module")
def xs_serve() -> Iterator[Connections]:
    from server_support import ServerProcess, require_serve

    require_serve()
    with ServerProcess("--loglevel", "warning") as srv:
        conns = Connections(srv.port)
        yield conns
        conns.close()


@pytest.fixture(scope="module")
def in_process() -> Optional[InProcess]:
    if import_xstreams() is None:
        pytest.skip("xstreams is not importable")
    return InProcess()


def _ids_masked(replies: List[bytes]) -> List[bytes]:
    """B's replies with stream IDs masked (``*`` IDs come from each server's clock)."""
    return [re.sub(rb"\$\d+\r\n\d+-\d+\r\n", b"<id>", r) for r in replies]


def _aborted(exec_reply: bytes) -> bool:
    return exec_reply in NIL_EXEC


@pytest.mark.parametrize("case", ALL, ids=[k.name for k in ALL])
def test_watch_touch_rules(case: Case, oracle_8_8, xs_serve, in_process) -> None:
    want_between, want_exec = oracle_8_8.run(case)
    assert want_exec in NIL_EXEC or want_exec == b"*1\r\n+PONG\r\n", want_exec
    want_between = _ids_masked(want_between) if case.same_replies else []
    got_between, got_exec = xs_serve.run(case)
    if not case.same_replies:
        got_between = []
    assert (_ids_masked(got_between), got_exec) == (want_between, want_exec), "xstreams serve"
    ip_between, ip_exec = in_process.run(case)
    if not case.same_replies:
        ip_between = []
    assert _ids_masked(ip_between) == want_between, "in-process: the commands replied differently"
    assert _aborted(ip_exec) == _aborted(want_exec), (
        f"in-process: EXEC {'aborted' if _aborted(ip_exec) else 'ran'}, "
        f"redis-server: {'aborted' if _aborted(want_exec) else 'ran'}"
    )


# Connection rules: raw replies of redis-server and `xstreams serve` for the same script
# of (connection, command) steps.
SCRIPTS = {
    "watch-inside-multi": ["A WATCH k", "A MULTI", "A WATCH k", "A SET k 1", "A EXEC"],
    "watch-arity": ["A WATCH"],
    "unwatch": ["A WATCH k", "B SET k 2", "A UNWATCH", "A MULTI", "A GET k", "A EXEC"],
    "unwatch-queued": ["A WATCH k", "A MULTI", "A UNWATCH", "A EXEC"],
    "exec-clears": ["A WATCH k", "B SET k 3", "A MULTI", "A EXEC", "A MULTI", "A EXEC"],
    "discard-clears": ["A WATCH k", "B SET k 4", "A MULTI", "A DISCARD", "A MULTI", "A EXEC"],
    "reset-clears": ["A WATCH k", "A RESET", "B SET k 5", "A MULTI", "A EXEC"],
    "resp3-nil": ["!A HELLO 3", "A WATCH k", "B SET k 6", "A MULTI", "A GET k", "A EXEC"],
    "execabort-wins": ["A WATCH k", "B SET k 7", "A MULTI", "A NOSUCH", "A EXEC"],
    "own-write-aborts": ["A WATCH k", "A SET k 8", "A MULTI", "A GET k", "A EXEC"],
    "watch-twice": ["A WATCH k", "A WATCH k j", "B SET j 1", "A MULTI", "A EXEC"],
    "watch-after-dirty": ["A WATCH k", "B SET k 9", "A WATCH j", "A MULTI", "A EXEC"],
    "select-then-watch": ["A SELECT 1", "A WATCH k", "B SET k 1", "A MULTI", "A EXEC"],
    "two-dbs": [
        *("A WATCH k", "A SELECT 2", "A WATCH k"),
        *("B SELECT 2", "B SET k 1", "A MULTI", "A EXEC"),
    ],
    "exec-writes-watched": ["A WATCH k", "A MULTI", "A SET k x", "A EXEC", "A GET k"],
    "command-info": ["A COMMAND INFO watch unwatch", "A COMMAND COUNT"],
}


def _script(conns: Connections, steps: List[str]) -> List[bytes]:
    for conn in (conns.a, conns.b):
        conn.call_raw(["RESET"])
    conns.b.call_raw(["FLUSHALL"])
    out = []
    for step in steps:
        who, *args = step.split()
        conn = conns.a if who.endswith("A") else conns.b
        reply = conn.call_raw(args)
        if not who.startswith("!"):  # "!": a step whose reply is not compared
            out.append(reply)
    return out


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_watch_connection_rules(name: str, oracle_8_8, xs_serve) -> None:
    steps = SCRIPTS[name]
    want = _script(oracle_8_8, steps)
    got = _script(xs_serve, steps)
    if name == "command-info":
        # COMMAND COUNT differs (xstreams has fewer commands): compare WATCH's rows only.
        want, got = want[:1], got[:1]
    assert got == want


def _watch_stats(conns: Connections) -> Tuple[int, int]:
    info = conns.b.call_raw(["INFO", "clients"]).decode()
    fields = dict(line.split(":", 1) for line in info.split("\r\n") if ":" in line)
    return int(fields["watching_clients"]), int(fields["total_watched_keys"])


def test_watch_stats_and_closed_connections(oracle_8_8, xs_serve) -> None:
    """INFO counts watching clients and watched keys as redis-server does (a dirty client
    no longer counts), and a connection's watches leave with it."""
    for conns in (oracle_8_8, xs_serve):
        _script(conns, [])
        extra = resp.RespConnection("127.0.0.1", conns.port)
        assert extra.call_raw(["WATCH", "k", "j"]) == b"+OK\r\n"
        conns.a.call_raw(["WATCH", "k"])
        assert _watch_stats(conns) == (2, 2)
        conns.b.call_raw(["SET", "j", "1"])
        assert _watch_stats(conns) == (1, 1)
        conns.a.call_raw(["UNWATCH"])
        assert extra.call_raw(["WATCH", "k"]) == b"+OK\r\n"
        assert _watch_stats(conns) == (0, 0), "a dirty client watches nothing more"
        extra.call_raw(["UNWATCH"])
        extra.call_raw(["WATCH", "x"])
        extra.close()
        deadline = time.monotonic() + 5
        while _watch_stats(conns) != (0, 0) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _watch_stats(conns) == (0, 0)


def _client_watch_fields(conns: Connections) -> List[Tuple[str, str]]:
    """CLIENT INFO's ``flags`` and ``watch`` of A through a watch's life."""
    _script(conns, [])
    out = []

    def probe() -> None:
        line = conns.a.call_raw(["CLIENT", "INFO"]).decode()
        fields = dict(f.split("=", 1) for f in line.split("\r\n")[1].split() if "=" in f)
        out.append((fields["flags"], fields["watch"]))

    probe()
    conns.a.call_raw(["WATCH", "k", "j", "k"])
    probe()
    conns.b.call_raw(["SET", "j", "1"])
    probe()
    conns.a.call_raw(["MULTI"])
    conns.a.call_raw(["DISCARD"])
    probe()
    return out


def test_client_info_shows_watches(oracle_8_8, xs_serve) -> None:
    want = _client_watch_fields(oracle_8_8)
    assert want[1] == ("N", "2") and want[2] == ("d", "0"), want
    assert _client_watch_fields(xs_serve) == want
