"""Exception classes raised by xstreams.

When redis-py is installed, every xstreams error is also an instance of the
matching redis-py class (``redis.exceptions.ResponseError`` and friends), so
code written against redis-py keeps working when it switches to xstreams.

``str(exc)`` of a :class:`ResponseError` is what redis-py shows for the same
error (redis-py strips a leading ``ERR `` and keeps other codes such as
``WRONGTYPE``); ``exc.code`` holds the Redis error code and ``exc.reply`` the
whole error line exactly as redis-server would send it.
"""

from __future__ import annotations

try:  # pragma: no cover - exercised in both configurations by the test suite
    from redis import exceptions as _redis_exceptions

    _RedisError: type = _redis_exceptions.RedisError
    _RedisResponseError: type = _redis_exceptions.ResponseError
    _RedisDataError: type = _redis_exceptions.DataError
    _RedisTimeoutError: type = _redis_exceptions.TimeoutError
    _RedisConnectionError: type = _redis_exceptions.ConnectionError
    _RedisWatchError: type = _redis_exceptions.WatchError
    HAVE_REDIS_PY = True
except ImportError:  # pragma: no cover

    class _NoRedisPy:
        """Stands in for a redis-py base class when redis-py is not installed."""

    _RedisError = Exception
    _RedisResponseError = _NoRedisPy
    _RedisDataError = _NoRedisPy
    _RedisTimeoutError = _NoRedisPy
    _RedisConnectionError = _NoRedisPy
    _RedisWatchError = _NoRedisPy
    HAVE_REDIS_PY = False

__all__ = [
    "XStreamsError",
    "ResponseError",
    "WrongTypeError",
    "NoGroupError",
    "BusyGroupError",
    "DataError",
    "TimeoutError",
    "ConnectionError",
    "WatchError",
    "StoreError",
    "StoreLockedError",
    "CorruptStoreError",
    "InternalError",
    "InvariantError",
    "StoreRepairedWarning",
    "HAVE_REDIS_PY",
    "error_from_reply",
]

# Error codes that redis-py strips from the message (see redis-py's parser).
_REDIS_PY_STRIPPED_CODES = frozenset(
    {
        "ERR",
        "OOM",
        "WRONGPASS",
        "EXECABORT",
        "LOADING",
        "NOSCRIPT",
        "READONLY",
        "NOAUTH",
        "NOPERM",
        "ASK",
        "TRYAGAIN",
        "MOVED",
        "CLUSTERDOWN",
        "CROSSSLOT",
        "MASTERDOWN",
    }
)


class XStreamsError(_RedisError):
    """Base class of every error raised by xstreams."""


class ResponseError(_RedisResponseError, XStreamsError):
    """A command was rejected, exactly as redis-server would reject it.

    ``code`` is the Redis error code (``ERR``, ``WRONGTYPE``, ``NOGROUP``...),
    ``reply`` the complete error line without the leading ``-``.
    """

    code: str
    reply: str

    def __init__(self, message: str = "", *, code: str = "ERR", reply: str | None = None):
        super().__init__(message)
        self.code = code
        self.reply = reply if reply is not None else message


class WrongTypeError(ResponseError):
    """``WRONGTYPE``: the key holds a value of another type."""


class NoGroupError(ResponseError):
    """``NOGROUP``: the key or the consumer group does not exist."""


class BusyGroupError(ResponseError):
    """``BUSYGROUP``: a consumer group with that name already exists."""


class DataError(_RedisDataError, XStreamsError):
    """Invalid arguments detected on the client side, before any command runs."""


class TimeoutError(_RedisTimeoutError, XStreamsError):  # noqa: A001 - mirrors redis-py
    """A client-side timeout expired."""


class ConnectionError(_RedisConnectionError, XStreamsError):  # noqa: A001 - mirrors redis-py
    """The store was closed, or a server connection failed."""


class WatchError(_RedisWatchError, XStreamsError):
    """A transaction did not run because a key it watched changed (redis-py's class)."""


class StoreError(XStreamsError):
    """A durable store could not be opened, read or written."""


class StoreLockedError(StoreError):
    """Another process holds the store's write lock."""


class CorruptStoreError(StoreError):
    """A store file is damaged or is not an xstreams file."""


class StoreRepairedWarning(UserWarning):
    """Opening a durable store dropped the incomplete last command of its log (a crash cut
    the last write); everything before it was loaded."""


class InternalError(XStreamsError):
    """A bug inside xstreams (a Rust panic was caught); the store stays usable."""


class InvariantError(XStreamsError):
    """``Store.validate()`` found a broken internal invariant (a bug inside xstreams);
    the message names the first violation."""


_CODE_CLASSES = {
    "WRONGTYPE": WrongTypeError,
    "NOGROUP": NoGroupError,
    "BUSYGROUP": BusyGroupError,
}


def _response_error(cls: type[ResponseError], code: str, line: str) -> ResponseError:
    """``cls`` for the error line ``line`` of code ``code``, with redis-py's message."""
    message = line[len(code) + 1 :] if code in _REDIS_PY_STRIPPED_CODES else line
    return cls(message, code=code, reply=line)


def error_from_reply(line: str) -> ResponseError:
    """Build the exception for an error reply line (without the leading ``-``), e.g. one
    read from a socket."""
    code = line.partition(" ")[0]
    return _response_error(_CODE_CLASSES.get(code, ResponseError), code, line)


def _from_kind(class_name: str, code: str, line: str) -> ResponseError:
    """The exception for an engine error whose class and code the engine gives (the
    extension calls this; nothing is read back from the line)."""
    return _response_error(globals()[class_name], code, line)
