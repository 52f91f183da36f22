"""Consumer-group commands for the differential generator (the ``groups`` family):
XGROUP CREATE/SETID/DESTROY/CREATECONSUMER/DELCONSUMER/HELP, XREADGROUP, XACK, XACKDEL,
XPENDING, XCLAIM, XAUTOCLAIM and XINFO GROUPS/CONSUMERS/STREAM FULL/HELP, with
malformed variants. The group and consumer names come from the model the runner
refreshes from the oracle (see generator.Model)."""

from __future__ import annotations

from typing import List

from .generator import (
    GROUPS,
    IDLE_SET,
    MIN_IDLE,
    Cmd,
    TimeArg,
)


class GroupGenerators:
    """Generator methods (``g_<name>``) of the consumer-group family; mixed into Generator."""

    def g_xgroup_create(self) -> Cmd:
        k = self.key(write=True)
        fresh = [g for g in GROUPS if g not in self.km(k).groups]
        g = self.rng.choice(fresh) if fresh and self.chance(0.6) else self.group(k)
        r = self.rng.random()
        if r < 0.3:
            i = b"$"
        elif r < 0.5:
            i = b"0"
        else:
            i = self.id_text(self.rand_id(k, 0.6))
        args = [self.kw(b"XGROUP"), self.kw(b"CREATE"), k, g, i]
        opts = []
        if self.chance(0.35):
            opts.append([self.kw(b"MKSTREAM")])
        if self.chance(0.3):
            opts.append(
                [self.kw(b"ENTRIESREAD"), self.rng.choice([b"-1", b"0", b"1", b"3", b"100"])]
            )
        self.rng.shuffle(opts)
        return Cmd(args + [a for o in opts for a in o], "XGROUP CREATE", [k], write=True)

    def g_xgroup_setid(self) -> Cmd:
        k = self.gkey(write=True)
        g = self.group(k)
        r = self.rng.random()
        if r < 0.25:
            i = b"$"
        elif r < 0.35:
            i = self.rng.choice([b"-", b"+", b"0"])
        else:
            i = self.id_text(self.rand_id(k, 0.6))
        args = [self.kw(b"XGROUP"), self.kw(b"SETID"), k, g, i]
        if self.chance(0.3):
            args += [self.kw(b"ENTRIESREAD"), self.rng.choice([b"-1", b"0", b"2", b"1000", b"-3"])]
        return Cmd(args, "XGROUP SETID", [k], write=True)

    def g_xgroup_destroy(self) -> Cmd:
        k = self.gkey(write=True)
        return Cmd([self.kw(b"XGROUP"), self.kw(b"DESTROY"), k, self.group(k)], "XGROUP DESTROY",
                   [k], write=True)  # fmt: skip

    def g_xgroup_createconsumer(self) -> Cmd:
        k = self.gkey(write=True)
        g = self.group(k)
        args = [self.kw(b"XGROUP"), self.kw(b"CREATECONSUMER"), k, g, self.consumer(k, g)]
        return Cmd(args, "XGROUP CREATECONSUMER", [k], write=True)

    def g_xgroup_delconsumer(self) -> Cmd:
        k = self.gkey(write=True)
        g = self.group(k)
        args = [self.kw(b"XGROUP"), self.kw(b"DELCONSUMER"), k, g, self.consumer(k, g)]
        return Cmd(args, "XGROUP DELCONSUMER", [k], write=True)

    def g_xgroup_help(self) -> Cmd:
        args = [self.kw(b"XGROUP"), self.kw(b"HELP")]
        if self.chance(0.2):
            args.append(b"x")
        return Cmd(args, "XGROUP HELP")

    def g_xgroup(self) -> Cmd:
        sub = self.rng.choice([
            [], [b"FOO"], [b"CREATE"], [b"CREATE", b"s1"], [b"SETID", b"s1", b"g1"],
            [b"DESTROY", b"s1"], [b"DESTROY", b"s1", b"g1", b"x"],
            [b"CREATECONSUMER", b"s1", b"g1"], [b"FOO", b"s1", b"g1", b"0"],
            [b"CREATE", b"s1", b"g1", b"0", b"MKSTREAM", b"MKSTREAM"],
            [b"CREATE", b"s1", b"g1", b"$", b"ENTRIESREAD"],
            [b"SETID", b"s1", b"g1", b"0", b"MKSTREAM"],
        ])  # fmt: skip
        args = [self.kw(b"XGROUP")] + [self.kw(a) if i == 0 else a for i, a in enumerate(sub)]
        return Cmd(args, "XGROUP", [b"s1"], write=True)

    def g_xreadgroup(self) -> Cmd:
        n = self.rng.choice([1, 1, 1, 2])
        keys = [self.gkey() for _ in range(n)]
        g = self.group(keys[0])
        c = self.consumer(keys[0], g)
        opts = [[self.kw(b"GROUP"), g, c]]
        if self.chance(0.5):
            opts.append([self.kw(b"COUNT"), self.count(-1, 4)])
        if self.chance(0.2):
            opts.append([self.kw(b"NOACK")])
        if self.cfg.allow_block and self.chance(0.05):
            opts.append([self.kw(b"BLOCK"), self.rng.choice([b"1", b"2"])])
        self.rng.shuffle(opts)
        args = [self.kw(b"XREADGROUP")] + [a for o in opts for a in o]
        args += [self.kw(b"STREAMS")] + keys + self.read_ids(keys, group=True)
        return Cmd(args, "XREADGROUP", keys, write=True)

    def pel_ids(self, key: bytes, group: bytes, n: int) -> List[bytes]:
        m = self.km(key)
        pend = self.usable_ids(m.groups[group].pending) if group in m.groups else []
        out = []
        for _ in range(n):
            if pend and self.chance(0.7):
                out.append(self.id_text(self.rng.choice(pend)))
            else:
                out.append(self.id_text(self.rand_id(key, 0.6)))
        return out

    def g_xack(self) -> Cmd:
        k = self.gkey(write=True)
        g = self.group(k)
        ids = self.pel_ids(k, g, self.rng.choice([1, 1, 2, 3]))
        return Cmd([self.kw(b"XACK"), k, g] + ids, "XACK", [k], write=True)

    def g_xackdel(self) -> Cmd:
        k = self.gkey(write=True)
        g = self.group(k)
        n = self.rng.choice([1, 1, 2, 3])
        ids = self.pel_ids(k, g, n)
        numids = n if self.chance(0.9) else self.rng.choice([n - 1, n + 1, 0])
        parts = [[self.kw(b"IDS"), b"%d" % numids] + ids]
        if self.chance(0.6):
            parts.append([self.kw(self.rng.choice([b"KEEPREF", b"DELREF", b"ACKED"]))])
        self.rng.shuffle(parts)
        return Cmd([self.kw(b"XACKDEL"), k, g] + [a for p in parts for a in p], "XACKDEL", [k],
                   write=True)  # fmt: skip

    def g_xpending(self) -> Cmd:
        k = self.gkey()
        g = self.group(k)
        args = [self.kw(b"XPENDING"), k, g]
        if self.chance(0.3):
            return Cmd(args, "XPENDING", [k])
        if self.chance(0.25):
            args += [self.kw(b"IDLE"), self.rng.choice(MIN_IDLE + [b"-1"])]
        lo, hi = self.range_bounds(k)
        args += [lo, hi, self.count(-1, 6)]
        if self.chance(0.4):
            args.append(self.consumer(k, g))
        return Cmd(args, "XPENDING", [k])

    def g_xclaim(self) -> Cmd:
        k = self.gkey(write=True)
        g = self.group(k)
        c = self.consumer(k, g)
        ids = self.pel_ids(k, g, self.rng.choice([1, 1, 2, 3]))
        args = [self.kw(b"XCLAIM"), k, g, c, self.rng.choice(MIN_IDLE)] + ids
        opts = []
        if self.chance(0.25):
            opts.append([self.kw(b"IDLE"), self.rng.choice(IDLE_SET)])
        if self.chance(0.15):
            t = self.rng.choice([TimeArg(-120000), TimeArg(-7200000), TimeArg(3600000)])
            opts.append([self.kw(b"TIME"), self.rng.choice([t, t, b"0", b"-5"])])
        if self.chance(0.2):
            opts.append([self.kw(b"RETRYCOUNT"), self.rng.choice([b"0", b"3", b"-1", b"100"])])
        if self.chance(0.25):
            opts.append([self.kw(b"FORCE")])
        if self.chance(0.3):
            opts.append([self.kw(b"JUSTID")])
        if self.chance(0.15):
            opts.append([self.kw(b"LASTID"), self.id_text(self.rand_id(k, 0.5))])
        self.rng.shuffle(opts)
        return Cmd(args + [a for o in opts for a in o], "XCLAIM", [k], write=True)

    def g_xautoclaim(self) -> Cmd:
        k = self.gkey(write=True)
        g = self.group(k)
        c = self.consumer(k, g)
        start = self.rng.choice([b"0", b"-", b"0-0", b"(0-0"]) if self.chance(0.5) else (
            self.id_text(self.rand_id(k, 0.6)))  # fmt: skip
        args = [self.kw(b"XAUTOCLAIM"), k, g, c, self.rng.choice(MIN_IDLE), start]
        opts = []
        if self.chance(0.5):
            opts.append(
                [self.kw(b"COUNT"), self.rng.choice([b"1", b"2", b"3", b"100", b"1", b"0"])]
            )
        if self.chance(0.3):
            opts.append([self.kw(b"JUSTID")])
        self.rng.shuffle(opts)
        return Cmd(args + [a for o in opts for a in o], "XAUTOCLAIM", [k], write=True)

    def g_xinfo_groups(self) -> Cmd:
        k = self.gkey()
        return Cmd([self.kw(b"XINFO"), self.kw(b"GROUPS"), k], "XINFO GROUPS", [k])

    def g_xinfo_consumers(self) -> Cmd:
        k = self.gkey()
        return Cmd([self.kw(b"XINFO"), self.kw(b"CONSUMERS"), k, self.group(k)], "XINFO CONSUMERS",
                   [k])  # fmt: skip

    def g_xinfo_stream_full(self) -> Cmd:
        return self.g_xinfo_stream(full=True)

    def g_xinfo_help(self) -> Cmd:
        args = [self.kw(b"XINFO"), self.kw(b"HELP")]
        if self.chance(0.2):
            args.append(b"x")
        return Cmd(args, "XINFO HELP")

    def g_xinfo(self) -> Cmd:
        sub = self.rng.choice([[], [b"FOO"], [b"FOO", b"s1"], [b"STREAM"], [b"GROUPS"],
                               [b"CONSUMERS", b"s1"], [b"GROUPS", b"s1", b"x"],
                               [b"STREAM", b"s1", b"FULL", b"COUNT"],
                               [b"STREAM", b"s1", b"COUNT", b"1"],
                               [b"STREAM", b"s1", b"FULL", b"FULL"],
                               [b"STREAM", b"nokey", b"FOO"]])  # fmt: skip
        args = [self.kw(b"XINFO")] + [self.kw(a) if i == 0 else a for i, a in enumerate(sub)]
        return Cmd(args, "XINFO", [b"s1"])
