"""xstreams: Redis 8.8 Streams, embedded.

``Store()`` is an in-process store whose commands behave as redis-server 8.8's stream
commands; ``Redis()`` is a drop-in replacement for redis-py's client that runs on a store
instead of a server.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from . import exceptions
from ._xstreams import Store, Watch, __version__, auto_iid, command_names
from .exceptions import (
    BusyGroupError,
    DataError,
    InvariantError,
    NoGroupError,
    ResponseError,
    WrongTypeError,
    XStreamsError,
)

_default_lock = threading.Lock()
_default: Store | None = None
_open_stores: dict[str, Store] = {}


def default_store() -> Store:
    """The process-wide store that ``xstreams.Redis()`` uses when no store is given.

    Like connecting redis-py to the default local server, every client created without a
    store in the same process shares this one.
    """
    global _default
    with _default_lock:
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
    with _default_lock:
        store = _open_stores.get(key)
        if store is None or store.closed:
            store = Store(key, **options)
            _open_stores[key] = store
        return store


def __getattr__(name: str):  # lazy: importing the client costs a few milliseconds
    if name in ("Redis", "StrictRedis", "Pipeline"):
        from . import client

        return getattr(client, name)
    raise AttributeError(f"module 'xstreams' has no attribute {name!r}")


__all__ = [
    "Store",
    "Watch",
    "Redis",
    "StrictRedis",
    "Pipeline",
    "default_store",
    "open_store",
    "auto_iid",
    "command_names",
    "exceptions",
    "XStreamsError",
    "ResponseError",
    "WrongTypeError",
    "NoGroupError",
    "BusyGroupError",
    "DataError",
    "InvariantError",
    "__version__",
]
