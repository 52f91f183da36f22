"""Progress of the command-line tool's long steps, on stderr when it is a terminal.

Bars come from tqdm; when stderr is not a terminal (a pipe, a file, CI) nothing is
drawn. A step that is one call into the engine (loading a store, writing an RDB file)
runs in a worker thread - the engine releases the GIL - while this thread redraws its
elapsed time and, when the caller can count it, how far it got.
"""

from __future__ import annotations

import sys
import threading
from typing import Callable, Iterable, Iterator, Optional, TypeVar

from tqdm import tqdm

T = TypeVar("T")

#: How often a running step is redrawn, in seconds.
REFRESH_S = 0.1


def enabled() -> bool:
    """Whether progress is drawn: only when stderr is a terminal."""
    stream = sys.stderr
    return stream is not None and hasattr(stream, "isatty") and stream.isatty()


def _bar(desc: str, total: Optional[int], unit: str, counted: bool = True) -> tqdm:
    return tqdm(
        desc=desc,
        total=total,
        unit=f" {unit}",
        # A step nobody counts shows only its elapsed time, not "0 keys".
        bar_format=None if counted else "{desc} [{elapsed}]",
        file=sys.stderr,
        leave=False,
        dynamic_ncols=True,
        disable=not enabled(),
    )


def step(
    desc: str,
    fn: Callable[[], T],
    *,
    count: Optional[Callable[[], int]] = None,
    total: Optional[int] = None,
    unit: str = "keys",
) -> T:
    """``fn()``, with ``desc``, its elapsed time and ``count()`` (when given, out of
    ``total`` when known) shown while it runs. Exceptions of ``fn`` propagate as raised."""
    if not enabled():
        return fn()
    box: dict = {}

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the calling thread
            box["error"] = e

    worker = threading.Thread(target=work, name=f"xstreams: {desc}", daemon=True)
    with _bar(desc, total, unit, counted=count is not None) as bar:
        worker.start()
        while worker.is_alive():
            worker.join(REFRESH_S)
            if count is not None:
                try:
                    bar.n = count()
                except Exception:  # noqa: BLE001 - a count is only a display
                    pass
            bar.refresh()
    if "error" in box:
        raise box["error"]
    return box["value"]


def items(desc: str, values: Iterable[T], total: int, unit: str = "keys") -> Iterator[T]:
    """``values``, counted on a bar of ``total`` as they are consumed."""
    with _bar(desc, total, unit) as bar:
        for v in values:
            yield v
            bar.update(1)
