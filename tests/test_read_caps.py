"""XREAD / XREADGROUP ``MAXCOUNT`` and ``MAXSIZE`` (Redis 8.10) against fakeredis.

No redis-server here has these options (the oracle is 8.8; 8.10 added them), so the
reference is fakeredis >= 2.41, which implements the rule of Redis's pull request #15282
(docs/differences.md says why it is ours): MAXCOUNT caps the entries over all streams,
served in the caller's order; MAXSIZE is checked against the reply bytes written so far,
before each stream and each entry, so the entry that crosses the cap is served, the first
entry of a reply always is, and a stream begun when the cap is then reached stays in the
reply with no entries.

Random histories (one to three streams of up to six entries of 1 to 100 bytes, with and
without a group) and random COUNT / MAXCOUNT / MAXSIZE, through both redis-py-shaped
clients (``xstreams.Redis`` and ``fakeredis.FakeRedis``), RESP2 and RESP3. The seeds are
fixed: a failure names its seed, and ``SEEDS`` replays it.
"""

from __future__ import annotations

import random
from typing import Any, List

import pytest
import xstreams

fakeredis = pytest.importorskip(
    "fakeredis", minversion="2.41", reason="MAXCOUNT/MAXSIZE came in fakeredis 2.41"
)

SEEDS = range(400)


def _history(seed: int) -> List[List[str]]:
    r = random.Random(seed)
    cmds: List[List[str]] = []
    keys = [f"s{i}" for i in range(r.randint(1, 3))]
    for k in keys:
        for j in range(r.randint(0, 6)):
            cmds.append(["XADD", k, f"{j + 1}-0", "f", "v" * r.choice([1, 5, 20, 100])])
    group = r.random() < 0.5
    if group:
        for k in keys:
            cmds.append(["XGROUP", "CREATE", k, "g", "0", "MKSTREAM"])
    opts: List[str] = []
    if r.random() < 0.5:
        opts += ["COUNT", str(r.randint(1, 4))]
    if r.random() < 0.7:
        opts += ["MAXCOUNT", str(r.randint(1, 8))]
    if r.random() < 0.7:
        opts += ["MAXSIZE", str(r.choice([1, 10, 30, 60, 100, 200, 500]))]
    if group:
        for _ in range(2):  # new entries twice, then the consumer's history
            cmds.append(
                ["XREADGROUP", "GROUP", "g", "c", *opts, "STREAMS", *keys] + [">"] * len(keys)
            )
        cmds.append(["XREADGROUP", "GROUP", "g", "c", *opts, "STREAMS", *keys] + ["0"] * len(keys))
    else:
        cmds.append(["XREAD", *opts, "STREAMS", *keys] + ["0"] * len(keys))
    return cmds


def _run(client: Any, cmds: List[List[str]]) -> List[Any]:
    out = []
    for c in cmds:
        try:
            out.append(client.execute_command(*c))
        except Exception as e:  # noqa: BLE001 - the error is part of the answer
            out.append(("error", type(e).__name__, str(e)))
    return out


@pytest.mark.parametrize("protocol", [2, 3])
def test_maxcount_maxsize_agree_with_fakeredis(protocol: int) -> None:
    disagree = []
    for seed in SEEDS:
        cmds = _history(seed)
        ours = _run(xstreams.Redis(store=xstreams.Store(), protocol=protocol), cmds)
        server = fakeredis.FakeServer(version=(8, 10))  # its own keyspace per history
        ref = _run(fakeredis.FakeRedis(server=server, protocol=protocol), cmds)
        if ours != ref:
            disagree.append(seed)
    assert not disagree, f"seeds where xstreams and fakeredis disagree: {disagree}"


def test_the_histories_reach_every_case() -> None:
    """The seeds exercise what the rule decides: XREADs that MAXSIZE cuts short (fewer
    entries than the same read without it), and a stream in the reply with no entries
    (XREAD leaves out a stream with nothing to serve, so only the cap leaves one empty)."""
    cut = empty = 0
    for seed in SEEDS:
        cmds = _history(seed)
        read = cmds[-1]
        if read[0] != "XREAD" or "MAXSIZE" not in read:
            continue
        i = read.index("MAXSIZE")
        uncapped = read[:i] + read[i + 2 :]
        client = xstreams.Redis(store=xstreams.Store())
        got = _run(client, cmds)[-1]
        if not isinstance(got, list):  # nothing to read, or refused (MAXCOUNT < COUNT)
            continue
        full = client.execute_command(*uncapped)
        cut += sum(len(e) for _, e in got) < sum(len(e) for _, e in full)
        empty += any(not e for _, e in got)
    assert cut > 10 and empty > 0, (cut, empty)
