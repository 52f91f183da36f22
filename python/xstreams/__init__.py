"""xstreams: Redis 8.8 Streams, embedded.

``Store()`` is an in-process store whose commands behave as redis-server 8.8's stream
commands; ``Redis()`` is a drop-in replacement for redis-py's client that runs on a store
instead of a server.
"""

from __future__ import annotations

import threading

from . import exceptions
from ._xstreams import Store, __version__, auto_iid, command_names
from .exceptions import (
    BusyGroupError,
    DataError,
    NoGroupError,
    ResponseError,
    WrongTypeError,
    XStreamsError,
)

_default_lock = threading.Lock()
_default: Store | None = None


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


def __getattr__(name: str):  # lazy: importing the client costs a few milliseconds
    if name in ("Redis", "StrictRedis", "Pipeline"):
        from . import client

        return getattr(client, name)
    raise AttributeError(f"module 'xstreams' has no attribute {name!r}")


__all__ = [
    "Store",
    "Redis",
    "StrictRedis",
    "Pipeline",
    "default_store",
    "auto_iid",
    "command_names",
    "exceptions",
    "XStreamsError",
    "ResponseError",
    "WrongTypeError",
    "NoGroupError",
    "BusyGroupError",
    "DataError",
    "__version__",
]
