"""Load: 50 concurrent clients pipelining XADD / XREADGROUP / XACK against ``xstreams
serve`` for a bounded time; afterwards nothing is lost or delivered twice, every entry
is acknowledged, the group's counters agree, and the directory reopened in-process
passes ``Store.validate()``.

``XSTREAMS_LOAD_SECONDS`` sets the duration of the write phase (default 5)."""

from __future__ import annotations

import os
import threading
import time

import pytest
from server_support import ServerProcess, require_serve

redis = pytest.importorskip("redis")

PRODUCERS = 25
CONSUMERS = 25
BATCH = 20
SECONDS = float(os.environ.get("XSTREAMS_LOAD_SECONDS", "5"))


def test_load_50_clients(tmp_path):
    require_serve()
    import xstreams

    d = str(tmp_path / "store")
    errors = []
    produced = [[] for _ in range(PRODUCERS)]
    consumed = [[] for _ in range(CONSUMERS)]
    with ServerProcess("--loglevel", "warning", dir=d) as srv:
        admin = redis.Redis(port=srv.port, socket_timeout=60)
        admin.xgroup_create("load", "g", id="$", mkstream=True)
        stop_producing = threading.Event()
        producers_done = threading.Event()

        def producer(i):
            try:
                r = redis.Redis(port=srv.port, socket_timeout=60)
                seq = 0
                while not stop_producing.is_set():
                    p = r.pipeline(transaction=False)
                    for _ in range(BATCH):
                        p.xadd("load", {"p": i, "n": seq})
                        seq += 1
                    produced[i].extend(p.execute())
                r.close()
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        def consumer(i):
            try:
                r = redis.Redis(port=srv.port, socket_timeout=60, protocol=2 + i % 2)
                idle_rounds = 0
                while idle_rounds < 3:
                    got = r.xreadgroup("g", f"c{i}", {"load": ">"}, count=BATCH, block=200)
                    entries = []
                    if isinstance(got, dict):
                        entries = got.get(b"load", [[]])[0]
                    elif got:
                        entries = got[0][1]
                    if not entries:
                        if producers_done.is_set():
                            idle_rounds += 1
                        continue
                    idle_rounds = 0
                    ids = [e[0] for e in entries]
                    consumed[i].extend(ids)
                    p = r.pipeline(transaction=False)
                    for j in range(0, len(ids), 5):
                        p.xack("load", "g", *ids[j : j + 5])
                    acked = sum(p.execute())
                    assert acked == len(ids)
                r.close()
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=producer, args=(i,)) for i in range(PRODUCERS)]
        threads += [threading.Thread(target=consumer, args=(i,)) for i in range(CONSUMERS)]
        for t in threads:
            t.start()
        time.sleep(SECONDS)
        stop_producing.set()
        for t in threads[:PRODUCERS]:
            t.join(120)
        producers_done.set()
        for t in threads[PRODUCERS:]:
            t.join(120)
        assert not any(t.is_alive() for t in threads), "clients did not finish"
        assert not errors, errors[:3]

        all_produced = [x for p in produced for x in p]
        all_consumed = [x for c in consumed for x in c]
        assert len(all_produced) > 1000, "the load phase produced almost nothing"
        print(f"load: {len(all_produced)} entries produced, delivered once and acked")
        assert len(set(all_produced)) == len(all_produced)
        assert len(set(all_consumed)) == len(all_consumed), "an entry was delivered twice"
        assert set(all_consumed) == set(all_produced), "an entry was lost"
        assert admin.xlen("load") == len(all_produced)
        assert admin.xpending("load", "g")["pending"] == 0
        group = admin.xinfo_groups("load")[0]
        assert group["entries-read"] == len(all_produced)
        assert group["lag"] == 0
        # Per producer, entries are in the order they were acknowledged to it.
        for ids in produced:
            keys = [tuple(map(int, x.split(b"-"))) for x in ids]
            assert keys == sorted(keys)
        info = admin.info("stats")
        assert info["total_commands_processed"] >= len(all_produced)
        assert srv.shutdown() == 0
        admin.close()
    with xstreams.Store(d) as store:
        store.validate()
        assert store.execute_command("XLEN", "load") == len(all_produced)
        assert store.execute_command("XPENDING", "load", "g")[0] == 0
