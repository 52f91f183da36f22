"""Response callbacks of the redis-py compatible client.

The same post-processing as redis-py 8.1 (``redis._parsers.helpers`` and
``response_callbacks``) for the commands an xstreams store runs, in the five tables
redis-py chooses from by (protocol, legacy_responses).
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from .encoding import ResponseCallback, _str_if_bytes


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


def _parse_info(response: Any, **options: Any) -> Dict[str, Any]:
    """INFO's text as a dict: ``key:value`` lines, numbers converted, ``a=1,b=2`` values
    as dicts and ``a,b`` values as lists (redis-py's ``parse_info``)."""
    info: Dict[str, Any] = {}
    text = _str_if_bytes(response)

    def value_of(value: str) -> Any:
        if "," not in value and "=" not in value:
            try:
                return float(value) if "." in value else int(value)
            except ValueError:
                return value
        if "=" not in value:
            return [value_of(v) for v in value.split(",") if v]
        sub: Dict[str, Any] = {}
        for item in value.split(","):
            if not item:
                continue
            if "=" in item:
                k, v = item.rsplit("=", 1)
                sub[k] = value_of(v)
            else:
                sub[item] = True
        return sub

    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if ":" not in line:
            info.setdefault("__raw__", []).append(line)
            continue
        key, value = line.split(":", 1)
        if key == "cmdstat_host":
            key, value = line.rsplit(":", 1)
        if key == "module":
            info.setdefault("modules", []).append(value_of(value))
        else:
            info[key] = value_of(value)
    return info


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
    "INFO": _parse_info,
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
