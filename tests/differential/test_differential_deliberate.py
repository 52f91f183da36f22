"""The named normalisations of the deliberate differences (deliberate.py,
docs/differences.md): each entry's case, run against redis-server 8.8, passes only with
that entry's repair, the repair happens exactly once, and the entries are the headings of
docs/differences.md."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict, List

import pytest

from . import deliberate
from .generator import Cmd
from .runner import Session, replay

DOC = Path(__file__).resolve().parents[2] / "docs" / "differences.md"

SELFTEST = os.environ.get("XSTREAMS_DIFF_SELFTEST", "") not in ("", "0")

READS = {"XINFO", "XPENDING", "XRANGE", "DUMP", "XLEN"}


def cmds(*lines: str) -> List[Cmd]:
    out = []
    for line in lines:
        args = [a.encode() for a in line.split()]
        name = line.split()[0]
        if name in ("XINFO", "XGROUP"):
            name = f"{name} {line.split()[1]}"
        key = args[2] if name.startswith(("XINFO", "XGROUP")) else args[1]
        out.append(Cmd(args, name, [key], write=line.split()[0] not in READS))
    return out


CASES: Dict[str, List[Cmd]] = {
    "trim-empty-node": cmds(
        *[f"XADD s {ms}-0 f v" for ms in (1, 2, 3, 4, 5, 11, 12, 13, 14, 15)],
        "XDEL s 11-0 12-0 13-0 14-0 15-0",
        "XTRIM s MINID 11-0",
        "XINFO STREAM s",
        "DUMP s",
        "XADD s 16-0 f v",
        "XINFO STREAM s FULL",
    ),
    "delref-tombstones": cmds(
        "XADD s 1-0 f v",
        "XADD s 2-0 f v",
        "XADD s 3-0 f v",
        "XGROUP CREATE s g 0",
        "XREADGROUP GROUP g c STREAMS s >",
        "XDEL s 2-0",
        "XTRIM s MINID 3-0 DELREF",
        "XPENDING s g",
        "XPENDING s g - + 10",
        "XINFO STREAM s FULL",
    ),
    "idmp-failed-producer": cmds(
        "XADD s 18446744073709551615-18446744073709551615 f v",
        "XADD s IDMP p1 i1 * f v",
        "XINFO STREAM s",
        "XINFO STREAM s FULL",
    ),
}


@pytest.fixture
def pair(target_pair):
    oracle, target = target_pair
    if SELFTEST:
        pytest.skip("the deliberate differences are between redis-server and xstreams")
    if oracle.version < (8, 8, 0):
        pytest.skip(f"needs redis-server 8.8, have {oracle.version}")
    return oracle, target


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_case_passes_with_its_repair_only(pair, name, monkeypatch) -> None:
    oracle, target = pair
    sess = Session(oracle, target, {}, 2)
    index, out = replay(sess, CASES[name])
    assert index == -1, f"{name}: mismatch at #{index}: {out and out.difference}"
    assert sess.repaired == [name]
    # Without its own entry (the others kept) the case is a difference the comparison
    # reports: no other entry covers it.
    others = {k: v for k, v in deliberate.DELIBERATE.items() if k != name}
    monkeypatch.setattr(deliberate, "DELIBERATE", others)
    sess = Session(oracle, target, {}, 2)
    index, out = replay(sess, CASES[name])
    assert index != -1, f"{name}: no difference without its repair"
    assert sess.repaired == []


def test_entries_are_the_headings_of_differences_md() -> None:
    text = DOC.read_text()
    upstream = text.split("## Upstream's stream fixes after 8.8", 1)[1].split("\n## ", 1)[0]
    names = re.findall(r"^### `([a-z0-9-]+)`$", upstream, flags=re.M)
    assert sorted(names) == sorted(deliberate.DELIBERATE) == sorted(CASES)
