"""xstreams: Redis 8.8 Streams, embedded.

``Store()`` is an in-process store whose commands behave as redis-server 8.8's stream
commands; ``Redis()`` is a drop-in replacement for redis-py's client that runs on a store
instead of a server.

The names in ``__all__`` are the public API; ``dir(xstreams)`` lists exactly those.
"""

from . import exceptions
from ._stores import default_store, open_store
from ._xstreams import Store, Watch, __version__, auto_iid, command_names
from .exceptions import (
    BusyGroupError,
    CorruptStoreError,
    DataError,
    InvariantError,
    NoGroupError,
    ResponseError,
    StoreError,
    StoreLockedError,
    StoreRepairedWarning,
    WatchError,
    WrongTypeError,
    XStreamsError,
)

__all__ = [
    "Store",
    "Watch",
    "Redis",
    "StrictRedis",
    "Pipeline",
    "Deduper",
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
    "WatchError",
    "StoreError",
    "StoreLockedError",
    "CorruptStoreError",
    "StoreRepairedWarning",
    "InvariantError",
    "__version__",
]

_LAZY = ("Redis", "StrictRedis", "Pipeline")


def __getattr__(name: str) -> object:  # lazy: importing the client costs a few milliseconds
    if name in _LAZY:
        from . import client

        return getattr(client, name)
    if name == "Deduper":
        from . import dedup

        return dedup.Deduper
    raise AttributeError(f"module 'xstreams' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public API only (submodules imported meanwhile stay reachable, unlisted)."""
    return sorted(__all__)
