"""The default test matrix of the differential suite (shared by the test files)."""

from __future__ import annotations

import os
from typing import Dict, List, Tuple

SCALE = float(os.environ.get("XSTREAMS_DIFF_SCALE", "1"))
SEED_BASE = int(os.environ.get("XSTREAMS_DIFF_SEED_BASE", "0"))
ONLY_SEED = os.environ.get("XSTREAMS_DIFF_SEED")

# name -> (server config, RESP protocol). Small node limits make the radix tree
# split often, so XINFO STREAM's radix-tree-keys / radix-tree-nodes and the
# listpack byte accounting are compared too.
VARIANTS: Dict[str, Tuple[Dict[str, int], int]] = {
    "default-resp2": ({}, 2),
    "default-resp3": ({}, 3),
    "nodes3-resp2": ({"stream-node-max-entries": 3}, 2),
    "nodes1-resp3": ({"stream-node-max-entries": 1}, 3),
    "bytes150-resp3": ({"stream-node-max-entries": 100, "stream-node-max-bytes": 150}, 3),
    "bytesonly300-resp2": ({"stream-node-max-entries": 0, "stream-node-max-bytes": 300}, 2),
    "entriesonly5-resp2": ({"stream-node-max-entries": 5, "stream-node-max-bytes": 0}, 2),
}


def cases(family_index: int, seeds_per_variant: int) -> List[Tuple[str, int]]:
    """(variant, seed) pairs; seeds differ per family and variant."""
    out = []
    n = max(1, round(seeds_per_variant * max(SCALE, 1.0)))
    for vi, v in enumerate(VARIANTS):
        if ONLY_SEED is not None:
            out.append((v, int(ONLY_SEED)))
            continue
        for i in range(n):
            out.append((v, SEED_BASE + family_index * 100_000 + vi * 1000 + i))
    return out


def n_commands(default: int) -> int:
    """Commands per seed. Scales >= 1 add seeds; scales < 1 shorten sequences instead,
    so the total number of commands is proportional to XSTREAMS_DIFF_SCALE."""
    return max(10, round(default * min(SCALE, 1.0)))
