"""A minimal raw RESP2/RESP3 client and parser that keeps every protocol type.

The differential harness compares replies *as the protocol sent them*: a null
bulk string (``$-1``) is not a null array (``*-1``), a status (``+OK``) is not a
bulk string (``$2 OK``), a RESP3 map is not an array. :class:`Reply` is a small
typed tree that keeps those distinctions; :func:`encode` turns a tree back into
the exact bytes, so ``encode(parse(b)) == b`` for every well-formed reply.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from typing import Any, List, Optional, Sequence, Tuple, Union

# Reply kinds. Scalars keep their raw payload bytes (``value`` is bytes, except
# for ``int`` which is a Python int); aggregates keep a list of child Replies.
STATUS = "status"  # +OK
ERROR = "error"  # -ERR ...
INT = "int"  # :1
BULK = "bulk"  # $3 abc
NULL_BULK = "null_bulk"  # $-1 (RESP2 null)
NULL_ARRAY = "null_array"  # *-1 (RESP2 null array)
ARRAY = "array"  # *N
MAP = "map"  # %N (children are k1, v1, k2, v2, ...)
SET = "set"  # ~N
PUSH = "push"  # >N
ATTR = "attr"  # |N (attribute map, kept as a node of its own)
NULL = "null"  # _ (RESP3 null)
DOUBLE = "double"  # ,1.5 (raw text kept)
BOOL = "bool"  # #t / #f
BIGNUM = "bignum"  # (12345 (raw text kept)
VERBATIM = "verbatim"  # =N txt:...
BLOB_ERROR = "blob_error"  # !N ...

AGGREGATES = (ARRAY, MAP, SET, PUSH, ATTR)
_PREFIX = {
    STATUS: b"+",
    ERROR: b"-",
    INT: b":",
    BULK: b"$",
    ARRAY: b"*",
    MAP: b"%",
    SET: b"~",
    PUSH: b">",
    ATTR: b"|",
    DOUBLE: b",",
    BOOL: b"#",
    BIGNUM: b"(",
    VERBATIM: b"=",
    BLOB_ERROR: b"!",
}


@dataclass
class Reply:
    """One node of a reply tree.

    ``kind`` is one of the module constants; ``value`` is bytes for scalar
    kinds, an int for ``INT``, None for the nulls and a list of Replies for
    aggregates (a MAP keeps its keys and values interleaved). ``tol`` is set by
    the comparator on time-dependent integers that may differ within a tolerance.
    """

    kind: str
    value: Any = None
    tol: int = field(default=0, compare=False)

    # -- convenience -------------------------------------------------------
    @property
    def is_error(self) -> bool:
        return self.kind in (ERROR, BLOB_ERROR)

    @property
    def children(self) -> List[Reply]:
        return self.value if self.kind in AGGREGATES else []

    def pairs(self) -> List[Tuple[Reply, Reply]]:
        """Key/value pairs of a MAP (or of a RESP2 flat key/value array)."""
        items = self.value
        return [(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]

    def to_py(self) -> Any:
        """Loose Python view (for debugging and for the generator's model)."""
        if self.kind in AGGREGATES:
            return [c.to_py() for c in self.value]
        return self.value

    def __repr__(self) -> str:
        return fmt(self)


def fmt(r: Reply, indent: int = 0, width: int = 100) -> str:
    """Readable one-line (or indented, if long) rendering of a reply tree."""
    flat = _fmt_flat(r)
    if len(flat) + indent <= width or r.kind not in AGGREGATES:
        return flat
    pad = "  " * (indent + 1)
    inner = ",\n".join(pad + fmt(c, indent + 1, width) for c in r.value)
    return f"{r.kind}[\n{inner}\n{'  ' * indent}]"


def _fmt_flat(r: Reply) -> str:
    if r.kind in AGGREGATES:
        return f"{r.kind}[" + ", ".join(_fmt_flat(c) for c in r.value) + "]"
    if r.kind == INT:
        return f"{r.value}" + (f"(±{r.tol})" if r.tol else "")
    if r.kind in (NULL_BULK, NULL_ARRAY, NULL):
        return r.kind
    if r.kind == BULK:
        return repr(r.value)
    return f"{r.kind}:{r.value!r}"


# ---------------------------------------------------------------------------
# Encoding
# ---------------------------------------------------------------------------


def encode(r: Reply) -> bytes:
    """The exact RESP bytes of a reply tree."""
    out: List[bytes] = []
    _encode(r, out)
    return b"".join(out)


def _encode(r: Reply, out: List[bytes]) -> None:
    k = r.kind
    if k in (STATUS, ERROR, DOUBLE, BIGNUM):
        out.append(_PREFIX[k] + r.value + b"\r\n")
    elif k == INT:
        out.append(b":%d\r\n" % r.value)
    elif k == BOOL:
        out.append(b"#" + r.value + b"\r\n")
    elif k in (BULK, VERBATIM, BLOB_ERROR):
        out.append(_PREFIX[k] + b"%d\r\n" % len(r.value) + r.value + b"\r\n")
    elif k == NULL_BULK:
        out.append(b"$-1\r\n")
    elif k == NULL_ARRAY:
        out.append(b"*-1\r\n")
    elif k == NULL:
        out.append(b"_\r\n")
    elif k in AGGREGATES:
        n = len(r.value) // 2 if k in (MAP, ATTR) else len(r.value)
        out.append(_PREFIX[k] + b"%d\r\n" % n)
        for c in r.value:
            _encode(c, out)
    else:  # pragma: no cover - programming error
        raise ValueError(f"unknown reply kind {k!r}")


def encode_command(args: Sequence[bytes]) -> bytes:
    """A command as a RESP array of bulk strings (what clients send)."""
    parts = [b"*%d\r\n" % len(args)]
    for a in args:
        parts.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(parts)


# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------


class Incomplete(Exception):
    """The buffer ends before the reply does."""


class ProtocolError(Exception):
    """The bytes are not valid RESP."""


def parse_one(buf: bytes, pos: int = 0) -> Tuple[Reply, int]:
    """Parse one reply starting at ``pos``; return it and the position after it."""
    end = buf.find(b"\r\n", pos)
    if end < 0:
        raise Incomplete()
    if end == pos:
        raise ProtocolError(f"empty line at offset {pos}")
    t = buf[pos : pos + 1]
    line = buf[pos + 1 : end]
    nxt = end + 2
    if t == b"+":
        return Reply(STATUS, line), nxt
    if t == b"-":
        return Reply(ERROR, line), nxt
    if t == b":":
        return Reply(INT, _int(line)), nxt
    if t == b"_":
        if line:
            raise ProtocolError(f"junk after RESP3 null: {line!r}")
        return Reply(NULL), nxt
    if t == b",":
        return Reply(DOUBLE, line), nxt
    if t == b"(":
        return Reply(BIGNUM, line), nxt
    if t == b"#":
        if line not in (b"t", b"f"):
            raise ProtocolError(f"bad boolean {line!r}")
        return Reply(BOOL, line), nxt
    if t in (b"$", b"=", b"!"):
        n = _int(line)
        if n == -1 and t == b"$":
            return Reply(NULL_BULK), nxt
        if n < 0:
            raise ProtocolError(f"bad length {n}")
        if len(buf) < nxt + n + 2:
            raise Incomplete()
        if buf[nxt + n : nxt + n + 2] != b"\r\n":
            raise ProtocolError("bulk payload not terminated by CRLF")
        kind = {b"$": BULK, b"=": VERBATIM, b"!": BLOB_ERROR}[t]
        return Reply(kind, buf[nxt : nxt + n]), nxt + n + 2
    if t in (b"*", b">", b"~", b"%", b"|"):
        n = _int(line)
        if n == -1 and t == b"*":
            return Reply(NULL_ARRAY), nxt
        if n < 0:
            raise ProtocolError(f"bad aggregate length {n}")
        kind = {b"*": ARRAY, b">": PUSH, b"~": SET, b"%": MAP, b"|": ATTR}[t]
        count = n * 2 if kind in (MAP, ATTR) else n
        items = []
        p = nxt
        for _ in range(count):
            item, p = parse_one(buf, p)
            items.append(item)
        return Reply(kind, items), p
    raise ProtocolError(f"unknown type byte {t!r} at offset {pos}")


def _int(line: bytes) -> int:
    try:
        return int(line)
    except ValueError:
        raise ProtocolError(f"bad integer {line!r}") from None


def parse(buf: bytes) -> Reply:
    """Parse a buffer that must hold exactly one complete reply."""
    try:
        r, end = parse_one(buf, 0)
    except Incomplete:
        raise ProtocolError(f"incomplete reply: {buf[:200]!r}") from None
    if end != len(buf):
        raise ProtocolError(f"{len(buf) - end} trailing bytes after the reply: {buf[end:][:80]!r}")
    return r


# ---------------------------------------------------------------------------
# Socket client
# ---------------------------------------------------------------------------

Arg = Union[bytes, str, int]


def to_bytes(a: Arg) -> bytes:
    if isinstance(a, bytes):
        return a
    if isinstance(a, int):
        return str(a).encode()
    return a.encode()


class RespConnection:
    """One blocking connection; ``call`` sends a command and reads one reply.

    Push messages (RESP3 ``>``) are not expected by the harness and are
    returned like any reply.
    """

    def __init__(self, host: str, port: int, timeout: float = 10.0) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.pos = 0

    def call_raw(self, args: Sequence[Arg]) -> bytes:
        """Send a command; return the raw bytes of its reply."""
        self.sock.sendall(encode_command([to_bytes(a) for a in args]))
        return self._read_one()[1]

    def call(self, args: Sequence[Arg]) -> Reply:
        self.sock.sendall(encode_command([to_bytes(a) for a in args]))
        return self._read_one()[0]

    def _read_one(self) -> Tuple[Reply, bytes]:
        while True:
            try:
                reply, end = parse_one(self.buf, self.pos)
            except Incomplete:
                chunk = self.sock.recv(1 << 16)
                if not chunk:
                    raise ConnectionError("server closed the connection") from None
                if self.pos:
                    self.buf = self.buf[self.pos :]
                    self.pos = 0
                self.buf += chunk
                continue
            raw = self.buf[self.pos : end]
            self.pos = end
            if self.pos == len(self.buf):
                self.buf, self.pos = b"", 0
            return reply, raw

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:  # pragma: no cover
            pass


def call(conn: RespConnection, args: Sequence[Arg]) -> Reply:
    """Module-level convenience: ``call(conn, [b"PING"])``."""
    return conn.call(args)


def bulk(v: bytes) -> Reply:
    return Reply(BULK, v)


def arr(items: Optional[List[Reply]] = None) -> Reply:
    return Reply(ARRAY, list(items or []))
