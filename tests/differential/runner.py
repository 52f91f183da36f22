"""Drive one seeded sequence against an oracle and a target, compare, report, shrink.

Clock policy (documented choice): at the start of a sequence the runner reads
the oracle's clock with ``TIME`` and notes the local monotonic clock; before
every command it estimates the oracle's "now" as ``TIME + elapsed`` and pins the
xstreams clock to it (``set_clock_ms``), just before sending the command to the
oracle. For ``XADD ... *`` whose oracle reply is a time-based id, the target's
clock is pinned to exactly the ms of that id, so both sides generate the same
id. Every other time-dependent reply field is compared within
``compare.TIME_TOLERANCE_MS`` (default 500 ms). A redis-server target cannot be
pinned; time-based ids that differ are mapped (``compare.IdMap``).

One reply compares two instants at millisecond precision: a relative ``EXPIRE`` or
``PEXPIRE`` with ``GT`` succeeds when ``now + duration`` is later than the key's deadline,
and when that deadline was set by a relative command of the same duration the answer
is whether the clock's millisecond moved in between. The oracle's clock and the
target's pinned estimate of it can see that differently (their millisecond boundaries
fall at different instants), so the runner waits ``MS_SENSITIVE_WAIT_S`` before such a
command: on both sides the millisecond has moved.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from . import compare, deliberate, resp
from .generator import ALL_KEYS, Cmd, GenConfig, Generator
from .resp import ARRAY, BULK, Reply
from .servers import Target

#: The wait before a command whose reply depends on whether the clock's millisecond moved
#: since the previous command (see the module doc): two milliseconds and some margin.
MS_SENSITIVE_WAIT_S = 0.003


def ms_sensitive(cmd: Cmd, args: List[bytes]) -> bool:
    """A relative ``EXPIRE``/``PEXPIRE`` with ``GT`` (see the module doc)."""
    return cmd.name in ("EXPIRE", "PEXPIRE") and any(a.upper() == b"GT" for a in args[3:])


#: Optional hook used by the self-tests: (cmd, index, target reply) -> reply.
Mutator = Callable[[Cmd, int, Reply], Reply]

STATS: Counter = Counter()  # aggregated over the pytest session (see conftest)

# Shrinking replays sequences; cap the total time spent on it in one process so
# that a target failing everywhere does not turn a CI run into hours.
_SHRINK_BUDGET = [float(os.environ.get("XSTREAMS_DIFF_SHRINK_BUDGET_S", "120"))]


class Mismatch(AssertionError):
    """A command answered differently; ``str()`` is the full reproduction report."""

    def __init__(self, report: str, index: int, cmd: Cmd) -> None:
        super().__init__(report)
        self.report = report
        self.index = index
        self.cmd = cmd


@dataclass
class Outcome:
    difference: Optional[str]
    oracle: Reply
    target: Reply
    oracle_norm: Reply
    target_norm: Reply
    args: List[bytes]


@dataclass
class Session:
    oracle: Target
    target: Target
    config: Dict[str, int] = field(default_factory=dict)
    protocol: int = 2
    mutator: Optional[Mutator] = None
    base_ms: int = 0
    t0: float = 0.0
    idmap: compare.IdMap = field(default_factory=compare.IdMap)
    index: int = 0
    #: The deliberate differences repaired so far, in order (see deliberate.py).
    repaired: List[str] = field(default_factory=list)

    def start(self) -> None:
        self.oracle.reset(self.config, self.protocol)
        self.target.reset(self.config, self.protocol)
        self.base_ms = self.oracle.now_ms()
        self.t0 = time.monotonic()
        self.idmap = compare.IdMap()
        self.index = 0
        self.repaired = []

    def now_est(self) -> int:
        return self.base_ms + int((time.monotonic() - self.t0) * 1000)

    def _scan_all(self, t: Target, args: List[bytes]) -> Reply:
        """SCAN to the end; the reply is the sorted union of keys (or the first error).

        A scan that starts from a non-zero cursor returns a hash-table-order
        dependent subset, so only "it succeeded" is compared for it."""
        keys = set()
        cur_args = list(args)
        start = redis_string2ull(args[1]) if len(args) > 1 else None
        for _ in range(10000):
            r = t.call(cur_args)
            if r.kind != ARRAY or len(r.value) != 2:
                return r
            if start != 0:
                return Reply(resp.STATUS, b"<SCAN from a non-zero cursor succeeded>")
            cursor, batch = r.value
            keys.update(k.value for k in batch.value)
            if cursor.value == b"0":
                return Reply(ARRAY, [Reply(BULK, k) for k in sorted(keys)])
            cur_args = [cur_args[0], cursor.value] + cur_args[2:]
        raise AssertionError("SCAN did not terminate")

    def execute(self, cmd: Cmd) -> Outcome:
        args = cmd.resolved(self.base_ms)
        if ms_sensitive(cmd, args):
            time.sleep(MS_SENSITIVE_WAIT_S)
        now = self.now_est()
        if self.target.pinnable_clock:
            self.target.set_clock_ms(now)
        if cmd.macro == "scan_all":
            a = self._scan_all(self.oracle, args)
            b = self._scan_all(self.target, args)
        else:
            a = self.oracle.call(args)
            star = cmd.name == "XADD" and b"*" in args[2:]
            if star and self.target.pinnable_clock and compare.is_time_based_id(a, now):
                self.target.set_clock_ms(int(a.value.split(b"-")[0]))
            b = self.target.call(args)
            if (
                star
                and a != b
                and compare.is_time_based_id(a, now)
                and (compare.is_time_based_id(b, now))
            ):
                self.idmap.add(args[1], b.value, a.value)
        if self.mutator is not None:
            b = self.mutator(cmd, self.index, b)
        self.index += 1
        b_mapped = b
        if cmd.name in ("XREAD", "XREADGROUP"):
            b_mapped = self.idmap.apply_per_stream(b)
        else:
            key = key_of(cmd.name, args)
            if key is not None:
                b_mapped = self.idmap.apply(key, b)
        a_cmp = a
        key = key_of(cmd.name, args)
        if cmd.name == "XINFO STREAM" and key is not None and self.idmap.maps.get(key):
            # Different ids => different radix-tree key bytes => a different number
            # of rax nodes. Only happens when the target's clock cannot be pinned.
            a_cmp = compare.mask_field(a, b"radix-tree-nodes")
            b_mapped = compare.mask_field(b_mapped, b"radix-tree-nodes")
        cmp_name = cmd.name
        if cmd.name == "DUMP" and a.kind == BULK == b_mapped.kind and a.value != b_mapped.value:
            # Payloads of equal values may differ in bytes: each side's LZF compressor,
            # and xstreams' tombstones (docs/rdb.md). Compare what the oracle holds after
            # restoring each of them.
            a_cmp, cmp_name = self._restored(a.value)
            b_mapped, _ = self._restored(b_mapped.value)
        if cmd.name == "DUMP" and key is not None and self.idmap.maps.get(key):
            # The payload holds the entry ids, which differ by clock (as above).
            a_cmp = Reply(resp.STATUS, b"<masked: DUMP of ids that differ by clock>")
            b_mapped = a_cmp
        diff, an, bn = compare.compare(
            cmp_name, args, a_cmp, b_mapped, self.oracle.version, self.target.version
        )
        return Outcome(diff, a, b, an, bn, args)

    def _restored(self, payload: bytes) -> Tuple[Reply, str]:
        """What the oracle holds once ``payload`` is restored under a scratch key (XINFO
        STREAM FULL of a stream, its DUMP otherwise), with the comparator's name for it;
        the oracle's error for a payload it refuses."""
        scratch = b"__xstreams_diff_dump"
        r = self.oracle.call([b"RESTORE", scratch, b"0", payload, b"REPLACE"])
        if r.is_error:
            return r, "DUMP"
        if self.oracle.call([b"TYPE", scratch]).value == b"stream":
            out = self.oracle.call([b"XINFO", b"STREAM", scratch, b"FULL"])
            name = "XINFO STREAM"
        else:
            out, name = self.oracle.call([b"DUMP", scratch]), "DUMP"
        self.oracle.call([b"DEL", scratch])
        return out, name

    def after(self, cmd: Cmd, out: Outcome, gen: Optional[Generator]) -> None:
        """Refresh the generator's model (oracle only) and the id map after a write."""
        # A deliberate difference (docs/differences.md) this command hit: the oracle is
        # brought to the fixed state, only after its named check (deliberate.py).
        for name in deliberate.reconcile(self, cmd.name, out.args, out.oracle, out.target):
            self.repaired.append(name)
            STATS[f"deliberate:{name}"] += 1
        if gen is not None:
            gen.observe(cmd, out.oracle)
        if not cmd.write or out.oracle.is_error:
            return
        # Keys the command may have touched: its keys, plus any argument naming a
        # key (a mutated command may have its key elsewhere), or all of them.
        if cmd.name == "FLUSHALL":
            keys = list(ALL_KEYS) + list(self.idmap.maps)
        else:
            keys = list(cmd.keys) + [
                a for a in out.args[1:] if a in ALL_KEYS or a in self.idmap.maps
            ]
        for k in dict.fromkeys(keys):
            if gen is not None and k in gen.model.keys:
                gen.model.update_from_oracle(k, self.oracle.call)
                is_stream = gen.model.keys[k].kind == "stream"
            else:
                t = self.oracle.call([b"TYPE", k])
                is_stream = t.value == b"stream"
            if not is_stream:
                self.idmap.clear(k)
        if gen is not None:
            gen.forget_missing_keys()


def key_of(name: str, args: List[bytes]) -> Optional[bytes]:
    """The stream key a (possibly mutated) single-key command names, by position."""
    if name in ("DEL", "UNLINK", "EXISTS", "FLUSHALL", "KEYS", "SCAN", "DBSIZE", "PING", "UNKNOWN"):
        return None
    pos = 2 if name.startswith(("XINFO", "XGROUP")) else 1
    return args[pos] if len(args) > pos else None


def redis_string2ull(b: bytes) -> Optional[int]:
    """Redis's string2ull(): strict string2ll, else C strtoull() (leading blanks,
    '+'/'-' sign, leading zeros; a negative value wraps). None if rejected."""
    s = b.decode("latin-1")
    if s and s.lstrip("-").isdigit() and (s == "0" or not s.lstrip("-").startswith("0")):
        v = int(s)
        if s != "-0" and -(1 << 63) <= v < (1 << 63):
            return v if v >= 0 else None
    t = s.lstrip(" \t\n\v\f\r")
    neg = t[:1] == "-"
    if t[:1] in "+-" and t:
        t = t[1:]
    if not t.isdigit() or not t.isascii():
        return None
    v = int(t)
    if v > (1 << 64) - 1:
        return None
    return (-v) % (1 << 64) if neg else v


def run_sequence(
    oracle: Target,
    target: Target,
    seed: int,
    n_commands: int,
    gen_config: Optional[GenConfig] = None,
    config: Optional[Dict[str, int]] = None,
    protocol: int = 2,
    mutator: Optional[Mutator] = None,
    shrink: Optional[bool] = None,
    label: str = "",
) -> Counter:
    """Run one seeded sequence; raise :class:`Mismatch` with a report on the first difference."""
    gen_config = gen_config or GenConfig(reuse_time_ids=target.pinnable_clock)
    if gen_config.avoid_oracle_bugs is None:
        avoid = oracle.version < (8, 8, 0) <= target.version
        gen_config = dataclasses.replace(gen_config, avoid_oracle_bugs=avoid)
    sess = Session(oracle, target, dict(config or {}), protocol, mutator)
    sess.start()
    gen = Generator(seed, gen_config)
    history: List[Cmd] = []
    stats: Counter = Counter()
    for i in range(n_commands):
        cmd = gen.next()
        history.append(cmd)
        out = sess.execute(cmd)
        stats["commands"] += 1
        stats[f"family:{gen_config.family}"] += 1
        stats[f"cmd:{cmd.gen_name or cmd.name}"] += 1
        if cmd.malformed:
            stats["malformed"] += 1
        if out.oracle.is_error:
            stats["error_replies"] += 1
        if out.difference is not None:
            report = _report(sess, gen_config, seed, label, history, i, out, shrink)
            raise Mismatch(report, i, cmd)
        sess.after(cmd, out, gen)
    STATS.update(stats)
    return stats


def replay(sess: Session, cmds: List[Cmd]) -> Tuple[int, Optional[Outcome]]:
    """Replay commands from an empty keyspace; return (index, outcome) of the first mismatch."""
    sess.start()
    for i, cmd in enumerate(cmds):
        out = sess.execute(cmd)
        if out.difference is not None:
            return i, out
        sess.after(cmd, out, None)
    return -1, None


def shrink_history(sess: Session, cmds: List[Cmd], budget_s: float = 20.0) -> List[Cmd]:
    """ddmin-style: drop chunks of the prefix while the last command still mismatches."""
    deadline = time.monotonic() + budget_s

    def fails(c: List[Cmd]) -> bool:
        idx, _ = replay(sess, c)
        return idx == len(c) - 1

    last = cmds[-1]
    prefix = cmds[:-1]
    if not fails(prefix + [last]):
        raise RuntimeError("not reproducible by a replay from an empty keyspace (timing?)")
    n = 2
    while prefix and time.monotonic() < deadline:
        size = max(1, (len(prefix) + n - 1) // n)
        removed = False
        for start in range(0, len(prefix), size):
            if time.monotonic() >= deadline:
                break
            cand = prefix[:start] + prefix[start + size :]
            if fails(cand + [last]):
                prefix = cand
                n = max(n - 1, 2)
                removed = True
                break
        if not removed:
            if size == 1:
                break
            n = min(n * 2, len(prefix))
    return prefix + [last]


def _fmt_reply(r: Reply) -> str:
    return resp.fmt(r, indent=2)


def _report(
    sess: Session,
    gen_config: GenConfig,
    seed: int,
    label: str,
    history: List[Cmd],
    index: int,
    out: Outcome,
    shrink: Optional[bool],
) -> str:
    if shrink is None:
        shrink = os.environ.get("XSTREAMS_DIFF_SHRINK", "1") != "0"
    cmd = history[index]
    lines = [
        "",
        "=" * 78,
        f"DIFFERENTIAL MISMATCH {label}".rstrip(),
        f"  family={gen_config.family} seed={seed} protocol=RESP{sess.protocol} "
        f"config={sess.config or 'default'}",
        f"  oracle={sess.oracle.name} target={sess.target.name}",
        f"  command #{index}: {cmd.render(sess.base_ms)}",
        f"  difference: {out.difference}",
        f"  oracle reply: {_fmt_reply(out.oracle)}",
        f"  target reply: {_fmt_reply(out.target)}",
        f"  oracle raw: {resp.encode(out.oracle)[:2000]!r}",
        f"  target raw: {resp.encode(out.target)[:2000]!r}",
    ]
    repro = history[: index + 1]
    if shrink and len(repro) > 1 and _SHRINK_BUDGET[0] > 0:
        try:
            t = time.monotonic()
            try:
                shrunk = shrink_history(sess, repro, min(20.0, _SHRINK_BUDGET[0]))
            finally:
                _SHRINK_BUDGET[0] -= time.monotonic() - t
            lines.append(f"  reproduction ({len(shrunk)} of {len(repro)} commands, shrunk):")
            repro = shrunk
        except Exception as e:  # noqa: BLE001 - shrinking is best effort
            lines.append(f"  (shrinking failed: {type(e).__name__}: {e})")
            lines.append(f"  reproduction ({len(repro)} commands):")
    else:
        lines.append(f"  reproduction ({len(repro)} commands, not shrunk):")
    if len(repro) > 400:
        lines.append(f"    ... {len(repro) - 400} earlier commands omitted ...")
        repro = repro[-400:]
    lines += [f"    {c.render(sess.base_ms)}" for c in repro]
    node = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
    if node:
        lines.append(f"  rerun: pytest '{node}'")
    lines.append(
        f"  replay: run_sequence(oracle, target, seed={seed}, n_commands={index + 1}, "
        f"GenConfig(family={gen_config.family!r}), config={sess.config}, "
        f"protocol={sess.protocol})"
    )
    lines.append("=" * 78)
    return "\n".join(lines)
