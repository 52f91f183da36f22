"""The stores shared within a process: the default one and one per durable path.

``xstreams`` re-exports :func:`default_store` and :func:`open_store`; this module keeps
their state (and the imports they need) out of the package's namespace.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from ._xstreams import Store

_lock = threading.Lock()
_default: Store | None = None
_open_stores: dict[str, Store] = {}


def default_store() -> Store:
    """The process-wide store that ``xstreams.Redis()`` uses when no store is given.

    Like connecting redis-py to the default local server, every client created without a
    store in the same process shares this one.
    """
    global _default
    with _lock:
        if _default is None or _default.closed:
            _default = Store()
        return _default


def open_store(path: str | os.PathLike[str], **options: Any) -> Store:
    """The durable store at ``path``, opened once per process.

    A directory can have one writer at a time (the store locks it), so every client of the
    same path in this process shares one ``Store`` — as every client of one server shares
    its data. ``options`` are ``Store``'s keyword arguments, used when the store is opened.
    """
    key = os.path.realpath(os.fspath(path))
    with _lock:
        store = _open_stores.get(key)
        if store is None or store.closed:
            store = Store(key, **options)
            _open_stores[key] = store
        return store
