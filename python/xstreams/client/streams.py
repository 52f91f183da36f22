"""Stream command methods of the redis-py compatible client (redis-py 8.1's names,
signatures, client-side checks and ``DataError`` messages).

Each method builds the same command as redis-py and hands it to ``self.execute_command``.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

from .._xstreams import _DATA_ERRORS
from ..exceptions import DataError
from .encoding import (
    ConsumerT,
    EncodableT,
    FieldT,
    GroupT,
    KeyT,
    StreamIdT,
)

_REF_POLICIES = frozenset({"KEEPREF", "DELREF", "ACKED"})
_NACK_MODES = frozenset({"SILENT", "FAIL", "FATAL"})


class StreamCommands:
    """The stream commands, XADD to XTRIM."""

    def execute_command(self, *args: Any, **options: Any) -> Any:  # pragma: no cover
        raise NotImplementedError

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
            raise DataError(_DATA_ERRORS["MAXLEN_OR_MINID"])
        if idmpauto is not None and idmp is not None:
            raise DataError("Only one of ```idmpauto``` or ```idmp``` may be specified")
        if (idmpauto is not None or idmp is not None) and id != "*":
            raise DataError("IDMPAUTO and IDMP can only be used with id='*'")
        if ref_policy is not None and ref_policy not in _REF_POLICIES:
            raise DataError(_DATA_ERRORS["REF_POLICY"])
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
                raise DataError(_DATA_ERRORS["MAXLEN_NEGATIVE"])
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
            raise DataError(_DATA_ERRORS["XREAD_STREAMS_EMPTY"])
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
