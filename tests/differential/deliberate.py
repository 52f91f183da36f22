"""The deliberate differences from redis-server 8.8 (docs/differences.md), one named
normalisation each, for the runs against a real redis-server.

xstreams behaves as upstream Redis after a stream bug fix (or as an open report
proposes, when 8.8 loses data or leaks memory). A command that hits such a case leaves
the two servers in different states, and every later reply about that key could differ.
So after a command that can hit a case, ``reconcile`` asks both servers whether exactly
that case happened (the named check of the entry: the state differs in just the way the
entry describes, and in nothing else), and if so brings the oracle to the fixed state
(the entry's repair). Any other difference is left alone, so the comparison still sees
it. Each repair is counted in the runner's statistics as ``deliberate:<name>``.

The table is keyed by the entry names of docs/differences.md (``test_differences_doc``
in test_differential_selftest.py checks that both list the same names).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Dict, List, Optional

from . import compare
from .resp import ARRAY, BULK, INT, MAP, Reply

if TYPE_CHECKING:  # pragma: no cover
    from .runner import Session


def _fields(r: Reply) -> Dict[bytes, Reply]:
    if r.kind not in (ARRAY, MAP) or r.is_error:
        return {}
    return {k.value: v for k, v in r.pairs() if k.kind == BULK}


def _words(args: List[bytes]) -> set:
    return {a.upper() for a in args}


def _set_field(r: Reply, name: bytes, value: Reply) -> Reply:
    items = list(r.value)
    for i in range(0, len(items) - 1, 2):
        if items[i].kind == BULK and items[i].value == name:
            items[i + 1] = value
    return Reply(r.kind, items)


def _full(sess: Session, side, key: bytes) -> Reply:
    return side.call([b"XINFO", b"STREAM", key, b"FULL", b"COUNT", b"0"])


def _same_except(sess: Session, key: bytes, masked: List[bytes]) -> bool:
    """Do both sides' XINFO STREAM FULL of ``key`` agree once ``masked`` fields are
    blanked on both (with the comparator's usual normalisation)?"""
    a, b = _full(sess, sess.oracle, key), _full(sess, sess.target, key)
    if a.is_error or b.is_error:
        return False
    for name in masked:
        a = _set_field(a, name, Reply(INT, 0))
        b = _set_field(b, name, Reply(INT, 0))
    diff, _, _ = compare.compare(
        "XINFO STREAM", [b"XINFO", b"STREAM", key, b"FULL"], a, b,
        sess.oracle.version, sess.target.version,
    )  # fmt: skip
    return diff is None


def _oracle_takes_target_state(sess: Session, key: bytes) -> bool:
    """Replace the oracle's value of ``key`` by the target's (its DUMP payload, the TTL
    kept): the repair of an entry whose fixed state 8.8 cannot reach by commands."""
    payload = sess.target.call([b"DUMP", key])
    pttl = sess.oracle.call([b"PTTL", key])
    if payload.kind != BULK or pttl.kind != INT:
        return False
    ttl = str(max(pttl.value, 0)).encode()
    r = sess.oracle.call([b"RESTORE", key, ttl, payload.value, b"REPLACE"])
    return not r.is_error


def _oracle_refuses_its_own_dump(sess: Session, key: bytes) -> bool:
    """8.8 refuses the payload of a stream holding a node with no live entry (redis#15808)."""
    payload = sess.oracle.call([b"DUMP", key])
    if payload.kind != BULK:
        return False
    scratch = b"__xstreams_diff_deliberate"
    r = sess.oracle.call([b"RESTORE", scratch, b"0", payload.value, b"REPLACE"])
    sess.oracle.call([b"DEL", scratch])
    return r.is_error and b"Bad data format" in (r.value or b"")


# ---------------------------------------------------------------- the entries


def trim_empty_node(sess: Session, args: List[bytes], key: bytes) -> bool:
    """A trim deleted the last live entries of a node that a tombstone past the trim
    point kept: 8.8 keeps the node (one radix-tree key more, a DUMP it refuses), xstreams
    removes it. Check: radix-tree-keys differ, the oracle refuses its own DUMP of the key,
    and XINFO STREAM FULL agrees otherwise. Repair: the oracle takes the target's value."""
    if not (_words(args) & {b"MAXLEN", b"MINID"}):
        return False
    a = _fields(sess.oracle.call([b"XINFO", b"STREAM", key]))
    b = _fields(sess.target.call([b"XINFO", b"STREAM", key]))
    ka, kb = a.get(b"radix-tree-keys"), b.get(b"radix-tree-keys")
    if ka is None or kb is None or ka.value <= kb.value:
        return False
    if not _oracle_refuses_its_own_dump(sess, key):
        return False
    if not _same_except(sess, key, [b"radix-tree-keys", b"radix-tree-nodes"]):
        return False
    return _oracle_takes_target_state(sess, key)


def _pending_ids(side, key: bytes, group: bytes) -> Optional[List[bytes]]:
    r = side.call([b"XPENDING", key, group, b"-", b"+", b"1000000"])
    if r.kind != ARRAY:
        return None
    return [e.value[0].value for e in r.value]


def delref_tombstones(sess: Session, args: List[bytes], key: bytes) -> bool:
    """A DELREF trim passed tombstones of earlier KEEPREF deletes that a group still had
    pending: 8.8 keeps those PEL entries, xstreams drops them. Check: per group, the
    target's pending IDs are the oracle's minus some, and each one missing is an entry
    the oracle no longer holds (a tombstone). Repair: XACK those IDs on the oracle."""
    if b"DELREF" not in _words(args) or not (_words(args) & {b"MAXLEN", b"MINID"}):
        return False
    groups = sess.oracle.call([b"XINFO", b"GROUPS", key])
    if groups.kind != ARRAY:
        return False
    repaired = False
    for g in groups.value:
        name = _fields(g).get(b"name")
        if name is None:
            continue
        theirs = _pending_ids(sess.oracle, key, name.value)
        ours = _pending_ids(sess.target, key, name.value)
        if theirs is None or ours is None or theirs == ours:
            continue
        extra = [i for i in theirs if i not in set(ours)]
        if [i for i in theirs if i not in set(extra)] != ours:
            return False  # not just IDs missing: a real difference
        for i in extra:
            if sess.oracle.call([b"XRANGE", key, i, i]).value:
                return False  # a live entry: not this case
        sess.oracle.call([b"XACK", key, name.value, *extra])
        repaired = True
    return repaired


def idmp_failed_producer(sess: Session, args: List[bytes], key: bytes) -> bool:
    """An XADD with IDMP/IDMPAUTO failed after creating its producer: 8.8 keeps the empty
    producer (pids-tracked one more, never freed), xstreams does not. Check: pids-tracked
    is one more on the oracle and XINFO STREAM FULL agrees otherwise. Repair: the oracle
    takes the target's value."""
    if not (_words(args) & {b"IDMP", b"IDMPAUTO"}):
        return False
    a = _fields(sess.oracle.call([b"XINFO", b"STREAM", key]))
    b = _fields(sess.target.call([b"XINFO", b"STREAM", key]))
    pa, pb = a.get(b"pids-tracked"), b.get(b"pids-tracked")
    if pa is None or pb is None or pa.value != pb.value + 1:
        return False
    if not _same_except(sess, key, [b"pids-tracked"]):
        return False
    return _oracle_takes_target_state(sess, key)


@dataclass(frozen=True)
class Deliberate:
    name: str
    upstream: str
    #: Which commands can hit the case (by canonical name).
    commands: tuple
    #: Both replies must be errors (the case is a failing command) or both not.
    on_error: bool
    reconcile: Callable[[Session, List[bytes], bytes], bool]


DELIBERATE: Dict[str, Deliberate] = {
    d.name: d
    for d in [
        Deliberate("trim-empty-node", "redis/redis#15808, PR #15815", ("XTRIM", "XADD"),
                   False, trim_empty_node),
        Deliberate("delref-tombstones", "redis/redis PR #15581", ("XTRIM", "XADD"),
                   False, delref_tombstones),
        Deliberate("idmp-failed-producer", "redis/redis#15840", ("XADD",),
                   True, idmp_failed_producer),
    ]
}  # fmt: skip


def reconcile(sess: Session, name: str, args: List[bytes], oracle: Reply,
              target: Reply) -> List[str]:  # fmt: skip
    """Run the entries whose commands include ``name``; the names of those that found
    their case and repaired the oracle."""
    if len(args) < 2 or oracle.is_error != target.is_error:
        return []
    key = copy.copy(args[1])
    done = []
    for d in DELIBERATE.values():
        if name in d.commands and oracle.is_error == d.on_error and d.reconcile(sess, args, key):
            done.append(d.name)
    return done
