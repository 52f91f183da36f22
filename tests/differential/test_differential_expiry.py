"""Differential tests, expiry family: streams and strings given expiry times (EXPIRE,
PEXPIRE, EXPIREAT, PEXPIREAT with NX/XX/GT/LT, SET EX/PX/EXAT/PXAT/KEEPTTL), read back
(TTL, PTTL, EXPIRETIME, PEXPIRETIME), cleared (PERSIST), serialized (DUMP, RESTORE with
REPLACE/ABSTTL/IDLETIME/FREQ, damaged payloads) and moved (RENAME, RENAMENX, COPY,
UNLINK) among stream commands. gen_keyspace.py says how times stay deterministic:
relative times are not positive or >= 100 s, absolute times far from now; TTL-like
replies after a relative expiry are compared within a tolerance (compare.py).
"""

from __future__ import annotations

import pytest

from .generator import GenConfig
from .runner import run_sequence
from .suite import VARIANTS, cases, n_commands

COMMANDS = n_commands(1000)


@pytest.mark.parametrize(("variant", "seed"), cases(3, 1))
def test_expiry(target_pair, variant: str, seed: int) -> None:
    oracle, target = target_pair
    config, protocol = VARIANTS[variant]
    gen = GenConfig(family="expiry", reuse_time_ids=target.pinnable_clock)
    run_sequence(oracle, target, seed, COMMANDS, gen, config, protocol, label=variant)
