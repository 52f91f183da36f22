"""Keyspace command methods of the redis-py compatible client (keys, strings, expiry).

Each method builds the same command as redis-py 8.1 and hands it to
``self.execute_command``: a :class:`~xstreams.client.Redis` runs it at once, a
:class:`~xstreams.client.Pipeline` queues it.
"""

from __future__ import annotations

import datetime
import warnings
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from ..exceptions import DataError
from .encoding import (
    NEVER_DECODE,
    AbsExpiryT,
    EncodableT,
    ExpiryT,
    KeyT,
    PatternT,
)


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


def _expire_options(nx: bool, xx: bool, gt: bool, lt: bool) -> List[str]:
    """The NX/XX/GT/LT flags of the EXPIRE family, in redis-py's order."""
    return [flag for flag, on in (("NX", nx), ("XX", xx), ("GT", gt), ("LT", lt)) if on]


class KeyspaceCommands:
    """Key, string and expiry commands (redis-py names and signatures)."""

    def execute_command(self, *args: Any, **options: Any) -> Any:  # pragma: no cover
        raise NotImplementedError

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

    # -- expiry -------------------------------------------------------------------------

    def expire(
        self,
        name: KeyT,
        time: ExpiryT,
        nx: bool = False,
        xx: bool = False,
        gt: bool = False,
        lt: bool = False,
    ) -> bool:
        """Expire key ``name`` in ``time`` seconds (an int or a ``timedelta``).

        ``nx``: only if it has no expiry; ``xx``: only if it has one; ``gt``/``lt``: only
        if the new expiry is later/earlier than the current one.
        """
        if isinstance(time, datetime.timedelta):
            time = int(time.total_seconds())
        return self.execute_command("EXPIRE", name, time, *_expire_options(nx, xx, gt, lt))

    def pexpire(
        self,
        name: KeyT,
        time: ExpiryT,
        nx: bool = False,
        xx: bool = False,
        gt: bool = False,
        lt: bool = False,
    ) -> bool:
        """Expire key ``name`` in ``time`` milliseconds (an int or a ``timedelta``)."""
        if isinstance(time, datetime.timedelta):
            time = int(time.total_seconds() * 1000)
        return self.execute_command("PEXPIRE", name, time, *_expire_options(nx, xx, gt, lt))

    def expireat(
        self,
        name: KeyT,
        when: AbsExpiryT,
        nx: bool = False,
        xx: bool = False,
        gt: bool = False,
        lt: bool = False,
    ) -> bool:
        """Expire key ``name`` at ``when`` (Unix seconds or a ``datetime``)."""
        if isinstance(when, datetime.datetime):
            when = int(when.timestamp())
        return self.execute_command("EXPIREAT", name, when, *_expire_options(nx, xx, gt, lt))

    def pexpireat(
        self,
        name: KeyT,
        when: AbsExpiryT,
        nx: bool = False,
        xx: bool = False,
        gt: bool = False,
        lt: bool = False,
    ) -> bool:
        """Expire key ``name`` at ``when`` (Unix milliseconds or a ``datetime``)."""
        if isinstance(when, datetime.datetime):
            when = int(when.timestamp() * 1000)
        return self.execute_command("PEXPIREAT", name, when, *_expire_options(nx, xx, gt, lt))

    def ttl(self, name: KeyT) -> int:
        """Seconds until key ``name`` expires (-1: no expiry, -2: no such key)."""
        return self.execute_command("TTL", name)

    def pttl(self, name: KeyT) -> int:
        """Milliseconds until key ``name`` expires (-1: no expiry, -2: no such key)."""
        return self.execute_command("PTTL", name)

    def expiretime(self, key: str) -> int:
        """The Unix time (seconds) at which ``key`` expires (-1 / -2 as :meth:`ttl`)."""
        return self.execute_command("EXPIRETIME", key)

    def pexpiretime(self, key: str) -> int:
        """The Unix time (milliseconds) at which ``key`` expires (-1 / -2 as :meth:`ttl`)."""
        return self.execute_command("PEXPIRETIME", key)

    def persist(self, name: KeyT) -> bool:
        """Remove the expiry of key ``name``; return whether it had one."""
        return self.execute_command("PERSIST", name)

    # -- keys as values ---------------------------------------------------------------

    def unlink(self, *names: KeyT) -> int:
        """Delete keys (as :meth:`delete`); return how many existed."""
        return self.execute_command("UNLINK", *names)

    def rename(self, src: KeyT, dst: KeyT) -> bool:
        """Rename key ``src`` to ``dst`` (replacing ``dst``)."""
        return self.execute_command("RENAME", src, dst)

    def renamenx(self, src: KeyT, dst: KeyT) -> bool:
        """Rename key ``src`` to ``dst`` only if ``dst`` does not exist."""
        return self.execute_command("RENAMENX", src, dst)

    def copy(
        self,
        source: str,
        destination: str,
        destination_db: Optional[str] = None,
        replace: bool = False,
    ) -> bool:
        """Copy key ``source`` to ``destination`` (in ``destination_db`` if given);
        ``replace`` overwrites an existing destination."""
        params: List[Any] = [source, destination]
        if destination_db is not None:
            params.extend(["DB", destination_db])
        if replace:
            params.append("REPLACE")
        return self.execute_command("COPY", *params)

    def dump(self, name: KeyT) -> Optional[bytes]:
        """The serialized value of key ``name`` (Redis's DUMP format), never decoded."""
        return self.execute_command("DUMP", name, **{NEVER_DECODE: []})

    def restore(
        self,
        name: KeyT,
        ttl: float,
        value: EncodableT,
        replace: bool = False,
        absttl: bool = False,
        idletime: Optional[int] = None,
        frequency: Optional[int] = None,
    ) -> Union[bytes, str]:
        """Create key ``name`` from a :meth:`dump` payload (``ttl`` in ms, 0: none)."""
        params: List[Any] = [name, ttl, value]
        if replace:
            params.append("REPLACE")
        if absttl:
            params.append("ABSTTL")
        if idletime is not None:
            params.append("IDLETIME")
            try:
                params.append(int(idletime))
            except ValueError:
                raise DataError("idletimemust be an integer") from None
        if frequency is not None:
            params.append("FREQ")
            try:
                params.append(int(frequency))
            except ValueError:
                raise DataError("frequency must be an integer") from None
        return self.execute_command("RESTORE", *params)
