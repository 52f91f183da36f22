"""Child process of the crash tests (``test_persist_crash.py``); not a test module.

``python persist_child.py MODE PATH START SEED``: opens the durable store at PATH with
``fsync="always"`` and writes until it is killed. Before each command it prints the
command (``{"op": ...}``) and, once the call has returned, the result (``{"ok": ...}``):
a result line means the write was acknowledged. MODE ``write`` only writes; MODE
``compact`` also runs ``compact()`` in a loop in a second thread. Lines are JSON, written
whole under a lock and flushed at once.
"""

from __future__ import annotations

import json
import random
import sys
import threading
import time

import xstreams
from xstreams import exceptions as exc

CONFIG = {
    "stream-node-max-entries": 5,
    "stream-node-max-bytes": 2048,
    "stream-idmp-duration": 86400,
    "stream-idmp-maxsize": 10000,
}

_lock = threading.Lock()


def emit(obj) -> None:
    line = json.dumps(obj) + "\n"
    with _lock:
        sys.stdout.write(line)
        sys.stdout.flush()


def text(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, list):
        return [text(x) for x in v]
    return v


def main() -> None:
    mode, path, start, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(seed)
    store = xstreams.Store(path, fsync="always", config=CONFIG)
    try:
        store.execute_command("XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")
    except exc.BusyGroupError:
        pass
    ids = [e[0] for e in store.execute_command("XRANGE", "s", "-", "+")]
    pending = [p[0] for p in store.execute_command("XPENDING", "s", "g", "-", "+", "100000")]
    emit({"ready": True})

    if mode == "compact":

        def compactor() -> None:
            while True:
                try:
                    store.compact()
                    emit({"compacted": True})
                except exc.StoreError as e:  # "already running" cannot happen: one thread
                    emit({"compact_error": str(e)})
                time.sleep(rng.random() * 0.02)

        threading.Thread(target=compactor, daemon=True).start()

    i = start
    while True:
        i += 1
        r = rng.random()
        if r < 0.45:
            size = rng.choice([1, 10, 100, 1000, 3000, 20_000])
            cmd = ["XADD", "s", "*", "n", str(i), "p", "x" * size]
            emit({"op": "XADD", "i": i})
            res = store.execute_command(*cmd)
            ids.append(res)
        elif r < 0.55 and ids:
            victim = rng.choice(ids)
            emit({"op": "XDEL", "id": text(victim)})
            res = store.execute_command("XDEL", "s", victim)
        elif r < 0.7:
            emit({"op": "XREADGROUP"})
            res = store.execute_command(
                "XREADGROUP", "GROUP", "g", "c", "COUNT", "3", "STREAMS", "s", ">"
            )
            got = [e[0] for e in res[0][1]] if res else []
            pending.extend(got)
            res = got
        elif r < 0.8 and pending:
            victim = pending.pop(rng.randrange(len(pending)))
            emit({"op": "XACK", "id": text(victim)})
            res = store.execute_command("XACK", "s", "g", victim)
        elif r < 0.9:
            iid = f"iid-{rng.randrange(60)}"
            emit({"op": "IDMP", "iid": iid, "i": i})
            res = store.execute_command("XADD", "t", "IDMP", "p", iid, "*", "n", str(i))
        else:
            key = f"k{rng.randrange(5)}"
            emit({"op": "SET", "key": key, "value": f"v{i}"})
            res = store.execute_command("SET", key, f"v{i}")
        emit({"ok": text(res)})


if __name__ == "__main__":
    main()
