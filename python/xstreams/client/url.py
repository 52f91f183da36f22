"""redis:// URLs as client keyword arguments, as redis-py's ``from_url`` reads them."""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional
from urllib.parse import parse_qs, unquote, urlparse


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


def from_url_kwargs(url: str, accepted: frozenset, kwargs: Dict[str, Any]) -> Dict[str, Any]:
    """``kwargs`` with the URL's options among ``accepted`` applied over them (query
    options override keyword arguments, as in redis-py)."""
    kwargs.pop("single_connection_client", None)
    for key, value in _parse_url(url).items():
        if key in accepted:
            kwargs[key] = value
    return kwargs
