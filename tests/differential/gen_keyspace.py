"""Key expiry and keyspace commands for the differential generator (the ``expiry``
family): EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT with NX|XX|GT|LT, TTL/PTTL/EXPIRETIME/
PEXPIRETIME, PERSIST, SET with EX/PX/EXAT/PXAT/KEEPTTL (and NX/XX/GET), DUMP/RESTORE
(REPLACE/ABSTTL/IDLETIME/FREQ), UNLINK, RENAME/RENAMENX and COPY.

Time rules (both sides must agree whatever the few ms between their clocks):

* A relative time is either not positive (the key is deleted at once), or at least
  100 s away, so no key set to expire reaches its time during a sequence: nothing
  races the active expiry of either side.
* An absolute time is a :class:`~generator.TimeArg` (the sequence's base time plus an
  offset, sent as the same bytes to both sides) at least 120 s in the past or the
  future, or a fixed value far in the past (0, 1, 1000) or far in the future.
* TTL/PTTL and EXPIRETIME/PEXPIRETIME after a relative expiry depend on each side's
  clock: compare.py compares them within a tolerance (1 s for the second forms,
  ``TIME_TOLERANCE_MS`` for the ms forms); after an absolute one they are exact.

RESTORE payloads are DUMP replies the oracle gave earlier in the sequence (the
generator keeps the last few, see ``observe``), sometimes damaged (a flipped byte,
a cut tail, a wrong version), so both the decoder's happy path and its errors are
compared.
"""

from __future__ import annotations

import re
from typing import List, Optional

from .generator import ALL_KEYS, STREAM_KEYS, STRING_KEY, VALUES, Cmd, TimeArg

# Relative times: not positive, or far enough away not to expire during a sequence.
REL_SECONDS = [b"-5", b"0", b"100", b"3600", b"86400", b"31536000",
               b"9223372036854775807", b"9223372036854775", b"-9223372036854775808"]  # fmt: skip
REL_MS = [b"-5", b"0", b"100000", b"3600000", b"86400000", b"9223372036854775807",
          b"9223372036854775000", b"-9223372036854775808"]  # fmt: skip
# Absolute offsets from the sequence's base time (ms).
ABS_OFFSETS_MS = [-3_600_000, -120_000, 120_000, 3_600_000, 86_400_000 * 400]
ABS_FIXED = [b"0", b"1", b"1000", b"-1", b"32503680000", b"32503680000000"]
EXPIRE_FLAGS = [b"NX", b"XX", b"GT", b"LT"]
OTHER_KEYS = [b"s1", b"s2", b"s3", b"str", b"nokey"]


_INT = re.compile(rb"-?[0-9]+")
# Relative times closer than this could expire during a sequence (ms).
SAFE_RELATIVE_MS = 100_000


def _int(a: object) -> Optional[int]:
    return int(a) if isinstance(a, bytes) and _INT.fullmatch(a) else None


def races_the_clock(cmd: Cmd) -> bool:
    """Does ``cmd`` (typically after a mutation moved a small number into a time slot)
    set a relative expiry that could pass during the sequence? Such a key would expire
    at a moment that depends on each side's clock, so the generator drops the command."""
    args = cmd.args
    words = [a.upper() if isinstance(a, bytes) else a for a in args]

    def close(v: Optional[int], unit: int) -> bool:
        return v is not None and 0 < v * unit < SAFE_RELATIVE_MS

    if cmd.name in ("EXPIRE", "PEXPIRE") and len(args) > 2:
        return close(_int(args[2]), 1000 if cmd.name == "EXPIRE" else 1)
    if cmd.name == "RESTORE" and len(args) > 2 and b"ABSTTL" not in words:
        return close(_int(args[2]), 1)
    if cmd.name == "SET":
        for i, w in enumerate(words[:-1]):
            if w in (b"EX", b"PX") and close(_int(args[i + 1]), 1000 if w == b"EX" else 1):
                return True
    return False


class KeyspaceGenerators:
    """Generator methods (``g_<name>``) of the expiry family; mixed into Generator."""

    payloads: List[bytes]

    def _expire_flags(self) -> List[bytes]:
        r = self.rng.random()
        if r < 0.55:
            return []
        if r < 0.9:
            return [self.kw(self.rng.choice(EXPIRE_FLAGS))]
        # Two flags: some combinations are errors (NX with any other, GT with LT).
        return [self.kw(f) for f in self.rng.sample(EXPIRE_FLAGS, 2)]

    def _abs_time(self, seconds: bool):
        if self.chance(0.25):
            v = self.rng.choice(ABS_FIXED)
            return v[:-3] if seconds and len(v) > 10 else v
        return TimeArg(self.rng.choice(ABS_OFFSETS_MS), 1000 if seconds else 1)

    def _expiry_key(self) -> bytes:
        return self.rng.choice(ALL_KEYS) if self.chance(0.3) else self.key(write=True)

    def _expire_cmd(self, name: bytes, when) -> Cmd:
        k = self._expiry_key()
        args = [self.kw(name), k, when] + self._expire_flags()
        return Cmd(args, name.decode(), [k], write=True)

    def g_expire(self) -> Cmd:
        return self._expire_cmd(b"EXPIRE", self.rng.choice(REL_SECONDS))

    def g_pexpire(self) -> Cmd:
        return self._expire_cmd(b"PEXPIRE", self.rng.choice(REL_MS))

    def g_expireat(self) -> Cmd:
        return self._expire_cmd(b"EXPIREAT", self._abs_time(seconds=True))

    def g_pexpireat(self) -> Cmd:
        return self._expire_cmd(b"PEXPIREAT", self._abs_time(seconds=False))

    def _read_ttl(self, name: bytes) -> Cmd:
        k = self.rng.choice(ALL_KEYS)
        return Cmd([self.kw(name), k], name.decode(), [k])

    def g_ttl(self) -> Cmd:
        return self._read_ttl(b"TTL")

    def g_pttl(self) -> Cmd:
        return self._read_ttl(b"PTTL")

    def g_expiretime(self) -> Cmd:
        return self._read_ttl(b"EXPIRETIME")

    def g_pexpiretime(self) -> Cmd:
        return self._read_ttl(b"PEXPIRETIME")

    def g_persist(self) -> Cmd:
        k = self._expiry_key()
        return Cmd([self.kw(b"PERSIST"), k], "PERSIST", [k], write=True)

    def g_set_ex(self) -> Cmd:
        """SET with an expiry option (EX/PX/EXAT/PXAT/KEEPTTL) and sometimes NX/XX/GET."""
        k = STRING_KEY if self.chance(0.7) else self.rng.choice(ALL_KEYS)
        args = [self.kw(b"SET"), k, self.rng.choice(VALUES)]
        r = self.rng.random()
        if r < 0.25:
            args += [self.kw(b"EX"), self.rng.choice(REL_SECONDS)]
        elif r < 0.45:
            args += [self.kw(b"PX"), self.rng.choice(REL_MS)]
        elif r < 0.6:
            args += [self.kw(b"EXAT"), self._abs_time(seconds=True)]
        elif r < 0.75:
            args += [self.kw(b"PXAT"), self._abs_time(seconds=False)]
        elif r < 0.9:
            args.append(self.kw(b"KEEPTTL"))
        if self.chance(0.3):
            args.append(self.kw(self.rng.choice([b"NX", b"XX", b"GET"])))
        return Cmd(args, "SET", [k], write=True)

    def g_dump(self) -> Cmd:
        k = self.rng.choice(ALL_KEYS) if self.chance(0.2) else self.rng.choice(STREAM_KEYS)
        return Cmd([self.kw(b"DUMP"), k], "DUMP", [k])

    def _payload(self) -> bytes:
        if not self.payloads or self.chance(0.05):
            return self.rng.choice([b"", b"\x00", b"garbage", b"\x15\x01\x00" * 4])
        p = self.rng.choice(self.payloads)
        r = self.rng.random()
        if r < 0.8:
            return p
        if r < 0.88:  # a flipped byte: checksum (or data) error
            i = self.rng.randrange(len(p))
            return p[:i] + bytes([p[i] ^ 0x5A]) + p[i + 1 :]
        if r < 0.95:  # truncated
            return p[: self.rng.randrange(len(p))]
        # A newer RDB version in the footer: the version check fails.
        return p[:-10] + b"\xff\x7f" + p[-8:] if len(p) >= 10 else p

    def g_restore(self) -> Cmd:
        k = self._expiry_key()
        abs_ttl = self.chance(0.25)
        if abs_ttl:
            ttl = self._abs_time(seconds=False)
        else:
            ttl = self.rng.choice([b"0", b"0", b"0", b"100000", b"-1", b"abc"])
        args = [self.kw(b"RESTORE"), k, ttl, self._payload()]
        if self.chance(0.5):
            args.append(self.kw(b"REPLACE"))
        if abs_ttl:
            args.append(self.kw(b"ABSTTL"))
        if self.chance(0.15):
            args += [self.kw(b"IDLETIME"), self.rng.choice([b"0", b"10", b"-1", b"x"])]
        if self.chance(0.15):
            args += [self.kw(b"FREQ"), self.rng.choice([b"0", b"5", b"255", b"256", b"-1"])]
        return Cmd(args, "RESTORE", [k], write=True)

    def g_unlink(self) -> Cmd:
        ks = self.rng.sample(ALL_KEYS, self.rng.choice([1, 1, 2]))
        return Cmd([self.kw(b"UNLINK")] + ks, "UNLINK", ks, write=True)

    def _two_keys(self) -> List[bytes]:
        src = self.rng.choice(STREAM_KEYS) if self.chance(0.7) else self.rng.choice(ALL_KEYS)
        dst = self.rng.choice(OTHER_KEYS)
        return [src, dst]

    def g_rename(self) -> Cmd:
        ks = self._two_keys()
        return Cmd([self.kw(b"RENAME")] + ks, "RENAME", ks, write=True)

    def g_renamenx(self) -> Cmd:
        ks = self._two_keys()
        return Cmd([self.kw(b"RENAMENX")] + ks, "RENAMENX", ks, write=True)

    def g_copy(self) -> Cmd:
        ks = self._two_keys()
        args = [self.kw(b"COPY")] + ks
        if self.chance(0.15):
            args += [self.kw(b"DB"), self.rng.choice([b"0", b"1", b"16", b"x"])]
        if self.chance(0.4):
            args.append(self.kw(b"REPLACE"))
        return Cmd(args, "COPY", ks, write=True)

    def observe_payload(self, cmd: Cmd, oracle_reply: object) -> None:
        """Keep the oracle's DUMP payloads for later RESTOREs."""
        value = getattr(oracle_reply, "value", None)
        if cmd.name == "DUMP" and isinstance(value, bytes) and value:
            self.payloads.append(value)
            del self.payloads[:-6]
