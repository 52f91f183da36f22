"""A drop-in replacement for ``redis.Redis`` that runs against an in-process store.

``xstreams.Redis()`` has the same method names, signatures, defaults, client-side
validation and return values as redis-py 8.1's ``redis.Redis`` for the stream commands
and the basic keyspace commands, so code written for redis-py runs unchanged::

    r = xstreams.Redis()                      # was: redis.Redis(host=..., port=...)
    r.xadd("events", {"type": "click"})
    r.xread({"events": "0"}, count=10)

The client never talks to a network: every command goes to a *store* object with
``execute_command(*args, db=0, protocol=2)`` and
``execute_many(commands, db=0, atomic=True, protocol=2)``. ``Redis()`` uses the
process-wide store returned by ``xstreams.default_store()`` (two clients in one process
see the same data, as two redis-py clients connected to the same server would);
``Redis(store=...)`` uses the given one.

Replies go through the same post-processing ("response callbacks") as in redis-py.
redis-py 8.1 speaks RESP3 by default and converts the replies back to the RESP2-era
Python shapes (``legacy_responses=True``); this client asks its store for RESP3 replies
in that case too and applies the same conversions, so every value, including those of
``execute_command`` for commands without a callback, is what redis-py returns.
``protocol=2`` and ``protocol=3`` select the corresponding redis-py behaviour, and
``legacy_responses=False`` the "unified" shapes.

This module imports nothing from ``redis``: it works whether or not redis-py is
installed. When it is, every exception raised here is also an instance of the matching
``redis.exceptions`` class (see :mod:`xstreams.exceptions`).
"""

from __future__ import annotations

import codecs
import datetime
import inspect
import textwrap
import threading
import warnings
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)
from urllib.parse import parse_qs, unquote, urlparse

from ._xstreams import Store as _NativeStore
from .exceptions import ConnectionError as XConnectionError
from .exceptions import DataError, ResponseError, XStreamsError

__all__ = [
    "Redis",
    "StrictRedis",
    "Pipeline",
    "Encoder",
    "CaseInsensitiveDict",
    "get_response_callbacks",
    "EMPTY_RESPONSE",
    "NEVER_DECODE",
]

# ---------------------------------------------------------------------------------------
# Types (same names as in redis.typing)
# ---------------------------------------------------------------------------------------

EncodedT = Union[bytes, bytearray, memoryview]
DecodedT = Union[str, int, float]
EncodableT = Union[EncodedT, DecodedT]
KeyT = Union[bytes, str, memoryview]
PatternT = Union[bytes, str, memoryview]
FieldT = EncodableT
GroupT = Union[str, bytes, memoryview]
ConsumerT = Union[str, bytes, memoryview]
StreamIdT = Union[int, bytes, str, memoryview]
ExpiryT = Union[int, datetime.timedelta]
AbsExpiryT = Union[int, datetime.datetime]
ResponseCallback = Callable[..., Any]

#: Option of ``execute_command``: value returned instead of raising a ``ResponseError``.
EMPTY_RESPONSE = "EMPTY_RESPONSE"
#: Option of ``execute_command``: never decode this reply, even with decode_responses.
NEVER_DECODE = "NEVER_DECODE"

_REF_POLICIES = frozenset({"KEEPREF", "DELREF", "ACKED"})
_NACK_MODES = frozenset({"SILENT", "FAIL", "FATAL"})

# The store's reply shape for the default client: redis-py 8.1 negotiates RESP3 when no
# protocol is given, and its legacy callbacks convert RESP3 replies back to RESP2 shapes.
_DEFAULT_WIRE_PROTOCOL = 3


# ---------------------------------------------------------------------------------------
# Encoding
# ---------------------------------------------------------------------------------------


class Encoder:
    """Encodes command arguments to bytes and decodes replies, as redis-py's Encoder."""

    __slots__ = ("encoding", "encoding_errors", "decode_responses")

    def __init__(self, encoding: str, encoding_errors: str, decode_responses: bool) -> None:
        self.encoding = encoding
        self.encoding_errors = encoding_errors
        self.decode_responses = decode_responses

    def encode(self, value: Any) -> bytes:
        """Return the bytes sent to the store for one command argument."""
        if isinstance(value, bytes):
            return value
        if isinstance(value, (bytearray, memoryview)):
            return bytes(value)
        if isinstance(value, bool):
            # bool is a subclass of int: refuse it like redis-py does
            raise DataError(
                "Invalid input of type: 'bool'. Convert to a bytes, string, int or float first."
            )
        if isinstance(value, (int, float)):
            return repr(value).encode()
        if not isinstance(value, str):
            typename = type(value).__name__
            raise DataError(
                f"Invalid input of type: '{typename}'. "
                f"Convert to a bytes, string, int or float first."
            )
        return value.encode(self.encoding, self.encoding_errors)

    def decode(self, value: Any, force: bool = False) -> Any:
        """Decode one bytes value when decode_responses is on (or ``force``)."""
        if self.decode_responses or force:
            if isinstance(value, memoryview):
                value = value.tobytes()
            if isinstance(value, bytes):
                value = value.decode(self.encoding, self.encoding_errors)
        return value


def _decode_reply(value: Any, encoding: str, errors: str) -> Any:
    """Decode every bulk/status string of a raw reply (recursively), keys included."""
    if isinstance(value, bytes):
        return value.decode(encoding, errors)
    if isinstance(value, list):
        return [_decode_reply(v, encoding, errors) for v in value]
    if isinstance(value, dict):
        return {
            _decode_reply(k, encoding, errors): _decode_reply(v, encoding, errors)
            for k, v in value.items()
        }
    return value


def _str_if_bytes(value: Any) -> Any:
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else value


def _safe_str(value: Any) -> str:
    return str(_str_if_bytes(value))


# ---------------------------------------------------------------------------------------
# Response callbacks (same behaviour as redis._parsers.helpers)
# ---------------------------------------------------------------------------------------


def _bool_ok(response: Any, **options: Any) -> bool:
    return _str_if_bytes(response) == "OK"


def _float_or_none(response: Any) -> Optional[float]:
    if response is None:
        return None
    return float(response)


def _pairs_to_dict(
    response: Any, decode_keys: bool = False, decode_string_values: bool = False
) -> Dict[Any, Any]:
    """Build a dict from a flat ``[k1, v1, k2, v2, ...]`` list."""
    if response is None:
        return {}
    if decode_keys or decode_string_values:
        keys: Iterable[Any] = response[::2]
        values: Iterable[Any] = response[1::2]
        if decode_keys:
            keys = map(_str_if_bytes, keys)
        if decode_string_values:
            values = map(_str_if_bytes, values)
        return dict(zip(keys, values))
    it = iter(response)
    return dict(zip(it, it))


def _parse_stream_list(response: Any, **options: Any) -> Optional[List[Any]]:
    if response is None:
        return None
    data: List[Any] = []
    for r in response:
        if r is not None:
            if "claim_min_idle_time" in options:
                data.append((r[0], _pairs_to_dict(r[1]), *r[2:]))
            else:
                data.append((r[0], _pairs_to_dict(r[1])))
        else:
            data.append((None, None))
    return data


def _parse_list_of_dicts(response: Any) -> List[Any]:
    return [_pairs_to_dict(x, decode_keys=True) for x in response]


def _parse_list_of_dicts_resp3(response: Any, **options: Any) -> List[Any]:
    return [{_str_if_bytes(k): v for k, v in x.items()} for x in response]


def _parse_xclaim(response: Any, **options: Any) -> Any:
    if options.get("parse_justid", False):
        return response
    return _parse_stream_list(response)


def _parse_xautoclaim(response: Any, **options: Any) -> Any:
    if options.get("parse_justid", False):
        return response[1]
    response[1] = _parse_stream_list(response[1])
    return response


def _parse_xinfo_stream(response: Any, **options: Any) -> Dict[Any, Any]:
    if isinstance(response, list):
        data = _pairs_to_dict(response, decode_keys=True)
    else:
        data = {_str_if_bytes(k): v for k, v in response.items()}
    if not options.get("full", False):
        first = data.get("first-entry")
        if first is not None and first[0] is not None:
            data["first-entry"] = (first[0], _pairs_to_dict(first[1]))
        last = data["last-entry"]
        if last is not None and last[0] is not None:
            data["last-entry"] = (last[0], _pairs_to_dict(last[1]))
    else:
        data["entries"] = {_id: _pairs_to_dict(entry) for _id, entry in data["entries"]}
        if len(data["groups"]) > 0 and isinstance(data["groups"][0], list):
            data["groups"] = [_pairs_to_dict(g, decode_keys=True) for g in data["groups"]]
            for g in data["groups"]:
                if g["consumers"] and g["consumers"][0] is not None:
                    g["consumers"] = [_pairs_to_dict(c, decode_keys=True) for c in g["consumers"]]
        else:
            data["groups"] = [
                {_str_if_bytes(k): v for k, v in group.items()} for group in data["groups"]
            ]
    return data


def _parse_xread(response: Any, **options: Any) -> List[Any]:
    if response is None:
        return []
    return [[r[0], _parse_stream_list(r[1], **options)] for r in response]


def _parse_xread_resp3(response: Any, **options: Any) -> Dict[Any, Any]:
    if response is None:
        return {}
    return {key: [_parse_stream_list(value, **options)] for key, value in response.items()}


def _parse_xread_unified(response: Any, **options: Any) -> Dict[Any, Any]:
    if not response:
        return {}
    if isinstance(response, dict):
        return {key: _parse_stream_list(value, **options) for key, value in response.items()}
    return {stream: _parse_stream_list(entries, **options) for stream, entries in response}


def _parse_xread_resp3_to_resp2_legacy(response: Any, **options: Any) -> List[Any]:
    if not response:
        return []
    return [[key, _parse_stream_list(value, **options)] for key, value in response.items()]


def _parse_xpending_range(response: Any) -> List[Any]:
    k = ("message_id", "consumer", "time_since_delivered", "times_delivered")
    return [dict(zip(k, r)) for r in response]


def _parse_xpending(response: Any, **options: Any) -> Any:
    if options.get("parse_detail", False):
        return _parse_xpending_range(response)
    consumers = [{"name": n, "pending": int(p)} for n, p in response[3] or []]
    return {
        "pending": response[0],
        "min": response[1],
        "max": response[2],
        "consumers": consumers,
    }


def _parse_scan(response: Any, **options: Any) -> Tuple[int, Any]:
    cursor, r = response
    return int(cursor), r


def _parse_set_result(response: Any, **options: Any) -> Any:
    if options.get("get"):
        return response
    return response and _str_if_bytes(response) == "OK"


def _parse_config_get(response: Any, **options: Any) -> Dict[Any, Any]:
    response = [_str_if_bytes(i) if i is not None else None for i in response]
    return response and _pairs_to_dict(response) or {}


def _parse_config_get_resp3_to_resp2_legacy(response: Any, **options: Any) -> Dict[Any, Any]:
    if not response:
        return {}
    return {
        _str_if_bytes(k) if k is not None else None: _str_if_bytes(v) if v is not None else None
        for k, v in response.items()
    }


def _ping_callback(response: Any) -> bool:
    return _str_if_bytes(response) == "PONG"


def _time_callback(response: Any) -> Tuple[int, int]:
    return int(response[0]), int(response[1])


def _keys_to(names: str, callback: ResponseCallback) -> Dict[str, ResponseCallback]:
    return dict.fromkeys(names.split(), callback)


# Callbacks that do not depend on the protocol (subset of redis-py's _RedisCallbacks:
# the commands an xstreams store can run, plus trivial generic ones).
_CALLBACKS_COMMON: Dict[str, ResponseCallback] = {
    **_keys_to(
        "AUTH COPY EXPIRE EXPIREAT HEXISTS HMSET MOVE MSETNX PERSIST PSETEX "
        "PEXPIRE PEXPIREAT RENAMENX SETEX SETNX SMOVE",
        bool,
    ),
    **_keys_to("HINCRBYFLOAT INCRBYFLOAT", float),
    **_keys_to(
        "ASKING FLUSHALL FLUSHDB LSET LTRIM MSET PFMERGE READONLY READWRITE "
        "RENAME SAVE SELECT SHUTDOWN SLAVEOF SWAPDB WATCH UNWATCH",
        _bool_ok,
    ),
    **_keys_to("XREAD XREADGROUP", _parse_xread),
    **_keys_to("XRANGE XREVRANGE", _parse_stream_list),
    "CLIENT SETNAME": _bool_ok,
    "CONFIG RESETSTAT": _bool_ok,
    "CONFIG SET": _bool_ok,
    "PING": _ping_callback,
    "QUIT": _bool_ok,
    "SET": _parse_set_result,
    "SCAN": _parse_scan,
    "TIME": _time_callback,
    "XAUTOCLAIM": _parse_xautoclaim,
    "XCLAIM": _parse_xclaim,
    "XGROUP CREATE": _bool_ok,
    "XGROUP DESTROY": bool,
    "XGROUP SETID": _bool_ok,
    "XINFO STREAM": _parse_xinfo_stream,
    "XPENDING": _parse_xpending,
}

# RESP2 wire, legacy shapes (redis.Redis(protocol=2)).
_CALLBACKS_RESP2: Dict[str, ResponseCallback] = {
    "CLIENT GETNAME": _str_if_bytes,
    "CONFIG GET": _parse_config_get,
    "XINFO CONSUMERS": _parse_list_of_dicts,
    "XINFO GROUPS": _parse_list_of_dicts,
}

# RESP3 wire, RESP3 shapes (redis.Redis(protocol=3)).
_CALLBACKS_RESP3: Dict[str, ResponseCallback] = {
    **_keys_to("XREAD XREADGROUP", _parse_xread_resp3),
    "CONFIG GET": _parse_config_get_resp3_to_resp2_legacy,
    "XINFO CONSUMERS": _parse_list_of_dicts_resp3,
    "XINFO GROUPS": _parse_list_of_dicts_resp3,
}

# RESP2 wire, unified shapes (protocol=2, legacy_responses=False).
_CALLBACKS_RESP2_UNIFIED: Dict[str, ResponseCallback] = {
    **_CALLBACKS_RESP2,
    **_keys_to("XREAD XREADGROUP", _parse_xread_unified),
}

# RESP3 wire, unified shapes (protocol unset or 3, legacy_responses=False).
_CALLBACKS_RESP3_UNIFIED: Dict[str, ResponseCallback] = {
    **_CALLBACKS_RESP3,
    **_keys_to("XREAD XREADGROUP", _parse_xread_unified),
    "CLIENT GETNAME": _str_if_bytes,
}

# RESP3 wire converted back to the legacy RESP2 shapes (redis.Redis() default).
_CALLBACKS_RESP3_TO_RESP2_LEGACY: Dict[str, ResponseCallback] = {
    **_keys_to("XREAD XREADGROUP", _parse_xread_resp3_to_resp2_legacy),
    "CLIENT GETNAME": _str_if_bytes,
    "CONFIG GET": _parse_config_get_resp3_to_resp2_legacy,
    "XINFO CONSUMERS": _parse_list_of_dicts_resp3,
    "XINFO GROUPS": _parse_list_of_dicts_resp3,
}


def get_response_callbacks(
    user_protocol: Optional[int], legacy_responses: bool
) -> Dict[str, ResponseCallback]:
    """The callbacks redis-py 8.1 uses for this (protocol, legacy_responses) pair."""
    callbacks = dict(_CALLBACKS_COMMON)
    if legacy_responses:
        if user_protocol is None:
            callbacks.update(_CALLBACKS_RESP3_TO_RESP2_LEGACY)
        elif user_protocol in (3, "3"):
            callbacks.update(_CALLBACKS_RESP3)
        else:
            callbacks.update(_CALLBACKS_RESP2)
    elif user_protocol is None or user_protocol in (3, "3"):
        callbacks.update(_CALLBACKS_RESP3_UNIFIED)
    else:
        callbacks.update(_CALLBACKS_RESP2_UNIFIED)
    return callbacks


class CaseInsensitiveDict(Dict[str, Any]):
    """A dict whose str keys are looked up case-insensitively (as redis-py's)."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        super().__init__()
        for k, v in data.items():
            self[k.upper()] = v

    def __contains__(self, k: object) -> bool:
        return super().__contains__(k.upper())  # type: ignore[attr-defined]

    def __delitem__(self, k: Any) -> None:
        super().__delitem__(k.upper())

    def __getitem__(self, k: Any) -> Any:
        return super().__getitem__(k.upper())

    def get(self, k: Any, default: Any = None) -> Any:
        return super().get(k.upper(), default)

    def __setitem__(self, k: Any, v: Any) -> None:
        super().__setitem__(k.upper(), v)

    def update(self, data: Mapping[str, Any]) -> None:  # type: ignore[override]
        super().update(CaseInsensitiveDict(data))


# ---------------------------------------------------------------------------------------
# Helpers shared with redis-py's command implementations
# ---------------------------------------------------------------------------------------


def _at_most_one_value_set(values: Iterable[Any]) -> bool:
    return sum(bool(x) for x in values) <= 1


def _extract_expire_flags(
    ex: Optional[ExpiryT] = None,
    px: Optional[ExpiryT] = None,
    exat: Optional[AbsExpiryT] = None,
    pxat: Optional[AbsExpiryT] = None,
) -> List[EncodableT]:
    exp_options: List[EncodableT] = []
    if ex is not None:
        exp_options.append("EX")
        if isinstance(ex, datetime.timedelta):
            exp_options.append(int(ex.total_seconds()))
        elif isinstance(ex, int):
            exp_options.append(ex)
        elif isinstance(ex, str) and ex.isdigit():
            exp_options.append(int(ex))
        else:
            raise DataError("ex must be datetime.timedelta or int")
    elif px is not None:
        exp_options.append("PX")
        if isinstance(px, datetime.timedelta):
            exp_options.append(int(px.total_seconds() * 1000))
        elif isinstance(px, int):
            exp_options.append(px)
        else:
            raise DataError("px must be datetime.timedelta or int")
    elif exat is not None:
        if isinstance(exat, datetime.datetime):
            exat = int(exat.timestamp())
        exp_options.extend(["EXAT", exat])
    elif pxat is not None:
        if isinstance(pxat, datetime.datetime):
            pxat = int(pxat.timestamp() * 1000)
        exp_options.extend(["PXAT", pxat])
    return exp_options


def _annotate_exception(exception: BaseException, number: int, command: Sequence[Any]) -> None:
    """Prefix a pipeline error with the failing command, as redis-py does."""
    cmd = " ".join(map(_safe_str, command))
    short = textwrap.shorten(text=cmd, width=100, placeholder="...", break_long_words=True)
    first = exception.args[0] if exception.args else ""
    msg = f"Command # {number} ({short}) of pipeline caused error: {first}"
    exception.args = (msg,) + exception.args[1:]


def _to_bool(value: Any) -> Optional[bool]:
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.upper() in ("0", "F", "FALSE", "N", "NO"):
        return False
    return bool(value)


_URL_QUERY_PARSERS: Dict[str, Callable[[str], Any]] = {
    "db": int,
    "protocol": int,
    "legacy_responses": _to_bool,
    "decode_responses": _to_bool,
    "socket_timeout": float,
    "socket_connect_timeout": float,
    "socket_read_size": int,
    "socket_keepalive": _to_bool,
    "retry_on_timeout": _to_bool,
    "max_connections": int,
    "health_check_interval": int,
    "ssl_check_hostname": _to_bool,
}


def _parse_url(url: str) -> Dict[str, Any]:
    """Parse a redis://, rediss:// or unix:// URL into client keyword arguments."""
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError(
            "Redis URL must specify one of the following schemes (redis://, rediss://, unix://)"
        )
    parsed = urlparse(url)
    kwargs: Dict[str, Any] = {}
    for name, value in parse_qs(parsed.query).items():
        if value:
            raw = value[0]
            parser = _URL_QUERY_PARSERS.get(name)
            if parser is not None:
                try:
                    kwargs[name] = parser(raw)
                except (TypeError, ValueError):
                    raise ValueError(f"Invalid value for '{name}' in connection URL.") from None
            else:
                kwargs[name] = raw
    if parsed.username:
        kwargs["username"] = unquote(parsed.username)
    if parsed.password:
        kwargs["password"] = unquote(parsed.password)
    if parsed.scheme == "unix":
        if parsed.path:
            kwargs["unix_socket_path"] = unquote(parsed.path)
    else:
        if parsed.hostname:
            kwargs["host"] = unquote(parsed.hostname)
        if parsed.port:
            kwargs["port"] = int(parsed.port)
        if parsed.path and "db" not in kwargs:
            try:
                kwargs["db"] = int(unquote(parsed.path).replace("/", ""))
            except (AttributeError, ValueError):
                pass
        if parsed.scheme == "rediss":
            kwargs["ssl"] = True
    return kwargs


def _resolve_default_store() -> Any:
    from . import default_store  # type: ignore[attr-defined]  # provided by xstreams/__init__

    return default_store()


# ---------------------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------------------


class CoreCommands:
    """The redis-py command methods that xstreams implements.

    Every method builds the same command as redis-py 8.1 and hands it to
    ``self.execute_command``: a :class:`Redis` runs it at once and returns the reply, a
    :class:`Pipeline` queues it and returns the pipeline.
    """

    def execute_command(self, *args: Any, **options: Any) -> Any:  # pragma: no cover
        raise NotImplementedError

    # -- keyspace and server ------------------------------------------------------------

    def delete(self, *names: KeyT) -> int:
        """Delete one or more keys specified by ``names``."""
        return self.execute_command("DEL", *names)

    def __delitem__(self, name: KeyT) -> None:
        self.delete(name)

    def exists(self, *names: KeyT) -> int:
        """Return the number of ``names`` that exist."""
        return self.execute_command("EXISTS", *names, keys=names)

    __contains__ = exists

    def type(self, name: KeyT) -> Union[bytes, str]:
        """Return the type of key ``name`` (``b"stream"``, ``b"string"``, ``b"none"``...)."""
        return self.execute_command("TYPE", name, keys=[name])

    def keys(self, pattern: PatternT = "*", **kwargs: Any) -> List[Union[bytes, str]]:
        """Return a list of keys matching ``pattern``."""
        return self.execute_command("KEYS", pattern, **kwargs)

    def scan(
        self,
        cursor: int = 0,
        match: Optional[PatternT] = None,
        count: Optional[int] = None,
        _type: Optional[str] = None,
        **kwargs: Any,
    ) -> Tuple[int, List[Union[bytes, str]]]:
        """Incrementally return lists of key names, and the next cursor (0 when done)."""
        pieces: List[EncodableT] = [cursor]
        if match is not None:
            pieces.extend([b"MATCH", match])
        if count is not None:
            pieces.extend([b"COUNT", count])
        if _type is not None:
            pieces.extend([b"TYPE", _type])
        return self.execute_command("SCAN", *pieces, **kwargs)

    def scan_iter(
        self,
        match: Optional[PatternT] = None,
        count: Optional[int] = None,
        _type: Optional[str] = None,
        **kwargs: Any,
    ) -> Iterator[Union[bytes, str]]:
        """Iterate over all key names using SCAN."""
        cursor: Any = "0"
        while cursor != 0:
            cursor, data = self.scan(cursor=cursor, match=match, count=count, _type=_type, **kwargs)
            yield from data

    def dbsize(self, **kwargs: Any) -> int:
        """Return the number of keys in the current database."""
        return self.execute_command("DBSIZE", **kwargs)

    def flushall(self, asynchronous: bool = False, **kwargs: Any) -> bool:
        """Delete all keys in all databases."""
        args = []
        if asynchronous:
            args.append(b"ASYNC")
        return self.execute_command("FLUSHALL", *args, **kwargs)

    def flushdb(self, asynchronous: bool = False, **kwargs: Any) -> bool:
        """Delete all keys in the current database."""
        args = []
        if asynchronous:
            args.append(b"ASYNC")
        return self.execute_command("FLUSHDB", *args, **kwargs)

    def ping(self, **kwargs: Any) -> bool:
        """Return True if the store answers PONG."""
        return self.execute_command("PING", **kwargs)

    def echo(self, value: EncodableT, **kwargs: Any) -> Union[bytes, str]:
        """Return ``value`` as the store echoes it."""
        return self.execute_command("ECHO", value, **kwargs)

    def get(self, name: KeyT) -> Union[bytes, str, None]:
        """Return the value at key ``name``, or None if the key doesn't exist."""
        return self.execute_command("GET", name, keys=[name])

    def __getitem__(self, name: KeyT) -> Union[bytes, str]:
        value = self.get(name)
        if value is not None:
            return value
        raise KeyError(name)

    def set(
        self,
        name: KeyT,
        value: EncodableT,
        ex: Optional[ExpiryT] = None,
        px: Optional[ExpiryT] = None,
        nx: bool = False,
        xx: bool = False,
        keepttl: bool = False,
        get: bool = False,
        exat: Optional[AbsExpiryT] = None,
        pxat: Optional[AbsExpiryT] = None,
        ifeq: Union[bytes, str, None] = None,
        ifne: Union[bytes, str, None] = None,
        ifdeq: Optional[str] = None,
        ifdne: Optional[str] = None,
    ) -> Union[bool, str, bytes, None]:
        """Set the value at key ``name`` to ``value`` (see redis-py's ``Redis.set``).

        ``ex``/``px`` expire after seconds/milliseconds, ``exat``/``pxat`` at a Unix time,
        ``keepttl`` keeps the current TTL; ``nx`` sets only a new key, ``xx`` only an
        existing one; ``get`` returns the previous value. ``ifeq``/``ifne``/``ifdeq``/
        ``ifdne`` are passed through (Redis 8.4 conditional SET).
        """
        for arg_name, arg_value in (
            ("ifeq", ifeq),
            ("ifne", ifne),
            ("ifdeq", ifdeq),
            ("ifdne", ifdne),
        ):
            if arg_value is not None:
                warnings.warn(
                    f"Call to 'set' method with experimental usage of input argument/s "
                    f"'{arg_name}'.",
                    category=UserWarning,
                    stacklevel=2,
                )
        if not _at_most_one_value_set(
            (ex is not None, px is not None, exat is not None, pxat is not None, keepttl)
        ):
            raise DataError(
                "``ex``, ``px``, ``exat``, ``pxat``, and ``keepttl`` are mutually exclusive."
            )
        if not _at_most_one_value_set(
            (
                nx,
                xx,
                ifeq is not None,
                ifne is not None,
                ifdeq is not None,
                ifdne is not None,
            )
        ):
            raise DataError(
                "``nx``, ``xx``, ``ifeq``, ``ifne``, ``ifdeq``, ``ifdne`` are mutually exclusive."
            )
        pieces: List[EncodableT] = [name, value]
        options: Dict[str, Any] = {}
        if nx:
            pieces.append("NX")
        elif xx:
            pieces.append("XX")
        elif ifeq is not None:
            pieces.extend(("IFEQ", ifeq))
        elif ifne is not None:
            pieces.extend(("IFNE", ifne))
        elif ifdeq is not None:
            pieces.extend(("IFDEQ", ifdeq))
        elif ifdne is not None:
            pieces.extend(("IFDNE", ifdne))
        if get:
            pieces.append("GET")
            options["get"] = True
        pieces.extend(_extract_expire_flags(ex, px, exat, pxat))
        if keepttl:
            pieces.append("KEEPTTL")
        return self.execute_command("SET", *pieces, **options)

    def __setitem__(self, name: KeyT, value: EncodableT) -> None:
        self.set(name, value)

    # -- streams --------------------------------------------------------------------------

    def xack(self, name: KeyT, groupname: GroupT, *ids: StreamIdT) -> int:
        """Acknowledge one or more messages; return how many were pending."""
        return self.execute_command("XACK", name, groupname, *ids)

    def xackdel(
        self,
        name: KeyT,
        groupname: GroupT,
        *ids: StreamIdT,
        ref_policy: str = "KEEPREF",
    ) -> List[int]:
        """XACK and XDEL in one command; return one status code per ID."""
        if not ids:
            raise DataError("XACKDEL requires at least one message ID")
        if ref_policy not in _REF_POLICIES:
            raise DataError("XACKDEL ref_policy must be one of: KEEPREF, DELREF, ACKED")
        pieces: List[Any] = [name, groupname, ref_policy, "IDS", len(ids)]
        pieces.extend(ids)
        return self.execute_command("XACKDEL", *pieces)

    def xadd(
        self,
        name: KeyT,
        fields: Dict[FieldT, EncodableT],
        id: StreamIdT = "*",
        maxlen: Optional[int] = None,
        approximate: bool = True,
        nomkstream: bool = False,
        minid: Optional[StreamIdT] = None,
        limit: Optional[int] = None,
        ref_policy: Optional[str] = None,
        idmpauto: Optional[str] = None,
        idmp: Optional[Tuple[str, bytes]] = None,
    ) -> Union[bytes, str, None]:
        """Append an entry to a stream and return its ID.

        ``maxlen``/``minid`` (not both) trim the stream, approximately unless
        ``approximate=False``; ``limit`` caps the work of an approximate trim;
        ``nomkstream`` refuses to create the stream (the reply is then None);
        ``ref_policy`` is KEEPREF, DELREF or ACKED; ``idmpauto`` (a producer ID) or
        ``idmp`` (a ``(producer_id, idempotent_id)`` tuple) make the add idempotent and
        need ``id='*'``.
        """
        pieces: List[EncodableT] = []
        if maxlen is not None and minid is not None:
            raise DataError("Only one of ```maxlen``` or ```minid``` may be specified")
        if idmpauto is not None and idmp is not None:
            raise DataError("Only one of ```idmpauto``` or ```idmp``` may be specified")
        if (idmpauto is not None or idmp is not None) and id != "*":
            raise DataError("IDMPAUTO and IDMP can only be used with id='*'")
        if ref_policy is not None and ref_policy not in _REF_POLICIES:
            raise DataError("XADD ref_policy must be one of: KEEPREF, DELREF, ACKED")
        if nomkstream:
            pieces.append(b"NOMKSTREAM")
        if ref_policy is not None:
            pieces.append(ref_policy)
        if idmpauto is not None:
            pieces.extend([b"IDMPAUTO", idmpauto])
        if idmp is not None:
            if not isinstance(idmp, tuple) or len(idmp) != 2:
                raise DataError("XADD idmp must be a tuple of (producer_id, idempotent_id)")
            pieces.extend([b"IDMP", idmp[0], idmp[1]])
        if maxlen is not None:
            if not isinstance(maxlen, int) or maxlen < 0:
                raise DataError("XADD maxlen must be non-negative integer")
            pieces.append(b"MAXLEN")
            if approximate:
                pieces.append(b"~")
            pieces.append(str(maxlen))
        if minid is not None:
            pieces.append(b"MINID")
            if approximate:
                pieces.append(b"~")
            pieces.append(minid)
        if limit is not None:
            pieces.extend([b"LIMIT", limit])
        pieces.append(id)
        if not isinstance(fields, dict) or len(fields) == 0:
            raise DataError("XADD fields must be a non-empty dict")
        for pair in fields.items():
            pieces.extend(pair)
        return self.execute_command("XADD", name, *pieces)

    def xcfgset(
        self,
        name: KeyT,
        idmp_duration: Optional[int] = None,
        idmp_maxsize: Optional[int] = None,
    ) -> Union[bytes, str]:
        """Configure a stream's idempotency map (IDMP-DURATION 1..300 s, IDMP-MAXSIZE)."""
        if idmp_duration is None and idmp_maxsize is None:
            raise DataError("XCFGSET requires at least one of idmp_duration or idmp_maxsize")
        pieces: List[EncodableT] = []
        if idmp_duration is not None:
            if not isinstance(idmp_duration, int) or idmp_duration < 1 or idmp_duration > 300:
                raise DataError("XCFGSET idmp_duration must be an integer between 1 and 300")
            pieces.extend([b"IDMP-DURATION", idmp_duration])
        if idmp_maxsize is not None:
            if not isinstance(idmp_maxsize, int) or idmp_maxsize < 1 or idmp_maxsize > 1000000:
                raise DataError("XCFGSET idmp_maxsize must be an integer between 1 and 1,000,000")
            pieces.extend([b"IDMP-MAXSIZE", idmp_maxsize])
        return self.execute_command("XCFGSET", name, *pieces)

    def xautoclaim(
        self,
        name: KeyT,
        groupname: GroupT,
        consumername: ConsumerT,
        min_idle_time: int,
        start_id: StreamIdT = "0-0",
        count: Optional[int] = None,
        justid: bool = False,
    ) -> List[Any]:
        """Claim pending entries idle for at least ``min_idle_time`` ms, SCAN-like.

        Returns ``[next_start_id, claimed_entries, deleted_ids]`` (or only the claimed
        IDs with ``justid=True``).
        """
        try:
            if int(min_idle_time) < 0:
                raise DataError("XAUTOCLAIM min_idle_time must be a nonnegative integer")
        except TypeError:
            pass
        kwargs: Dict[str, Any] = {}
        pieces: List[Any] = [name, groupname, consumername, min_idle_time, start_id]
        try:
            if int(count) < 0:  # type: ignore[arg-type]
                raise DataError("XPENDING count must be a integer >= 0")
            pieces.extend([b"COUNT", count])
        except TypeError:
            pass
        if justid:
            pieces.append(b"JUSTID")
            kwargs["parse_justid"] = True
        return self.execute_command("XAUTOCLAIM", *pieces, **kwargs)

    def xclaim(
        self,
        name: KeyT,
        groupname: GroupT,
        consumername: ConsumerT,
        min_idle_time: int,
        message_ids: Union[List[StreamIdT], Tuple[StreamIdT, ...]],
        idle: Optional[int] = None,
        time: Optional[int] = None,
        retrycount: Optional[int] = None,
        force: bool = False,
        justid: bool = False,
    ) -> List[Any]:
        """Change the ownership of pending messages; return the claimed entries (or IDs)."""
        if not isinstance(min_idle_time, int) or min_idle_time < 0:
            raise DataError("XCLAIM min_idle_time must be a non negative integer")
        if not isinstance(message_ids, (list, tuple)) or not message_ids:
            raise DataError(
                "XCLAIM message_ids must be a non empty list or tuple of message IDs to claim"
            )
        kwargs: Dict[str, Any] = {}
        pieces: List[EncodableT] = [name, groupname, consumername, str(min_idle_time)]
        pieces.extend(list(message_ids))
        if idle is not None:
            if not isinstance(idle, int):
                raise DataError("XCLAIM idle must be an integer")
            pieces.extend((b"IDLE", str(idle)))
        if time is not None:
            if not isinstance(time, int):
                raise DataError("XCLAIM time must be an integer")
            pieces.extend((b"TIME", str(time)))
        if retrycount is not None:
            if not isinstance(retrycount, int):
                raise DataError("XCLAIM retrycount must be an integer")
            pieces.extend((b"RETRYCOUNT", str(retrycount)))
        if force:
            if not isinstance(force, bool):
                raise DataError("XCLAIM force must be a boolean")
            pieces.append(b"FORCE")
        if justid:
            if not isinstance(justid, bool):
                raise DataError("XCLAIM justid must be a boolean")
            pieces.append(b"JUSTID")
            kwargs["parse_justid"] = True
        return self.execute_command("XCLAIM", *pieces, **kwargs)

    def xdel(self, name: KeyT, *ids: StreamIdT) -> int:
        """Delete entries from a stream; return how many were deleted."""
        return self.execute_command("XDEL", name, *ids)

    def xdelex(
        self,
        name: KeyT,
        *ids: StreamIdT,
        ref_policy: str = "KEEPREF",
    ) -> List[int]:
        """XDEL with control over consumer-group references; one status code per ID."""
        if not ids:
            raise DataError("XDELEX requires at least one message ID")
        if ref_policy not in _REF_POLICIES:
            raise DataError("XDELEX ref_policy must be one of: KEEPREF, DELREF, ACKED")
        pieces: List[Any] = [name, ref_policy, "IDS", len(ids)]
        pieces.extend(ids)
        return self.execute_command("XDELEX", *pieces)

    def xgroup_create(
        self,
        name: KeyT,
        groupname: GroupT,
        id: StreamIdT = "$",
        mkstream: bool = False,
        entries_read: Optional[int] = None,
    ) -> bool:
        """Create a consumer group (``mkstream`` creates the stream if missing)."""
        pieces: List[EncodableT] = ["XGROUP CREATE", name, groupname, id]
        if mkstream:
            pieces.append(b"MKSTREAM")
        if entries_read is not None:
            pieces.extend(["ENTRIESREAD", entries_read])
        return self.execute_command(*pieces)

    def xgroup_delconsumer(self, name: KeyT, groupname: GroupT, consumername: ConsumerT) -> int:
        """Delete a consumer; return the number of messages it had pending."""
        return self.execute_command("XGROUP DELCONSUMER", name, groupname, consumername)

    def xgroup_destroy(self, name: KeyT, groupname: GroupT) -> bool:
        """Destroy a consumer group; return whether it existed."""
        return self.execute_command("XGROUP DESTROY", name, groupname)

    def xgroup_createconsumer(self, name: KeyT, groupname: GroupT, consumername: ConsumerT) -> int:
        """Create a consumer; return 1 if it was created, 0 if it existed."""
        return self.execute_command("XGROUP CREATECONSUMER", name, groupname, consumername)

    def xgroup_setid(
        self,
        name: KeyT,
        groupname: GroupT,
        id: StreamIdT,
        entries_read: Optional[int] = None,
    ) -> bool:
        """Set a consumer group's last delivered ID."""
        pieces: List[Any] = [name, groupname, id]
        if entries_read is not None:
            pieces.extend(["ENTRIESREAD", entries_read])
        return self.execute_command("XGROUP SETID", *pieces)

    def xinfo_consumers(self, name: KeyT, groupname: GroupT) -> List[Dict[str, Any]]:
        """Return information about the consumers of a group."""
        return self.execute_command("XINFO CONSUMERS", name, groupname)

    def xinfo_groups(self, name: KeyT) -> List[Dict[str, Any]]:
        """Return information about the consumer groups of a stream."""
        return self.execute_command("XINFO GROUPS", name)

    def xinfo_stream(self, name: KeyT, full: bool = False) -> Dict[str, Any]:
        """Return information about a stream (``full=True`` for XINFO STREAM FULL)."""
        pieces: List[EncodableT] = [name]
        options: Dict[str, Any] = {}
        if full:
            pieces.append(b"FULL")
            options = {"full": full}
        return self.execute_command("XINFO STREAM", *pieces, **options)

    def xlen(self, name: KeyT) -> int:
        """Return the number of entries in a stream."""
        return self.execute_command("XLEN", name, keys=[name])

    def xnack(
        self,
        name: KeyT,
        groupname: GroupT,
        mode: str,
        *ids: StreamIdT,
        retrycount: Optional[int] = None,
        force: bool = False,
    ) -> int:
        """Negatively acknowledge pending messages (mode SILENT, FAIL or FATAL)."""
        if not ids:
            raise DataError("XNACK requires at least one message ID")
        if mode not in _NACK_MODES:
            raise DataError("XNACK mode must be one of: SILENT, FAIL, FATAL")
        pieces: List[Any] = [name, groupname, mode, "IDS", len(ids)]
        pieces.extend(ids)
        if retrycount is not None:
            if retrycount < 0:
                raise DataError("XNACK retrycount must be >= 0")
            pieces.extend([b"RETRYCOUNT", retrycount])
        if force:
            pieces.append(b"FORCE")
        return self.execute_command("XNACK", *pieces)

    def xpending(self, name: KeyT, groupname: GroupT) -> Dict[str, Any]:
        """Return the summary of a group's pending messages."""
        return self.execute_command("XPENDING", name, groupname, keys=[name])

    def xpending_range(
        self,
        name: KeyT,
        groupname: GroupT,
        min: Optional[StreamIdT],
        max: Optional[StreamIdT],
        count: Optional[int],
        consumername: Optional[ConsumerT] = None,
        idle: Optional[int] = None,
    ) -> List[Dict[str, Any]]:
        """Return the pending messages of a group in an ID range (extended XPENDING)."""
        if {min, max, count} == {None}:
            if idle is not None or consumername is not None:
                raise DataError(
                    "if XPENDING is provided with idle time"
                    " or consumername, it must be provided"
                    " with min, max and count parameters"
                )
            return self.xpending(name, groupname)  # type: ignore[return-value]
        pieces: List[Any] = [name, groupname]
        if min is None or max is None or count is None:
            raise DataError(
                "XPENDING must be provided with min, max and count parameters, or none of them."
            )
        try:
            if int(idle) < 0:  # type: ignore[arg-type]
                raise DataError("XPENDING idle must be a integer >= 0")
            pieces.extend(["IDLE", idle])
        except TypeError:
            pass
        try:
            if int(count) < 0:
                raise DataError("XPENDING count must be a integer >= 0")
            pieces.extend([min, max, count])
        except TypeError:
            pass
        if consumername:
            pieces.append(consumername)
        return self.execute_command("XPENDING", *pieces, parse_detail=True)

    def xrange(
        self,
        name: KeyT,
        min: StreamIdT = "-",
        max: StreamIdT = "+",
        count: Optional[int] = None,
    ) -> Optional[List[Tuple[Any, Dict[Any, Any]]]]:
        """Return the entries with IDs between ``min`` and ``max`` (inclusive)."""
        pieces: List[EncodableT] = [min, max]
        if count is not None:
            if not isinstance(count, int) or count < 1:
                raise DataError("XRANGE count must be a positive integer")
            pieces.append(b"COUNT")
            pieces.append(str(count))
        return self.execute_command("XRANGE", name, *pieces, keys=[name])

    def xread(
        self,
        streams: Dict[KeyT, StreamIdT],
        count: Optional[int] = None,
        block: Optional[int] = None,
        max_count: Optional[int] = None,
        max_size: Optional[int] = None,
    ) -> Any:
        """Read entries after the given IDs from one or more streams.

        ``block`` waits up to that many milliseconds (0: forever) for new entries;
        ``count`` limits entries per stream; ``max_count``/``max_size`` cap the whole
        reply (Redis 8.10 options, passed through).
        """
        pieces: List[EncodableT] = []
        if block is not None:
            if not isinstance(block, int) or block < 0:
                raise DataError("XREAD block must be a non-negative integer")
            pieces.append(b"BLOCK")
            pieces.append(str(block))
        if count is not None:
            if not isinstance(count, int) or count < 1:
                raise DataError("XREAD count must be a positive integer")
            pieces.append(b"COUNT")
            pieces.append(str(count))
        if max_count is not None:
            if not isinstance(max_count, int) or max_count < 1:
                raise DataError("XREAD max_count must be a positive integer")
            if count is not None and max_count < count:
                raise DataError("XREAD max_count must be greater than or equal to count")
            pieces.append(b"MAXCOUNT")
            pieces.append(str(max_count))
        if max_size is not None:
            if not isinstance(max_size, int) or max_size < 1:
                raise DataError("XREAD max_size must be a positive integer")
            pieces.append(b"MAXSIZE")
            pieces.append(str(max_size))
        if not isinstance(streams, dict) or len(streams) == 0:
            raise DataError("XREAD streams must be a non empty dict")
        pieces.append(b"STREAMS")
        keys, values = zip(*streams.items())
        pieces.extend(keys)
        pieces.extend(values)
        return self.execute_command("XREAD", *pieces, keys=keys)

    def xreadgroup(
        self,
        groupname: str,
        consumername: str,
        streams: Dict[KeyT, StreamIdT],
        count: Optional[int] = None,
        block: Optional[int] = None,
        noack: bool = False,
        claim_min_idle_time: Optional[int] = None,
        max_count: Optional[int] = None,
        max_size: Optional[int] = None,
    ) -> Any:
        """Read from streams through a consumer group (``'>'``: new messages).

        ``noack`` skips the PEL; ``claim_min_idle_time`` also delivers pending entries
        idle that long (XREADGROUP CLAIM); other options as in :meth:`xread`.
        """
        options: Dict[str, Any] = {}
        pieces: List[EncodableT] = [b"GROUP", groupname, consumername]
        if count is not None:
            if not isinstance(count, int) or count < 1:
                raise DataError("XREADGROUP count must be a positive integer")
            pieces.append(b"COUNT")
            pieces.append(str(count))
        if max_count is not None:
            if not isinstance(max_count, int) or max_count < 1:
                raise DataError("XREADGROUP max_count must be a positive integer")
            if count is not None and max_count < count:
                raise DataError("XREADGROUP max_count must be greater than or equal to count")
            pieces.append(b"MAXCOUNT")
            pieces.append(str(max_count))
        if max_size is not None:
            if not isinstance(max_size, int) or max_size < 1:
                raise DataError("XREADGROUP max_size must be a positive integer")
            pieces.append(b"MAXSIZE")
            pieces.append(str(max_size))
        if block is not None:
            if not isinstance(block, int) or block < 0:
                raise DataError("XREADGROUP block must be a non-negative integer")
            pieces.append(b"BLOCK")
            pieces.append(str(block))
        if noack:
            pieces.append(b"NOACK")
        if claim_min_idle_time is not None:
            if not isinstance(claim_min_idle_time, int) or claim_min_idle_time < 0:
                raise DataError("XREADGROUP claim_min_idle_time must be a non-negative integer")
            pieces.append(b"CLAIM")
            pieces.append(claim_min_idle_time)
            options["claim_min_idle_time"] = claim_min_idle_time
        if not isinstance(streams, dict) or len(streams) == 0:
            raise DataError("XREADGROUP streams must be a non empty dict")
        pieces.append(b"STREAMS")
        pieces.extend(streams.keys())
        pieces.extend(streams.values())
        return self.execute_command("XREADGROUP", *pieces, **options)

    def xrevrange(
        self,
        name: KeyT,
        max: StreamIdT = "+",
        min: StreamIdT = "-",
        count: Optional[int] = None,
    ) -> Optional[List[Tuple[Any, Dict[Any, Any]]]]:
        """Return the entries between ``max`` and ``min``, newest first."""
        pieces: List[EncodableT] = [max, min]
        if count is not None:
            if not isinstance(count, int) or count < 1:
                raise DataError("XREVRANGE count must be a positive integer")
            pieces.append(b"COUNT")
            pieces.append(str(count))
        return self.execute_command("XREVRANGE", name, *pieces, keys=[name])

    def xtrim(
        self,
        name: KeyT,
        maxlen: Optional[int] = None,
        approximate: bool = True,
        minid: Optional[StreamIdT] = None,
        limit: Optional[int] = None,
        ref_policy: Optional[str] = None,
    ) -> int:
        """Trim a stream by ``maxlen`` or ``minid``; return the number of deleted entries."""
        pieces: List[EncodableT] = []
        if maxlen is not None and minid is not None:
            raise DataError("Only one of ``maxlen`` or ``minid`` may be specified")
        if maxlen is None and minid is None:
            raise DataError("One of ``maxlen`` or ``minid`` must be specified")
        if ref_policy is not None and ref_policy not in _REF_POLICIES:
            raise DataError("XTRIM ref_policy must be one of: KEEPREF, DELREF, ACKED")
        if maxlen is not None:
            pieces.append(b"MAXLEN")
        if minid is not None:
            pieces.append(b"MINID")
        if approximate:
            pieces.append(b"~")
        if maxlen is not None:
            pieces.append(maxlen)
        if minid is not None:
            pieces.append(minid)
        if limit is not None:
            pieces.append(b"LIMIT")
            pieces.append(limit)
        if ref_policy is not None:
            pieces.append(ref_policy)
        return self.execute_command("XTRIM", name, *pieces)


# ---------------------------------------------------------------------------------------
# Client
# ---------------------------------------------------------------------------------------


class Redis(CoreCommands):
    """In-process replacement for ``redis.Redis``.

    Takes every argument ``redis.Redis`` takes, in the same order; the ones about
    networking (host, port, password, timeouts, TLS, retries, pools...) are accepted and
    ignored. ``db``, ``encoding``, ``encoding_errors``, ``decode_responses``,
    ``protocol`` and ``legacy_responses`` mean what they mean in redis-py. ``store``
    (keyword only) selects the store; by default the process-wide
    ``xstreams.default_store()``.
    """

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> Redis:
        """Return a client configured from a ``redis://host:port/db?opt=value`` URL.

        The database is taken from a ``db`` query option, else from the path, else from
        ``db=``. Query options override keyword arguments, as in redis-py.
        """
        kwargs.pop("single_connection_client", None)
        url_options = _parse_url(url)
        accepted = _INIT_PARAMETERS
        for key, value in url_options.items():
            if key in accepted:
                kwargs[key] = value
        return cls(**kwargs)

    def __init__(
        self,
        host: str = "localhost",
        port: int = 6379,
        db: int = 0,
        password: Optional[str] = None,
        socket_timeout: Optional[float] = None,
        socket_connect_timeout: Optional[float] = None,
        socket_read_size: int = 65536,
        socket_keepalive: Optional[bool] = True,
        socket_keepalive_options: Any = None,
        connection_pool: Any = None,
        unix_socket_path: Optional[str] = None,
        encoding: str = "utf-8",
        encoding_errors: str = "strict",
        decode_responses: bool = False,
        retry_on_timeout: bool = False,
        retry: Any = None,
        retry_on_error: Optional[List[type]] = None,
        ssl: bool = False,
        ssl_keyfile: Optional[str] = None,
        ssl_certfile: Optional[str] = None,
        ssl_cert_reqs: Any = "required",
        ssl_include_verify_flags: Any = None,
        ssl_exclude_verify_flags: Any = None,
        ssl_ca_certs: Optional[str] = None,
        ssl_ca_path: Optional[str] = None,
        ssl_ca_data: Optional[str] = None,
        ssl_check_hostname: bool = True,
        ssl_password: Optional[str] = None,
        ssl_validate_ocsp: bool = False,
        ssl_validate_ocsp_stapled: bool = False,
        ssl_ocsp_context: Any = None,
        ssl_ocsp_expected_cert: Optional[str] = None,
        ssl_min_version: Any = None,
        ssl_ciphers: Optional[str] = None,
        max_connections: Optional[int] = None,
        single_connection_client: bool = False,
        health_check_interval: int = 0,
        client_name: Optional[str] = None,
        lib_name: Any = None,
        lib_version: Any = None,
        driver_info: Any = None,
        username: Optional[str] = None,
        redis_connect_func: Optional[Callable[..., Any]] = None,
        credential_provider: Any = None,
        protocol: Optional[int] = None,
        legacy_responses: bool = True,
        cache: Any = None,
        cache_config: Any = None,
        event_dispatcher: Any = None,
        maint_notifications_config: Any = None,
        oss_cluster_maint_notifications_handler: Any = None,
        *,
        store: Any = None,
        path: Any = None,
    ) -> None:
        if connection_pool is not None:
            # Honour the settings of a redis-py pool (its connections are never used).
            pool_kwargs = getattr(connection_pool, "connection_kwargs", None) or {}
            db = pool_kwargs.get("db", db)
            encoding = pool_kwargs.get("encoding", encoding)
            encoding_errors = pool_kwargs.get("encoding_errors", encoding_errors)
            decode_responses = pool_kwargs.get("decode_responses", decode_responses)
            protocol = pool_kwargs.get("protocol", protocol)
            legacy_responses = pool_kwargs.get("legacy_responses", legacy_responses)
        if protocol is None:
            wire = _DEFAULT_WIRE_PROTOCOL
        else:
            try:
                wire = int(protocol)
            except (TypeError, ValueError):
                raise XConnectionError("protocol must be an integer") from None
            if wire < 2 or wire > 3:
                raise XConnectionError("protocol must be either 2 or 3")
        if store is None and path is not None:
            import xstreams

            store = xstreams.open_store(path)
        self._store = store
        self._store_lock = threading.Lock()
        self._db = int(db)
        self._protocol = protocol
        self._wire = wire
        self._legacy_responses = legacy_responses
        self._encoder = Encoder(encoding, encoding_errors, decode_responses)
        # With strict UTF-8 the store converts arguments itself, exactly as Encoder.encode
        # (same bytes, same DataError), so the Python loop is skipped.
        # Only an xstreams Store does that: any other store object gets packed bytes.
        codec = codecs.lookup(encoding).name
        self._utf8_strict = codec == "utf-8" and encoding_errors == "strict"
        self.response_callbacks: CaseInsensitiveDict = CaseInsensitiveDict(
            get_response_callbacks(protocol, legacy_responses)
        )

    # -- plumbing -----------------------------------------------------------------------

    def __repr__(self) -> str:
        return f"<{type(self).__module__}.{type(self).__name__}(db={self._db})>"

    @property
    def store(self) -> Any:
        """The store this client runs its commands on."""
        store = self._store
        if store is None:
            with self._store_lock:
                if self._store is None:
                    self._store = _resolve_default_store()
                store = self._store
        return store

    @property
    def db(self) -> int:
        """The database number all commands of this client use."""
        return self._db

    def get_encoder(self) -> Encoder:
        """Return the encoder that turns arguments into bytes and decodes replies."""
        return self._encoder

    def get_connection_kwargs(self) -> Dict[str, Any]:
        """The redis-py connection settings that still mean something in-process."""
        enc = self._encoder
        return {
            "db": self._db,
            "encoding": enc.encoding,
            "encoding_errors": enc.encoding_errors,
            "decode_responses": enc.decode_responses,
            "protocol": self._protocol,
            "legacy_responses": self._legacy_responses,
        }

    def set_response_callback(self, command: str, callback: ResponseCallback) -> None:
        """Set a custom response callback for ``command``."""
        self.response_callbacks[command] = callback

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Pipeline:
        """Return a pipeline that queues commands and runs them on ``execute()``.

        With ``transaction=True`` (the default) the queued commands run atomically, as
        in MULTI/EXEC.
        """
        return Pipeline(self, transaction, shard_hint)

    def __enter__(self) -> Redis:
        return self

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to release in-process; the client stays usable, as in redis-py."""

    def _tokens(self, args: Sequence[Any]) -> List[Any]:
        """The command's arguments for the store: as ``_pack`` encodes them, or (with
        strict UTF-8) left for the store to convert the same way."""
        if not (self._utf8_strict and isinstance(self.store, _NativeStore)):
            return self._pack(args)
        first = args[0]
        if isinstance(first, str):
            return [*first.encode().split(), *args[1:]]
        if isinstance(first, bytes) and b" " in first:
            return [*first.split(), *args[1:]]
        return list(args)

    def _pack(self, args: Sequence[Any]) -> List[bytes]:
        """Encode a command as redis-py would put it on the wire."""
        first = args[0]
        if isinstance(first, str):
            tokens: List[Any] = first.encode().split()
            rest = args[1:]
        elif isinstance(first, bytes) and b" " in first:
            tokens = first.split()
            rest = args[1:]
        else:
            tokens = []
            rest = args
        encode = self._encoder.encode
        tokens.extend(encode(a) for a in rest)
        return tokens

    def _parse(self, command_name: Any, response: Any, options: Dict[str, Any]) -> Any:
        """Decode a raw reply and apply the response callback, as redis-py does."""
        if NEVER_DECODE in options:
            options.pop(NEVER_DECODE)
        elif self._encoder.decode_responses:
            response = _decode_reply(
                response, self._encoder.encoding, self._encoder.encoding_errors
            )
        options.pop(EMPTY_RESPONSE, None)
        options.pop("keys", None)
        callbacks = self.response_callbacks
        if isinstance(command_name, str) and command_name in callbacks:
            return callbacks[command_name](response, **options)
        return response

    def execute_command(self, *args: Any, **options: Any) -> Any:
        """Run one command and return its reply after the response callback."""
        command_name = args[0]
        tokens = self._tokens(args)
        try:
            response = self.store.execute_command(*tokens, db=self._db, protocol=self._wire)
        except ResponseError:
            if EMPTY_RESPONSE in options:
                return options[EMPTY_RESPONSE]
            raise
        return self._parse(command_name, response, options)

    # -- Arrow batch paths (xstreams extensions, not in redis-py) ------------------------

    def _arrow_store(self, method: str) -> Any:
        store = self.store
        fn = getattr(store, method, None)
        if fn is None:
            raise XStreamsError(f"this client's store has no {method}() (not an xstreams.Store)")
        return fn

    def xadd_batch(self, name: KeyT, batch: Any, **options: Any) -> Any:
        """Append the rows of ``batch`` (a pyarrow RecordBatch or Table, or a pandas
        DataFrame) to stream ``name``: one XADD per row, all under one lock, each with the
        semantics of that XADD alone. Options and result as ``Store.xadd_batch`` (a
        ``pyarrow.RecordBatch`` of ``id`` and ``duplicate``)."""
        fn = self._arrow_store("xadd_batch")
        return fn(self._encoder.encode(name), batch, db=self._db, **options)

    def xrange_arrow(
        self,
        name: KeyT,
        min: StreamIdT = "-",
        max: StreamIdT = "+",
        count: Optional[int] = None,
        **options: Any,
    ) -> Any:
        """XRANGE as a ``pyarrow.RecordBatch`` (``id``, ``ms``, ``seq``, ``fields``; see
        ``Store.xrange_arrow`` for ``schema=`` and ``decode=``)."""
        fn = self._arrow_store("xrange_arrow")
        enc = self._encoder.encode
        return fn(enc(name), enc(min), enc(max), count, db=self._db, **options)

    def xrevrange_arrow(
        self,
        name: KeyT,
        max: StreamIdT = "+",
        min: StreamIdT = "-",
        count: Optional[int] = None,
        **options: Any,
    ) -> Any:
        """XREVRANGE as a ``pyarrow.RecordBatch`` (newest first)."""
        fn = self._arrow_store("xrevrange_arrow")
        enc = self._encoder.encode
        return fn(enc(name), enc(max), enc(min), count, db=self._db, **options)

    def xread_arrow(
        self,
        streams: Dict[KeyT, StreamIdT],
        count: Optional[int] = None,
        block: Optional[int] = None,
        **options: Any,
    ) -> Any:
        """XREAD as a ``pyarrow.RecordBatch`` with a ``stream`` column (empty when
        nothing arrived)."""
        fn = self._arrow_store("xread_arrow")
        enc = self._encoder.encode
        return fn({enc(k): enc(v) for k, v in streams.items()}, count, block, db=self._db,
                  **options)  # fmt: skip

    def xreadgroup_arrow(
        self,
        groupname: GroupT,
        consumername: ConsumerT,
        streams: Dict[KeyT, StreamIdT],
        count: Optional[int] = None,
        block: Optional[int] = None,
        noack: bool = False,
        **options: Any,
    ) -> Any:
        """XREADGROUP as a ``pyarrow.RecordBatch`` with a ``stream`` column (a deleted
        pending entry has null ``fields``)."""
        fn = self._arrow_store("xread_arrow")
        enc = self._encoder.encode
        return fn(
            {enc(k): enc(v) for k, v in streams.items()},
            count,
            block,
            group=enc(groupname),
            consumer=enc(consumername),
            noack=noack,
            db=self._db,
            **options,
        )


StrictRedis = Redis

_INIT_PARAMETERS = frozenset(inspect.signature(Redis.__init__).parameters) - {"self"}


class Pipeline(CoreCommands):
    """Queues commands and runs them together on :meth:`execute`.

    Created by :meth:`Redis.pipeline`. Command methods return the pipeline itself, so
    calls can be chained. With ``transaction=True`` the commands run atomically.
    """

    def __init__(self, client: Redis, transaction: bool, shard_hint: Any) -> None:
        self._client = client
        self.transaction = transaction
        self.shard_hint = shard_hint
        self.response_callbacks = client.response_callbacks
        self.command_stack: List[Tuple[Tuple[Any, ...], Dict[str, Any]]] = []
        self.explicit_transaction = False

    def __repr__(self) -> str:
        return f"<{type(self).__module__}.{type(self).__name__}(db={self._client.db})>"

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        self.reset()

    def __len__(self) -> int:
        return len(self.command_stack)

    def __bool__(self) -> bool:
        """A pipeline is always true, even when empty."""
        return True

    def reset(self) -> None:
        """Forget the queued commands."""
        self.command_stack = []
        self.explicit_transaction = False

    def close(self) -> None:
        """Close the pipeline (same as :meth:`reset`)."""
        self.reset()

    def multi(self) -> None:
        """Make the queued commands run as a transaction even if ``transaction=False``."""
        if self.explicit_transaction:
            raise XStreamsError("Cannot issue nested calls to MULTI")
        if self.command_stack:
            raise XStreamsError("Commands without an initial WATCH have already been issued")
        self.explicit_transaction = True

    def execute_command(self, *args: Any, **options: Any) -> Pipeline:
        """Queue a command; return the pipeline."""
        self.command_stack.append((args, options))
        return self

    def pipeline_execute_command(self, *args: Any, **options: Any) -> Pipeline:
        """Queue a command; return the pipeline (redis-py name)."""
        self.command_stack.append((args, options))
        return self

    def execute(self, raise_on_error: bool = True) -> List[Any]:
        """Run the queued commands and return their replies in order.

        A command that fails leaves its exception in the list; with ``raise_on_error``
        (the default) the first one is raised instead, prefixed like redis-py's
        ``Command # N (...) of pipeline caused error: ...``. In a transaction, a command
        that the store rejects before running anything (unknown command, wrong number
        of arguments) aborts the whole transaction and its error is raised.
        """
        stack = self.command_stack
        if not stack:
            return []
        try:
            if self.transaction or self.explicit_transaction:
                return self._execute_transaction(stack, raise_on_error)
            return self._execute_pipeline(stack, raise_on_error)
        finally:
            self.reset()

    def _run(self, stack: List[Tuple[Tuple[Any, ...], Dict[str, Any]]], atomic: bool) -> List[Any]:
        client = self._client
        commands = [tuple(client._tokens(args)) for args, _ in stack]
        results = client.store.execute_many(
            commands, db=client.db, atomic=atomic, protocol=client._wire
        )
        results = list(results)
        if len(results) != len(stack):
            raise ResponseError("Wrong number of response items from pipeline execution")
        return results

    def _execute_transaction(
        self, stack: List[Tuple[Tuple[Any, ...], Dict[str, Any]]], raise_on_error: bool
    ) -> List[Any]:
        results = self._run(stack, atomic=True)
        aborted = [
            i
            for i, r in enumerate(results)
            if isinstance(r, ResponseError) and getattr(r, "code", None) == "EXECABORT"
        ]
        if aborted:
            # The transaction was discarded: raise the first command's own error.
            for i, r in enumerate(results):
                if isinstance(r, BaseException) and i not in aborted:
                    _annotate_exception(r, i + 1, stack[i][0])
                    raise r
            raise results[aborted[0]]
        if raise_on_error:
            self._raise_first_error(stack, results)
        data = []
        for r, (args, options) in zip(results, stack):
            if not isinstance(r, BaseException):
                r = self._client._parse(args[0], r, dict(options))
            data.append(r)
        return data

    def _execute_pipeline(
        self, stack: List[Tuple[Tuple[Any, ...], Dict[str, Any]]], raise_on_error: bool
    ) -> List[Any]:
        results = self._run(stack, atomic=False)
        responses = []
        for r, (args, options) in zip(results, stack):
            if isinstance(r, BaseException):
                if isinstance(r, ResponseError) and EMPTY_RESPONSE in options:
                    r = options[EMPTY_RESPONSE]
            else:
                r = self._client._parse(args[0], r, dict(options))
            responses.append(r)
        if raise_on_error:
            self._raise_first_error(stack, responses)
        return responses

    @staticmethod
    def _raise_first_error(
        stack: List[Tuple[Tuple[Any, ...], Dict[str, Any]]], responses: List[Any]
    ) -> None:
        for i, r in enumerate(responses):
            if isinstance(r, BaseException):
                _annotate_exception(r, i + 1, stack[i][0])
                raise r
