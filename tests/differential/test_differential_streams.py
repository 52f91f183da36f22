"""Differential tests, stream family: XADD/XRANGE/XTRIM/XDEL/XREAD/XINFO ... + keyspace.

Each case runs one seeded sequence against redis-server and the target and
fails with a reproduction report on the first differing reply.
"""

from __future__ import annotations

import pytest

from .generator import GenConfig
from .runner import run_sequence
from .suite import VARIANTS, cases, n_commands

COMMANDS = n_commands(1000)


@pytest.mark.parametrize(("variant", "seed"), cases(0, 3))
def test_streams(target_pair, variant: str, seed: int) -> None:
    oracle, target = target_pair
    config, protocol = VARIANTS[variant]
    gen = GenConfig(family="streams", reuse_time_ids=target.pinnable_clock)
    run_sequence(oracle, target, seed, COMMANDS, gen, config, protocol, label=variant)


@pytest.mark.parametrize(("variant", "seed"), cases(2, 1))
def test_long_streams(target_pair, variant: str, seed: int) -> None:
    """Mostly appends: hundreds of entries, so default-sized nodes split too."""
    oracle, target = target_pair
    config, protocol = VARIANTS[variant]
    gen = GenConfig(family="nodes", reuse_time_ids=target.pinnable_clock)
    run_sequence(oracle, target, seed, 2 * COMMANDS, gen, config, protocol, label=variant)
