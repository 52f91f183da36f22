"""Types, argument encoding and reply decoding of the redis-py compatible client.

The same names and behaviour as redis-py 8.1's ``redis.typing`` and ``Encoder``.
"""

from __future__ import annotations

import datetime
from typing import Any, Callable, Union

from ..exceptions import DataError

# Types (same names as in redis.typing)
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
