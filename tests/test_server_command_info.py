"""``COMMAND INFO`` and ``COMMAND DOCS`` of ``xstreams serve`` against redis-server 8.8.

For every command the server lists (and each of its subcommands), the machine-readable
metadata clients and cluster proxies use must be redis-server 8.8's: arity, flags, first
and last key and step, ACL categories, tips, key specifications (Redis's free-text
``notes`` left out), and in ``COMMAND DOCS`` the version it appeared in, its group, doc
flags and the version that deprecated it. Redis has subcommands xstreams does not (CLIENT
TRACKING, ...): only the ones xstreams lists are compared. Skips without an 8.8 server
(``$XSTREAMS_REDIS_SERVER``).
"""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
from differential import resp
from differential.servers import RedisServer, find_redis_server
from server_support import ServerProcess, require_serve

# xstreams's own spelling of XCFGSET (XIDMP CFGSET/CFGGET, docs/server.md): not in Redis.
EXTENSIONS = {"xidmp"}
INFO_FIELDS = ["name", "arity", "flags", "first", "last", "step", "acl", "tips", "keyspecs"]
# COMMAND DOCS fields compared: the others are prose (summary, complexity, history,
# replaced_by) or argument trees, which xstreams does not publish.
DOC_FIELDS = ["since", "group", "doc_flags", "deprecated_since"]


@pytest.fixture(scope="module")
def xs():
    require_serve()
    with ServerProcess() as srv:
        conn = resp.RespConnection("127.0.0.1", srv.port)
        yield conn
        conn.close()


@pytest.fixture(scope="module")
def servers(xs):
    binary = find_redis_server()
    if not binary:
        pytest.skip("no redis-server binary (set XSTREAMS_REDIS_SERVER)")
    with RedisServer(binary) as redis:
        # The shared 8.8 build of upstream reports version 255.255.255.
        major_minor = tuple(int(p) for p in redis.version.split(".")[:2])
        if major_minor < (8, 8):
            pytest.skip(f"needs redis-server 8.8 (found {redis.version})")
        r = resp.RespConnection("127.0.0.1", redis.port)
        yield r, xs
        r.close()


def call(conn: resp.RespConnection, *args: str) -> Any:
    return conn.call([a.encode() for a in args]).to_py()


def text(v: Any) -> Any:
    """Bytes to str, recursively."""
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, list):
        return [text(i) for i in v]
    return v


def pairs(flat: List[Any]) -> Dict[Any, Any]:
    return dict(zip(flat[::2], flat[1::2]))


def without_notes(specs: List[Any]) -> List[Any]:
    out = []
    for spec in specs:
        d = pairs(spec)
        d.pop("notes", None)
        out.append(d)
    return out


def compare_info(name: str, a: List[Any], b: List[Any], diffs: List[str]) -> None:
    for i, field in enumerate(INFO_FIELDS):
        va, vb = a[i], b[i]
        if field == "keyspecs":
            va, vb = without_notes(va), without_notes(vb)
        if va != vb:
            diffs.append(f"{name} {field}: redis {va!r}, xstreams {vb!r}")
    subs_a = {s[0]: s for s in a[9]}
    for sub in b[9]:
        if sub[0] not in subs_a:
            diffs.append(f"{sub[0]}: not a redis-server subcommand")
        else:
            compare_info(sub[0], subs_a[sub[0]], sub, diffs)


def compare_docs(name: str, a: Dict[str, Any], b: Dict[str, Any], diffs: List[str]) -> None:
    for field in DOC_FIELDS:
        if a.get(field) != b.get(field):
            diffs.append(f"{name} docs {field}: redis {a.get(field)!r}, xstreams {b.get(field)!r}")
    subs_a = pairs(a.get("subcommands", []))
    for sub, doc in pairs(b.get("subcommands", [])).items():
        if sub in subs_a:
            compare_docs(sub, pairs(subs_a[sub]), pairs(doc), diffs)


def our_commands(x: resp.RespConnection) -> List[str]:
    names = sorted(n for n in text(call(x, "COMMAND", "LIST")) if "|" not in n)
    assert "xadd" in names and "xreadgroup" in names, names
    return [n for n in names if n not in EXTENSIONS]


def test_command_info_matches_redis(servers):
    r, x = servers
    diffs: List[str] = []
    for name in our_commands(x):
        (a,) = text(call(r, "COMMAND", "INFO", name))
        (b,) = text(call(x, "COMMAND", "INFO", name))
        assert a is not None, f"{name}: not a redis-server 8.8 command"
        compare_info(name, a, b, diffs)
    assert not diffs, "\n".join(diffs)


def test_command_docs_match_redis(servers):
    r, x = servers
    diffs: List[str] = []
    for name in our_commands(x):
        a = pairs(text(call(r, "COMMAND", "DOCS", name)))
        b = pairs(text(call(x, "COMMAND", "DOCS", name)))
        compare_docs(name, pairs(a[name]), pairs(b[name]), diffs)
    assert not diffs, "\n".join(diffs)


def test_command_count_and_list_agree(xs):
    x = xs
    listed = text(call(x, "COMMAND", "LIST"))
    top = [n for n in listed if "|" not in n]
    assert call(x, "COMMAND", "COUNT") == len(top)
    assert len(set(listed)) == len(listed)
    infos = text(call(x, "COMMAND", "INFO"))
    assert sorted(i[0] for i in infos) == sorted(top)
