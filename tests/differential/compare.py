"""Reply normalisation and comparison for the differential harness.

Two replies are equal when their :class:`~resp.Reply` trees are equal, which is
byte equality of the RESP encoding, after these normalisations and nothing else:

* ``KEYS``: elements sorted (Redis returns hash-table order).
* ``SCAN``: the runner compares the sorted union of keys of a full iteration
  (cursors are hash-table positions).
* Time-dependent integers are compared within ``TIME_TOLERANCE_MS`` (see
  ``TIME_FIELDS`` below; TTL and EXPIRETIME, in seconds, within 1); ``-1`` markers
  (never active) stay exact.
* Ids produced by ``XADD *`` from the clock: both sides normally agree because
  the xstreams clock is pinned to the oracle's ms, but two redis-servers cannot
  be pinned, so per key a map "target id -> oracle id" is recorded when both
  sides generated different time-based ids, and applied to the target's later
  replies about that key (``IdMap``).
* ``KNOWN_DIFFERENCES``: fields that Redis 8.8 has and the 8.2.3 oracle lacks,
  removed from the target's reply only when the target implements >= the
  version that introduced them and the oracle is older.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

from . import resp
from .resp import ARRAY, BULK, INT, MAP, Reply

TIME_TOLERANCE_MS = int(os.environ.get("XSTREAMS_DIFF_TIME_TOL_MS", "500"))

# ---------------------------------------------------------------------------
# Known differences between the oracle (redis-server 8.2.3) and Redis 8.8
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class KnownDifference:
    command: str  # canonical name the comparator dispatches on
    since: tuple  # first Redis version with the behaviour xstreams follows
    description: str


KNOWN_DIFFERENCES: List[KnownDifference] = [
    # Redis 8.6 added idempotent XADD (IDMP/IDMPAUTO); XINFO STREAM (plain and
    # FULL) reports its state in six fields right after recorded-first-entry-id.
    KnownDifference(
        "XINFO STREAM",
        (8, 6, 0),
        "fields idmp-duration, idmp-maxsize, pids-tracked, iids-tracked, iids-added, "
        "iids-duplicates after recorded-first-entry-id",
    ),
    # Redis 8.8 added XNACK; XINFO STREAM FULL reports each group's NACKed
    # entries as nacked-count right after pel-count.
    KnownDifference("XINFO STREAM", (8, 8, 0), "group field nacked-count after pel-count (FULL)"),
    # Redis 8.8's rax stores the values of fixed-length keys in the parent's child slot
    # (redis/redis#15256): one node fewer per key, and after deletions a shape that
    # depends on history, so an older oracle's radix-tree-nodes cannot be mapped to 8.8's:
    # the field is not compared (tests/rax_parity checks both counts against recordings).
    KnownDifference("XINFO STREAM", (8, 8, 0), "radix-tree-nodes not comparable (masked)"),
]

#: Inputs the generator does not produce while the oracle is older than 8.8,
#: because redis-server 8.2.3 has bugs there that Redis 8.8 fixed (comparing them
#: would flag a correct xstreams). See Generator.hits_oracle_bug.
ORACLE_BUG_AVOIDANCES: List[str] = [
    "XADD/XTRIM with '~' and DELREF or ACKED: 8.2.3 stops before trimming inside "
    "nodes and deletes nothing (redis#14623); 8.8 trims entry by entry.",
    "ACKED (XADD/XTRIM/XDELEX/XACKDEL) on a stream after a successful XGROUP DESTROY: "
    "8.2.3 keeps a stale min-last-delivered-id cache (redis#14552).",
]

IDMP_FIELDS = [b"idmp-duration", b"idmp-maxsize", b"pids-tracked", b"iids-tracked",
               b"iids-added", b"iids-duplicates"]  # fmt: skip


class KnownDifferenceMissing(Exception):
    """The target claims a version whose extra fields are absent or misplaced."""


def _remove_pairs_after(items: List[Reply], anchor: bytes, names: List[bytes]) -> List[Reply]:
    """Remove ``names`` (key/value pairs, in order) that must follow ``anchor``."""
    for i in range(0, len(items) - 1, 2):
        if items[i].kind == BULK and items[i].value == anchor:
            j = i + 2
            for n in names:
                if j + 1 >= len(items) or items[j].kind != BULK or items[j].value != n:
                    got = items[j].value if j < len(items) else None
                    raise KnownDifferenceMissing(
                        f"expected field {n!r} after {anchor!r} (found {got!r})"
                    )
                j += 2
            return items[: i + 2] + items[j:]
    raise KnownDifferenceMissing(f"anchor field {anchor!r} not found")


def strip_known_differences(
    cmd_name: str, reply: Reply, oracle_version: tuple, target_version: tuple
) -> Reply:
    """Bring a newer target's reply to the oracle's version (see KNOWN_DIFFERENCES)."""
    if cmd_name != "XINFO STREAM" or reply.kind not in (ARRAY, MAP):
        return reply
    items = list(reply.value)
    if target_version >= (8, 6, 0) > oracle_version:
        items = _remove_pairs_after(items, b"recorded-first-entry-id", IDMP_FIELDS)
    if target_version >= (8, 8, 0) > oracle_version:
        for i in range(0, len(items) - 1, 2):
            if (
                items[i].kind == BULK
                and items[i].value == b"groups"
                and items[i + 1].kind
                in (
                    ARRAY,
                    resp.SET,
                )
            ):
                groups = items[i + 1]
                if groups.value and groups.value[0].kind in (ARRAY, MAP):
                    new_groups = [
                        Reply(
                            g.kind,
                            _remove_pairs_after(list(g.value), b"pel-count", [b"nacked-count"]),
                        )  # fmt: skip
                        for g in groups.value
                    ]
                    items[i + 1] = Reply(groups.kind, new_groups)
    return Reply(reply.kind, items)


# ---------------------------------------------------------------------------
# Time-dependent fields
# ---------------------------------------------------------------------------


def _mark(r: Reply) -> None:
    if r.kind == INT and r.value != -1:
        r.tol = TIME_TOLERANCE_MS


def _field(items: List[Reply], name: bytes) -> Optional[Reply]:
    for i in range(0, len(items) - 1, 2):
        if items[i].kind == BULK and items[i].value == name:
            return items[i + 1]
    return None


def _norm_xpending(args: List[bytes], r: Reply) -> None:
    if len(args) <= 3 or r.kind != ARRAY:
        return
    for e in r.value:
        if e.kind == ARRAY and len(e.value) == 4:
            _mark(e.value[2])


def _norm_xinfo_consumers(args: List[bytes], r: Reply) -> None:
    if r.kind != ARRAY:
        return
    for c in r.value:
        if c.kind in (ARRAY, MAP):
            for name in (b"idle", b"inactive"):
                f = _field(c.value, name)
                if f is not None:
                    _mark(f)


def _norm_xinfo_stream(args: List[bytes], r: Reply) -> None:
    if r.kind not in (ARRAY, MAP):
        return
    groups = _field(r.value, b"groups")
    if groups is None or groups.kind != ARRAY:
        return
    for g in groups.value:
        if g.kind not in (ARRAY, MAP):
            continue
        pel = _field(g.value, b"pending")
        for e in pel.value if pel is not None and pel.kind == ARRAY else []:
            if e.kind == ARRAY and len(e.value) == 4:
                _mark(e.value[2])
        consumers = _field(g.value, b"consumers")
        for c in consumers.value if consumers is not None and consumers.kind == ARRAY else []:
            if c.kind not in (ARRAY, MAP):
                continue
            for name in (b"seen-time", b"active-time"):
                f = _field(c.value, name)
                if f is not None:
                    _mark(f)
            cpel = _field(c.value, b"pending")
            for e in cpel.value if cpel is not None and cpel.kind == ARRAY else []:
                if e.kind == ARRAY and len(e.value) == 3:
                    _mark(e.value[1])


def _tolerate(tol: int) -> Callable[[List[bytes], Reply], None]:
    """TTL-like replies: within ``tol`` (-1 and -2 stay exact)."""

    def norm(args: List[bytes], r: Reply) -> None:
        if r.kind == INT and r.value >= 0:
            r.tol = tol

    return norm


def _norm_keys(args: List[bytes], r: Reply) -> None:
    if r.kind == ARRAY:
        r.value.sort(key=lambda x: (x.kind, x.value))


NORMALISERS: Dict[str, Callable[[List[bytes], Reply], None]] = {
    "KEYS": _norm_keys,
    "XPENDING": _norm_xpending,
    "XINFO CONSUMERS": _norm_xinfo_consumers,
    "XINFO STREAM": _norm_xinfo_stream,
    # After a relative expiry the two sides' clocks decide the exact figure.
    "TTL": _tolerate(1),
    "EXPIRETIME": _tolerate(1),
    "PTTL": _tolerate(TIME_TOLERANCE_MS),
    "PEXPIRETIME": _tolerate(TIME_TOLERANCE_MS),
}

#: Where time-dependent integers live (documentation of the NORMALISERS above).
TIME_FIELDS = {
    "XPENDING <key> <group> [IDLE n] <start> <end> <count>": "3rd element of each entry (idle ms)",
    "XINFO CONSUMERS": "idle, inactive (inactive -1 stays exact)",
    "XINFO STREAM FULL": "group pending[2] (delivery time), consumer seen-time, active-time, "
    "consumer pending[1] (delivery time)",
    "TTL, EXPIRETIME": "within 1 s (-1 and -2 exact)",
    "DUMP": "the 8-byte ms times inside the payload (consumer seen/active, PEL delivery) "
    "and hence the CRC64 (see dump_equal_within)",
    "PTTL, PEXPIRETIME": "within the tolerance (-1 and -2 exact)",
}


# ---------------------------------------------------------------------------
# Id maps (time-based XADD * on two servers that cannot share a clock)
# ---------------------------------------------------------------------------


class IdMap:
    """Per key: id generated by the target -> id generated by the oracle."""

    def __init__(self) -> None:
        self.maps: Dict[bytes, Dict[bytes, bytes]] = {}

    def add(self, key: bytes, target_id: bytes, oracle_id: bytes) -> None:
        self.maps.setdefault(key, {})[target_id] = oracle_id

    def clear(self, key: Optional[bytes] = None) -> None:
        if key is None:
            self.maps.clear()
        else:
            self.maps.pop(key, None)

    def apply(self, key: bytes, r: Reply) -> Reply:
        m = self.maps.get(key)
        if not m:
            return r
        return _map_ids(r, m)

    def apply_per_stream(self, r: Reply) -> Reply:
        """XREAD/XREADGROUP replies: [key, entries] pairs (RESP2) or a key->entries map."""
        if not self.maps:
            return r
        if r.kind == MAP:
            out = []
            for k, v in r.pairs():
                out += [k, self.apply(k.value, v)]
            return Reply(MAP, out)
        if r.kind == ARRAY:
            out = []
            for sub in r.value:
                if sub.kind == ARRAY and len(sub.value) == 2 and sub.value[0].kind == BULK:
                    out.append(Reply(ARRAY, [sub.value[0], self.apply(sub.value[0].value,
                                                                      sub.value[1])]))  # fmt: skip
                else:
                    out.append(sub)
            return Reply(ARRAY, out)
        return r


def mask_field(r: Reply, name: bytes) -> Reply:
    """A copy of a map-like reply whose field ``name`` holds a placeholder."""
    if r.kind not in (ARRAY, MAP):
        return r
    items = list(r.value)
    for i in range(0, len(items) - 1, 2):
        if items[i].kind == BULK and items[i].value == name:
            items[i + 1] = Reply(resp.STATUS, b"<masked: ids differ by clock>")
    return Reply(r.kind, items)


def _map_ids(r: Reply, m: Dict[bytes, bytes]) -> Reply:
    if r.kind == BULK and r.value in m:
        return Reply(BULK, m[r.value])
    if r.kind in resp.AGGREGATES:
        return Reply(r.kind, [_map_ids(c, m) for c in r.value])
    return r


def is_time_based_id(r: Reply, now_ms: int, window_ms: int = 600_000) -> bool:
    if r.kind != BULK:
        return False
    try:
        ms = int(r.value.split(b"-")[0])
    except ValueError:
        return False
    return abs(ms - now_ms) <= window_ms


# ---------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------


def normalise(cmd_name: str, args: List[bytes], r: Reply) -> Reply:
    """A deep copy of ``r`` with the per-command normalisation applied."""
    fn = NORMALISERS.get(cmd_name)
    if fn is None:
        return r
    r = copy.deepcopy(r)
    fn(args, r)
    return r


def first_difference(a: Reply, b: Reply, path: str = "$") -> Optional[str]:
    """Where two normalised trees differ (None if equal)."""
    if a.kind != b.kind:
        return f"{path}: type {a.kind} != {b.kind}"
    if a.kind in resp.AGGREGATES:
        if len(a.value) != len(b.value):
            return f"{path}: {len(a.value)} elements != {len(b.value)}"
        for i, (x, y) in enumerate(zip(a.value, b.value)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if a.value == b.value:
        return None
    if a.kind == INT and (a.tol or b.tol) and a.value >= 0 and b.value >= 0:
        if abs(a.value - b.value) <= max(a.tol, b.tol):
            return None
        return f"{path}: {a.value} != {b.value} (beyond the {max(a.tol, b.tol)} ms tolerance)"
    return f"{path}: {a.value!r} != {b.value!r}"


def dump_equal_within(a: bytes, b: bytes, tol: int) -> bool:
    """DUMP payloads that differ only in millisecond times (consumer seen/active times,
    PEL delivery times: 8 little-endian bytes each) by at most ``tol``, and therefore in
    their trailing CRC64. Anything else that differs (lengths, any other byte) makes them
    different."""
    if len(a) != len(b) or len(a) < 10:
        return a == b
    body = len(a) - 8  # the CRC64 covers everything before it
    diffs = [i for i in range(body) if a[i] != b[i]]
    covered = -1
    for i in diffs:
        if i <= covered:
            continue
        for start in range(max(0, i - 7), i + 1):
            end = start + 8
            if end > body:
                break
            x = int.from_bytes(a[start:end], "little")
            y = int.from_bytes(b[start:end], "little")
            if 10**12 <= x < 10**13 and abs(x - y) <= tol:
                covered = end - 1
                break
        else:
            return False
    return True


def compare(
    cmd_name: str,
    args: List[bytes],
    oracle: Reply,
    target: Reply,
    oracle_version: tuple = (8, 2, 3),
    target_version: tuple = (8, 2, 3),
) -> Tuple[Optional[str], Reply, Reply]:
    """Return (difference or None, normalised oracle, normalised target)."""
    try:
        target = strip_known_differences(cmd_name, target, oracle_version, target_version)
    except KnownDifferenceMissing as e:
        return f"known difference not found in target reply: {e}", oracle, target
    if cmd_name == "XINFO STREAM" and target_version >= (8, 8, 0) > oracle_version:
        target = _copy_field(oracle, target, b"radix-tree-nodes")
    a = normalise(cmd_name, args, oracle)
    b = normalise(cmd_name, args, target)
    if (
        cmd_name == "DUMP"
        and a.kind == BULK == b.kind
        and a.value != b.value
        and dump_equal_within(a.value, b.value, TIME_TOLERANCE_MS)
    ):
        return None, a, b
    return first_difference(a, b), a, b


def _copy_field(src: Reply, dst: Reply, name: bytes) -> Reply:
    """``dst`` with the value of its field ``name`` taken from ``src`` (when both have it)."""
    if src.kind not in (ARRAY, MAP) or dst.kind not in (ARRAY, MAP):
        return dst
    value = _field(list(src.value), name)
    if value is None:
        return dst
    items = list(dst.value)
    for i in range(0, len(items) - 1, 2):
        if items[i].kind == BULK and items[i].value == name:
            items[i + 1] = copy.deepcopy(value)
    return Reply(dst.kind, items)
