"""Differential tests, consumer-group family: XGROUP, XREADGROUP, XACK, XACKDEL,
XPENDING, XCLAIM, XAUTOCLAIM, XINFO GROUPS/CONSUMERS/STREAM FULL/HELP, mixed with
the stream family's commands.
"""

from __future__ import annotations

import pytest

from .generator import GenConfig
from .runner import run_sequence
from .suite import VARIANTS, cases, n_commands

COMMANDS = n_commands(1000)


@pytest.mark.parametrize(("variant", "seed"), cases(1, 3))
def test_groups(target_pair, variant: str, seed: int) -> None:
    oracle, target = target_pair
    config, protocol = VARIANTS[variant]
    gen = GenConfig(family="groups", reuse_time_ids=target.pinnable_clock)
    run_sequence(oracle, target, seed, COMMANDS, gen, config, protocol, label=variant)
