"""Seeded random command sequences for the differential harness.

A :class:`Generator` produces one command at a time from a ``random.Random``
seeded by the caller. It keeps a small :class:`Model` of the keyspace (stream
entries, last ids, groups, consumers, pending ids) that the runner refreshes
from the *oracle only*, with read-only commands, after every write; the model
only biases choices (so that XDEL/XACK/XCLAIM often name real entries and XADD
mostly appends), it never decides what a reply should be. A sequence therefore
replays exactly from the list of commands it produced (that list is what a
failure report prints), independently of the generator.

Design choices that keep both sides deterministic:

* Small keyspace (three stream keys, a string key for WRONGTYPE, a key that is
  usually missing) and a small id space (ms 0..50, seq 0..5, plus a few ids
  next to 2^64-1), so that commands collide and interplay.
* ``*`` ids are generated when the stream's last id lies in the far future
  (then ``*`` means last-id+1 on every side), and, if ``time_ids`` is on, on
  fresh keys or streams whose ids are time based; the runner normalises those
  replies (per-key id map, see ``compare.IdMap``) and pins the xstreams clock to
  the ms the oracle used.
* Idle thresholds are 0 or far from any idle time a sequence can produce
  (entries are either delivered "now" or back-dated by >= 120 s with XCLAIM
  IDLE/TIME), so XCLAIM/XAUTOCLAIM/XPENDING IDLE filters never race the clock.
* ``TimeArg`` stands for an absolute unix-ms argument (XCLAIM TIME); the runner
  resolves it against the oracle's clock at the start of the sequence and sends
  the same bytes to both sides.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple, Union

U64 = (1 << 64) - 1
# Milliseconds that look like "now" (2001..2286): ids from the clock.
TIME_MS_LO, TIME_MS_HI = 10**12, 10**13
StreamID = Tuple[int, int]


@dataclass(frozen=True)
class TimeArg:
    """An absolute time argument: the sequence's base time plus ``offset_ms``, in ms
    (``unit_ms`` 1) or whole seconds (``unit_ms`` 1000)."""

    offset_ms: int
    unit_ms: int = 1

    def resolve(self, base_ms: int) -> bytes:
        return str((base_ms + self.offset_ms) // self.unit_ms).encode()


Arg = Union[bytes, TimeArg]


@dataclass
class Cmd:
    """One generated command.

    ``name`` is the canonical command name the comparator dispatches on
    (``XINFO STREAM``, ``XGROUP CREATE`` ...), ``keys`` the keys it touches,
    ``macro`` is set for commands the runner expands (``scan_all``: iterate SCAN
    to the end and compare the union of keys), ``malformed`` says whether the
    generator mutated a valid form.
    """

    args: List[Arg]
    name: str
    keys: List[bytes] = field(default_factory=list)
    macro: Optional[str] = None
    malformed: bool = False
    write: bool = False
    gen_name: str = ""  # the generator that made it (name is recomputed from args)

    def resolved(self, base_ms: int) -> List[bytes]:
        return [a.resolve(base_ms) if isinstance(a, TimeArg) else a for a in self.args]

    def render(self, base_ms: Optional[int] = None) -> str:
        """Shell-like rendering (bytes shown with Python escapes when needed)."""
        out = []
        for a in self.args:
            if isinstance(a, TimeArg):
                unit = "" if a.unit_ms == 1 else "/1000"
                out.append(
                    a.resolve(base_ms).decode()
                    if base_ms is not None
                    else f"<(now{a.offset_ms:+d}){unit}>"
                )
                continue
            if len(a) > 60 and len(set(a)) == 1:
                out.append(f"<{a[:1]!r}*{len(a)}>")
                continue
            s = a.decode("latin-1")
            if s and all(33 <= ord(ch) < 127 and ch not in "\"'\\" for ch in s):
                out.append(s)
            else:
                out.append(repr(a)[1:])
        text = " ".join(out)
        return f"{self.macro.upper()}: {text}" if self.macro else text


# ---------------------------------------------------------------------------
# Model (refreshed from the oracle by the runner)
# ---------------------------------------------------------------------------


@dataclass
class GroupModel:
    last_id: StreamID = (0, 0)
    consumers: Dict[bytes, Set[StreamID]] = field(default_factory=dict)
    pending: Set[StreamID] = field(default_factory=set)


@dataclass
class KeyModel:
    kind: Optional[str] = None  # None (missing), "stream", "string", other type name
    entries: List[StreamID] = field(default_factory=list)
    last_id: StreamID = (0, 0)
    max_deleted: StreamID = (0, 0)
    groups: Dict[bytes, GroupModel] = field(default_factory=dict)


def parse_id(b: bytes) -> Optional[StreamID]:
    try:
        ms, seq = b.split(b"-")
        return int(ms), int(seq)
    except (ValueError, AttributeError):
        return None


def fmt_id(i: StreamID) -> bytes:
    return b"%d-%d" % i


class Model:
    def __init__(self, keys: Sequence[bytes]) -> None:
        self.keys: Dict[bytes, KeyModel] = {k: KeyModel() for k in keys}

    def clear(self) -> None:
        for k in self.keys:
            self.keys[k] = KeyModel()

    def update_from_oracle(self, key: bytes, call: Callable[[List[bytes]], object]) -> None:
        """Refresh one key with read-only commands sent to the oracle only."""
        km = KeyModel()
        t = call([b"TYPE", key])
        kind = getattr(t, "value", b"none")
        kind = kind.decode() if isinstance(kind, bytes) else "none"
        if kind == "none":
            self.keys[key] = km
            return
        km.kind = kind
        if kind != "stream":
            self.keys[key] = km
            return
        info = call([b"XINFO", b"STREAM", key, b"FULL", b"COUNT", b"0"])
        d = _pairs(info)
        km.last_id = parse_id(d.get(b"last-generated-id", b"0-0")) or (0, 0)
        km.max_deleted = parse_id(d.get(b"max-deleted-entry-id", b"0-0")) or (0, 0)
        for e in d.get(b"entries") or []:
            km.entries.append(parse_id(e[0]))
        for g in d.get(b"groups") or []:
            gd = _pairs_py(g)
            gm = GroupModel(last_id=parse_id(gd.get(b"last-delivered-id", b"0-0")) or (0, 0))
            for p in gd.get(b"pending") or []:
                gm.pending.add(parse_id(p[0]))
            for c in gd.get(b"consumers") or []:
                cd = _pairs_py(c)
                gm.consumers[cd[b"name"]] = {parse_id(p[0]) for p in cd.get(b"pending") or []}
            km.groups[gd[b"name"]] = gm
        self.keys[key] = km


def _pairs(reply: object) -> Dict[bytes, object]:
    py = reply.to_py() if hasattr(reply, "to_py") else reply
    return _pairs_py(py)


def _pairs_py(py: object) -> Dict[bytes, object]:
    if not isinstance(py, list):
        return {}
    return {py[i]: py[i + 1] for i in range(0, len(py) - 1, 2)}


# ---------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------

STREAM_KEYS = [b"s1", b"s2", b"s3"]
STRING_KEY = b"str"
MISSING_KEY = b"nokey"
ALL_KEYS = STREAM_KEYS + [STRING_KEY, MISSING_KEY]

GROUPS = [b"g1", b"g2", b"grp 3"]
RARE_GROUPS = [b"g\r\nx", b"", b"G1"]
CONSUMERS = [b"c1", b"c2", b"Alice"]
RARE_CONSUMERS = [b"", b"c\nz", b"C1"]

FIELD_SETS = [(b"f",), (b"f", b"g"), (b"a",), (b"1",), (b"f", b"v", b"x")]
VALUES = [b"v", b"1", b"2", b"100", b"-7", b"", b"0", b"1.5", b"hello world",
          b"x" * 40, b"\x00bin\xff", b"9223372036854775807", b"12345678901234567890"]  # fmt: skip

BAD_IDS = [
    b"1-", b"-1", b"1-2 ", b"-0", b" -1", b"5- *", b"4-+*", b"1-\t", b"abc",
    b"18446744073709551616-0", b"0-18446744073709551616", b"(-", b"(+", b"1-*", b"", b"-",
    b"+", b"1-2-3", b" 1-2", b"+1-2", b"1--2", b"0x10-1", b"(", b"((1-0", b"$", b">", b"*",
    b"1-+2",
]  # fmt: skip
BAD_INTS = [b"abc", b"1.5", b"-1", b"9223372036854775808", b"-9223372036854775809", b"",
            b" 1", b"1 ", b"0x10", b"+1", b"1e3", b"-0", b"00", b"007"]  # fmt: skip
OPTION_WORDS = [b"MAXLEN", b"MINID", b"LIMIT", b"COUNT", b"NOMKSTREAM", b"KEEPREF",
                b"DELREF", b"ACKED", b"IDS", b"STREAMS", b"FULL", b"JUSTID", b"FORCE",
                b"IDLE", b"TIME", b"RETRYCOUNT", b"LASTID", b"NOACK", b"BLOCK", b"GROUP",
                b"MKSTREAM", b"ENTRIESREAD", b"ENTRIESADDED", b"MAXDELETEDID", b"~", b"=",
                b"FOO", b"MATCH", b"TYPE"]  # fmt: skip

# Idle thresholds / back-dating amounts: far apart from the few seconds a
# sequence lasts (see the module docstring).
MIN_IDLE = [b"0", b"0", b"60000", b"3600000", b"10000000000000"]
IDLE_SET = [b"0", b"1000", b"120000", b"7200000", b"10000000000000", b"-5"]


def rcase(rng: random.Random, tok: bytes) -> bytes:
    """Random case variation of a keyword (mostly unchanged)."""
    r = rng.random()
    if r < 0.6:
        return tok
    if r < 0.8:
        return tok.lower()
    return bytes(c ^ 0x20 if chr(c).isalpha() and rng.random() < 0.5 else c for c in tok)


# ---------------------------------------------------------------------------
# Families
# ---------------------------------------------------------------------------

STREAM_FAMILY: Dict[str, float] = {
    "XADD": 30, "XLEN": 3, "XRANGE": 9, "XREVRANGE": 6, "XDEL": 5, "XDELEX": 4,
    "XTRIM": 6, "XSETID": 3, "XREAD": 7, "XINFO STREAM": 6, "DEL": 1, "EXISTS": 1,
    "TYPE": 1, "KEYS": 1, "SCAN": 1, "DBSIZE": 0.5, "FLUSHALL": 0.15, "PING": 0.5,
    "SET": 0.8, "GET": 0.8, "UNKNOWN": 0.2,
}  # fmt: skip

GROUP_FAMILY: Dict[str, float] = {
    "XADD": 22, "XLEN": 1, "XRANGE": 3, "XREVRANGE": 1, "XDEL": 3, "XDELEX": 3,
    "XTRIM": 3, "XSETID": 1.5, "XREAD": 2, "XINFO STREAM": 2, "DEL": 0.5, "EXISTS": 0.3,
    "TYPE": 0.3, "KEYS": 0.3, "SCAN": 0.3, "DBSIZE": 0.2, "FLUSHALL": 0.1, "PING": 0.2,
    "SET": 0.4, "GET": 0.2, "UNKNOWN": 0.1,
    "XGROUP CREATE": 6, "XGROUP SETID": 2, "XGROUP DESTROY": 1, "XGROUP CREATECONSUMER": 1.5,
    "XGROUP DELCONSUMER": 1.5, "XGROUP HELP": 0.2, "XGROUP": 0.3,
    "XREADGROUP": 12, "XACK": 5, "XACKDEL": 4, "XPENDING": 6, "XCLAIM": 6, "XAUTOCLAIM": 5,
    "XINFO GROUPS": 2, "XINFO CONSUMERS": 3, "XINFO STREAM FULL": 3, "XINFO HELP": 0.2,
    "XINFO": 0.3,
}  # fmt: skip

# Long streams: mostly appends, so that default-sized nodes split too and
# XINFO STREAM (FULL) reports several radix-tree keys/nodes.
NODES_FAMILY: Dict[str, float] = {
    "XADD": 60, "XINFO STREAM": 6, "XTRIM": 3, "XDEL": 8, "XDELEX": 3, "XRANGE": 5,
    "XREVRANGE": 3, "XLEN": 2, "XREAD": 2, "XSETID": 0.5, "DEL": 0.05,
}  # fmt: skip

# Streams and strings with expiry times, serialized, renamed and copied (see
# gen_keyspace.py for the time rules that keep both sides deterministic).
EXPIRY_FAMILY: Dict[str, float] = {
    "XADD": 16, "XLEN": 1, "XRANGE": 2, "XREAD": 1, "XINFO STREAM": 1.5, "XGROUP CREATE": 1.5,
    "XREADGROUP": 2, "XACK": 0.5, "DEL": 1, "EXISTS": 1, "TYPE": 1, "KEYS": 0.5, "SCAN": 0.5,
    "DBSIZE": 0.5, "FLUSHALL": 0.1, "SET": 1, "GET": 1,
    "EXPIRE": 4, "PEXPIRE": 3, "EXPIREAT": 3, "PEXPIREAT": 3, "TTL": 4, "PTTL": 4,
    "EXPIRETIME": 2, "PEXPIRETIME": 2, "PERSIST": 3, "SET EX": 4, "DUMP": 3, "RESTORE": 4,
    "UNLINK": 1, "RENAME": 2, "RENAMENX": 1, "COPY": 2,
}  # fmt: skip

FAMILIES: Dict[str, Dict[str, float]] = {
    "streams": STREAM_FAMILY,
    "groups": GROUP_FAMILY,
    "nodes": NODES_FAMILY,
    "expiry": EXPIRY_FAMILY,
}


@dataclass
class GenConfig:
    family: str = "streams"
    weights: Optional[Dict[str, float]] = None  # overrides FAMILIES[family]
    malformed_rate: float = 0.22
    time_ids: bool = True  # allow '*' on fresh / time-based streams (normalised)
    # Reference ids generated from the clock in later commands. Only sound when
    # both sides generate identical time-based ids (xstreams with a pinned
    # clock); two redis-servers generate different ones, so it is off for them.
    reuse_time_ids: bool = False
    allow_block: bool = os.environ.get("XSTREAMS_DIFF_BLOCK", "1") != "0"  # BLOCK 1-2 ms
    # Do not generate inputs on which the oracle (redis-server 8.2.3) has bugs
    # that Redis 8.8 fixed (see compare.ORACLE_BUG_AVOIDANCES), or whose replies
    # changed format by 8.8 (DUMP payloads). None = decide from
    # the versions of the two sides (run_sequence does it).
    avoid_oracle_bugs: Optional[bool] = None
    big_values: bool = True  # occasional long values (node-max-bytes splits)
    trim_rate: Optional[float] = None  # XADD with MAXLEN/MINID (default per family)


from .gen_groups import GroupGenerators  # noqa: E402 - uses the names above
from .gen_keyspace import KeyspaceGenerators, races_the_clock  # noqa: E402 - uses the names above


class Generator(KeyspaceGenerators, GroupGenerators):
    def __init__(self, seed: int, config: Optional[GenConfig] = None) -> None:
        self.rng = random.Random(seed)
        self.payloads: List[bytes] = []
        self.cfg = config or GenConfig()
        weights = self.cfg.weights or FAMILIES[self.cfg.family]
        self.names = list(weights)
        self.cum: List[float] = []
        tot = 0.0
        for n in self.names:
            tot += weights[n]
            self.cum.append(tot)
        self.model = Model(ALL_KEYS)
        self.acked_tainted: Set[bytes] = set()
        rate = self.cfg.trim_rate
        self.trim_rate = rate if rate is not None else (0.03 if self.cfg.family == "nodes" else 0.3)

    # -- helpers -----------------------------------------------------------
    def pick_name(self) -> str:
        x = self.rng.random() * self.cum[-1]
        for n, c in zip(self.names, self.cum):
            if x < c:
                return n
        return self.names[-1]

    def kw(self, tok: bytes) -> bytes:
        return rcase(self.rng, tok)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def key(self, write: bool = False) -> bytes:
        r = self.rng.random()
        if r < 0.88:
            return self.rng.choice(STREAM_KEYS)
        if r < 0.94:
            return STRING_KEY
        return MISSING_KEY if not write or self.chance(0.5) else self.rng.choice(STREAM_KEYS)

    def gkey(self, write: bool = False) -> bytes:
        """A key for a group command: mostly a stream that has groups."""
        with_groups = [k for k in STREAM_KEYS if self.km(k).groups]
        if with_groups and self.chance(0.75):
            return self.rng.choice(with_groups)
        return self.key(write)

    def km(self, key: bytes) -> KeyModel:
        return self.model.keys.get(key) or KeyModel()

    def usable(self, i: StreamID) -> bool:
        """False for clock-generated ids the other side may not share (see GenConfig)."""
        return self.cfg.reuse_time_ids or not (TIME_MS_LO <= i[0] < TIME_MS_HI)

    def usable_ids(self, ids) -> List[StreamID]:
        return sorted(i for i in ids if self.usable(i))

    def rand_id(self, key: Optional[bytes] = None, existing: float = 0.5) -> StreamID:
        m = self.km(key) if key else None
        r = self.rng.random()
        entries = self.usable_ids(m.entries) if m else []
        if entries and r < existing:
            return self.rng.choice(entries)
        if m and m.groups and r < existing + 0.1:
            g = self.rng.choice(list(m.groups.values()))
            pend = self.usable_ids(g.pending)
            if pend:
                return self.rng.choice(pend)
        r = self.rng.random()
        if r < 0.03:
            return self.rng.choice([(U64, U64), (U64, 0), (U64 - 1, 5), (1 << 63, 0)])
        seq = self.rng.choice([0, 0, 0, 1, 2, 3, 5]) if r > 0.03 else U64
        return self.rng.randint(0, 50), seq

    def id_text(self, i: StreamID, allow_short: bool = True) -> bytes:
        if self.chance(0.03):
            return self.weird_id_text(i)
        if allow_short and i[1] == 0 and self.chance(0.2):
            return b"%d" % i[0]
        return fmt_id(i)

    def weird_id_text(self, i: StreamID) -> bytes:
        """Spellings redis accepts for an id: its parts go through string2ull, which
        falls back to strtoull (leading blanks, '+', leading zeros, '-0')."""
        ms, seq = b"%d" % i[0], b"%d" % i[1]
        pre = self.rng.choice([b"0", b"+", b" ", b"\t", b"00"])
        if self.chance(0.5):
            ms = pre + ms
        else:
            seq = b"-0" if i[1] == 0 and self.chance(0.5) else pre + seq
        return ms + b"-" + seq

    def bad_id(self) -> bytes:
        return self.rng.choice(BAD_IDS)

    def bad_int(self) -> bytes:
        return self.rng.choice(BAD_INTS)

    def count(self, lo: int = -2, hi: int = 12) -> bytes:
        if self.chance(0.05):
            return self.rng.choice([b"9223372036854775807", b"-9223372036854775808", b"0"])
        return b"%d" % self.rng.randint(lo, hi)

    def group(self, key: Optional[bytes] = None) -> bytes:
        m = self.km(key) if key else None
        if m and m.groups and self.chance(0.75):
            return self.rng.choice(list(m.groups))
        if self.chance(0.05):
            return self.rng.choice(RARE_GROUPS)
        return self.rng.choice(GROUPS)

    def consumer(self, key: Optional[bytes] = None, group: Optional[bytes] = None) -> bytes:
        m = self.km(key) if key else None
        if m and group in m.groups and m.groups[group].consumers and self.chance(0.6):
            return self.rng.choice(list(m.groups[group].consumers))
        if self.chance(0.04):
            return self.rng.choice(RARE_CONSUMERS)
        return self.rng.choice(CONSUMERS)

    def fields(self) -> List[bytes]:
        fs = self.rng.choice(FIELD_SETS)
        out: List[bytes] = []
        for f in fs:
            out.append(f)
            v = self.rng.choice(VALUES)
            if self.cfg.big_values and self.chance(0.03):
                v = b"y" * self.rng.choice([200, 700, 5000])
            out.append(v)
        return out

    def next_append_id(self, key: bytes) -> StreamID:
        m = self.km(key)
        last = m.last_id
        if last[0] >= (1 << 63):
            if self.chance(0.2) or last == (U64, U64):
                return last
            return (last[0], last[1] + 1) if last[1] < U64 else (last[0] + 1, 0)
        if not self.usable(last):
            return self.rand_id(key, existing=0.0)
        r = self.rng.random()
        if r < 0.5:
            return last[0], last[1] + self.rng.randint(1, 3)
        if r < 0.9:
            return last[0] + self.rng.randint(1, 4), self.rng.randint(0, 3)
        return self.rand_id(key, existing=0.3)

    def time_based(self, key: bytes) -> bool:
        """True if '*' on this key would use the clock (not last-id+1)."""
        m = self.km(key)
        return not (m.kind == "stream" and m.last_id[0] >= (1 << 62) and m.last_id != (U64, U64))

    # -- main entry --------------------------------------------------------
    def next(self) -> Cmd:
        for _ in range(100):
            name = self.pick_name()
            cmd = getattr(self, "g_" + name.replace(" ", "_").lower())()
            if cmd is None:
                continue
            cmd.gen_name = name
            if self.chance(self.cfg.malformed_rate):
                self.mutate(cmd)
            cmd.name = canonical_name(cmd.args)
            cmd.write = cmd.write or cmd.name in WRITE_COMMANDS
            if self.cfg.avoid_oracle_bugs and self.hits_oracle_bug(cmd):
                continue
            if races_the_clock(cmd):
                continue
            return cmd
        return Cmd([b"PING"], "PING")

    def hits_oracle_bug(self, cmd: Cmd) -> bool:
        """Inputs on which redis-server 8.2.3 differs from Redis 8.8 (fixed bugs, DUMP format)."""
        words = {a.upper() for a in cmd.args if isinstance(a, bytes)}
        refs = words & {b"ACKED", b"DELREF"}
        # 1. Approximate trimming (~) with DELREF/ACKED deletes nothing in 8.2.3
        #    (redis#14623, fixed in 8.4/8.6).
        if cmd.name in ("XADD", "XTRIM") and b"~" in words and refs:
            return True
        # 2. XGROUP DESTROY left a stale min-last-delivered-id cache in 8.2.3, so
        #    ACKED decisions were wrong afterwards (redis#14552): no ACKED on a key
        #    whose group was destroyed, until the key is deleted.
        if b"ACKED" in words and any(k in self.acked_tainted for k in cmd.keys):
            return True
        # 3. Not a bug but a format change: DUMP payloads carry the RDB version in
        #    their footer (8.2.3 writes 12, 8.8 writes 14) and 8.6+ writes streams as a
        #    newer RDB type (IDMP and NACK state), so no DUMP reply of an older oracle
        #    is byte-comparable. RESTORE then only sees the generator's damaged payloads.
        if cmd.name == "DUMP":
            return True
        # 4. SET ... EXAT/PXAT with a time already past: 8.2.3 stores the key (DBSIZE
        #    counts it until it is reclaimed), 8.8 does not store it at all.
        if cmd.name == "SET" and words & {b"EXAT", b"PXAT"}:
            return True
        return False

    def observe(self, cmd: Cmd, oracle_reply: object) -> None:
        """Called by the runner with the oracle's reply, before the model refresh."""
        if cmd.name == "XGROUP DESTROY" and getattr(oracle_reply, "value", None) == 1:
            self.acked_tainted.update(cmd.keys)
        self.observe_payload(cmd, oracle_reply)

    def forget_missing_keys(self) -> None:
        for k, m in self.model.keys.items():
            if m.kind is None:
                self.acked_tainted.discard(k)

    def mutate(self, cmd: Cmd) -> None:
        """Apply one or two random mutations, keeping the command name."""
        args = cmd.args
        for _ in range(self.rng.choice([1, 1, 1, 2])):
            op = self.rng.random()
            n = len(args)
            if op < 0.2 and n > 1:
                del args[self.rng.randrange(1, n)]
            elif op < 0.3 and n > 1:
                del args[self.rng.randrange(1, n) :]
            elif op < 0.45 and n > 1:
                i = self.rng.randrange(1, n)
                args.insert(i, args[i])
            elif op < 0.6 and n > 2:
                i, j = self.rng.randrange(1, n), self.rng.randrange(1, n)
                args[i], args[j] = args[j], args[i]
            elif op < 0.75 and n > 1:
                args[self.rng.randrange(1, n)] = self.bad_id()
            elif op < 0.87 and n > 1:
                args[self.rng.randrange(1, n)] = self.bad_int()
            else:
                pool = OPTION_WORDS if self.chance(0.8) else [b"x", b"-", b"0", b"1"]
                args.insert(self.rng.randrange(1, n + 1), self.kw(self.rng.choice(pool)))
        cmd.malformed = True

    # -- trimming block shared by XADD / XTRIM ------------------------------
    def trim_opts(self, key: bytes, required: bool) -> List[List[bytes]]:
        groups: List[List[bytes]] = []
        if required or self.chance(self.trim_rate):
            t: List[bytes] = []
            approx = False
            if self.chance(0.5):
                t.append(self.kw(b"MAXLEN"))
                op = self.rng.choice([None, b"=", b"~"])
                if op:
                    t.append(op)
                approx = op == b"~"
                n = len(self.km(key).entries)
                if self.chance(0.7):
                    t.append(b"%d" % max(0, n - self.rng.choice([-1, 0, 1, 2, 4, n // 2])))
                else:
                    t.append(self.count(0, 20))
            else:
                t.append(self.kw(b"MINID"))
                op = self.rng.choice([None, b"=", b"~"])
                if op:
                    t.append(op)
                approx = op == b"~"
                t.append(self.id_text(self.rand_id(key, existing=0.6)))
            groups.append(t)
            if approx and self.chance(0.4):
                groups.append(
                    [self.kw(b"LIMIT"), self.rng.choice([b"0", b"1", b"2", b"5", b"100"])]
                )
        if self.chance(0.25):
            groups.append([self.kw(self.rng.choice([b"KEEPREF", b"DELREF", b"ACKED"]))])
        return groups

    # -- stream family --------------------------------------------------------
    def g_xadd(self) -> Cmd:
        key = self.key(write=True)
        opts = self.trim_opts(key, required=False)
        if self.chance(0.15):
            opts.append([self.kw(b"NOMKSTREAM")])
        self.rng.shuffle(opts)
        m = self.km(key)
        r = self.rng.random()
        # '*' is deterministic on far-future streams; on others it uses the
        # clock and turns the stream into a "time-based" one (rarely, so most
        # streams keep small explicit ids), and is the main way to grow a
        # time-based stream when its ids cannot be referenced explicitly.
        if not self.time_based(key):
            p_star = 0.3
        elif m.kind == "stream" and m.entries and not self.usable(m.last_id):
            p_star = 0.5
        else:
            p_star = 0.03 if self.cfg.time_ids else 0.0
        if self.chance(p_star):
            idb = b"*"
        elif r < 0.2:
            nid = self.next_append_id(key)
            ms = nid[0] if self.chance(0.7) or not self.usable(m.last_id) else m.last_id[0]
            idb = b"%d-*" % ms
        elif r < 0.24:
            idb = self.rng.choice([b"0", b"0-0", b"0-*", b"18446744073709551615-*"])
        else:
            idb = self.id_text(self.next_append_id(key))
        args = [self.kw(b"XADD"), key] + [a for g in opts for a in g] + [idb] + self.fields()
        if self.chance(0.1):
            args += self.fields()
        return Cmd(args, "XADD", [key], write=True)

    def g_xlen(self) -> Cmd:
        k = self.key()
        return Cmd([self.kw(b"XLEN"), k], "XLEN", [k])

    def range_bounds(self, key: bytes) -> Tuple[bytes, bytes]:
        def one(low: bool) -> bytes:
            r = self.rng.random()
            if r < 0.25:
                return b"-" if low else b"+"
            if r < 0.3:
                return b"+" if low else b"-"
            i = self.rand_id(key, existing=0.6)
            t = self.id_text(i)
            if self.chance(0.2):
                t = b"(" + t
            return t

        return one(True), one(False)

    def g_xrange(self, rev: bool = False) -> Cmd:
        k = self.key()
        lo, hi = self.range_bounds(k)
        if rev:
            lo, hi = hi, lo
        name = b"XREVRANGE" if rev else b"XRANGE"
        args = [self.kw(name), k, lo, hi]
        if self.chance(0.4):
            args += [self.kw(b"COUNT"), self.count(-2, 6)]
        return Cmd(args, name.decode(), [k])

    def g_xrevrange(self) -> Cmd:
        return self.g_xrange(rev=True)

    def g_xdel(self) -> Cmd:
        k = self.key(write=True)
        ids = [self.id_text(self.rand_id(k, 0.7)) for _ in range(self.rng.choice([1, 1, 2, 3]))]
        return Cmd([self.kw(b"XDEL"), k] + ids, "XDEL", [k], write=True)

    def ids_block(self, key: bytes, existing: float = 0.7) -> List[bytes]:
        n = self.rng.choice([1, 1, 2, 3])
        ids = [self.id_text(self.rand_id(key, existing)) for _ in range(n)]
        numids = n if self.chance(0.9) else self.rng.choice([n - 1, n + 1, 0])
        return [self.kw(b"IDS"), b"%d" % numids] + ids

    def g_xdelex(self) -> Cmd:
        k = self.key(write=True)
        parts = [self.ids_block(k)]
        if self.chance(0.6):
            parts.append([self.kw(self.rng.choice([b"KEEPREF", b"DELREF", b"ACKED"]))])
        self.rng.shuffle(parts)
        return Cmd([self.kw(b"XDELEX"), k] + [a for p in parts for a in p], "XDELEX", [k],
                   write=True)  # fmt: skip

    def g_xtrim(self) -> Cmd:
        k = self.key(write=True)
        opts = self.trim_opts(k, required=True)
        self.rng.shuffle(opts)
        return Cmd([self.kw(b"XTRIM"), k] + [a for g in opts for a in g], "XTRIM", [k], write=True)

    def g_xsetid(self) -> Cmd:
        k = self.key(write=True)
        m = self.km(k)
        r = self.rng.random()
        if r < 0.5 and m.kind == "stream" and self.usable(m.last_id):
            last = m.last_id
            i = (last[0] + self.rng.randint(0, 3), self.rng.randint(0, 3))
        elif r < 0.56:
            i = self.rng.choice([(U64, U64 - 1), (U64 - 1, 0), (1 << 63, 0), (U64, U64)])
        else:
            i = self.rand_id(k, 0.4)
        args = [self.kw(b"XSETID"), k, self.id_text(i)]
        opts = []
        if self.chance(0.35):
            n = len(m.entries)
            opts.append([self.kw(b"ENTRIESADDED"), b"%d" % max(0, n + self.rng.randint(-2, 5))])
        if self.chance(0.35):
            opts.append([self.kw(b"MAXDELETEDID"), self.id_text(self.rand_id(k, 0.3))])
        self.rng.shuffle(opts)
        return Cmd(args + [a for o in opts for a in o], "XSETID", [k], write=True)

    def read_ids(self, keys: List[bytes], group: bool) -> List[bytes]:
        out = []
        for k in keys:
            r = self.rng.random()
            if group:
                if r < 0.65:
                    out.append(b">")
                elif r < 0.9:
                    out.append(self.id_text(self.rand_id(k, 0.3)) if self.chance(0.5) else b"0")
                else:
                    out.append(self.rng.choice([b"$", b"+", b"-", b"(1-0"]))
            else:
                if r < 0.55:
                    out.append(self.id_text(self.rand_id(k, 0.5)))
                elif r < 0.7:
                    out.append(b"0")
                elif r < 0.82:
                    out.append(b"$")
                elif r < 0.95:
                    out.append(b"+")
                else:
                    out.append(self.rng.choice([b">", b"-", b"(1-0"]))
        return out

    def g_xread(self) -> Cmd:
        n = self.rng.choice([1, 1, 1, 2, 3])
        keys = [self.key() for _ in range(n)]
        opts = []
        if self.chance(0.5):
            opts.append([self.kw(b"COUNT"), self.count(-1, 5)])
        if self.cfg.allow_block and self.chance(0.06):
            opts.append([self.kw(b"BLOCK"), self.rng.choice([b"1", b"2"])])
        self.rng.shuffle(opts)
        args = [self.kw(b"XREAD")] + [a for o in opts for a in o]
        args += [self.kw(b"STREAMS")] + keys + self.read_ids(keys, group=False)
        return Cmd(args, "XREAD", keys)

    def g_xinfo_stream(self, full: Optional[bool] = None) -> Cmd:
        k = self.key()
        args = [self.kw(b"XINFO"), self.kw(b"STREAM"), k]
        if full is None:
            full = self.chance(0.3)
        if full:
            args.append(self.kw(b"FULL"))
            if self.chance(0.5):
                args += [self.kw(b"COUNT"), self.count(-1, 4)]
        return Cmd(args, "XINFO STREAM", [k])

    def g_del(self) -> Cmd:
        ks = self.rng.sample(ALL_KEYS, self.rng.choice([1, 1, 2]))
        return Cmd([self.kw(b"DEL")] + ks, "DEL", ks, write=True)

    def g_exists(self) -> Cmd:
        ks = [self.rng.choice(ALL_KEYS) for _ in range(self.rng.choice([1, 2, 3]))]
        return Cmd([self.kw(b"EXISTS")] + ks, "EXISTS", ks)

    def g_type(self) -> Cmd:
        k = self.rng.choice(ALL_KEYS)
        return Cmd([self.kw(b"TYPE"), k], "TYPE", [k])

    def g_keys(self) -> Cmd:
        pat = self.rng.choice([b"*", b"s*", b"s[12]", b"?tr", b"no*", b"*3", b"\\*"])
        return Cmd([self.kw(b"KEYS"), pat], "KEYS")

    def g_scan(self) -> Cmd:
        if self.chance(0.2):
            bad = self.rng.choice([
                [b"abc"], [b"0", b"COUNT", b"0"], [b"0", b"COUNT", b"-1"], [b"0", b"MATCH"],
                [b"0", b"COUNT", b"x"], [b"-1"], [b"18446744073709551616"], [b"0", b"FOO", b"1"],
                [b"-0"], [b"00"], [b" 0", b"COUNT", b"1"], [b"+0"], [b"0", b"TYPE"],
            ])  # fmt: skip
            return Cmd([self.kw(b"SCAN")] + bad, "SCAN", macro="scan_all")
        args = [self.kw(b"SCAN"), b"0"]
        if self.chance(0.3):
            args += [self.kw(b"MATCH"), self.rng.choice([b"s*", b"*", b"str", b"x*"])]
        if self.chance(0.3):
            args += [self.kw(b"COUNT"), self.rng.choice([b"1", b"2", b"10"])]
        if self.chance(0.3):
            args += [self.kw(b"TYPE"), self.rng.choice([b"stream", b"string", b"STREAM", b"list"])]
        return Cmd(args, "SCAN", macro="scan_all")

    def g_dbsize(self) -> Cmd:
        return Cmd([self.kw(b"DBSIZE")], "DBSIZE")

    def g_flushall(self) -> Cmd:
        args = [self.kw(b"FLUSHALL")]
        if self.chance(0.3):
            args.append(self.kw(self.rng.choice([b"SYNC", b"ASYNC"])))
        return Cmd(args, "FLUSHALL", list(ALL_KEYS), write=True)

    def g_ping(self) -> Cmd:
        args = [self.kw(b"PING")]
        if self.chance(0.4):
            args.append(self.rng.choice([b"hello", b"", b"x y"]))
        return Cmd(args, "PING")

    def g_set(self) -> Cmd:
        k = STRING_KEY if self.chance(0.85) else self.rng.choice(ALL_KEYS)
        return Cmd([self.kw(b"SET"), k, self.rng.choice(VALUES)], "SET", [k], write=True)

    def g_get(self) -> Cmd:
        k = self.rng.choice(ALL_KEYS)
        return Cmd([self.kw(b"GET"), k], "GET", [k])

    def g_unknown(self) -> Cmd:
        name = self.rng.choice([b"XFOO", b"XADDD", b"STREAMS", b"XINFOS"])
        return Cmd([name] + [self.rng.choice([b"a", b"s1", b"1-0"]) for _ in range(2)], "UNKNOWN")


SUBCOMMANDS = {
    b"XINFO": {b"STREAM", b"GROUPS", b"CONSUMERS", b"HELP"},
    b"XGROUP": {b"CREATE", b"SETID", b"DESTROY", b"CREATECONSUMER", b"DELCONSUMER", b"HELP"},
}
KNOWN_COMMANDS = {b"XADD", b"XLEN", b"XRANGE", b"XREVRANGE", b"XDEL", b"XDELEX", b"XTRIM",
                  b"XSETID", b"XREAD", b"XREADGROUP", b"XACK", b"XACKDEL", b"XPENDING",
                  b"XCLAIM", b"XAUTOCLAIM", b"XINFO", b"XGROUP", b"DEL", b"EXISTS", b"TYPE",
                  b"KEYS", b"SCAN", b"DBSIZE", b"FLUSHALL", b"PING", b"SET", b"GET",
                  b"EXPIRE", b"PEXPIRE", b"EXPIREAT", b"PEXPIREAT", b"TTL", b"PTTL",
                  b"EXPIRETIME", b"PEXPIRETIME", b"PERSIST", b"DUMP", b"RESTORE", b"UNLINK",
                  b"RENAME", b"RENAMENX", b"COPY"}  # fmt: skip


WRITE_COMMANDS = {"XADD", "XDEL", "XDELEX", "XTRIM", "XSETID", "XREADGROUP", "XACK", "XACKDEL",
                  "XCLAIM", "XAUTOCLAIM", "XGROUP", "XGROUP CREATE", "XGROUP SETID",
                  "XGROUP DESTROY", "XGROUP CREATECONSUMER", "XGROUP DELCONSUMER", "DEL",
                  "FLUSHALL", "SET", "EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT", "PERSIST",
                  "RESTORE", "UNLINK", "RENAME", "RENAMENX", "COPY"}  # fmt: skip


def canonical_name(args: Sequence[Arg]) -> str:
    """What the server will dispatch on: ``XINFO STREAM``, ``XADD``, ``UNKNOWN``..."""
    head = args[0].upper() if args and isinstance(args[0], bytes) else b""
    if head not in KNOWN_COMMANDS:
        return "UNKNOWN"
    subs = SUBCOMMANDS.get(head)
    if subs and len(args) > 1 and isinstance(args[1], bytes) and args[1].upper() in subs:
        return (head + b" " + args[1].upper()).decode()
    return head.decode()
