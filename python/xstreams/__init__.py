"""xstreams: Redis 8.8 Streams, embedded.

``Store()`` is an in-process store whose commands behave as redis-server 8.8's stream
commands; ``Redis()`` is a drop-in replacement for redis-py's client that runs on a store
instead of a server.
"""

from __future__ import annotations

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
from .stores import default_store, open_store


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
