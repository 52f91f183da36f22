"""The sink's store-directory side (``option("path")``): tasks stage their rows as Arrow
IPC files under the store directory, in parallel; the driver's commit appends the staged
files in one atomic block with the marker, under the store's write lock (one writer per
directory), and removes them.

Staged files live in ``<store>/spark-staging/<job>/<batch>/<partition>-<attempt>.arrow``:
each task attempt writes its own file (written under a ``.tmp`` name, then renamed), and
its commit message names it, so the commit reads exactly the files of the attempts Spark
counted, never a zombie attempt's. The store ignores the directory (only its own
``snapshot.*``, ``log.*`` and ``MANIFEST`` files are its).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import threading
import time
import uuid
from typing import Any, Dict, Iterator, List, Optional

STAGING = "spark-staging"
_LOCK_WAIT_S = 30.0


def job_dir(path: str, job: str) -> str:
    return os.path.join(path, STAGING, hashlib.sha1(job.encode()).hexdigest()[:16])


def stage(path: str, job: str, batch: int, partition: int, attempt: int, table: Any) -> str:
    """Write ``table`` as this task attempt's staged file; its path."""
    import pyarrow as pa

    d = os.path.join(job_dir(path, job), str(batch))
    os.makedirs(d, exist_ok=True)
    final = os.path.join(d, f"{partition}-{attempt}.arrow")
    tmp = f"{final}.{uuid.uuid4().hex}.tmp"
    with pa.OSFile(tmp, "wb") as f:
        with pa.ipc.new_file(f, table.schema) as w:
            w.write_table(table)
    os.replace(tmp, final)
    return final


def read_staged(files: List[str]) -> Any:
    """The staged files as one table (memory-mapped: the rows are read from the files,
    not copied into the driver's heap first)."""
    import pyarrow as pa

    tables = []
    for name in files:
        with pa.memory_map(name, "r") as src:
            tables.append(pa.ipc.open_file(src).read_all())
    if not tables:
        return None
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]


def remove_batches(path: str, job: str, upto: Optional[int]) -> None:
    """Remove the staged files of batches <= ``upto`` (None: the whole job)."""
    d = job_dir(path, job)
    if upto is None:
        shutil.rmtree(d, ignore_errors=True)
    elif os.path.isdir(d):
        for name in os.listdir(d):
            if name.isdigit() and int(name) <= upto:
                shutil.rmtree(os.path.join(d, name), ignore_errors=True)
    with contextlib.suppress(OSError):
        os.rmdir(d)
        os.rmdir(os.path.dirname(d))


def open_store(path: str, fsync: str) -> Any:
    """The durable store, open for writing (waits a while for another writer's lock)."""
    import xstreams

    from .exceptions import StoreLockedError

    deadline = time.monotonic() + _LOCK_WAIT_S
    while True:
        try:
            return xstreams.Store(path, fsync=fsync)  # type: ignore[arg-type]
        except StoreLockedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


# The store the streaming sink's commits write to, kept open between commits in the
# process that runs them: {"key", "dir", "store", "timer"}.
_HELD: Dict[str, Any] = {}
_HELD_LOCK = threading.Lock()


def _dir_id(path: str) -> Any:
    """What tells a store directory from a new one made at the same path."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _release_held() -> None:
    """Close the held store (flushes the log, releases the lock). Call with the lock."""
    timer = _HELD.pop("timer", None)
    if timer is not None:
        timer.cancel()
    store = _HELD.pop("store", None)
    _HELD.clear()
    if store is not None:
        store.close()


def _expire_held(timer: Any) -> None:
    with _HELD_LOCK:
        if _HELD.get("timer") is timer:
            _HELD.pop("timer")
            _release_held()


@contextlib.contextmanager
def held_store(path: str, fsync: str, hold: float) -> Iterator[Any]:
    """The store at ``path``, open for writing, for one commit: the one held since the
    last commit if it is the same store, else newly opened. After the commit it stays
    open for ``hold`` seconds; a commit that raised closes it (the next one reopens the
    store from its files)."""
    with _HELD_LOCK:
        key = (path, fsync)
        store = _HELD.get("store")
        if store is not None and (
            _HELD.get("key") != key or store.closed or _HELD.get("dir") != _dir_id(path)
        ):
            _release_held()
            store = None
        timer = _HELD.pop("timer", None)
        if timer is not None:
            timer.cancel()
        if store is None:
            store = open_store(path, fsync)
            _HELD.update(key=key, dir=_dir_id(path), store=store)
        ok = False
        try:
            yield store
            ok = True
        finally:
            if not ok or hold <= 0:
                _release_held()
            else:
                t = threading.Timer(hold, lambda: _expire_held(t))
                t.daemon = True
                _HELD["timer"] = t
                t.start()
