"""Helpers shared by the replay tests (``test_arrow_replay.py``, ``test_spark_replay.py``)."""

from __future__ import annotations

from typing import Any, List, Optional

import xstreams


def expected(
    path: str,
    streams: List[str],
    start: Any = "-",
    end: Any = "+",
    group: Optional[str] = None,
    db: int = 0,
) -> List[tuple]:
    """What a replay must return: ``(stream, id, [(field, value), ...])`` from XRANGE on
    the store reopened read-only; with ``group``, only the entries in its PEL or after
    its last-delivered ID."""
    s = xstreams.Store(path, read_only=True)
    out = []
    for key in streams:
        if s.execute_command("EXISTS", key, db=db) == 0:
            continue
        entries = s.execute_command("XRANGE", key, start or "-", end or "+", db=db)
        keep = None
        if group is not None:
            pel = s.execute_command("XPENDING", key, group, "-", "+", 10**9, db=db)
            pending = {p[0] for p in pel}
            info = s.execute_command("XINFO", "GROUPS", key, db=db)
            g = [dict(zip(x[::2], x[1::2])) for x in info if x[1] == group.encode()][0]
            last = tuple(int(p) for p in g[b"last-delivered-id"].split(b"-"))

            def keep(i: bytes, pending=pending, last=last) -> bool:
                return i in pending or tuple(int(p) for p in i.split(b"-")) > last

        for i, fv in entries:
            if keep is None or keep(i):
                pairs = [(f.decode(), v.decode()) for f, v in zip(fv[::2], fv[1::2])]
                out.append((key, i.decode(), pairs))
    s.close()
    return out
