"""Console tables, RESULTS.md and the PNG plots of a run."""

from __future__ import annotations

import math
import os
from typing import Any, Optional

from bench_workloads import Cell, Series, fmt_rate

# Redis's own IDMP figures (design document of XADD IDMP/IDMPAUTO, memtier_benchmark,
# 1 client, no pipelining, IDMP-MAXSIZE 10000): overhead vs plain XADD by value size.
REDIS_DOC_IDMP = {
    8: {"tput": (-2.6, -2.9), "mem": (1.0, 1.1), "ops": (69066, 67242, 67033)},
    64: {"tput": (-2.8, -3.5), "mem": (0.8, 0.6), "ops": (68675, 66727, 66301)},
    512: {"tput": (-5.0, -5.2), "mem": (0.6, 0.1), "ops": (67188, 63841, 63676)},
}
REDIS_DOC_IID_BYTES = 72

XS_PREFIX = "xstreams"


def _is_xs(name: str) -> bool:
    return name.startswith(XS_PREFIX)


def caption(meta: dict) -> str:
    m = meta["machine"]
    return (
        f"_{meta['date']} · {m['nproc']} cores, {m['cpu']}, {m['ram_gib']:.0f} GiB RAM · "
        f"load {meta['load_before']:.2f}→{meta['load_after']:.2f} · `{meta['command']}`_"
    )


def _cell_text(c: Cell) -> str:
    if c.note:
        return c.note
    return fmt_rate(c.best) if c.rates else "—"


def _ratio(a: Cell, b: Cell) -> str:
    if not (a.ok and b.ok):
        return "—"
    r = a.best / b.best
    return f"{r:.2f}×" if r < 10 else f"{r:.0f}×"


# ---------------------------------------------------------------------------------------
# Console
# ---------------------------------------------------------------------------------------


def console_table(res: dict) -> str:
    drivers = res["drivers"]
    w = max(34, *(len(lab) + len(unit) + 2 for _, lab, unit, _ in res["workloads"]))
    widths = [max(10, len(d) + 1) for d in drivers]
    lines = [f"ops/s (best of {res['meta']['reps']} reps; 'cycle' = 100 entries)"]
    lines.append(f"{'workload':<{w}}" + "".join(f"{d:>{k}}" for d, k in zip(drivers, widths)))
    for key, label, unit, _ in res["workloads"]:
        cells = res["table"][key]
        row = f"{label + ('/' + unit if unit != 'op' else ''):<{w}}"
        for d, k in zip(drivers, widths):
            row += f"{_cell_text(cells[d])[: k - 1]:>{k}}"
        lines.append(row)
    lines.append("")
    for x in [d for d in drivers if _is_xs(d)]:
        peers = [d for d in drivers if not _is_xs(d)]
        pw = [max(10, len(p) + 1) for p in peers]
        lines.append(f"ratio: {x} ÷ peer (>1 = xstreams faster)")
        lines.append(f"{'workload':<{w}}" + "".join(f"{p:>{k}}" for p, k in zip(peers, pw)))
        for key, label, _, _ in res["workloads"]:
            cells = res["table"][key]
            ratios = [_ratio(cells[x], cells[p]) for p in peers]
            if all(r == "—" for r in ratios):
                continue  # no peer has this command
            lines.append(f"{label:<{w}}" + "".join(f"{r:>{k}}" for r, k in zip(ratios, pw)))
        lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------------------


def _md_table(header: list, rows: list) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def _pct(a: float, b: float) -> str:
    if not a or not b:
        return "—"
    return f"{(a / b - 1) * 100:+.1f}%"


def _added_us(slow: float, fast: float) -> str:
    if not slow or not fast:
        return "—"
    return f"{(1 / slow - 1 / fast) * 1e6:+.2f}"


def idmp_overhead_rows(res: dict) -> tuple[list, list]:
    """One row per (driver, value size), then Redis's own figures for reference."""
    table = res["table"]
    drivers = [d for d in res["drivers"] if table["idmp-64"][d].ok]
    header = ["driver", "value", "XADD ops/s", "IDMP ops/s", "IDMPAUTO ops/s", "IDMP Δ",
              "IDMPAUTO Δ", "IDMP µs/op added", "IDMPAUTO µs/op added"]  # fmt: skip
    rows = []
    for d in drivers:
        for size in (8, 64, 512):
            p = table[f"xadd-{size}"][d].best
            i = table[f"idmp-{size}"][d].best
            a = table[f"idmpauto-{size}"][d].best
            rows.append([d, f"{size} B", fmt_rate(p), fmt_rate(i), fmt_rate(a), _pct(i, p),
                         _pct(a, p), _added_us(i, p), _added_us(a, p)])  # fmt: skip
    for size in (8, 64, 512):
        p, i, a = REDIS_DOC_IDMP[size]["ops"]
        rows.append(["Redis design doc (memtier, 1 client, RTT included)", f"{size} B",
                     fmt_rate(p), fmt_rate(i), fmt_rate(a), _pct(i, p), _pct(a, p),
                     _added_us(i, p), _added_us(a, p)])  # fmt: skip
    return header, rows


def _bpe(r: Optional[dict], n: int, key: str = "delta") -> Optional[float]:
    if not r or r.get(key) is None:
        return None
    return r[key] / n


def _fmt_b(v: Optional[float]) -> str:
    return "—" if v is None else f"{v:,.1f}"


def memory_sections(res: dict, cap: str) -> list[str]:
    mem = res.get("memory")
    if not mem:
        return []
    out = ["## Memory", ""]
    rows_in = mem["entries"]
    peers = []
    for r in rows_in:
        if r["peer"] not in peers:
            peers.append(r["peer"])
    # bytes per entry, plain XADD
    n_of = {r["peer"]: r["n"] for r in rows_in}
    header = ["value size"]
    for p in peers:
        header.append(f"{p} B/entry (n={n_of[p]:,})")
    for p in peers:
        if p != "xstreams":
            header.append(f"xstreams ÷ {p}")
    rows = []
    for size in (8, 64, 512):
        vals = {}
        for r in rows_in:
            if r["size"] == size and r["mode"] == "plain":
                vals[r["peer"]] = _bpe(r["result"], r["n"])
        row = [f"{size} B"]
        for p in peers:
            row.append(_fmt_b(vals.get(p)))
        for p in peers:
            if p == "xstreams":
                continue
            a, b = vals.get("xstreams"), vals.get(p)
            row.append(f"{a / b:.2f}" if a and b else "—")
        rows.append(row)
    out += [
        "Bytes per entry for plain `XADD key * f <value>` (unique values, `*` IDs). "
        "In-process peers: RSS delta in a fresh child process; redis-server: "
        "`INFO memory` used_memory delta (and, in the `… RSS` column, its RSS delta, which "
        "jemalloc's reserved pages make unreliable for small totals). "
        "Ratio < 1 means xstreams uses less.",
        "",
        _md_table(header, rows),
        "",
        cap,
        "",
    ]
    # IDMP memory overhead, Redis-doc style
    ov = mem.get("idmp") or []
    ov_peers: list = []
    for r in ov:
        if r["peer"] not in ov_peers:
            ov_peers.append(r["peer"])
    if ov:
        header = ["value size"]
        for p in ov_peers:
            header += [f"{p} XADD MB", "IDMP MB", "IDMPAUTO MB", "IDMP Δ", "IDMPAUTO Δ"]
        header += ["Redis doc: IDMP Δ", "IDMPAUTO Δ"]
        rows = []
        for size in (8, 64, 512):
            row = [f"{size} B"]
            for p in ov_peers:
                r = next((x for x in ov if x["peer"] == p and x["size"] == size), {})
                pl, i, a = r.get("plain"), r.get("idmp"), r.get("idmpauto")
                row += [f"{pl / 1e6:.2f}" if pl else "—", f"{i / 1e6:.2f}" if i else "—",
                        f"{a / 1e6:.2f}" if a else "—", _pct(i, pl), _pct(a, pl)]  # fmt: skip
            doc = REDIS_DOC_IDMP[size]["mem"]
            row += [f"{doc[0]:+.1f}%", f"{doc[1]:+.1f}%"]
            rows.append(row)
        n = ov[0]["n"]
        out += [
            f"### IDMP memory overhead ({n:,} entries, one producer, IDMP-MAXSIZE 10000)",
            "",
            "Same method as Redis's design document (there: RSS delta for 2,000,000 "
            "memtier XADDs): memory of the same entries added with and without IDMP. The "
            "map holds at most 10,000 IIDs, so its share shrinks as the stream grows: "
            "compare like with like only at the same entry count.",
            "",
            _md_table(header, rows),
            "",
            cap,
            "",
        ]
    iid = mem.get("iid") or []
    if iid:
        header = ["peer", "mode", "IIDs tracked", "producers", "Δ vs plain XADD",
                  "bytes per IID", f"÷ Redis doc ({REDIS_DOC_IID_BYTES} B)"]  # fmt: skip
        rows = []
        for r in iid:
            per = r.get("per_iid")
            rows.append([
                r["peer"], r["mode"], f"{r.get('tracked') or 0:,}", f"{r['pids']:,}",
                f"{r['extra'] / 1e6:.2f} MB" if r.get("extra") is not None else "—",
                _fmt_b(per), f"{per / REDIS_DOC_IID_BYTES:.2f}" if per else "—",
            ])  # fmt: skip
        out += [
            "### Bytes per tracked IID",
            "",
            "Entries added with `IDMP pid <16-byte iid>` (or `IDMPAUTO pid`) minus the same "
            "entries added plainly, divided by `iids-tracked` from `XINFO STREAM`; "
            "IDMP-MAXSIZE 10000 per producer, enough producers to track every IID. "
            f"Redis documents {REDIS_DOC_IID_BYTES} B per 16-byte IID (dictEntry 24 + "
            "idmpEntry 32 + IID 16).",
            "",
            _md_table(header, rows),
            "",
            cap,
            "",
        ]
    return out


def _series_table(series: list[Series], xname: str, unit: str) -> tuple[list, list]:
    xs = sorted({x for s in series for x, _ in s.points})
    live = [s for s in series if s.points]
    header = [xname] + [f"{s.label} {unit}" for s in live]
    ref = next((s for s in live if _is_xs(s.label)), None)
    others = [s for s in live if not _is_xs(s.label)]
    if ref:
        header += [f"{s.label} ÷ {ref.label}" for s in others]
    rows = []
    for x in xs:
        row = [f"{x:,}"]
        got = {s.label: dict(s.points).get(x) for s in live}
        row += ["—" if got[s.label] is None else f"{got[s.label]:.2f}" for s in live]
        if ref:
            for s in others:
                a, b = got.get(s.label), got.get(ref.label)
                row.append(f"{a / b:.1f}×" if a and b else "—")
        rows.append(row)
    growth = ["growth (last ÷ first)"]
    for s in live:
        growth.append(f"{s.points[-1][1] / s.points[0][1]:.2f}" if len(s.points) > 1 else "—")
    growth += [""] * (len(header) - len(growth))
    rows.append(growth)
    return header, rows


SCALING_TEXT = {
    "xadd": ("XADD (8-byte value) as the stream grows", "O(1) (append to the last node)"),
    "xrange": ("XRANGE <random start> + COUNT 100 as the stream grows",
               "O(log n) seek + 100 entries"),
    "nackclaim": ("XNACK FAIL (100 IDs) + XREADGROUP CLAIM (re-delivers them), per cycle",
                  "O(log n) per ID"),
    "xpending": ("XPENDING summary", "O(1) + consumers"),
    "xpending-range": ("XPENDING <random start> + 100", "O(log n) seek + 100"),
    "readack": ("XREADGROUP COUNT 100 + XACK of those 100, per cycle (PEL stays at n)",
                "O(log n) per ID"),
    "producers": ("XADD IDMP, round-robin over the producers (IDMP-MAXSIZE 20, all full)",
                  "O(log p) producer lookup + O(1) IID lookup"),
}  # fmt: skip


def scaling_sections(res: dict, cap: str) -> list[str]:
    sc = res.get("scaling") or {}
    out: list[str] = []
    if not sc:
        return out
    out += ["## Scaling", ""]
    if "stream" in sc:
        out += ["![stream scaling](plots/stream_scaling.png)", ""]
        for m in ("xadd", "xrange"):
            title, promise = SCALING_TEXT[m]
            h, rows = _series_table(sc["stream"][m], "entries", "µs/op")
            out += [f"### {title}", "", f"Design: {promise}. Batched drivers "
                    "(execute_many / pipelines of 100) unless named otherwise; "
                    "ratio columns are the peer's µs/op ÷ xstreams's (> 1 = xstreams faster).",
                    "",
                    _md_table(h, rows), "", cap, ""]  # fmt: skip
    if "pel" in sc:
        out += ["![PEL scaling](plots/pel_scaling.png)", ""]
        for m in ("nackclaim", "xpending", "xpending-range", "readack"):
            title, promise = SCALING_TEXT[m]
            h, rows = _series_table(sc["pel"][m], "pending", "µs/op")
            nas = [f"{s.label}: {s.note}" for s in sc["pel"][m] if s.note and not s.points]
            out += [f"### {title} as the PEL grows", "", f"Design: {promise}." +
                    (" Not measured: " + "; ".join(nas) + "." if nas else ""), "",
                    _md_table(h, rows), "", cap, ""]  # fmt: skip
    if "producers" in sc:
        title, promise = SCALING_TEXT["producers"]
        h, rows = _series_table(sc["producers"], "producers", "µs/op")
        out += ["![IDMP producers](plots/idmp_producers.png)", "", f"### {title}", "",
                f"Design: {promise}.", "", _md_table(h, rows), "", cap, ""]  # fmt: skip
    return out


# The drop-in client's targets (issue 11): workload key, label, peer, minimum ratio.
CLIENT = "xstreams client"
#: The asyncio client's column (bench_drivers.AsyncClientDriver).
ASYNC_CLIENT = "xstreams asyncio"
CLIENT_TARGETS = [
    ("xadd-8", "XADD 8 B", CLIENT, "burner", 3.0),
    ("xadd-64", "XADD 64 B", CLIENT, "burner", 3.0),
    ("xadd-512", "XADD 512 B", CLIENT, "burner", 3.0),
    ("xadd-8", "XADD 8 B", CLIENT, "xstreams raw", 0.8),
    ("xadd-64", "XADD 64 B", CLIENT, "xstreams raw", 0.8),
    ("xadd-512", "XADD 512 B", CLIENT, "xstreams raw", 0.8),
    ("readack", "XREADGROUP COUNT 100 + XACK (per cycle)", CLIENT, "burner", 3.0),
    ("xrange", "XRANGE <random start> + COUNT 100", CLIENT, "burner", 2.0),
    ("xadd-8", "awaited XADD 8 B", ASYNC_CLIENT, "burner", 3.0),
    ("xadd-64", "awaited XADD 64 B", ASYNC_CLIENT, "burner", 3.0),
    ("xadd-512", "awaited XADD 512 B", ASYNC_CLIENT, "burner", 3.0),
    ("readack", "awaited XREADGROUP COUNT 100 + XACK", ASYNC_CLIENT, "burner", 3.0),
]


#: The physical limit's column (bench_drivers.RustLoopDriver): the typed XADD in Rust.
LIMIT = "rust loop"
#: Arrow batch paths (bench_spark rows) and their figures in the 2026-11-22 full run
#: (rows/s), the reference of issue 11's "1.5× their figures today".
BATCH_BASELINE = {
    "xadd_batch (in-memory)": 1_183_033,
    "xadd_batch IDMP pid iid (in-memory)": 900_071,
}
BATCH_TARGET = 1.5


def _limit_rows(table: dict) -> list:
    """XADD per value size: the Rust loop, and the raw path and the client as fractions."""
    rows = []
    for size in (8, 64, 512):
        cells = table.get(f"xadd-{size}", {})
        lim = cells.get(LIMIT)
        if lim is None or not lim.ok:
            continue
        row = [f"XADD {size} B", fmt_rate(lim.best)]
        for name in ("xstreams raw", CLIENT):
            c = cells.get(name)
            if c is not None and c.ok:
                row += [fmt_rate(c.best), f"{c.best / lim.best:.2f}"]
            else:
                row += ["—", "—"]
        rows.append(row)
    return rows


def _batch_rows(res: dict) -> list:
    """The Arrow batch rows of the spark stage against their 2026-11-22 figures."""
    rows = []
    for extra in res.get("extra", []):
        for r in extra.get("rows") or []:
            base = BATCH_BASELINE.get(r.get("method", ""))
            if base is None or not r.get("rows_per_s"):
                continue
            ratio = r["rows_per_s"] / base
            verdict = "met" if ratio >= BATCH_TARGET else "**missed**"
            rows.append([r["method"], f"{r['rows_per_s']:,}", f"{base:,}", f"{ratio:.2f}×",
                         f"≥ {BATCH_TARGET:g}×", verdict])  # fmt: skip
    return rows


ARROW = "xstreams arrow"


def _arrow_rows(table: dict) -> list:
    """``xrange_arrow`` COUNT 100 beside the raw path's XRANGE COUNT 100 (same run)."""
    cells = table.get("xrange", {})
    arrow, raw = cells.get(ARROW), cells.get("xstreams raw")
    if arrow is None or raw is None or not (arrow.ok and raw.ok):
        return []
    return [["XRANGE <random start> + COUNT 100", fmt_rate(arrow.best), fmt_rate(raw.best),
             f"{arrow.best / raw.best:.2f}×"]]  # fmt: skip


def client_section(res: dict, cap: str) -> list[str]:
    """``xstreams.Redis`` against its targets: each figure, its peer's, the ratio; the
    physical limit (the typed XADD in a Rust loop) with each Python figure as a fraction
    of it; the Arrow batch paths against their 2026-11-22 figures."""
    table = res["table"]
    rows = []
    for key, label, client, peer, target in CLIENT_TARGETS:
        cells = table.get(key, {})
        mine, other = cells.get(client), cells.get(peer)
        if mine is None or other is None or not (mine.ok and other.ok):
            continue
        ratio = mine.best / other.best
        verdict = "met" if ratio >= target else "**missed**"
        rows.append([label, client, fmt_rate(mine.best), peer, fmt_rate(other.best),
                     f"{ratio:.2f}×", f"≥ {target:g}×", verdict])  # fmt: skip
    limit = _limit_rows(table)
    batch = _batch_rows(res)
    arrow = _arrow_rows(table)
    if not (rows or limit or batch or arrow):
        return []
    out = ["## xstreams.Redis (the drop-in) against its targets", ""]
    if rows:
        out += [
            "`xstreams.Redis(store=...)` one call per command (native methods: arguments and "
            "replies converted in Rust, typed core calls), and `xstreams.asyncio.Redis` one "
            "`await` per command, beside burner-redis (`await` per command) and "
            "`Store.execute_command` on the same store, in the same run.",
            "",
            _md_table(
                ["workload", "client", "figure", "peer", "peer's figure", "ratio", "target", ""],
                rows,
            ),
            "",
            cap,
            "",
        ]
    if limit:
        out += [
            "### The physical limit: the typed XADD in a Rust loop",
            "",
            "The typed XADD in a Rust loop, reached through one `Store.xadd_batch` call "
            "of the n rows (no Python per row, no argument vector, no reply; `cargo run "
            "--release --example quickbench limit` runs the bare loop alone) timed as a "
            "driver of the table above, on the same store and values; each Python figure "
            "as a fraction of it (ops/s).",
            "",
            _md_table(
                ["workload", "rust loop", "raw", "fraction", "xstreams.Redis", "fraction"],
                limit,
            ),
            "",
            cap,
            "",
        ]
    if batch:
        out += [
            "### Arrow batch paths against their 2026-11-22 figures",
            "",
            "`Store.xadd_batch` rows/s (the spark stage's table) against the 2026-11-22 full "
            "run on a quiet machine (load 0.9→2.4): compare only runs of similar load.",
            "",
            _md_table(["method", "rows/s", "2026-11-22", "ratio", "target", ""], batch),
            "",
            cap,
            "",
        ]
    if arrow:
        out += [
            "### xrange_arrow beside the raw XRANGE",
            "",
            "`Store.xrange_arrow(..., decode=False)` calls per second against "
            "`Store.execute_command('XRANGE', ...)` in the same run (no 2026-11-22 figure "
            "exists for xrange_arrow).",
            "",
            _md_table(["workload", "xrange_arrow", "raw XRANGE", "ratio"], arrow),
            "",
            cap,
            "",
        ]
    return out


def results_md(res: dict) -> str:
    meta = res["meta"]
    cap = caption(meta)
    m = meta["machine"]
    lines = [
        "# xstreams benchmark results",
        "",
        f"- date: {meta['date']}",
        f"- command: `{meta['command']}` ({meta['mode']}, {meta['duration_s']:.0f} s)",
        f"- machine: {m['nproc']} cores ({m['cpu']}), {m['ram_gib']:.1f} GiB RAM, "
        f"{m['os']}, Python {meta['python']}",
        f"- load average: {meta['load_before']:.2f} before, {meta['load_after']:.2f} after"
        + (
            " — **the machine was busy: treat small differences as noise**"
            if max(meta["load_before"], meta["load_after"]) > 0.5 * m["nproc"]
            else ""
        ),
        "- peers: " + "; ".join(f"{k} {v}" for k, v in meta["versions"].items()),
        f"- timing: best of {meta['reps']} interleaved reps of ≤{meta['budget']:.2f} s each; "
        f"read dataset {meta['read_entries']:,} entries of {meta['read_size']} B",
        "",
        "Reproduce: `python bench/run.py --full` (add `XSTREAMS_BENCH_REDIS_SERVER=/path/to/"
        "redis-server` for a Redis ≥ 8.6 peer with IDMP, XNACK and CLAIM; `apt-get install "
        "redis-tools` for redis-benchmark). `--quick` is the CI-sized run.",
        "",
        "Drivers (columns):",
        "",
    ]
    lines += [f"- **{d}**: {res['driver_info'][d]}" for d in res["drivers"]]
    lines += ["", "## Throughput", "",
              "Operations per second ('cycle' = one round of 100 entries). "
              "n/a: the peer lacks the command.", ""]  # fmt: skip
    header = ["workload"] + res["drivers"]
    rows = []
    for key, label, unit, _ in res["workloads"]:
        cells = res["table"][key]
        rows.append([label + (f" (per {unit})" if unit != "op" else "")]
                    + [_cell_text(cells[d]) for d in res["drivers"]])  # fmt: skip
    lines += [_md_table(header, rows), "", cap, ""]
    lines += [
        "### Ratios (xstreams ÷ peer, same run; > 1 = xstreams faster)",
        "",
        "Workloads that no peer can run (see the last section) are left out.",
        "",
    ]
    for x in [d for d in res["drivers"] if _is_xs(d)]:
        peers = [d for d in res["drivers"] if not _is_xs(d)]
        rows = []
        for key, label, _, _ in res["workloads"]:
            cells = res["table"][key]
            ratios = [_ratio(cells[x], cells[p]) for p in peers]
            if not all(r == "—" for r in ratios):
                rows.append([label] + ratios)
        lines += [f"**{x}** ÷", "", _md_table(["workload"] + peers, rows), "", cap, ""]
    lines += client_section(res, cap)
    rb = res.get("redis_benchmark")
    lines += ["## redis-server's own ceiling (redis-benchmark)", ""]
    if rb:
        ref = res["table"]
        xs_best = {
            k: max((c.best for d, c in ref.get(k, {}).items() if _is_xs(d) and c.ok), default=0)
            for k in ("xadd-8", "xadd-64", "xadd-512", "xrange")
        }
        rows = []
        for r in rb:
            xb = xs_best.get(r["key"], 0)
            rows.append([r["server"], r["cmd"], r["c"], r["P"], f"{r['n']:,}",
                         fmt_rate(r["rps"]), f"{xb / r['rps']:.2f}×" if xb else "—"])  # fmt: skip
        lines += ["C client, no Python: `-c 1 -P 1` is one command per round trip, "
                  "`-c 50 -P 100` the server's throughput ceiling. Last column: the best "
                  "xstreams driver of the throughput table (in Python, replies turned into "
                  "Python objects) ÷ this figure.", "",
                  _md_table(["server", "command", "-c", "-P", "-n", "ops/s",
                             "best xstreams ÷"], rows), "", cap, ""]  # fmt: skip
    else:
        lines += [res.get("redis_benchmark_note", "not run"), ""]
    h, rows = idmp_overhead_rows(res)
    lines += ["## IDMP / IDMPAUTO overhead vs plain XADD", "",
              "Throughput of `XADD k IDMP p1 <16-byte iid> * f <v>` and `XADD k IDMPAUTO p1 * "
              "f <v>` (unique values) vs `XADD k * f <v>`, IDMP-MAXSIZE 10000, as in Redis's "
              "design document (memtier, 1 client, no pipelining: 2.3–5.2% slower). Reps of "
              "the three are interleaved. Redis's percentages are relative to a ~15 µs "
              "network round trip; in-process the same absolute cost is a much larger "
              "share, so compare the *µs/op added* columns too.", "",
              _md_table(h, rows), "", cap, ""]  # fmt: skip
    lines += memory_sections(res, cap)
    lines += scaling_sections(res, cap)
    for x in res.get("extra", []):
        lines += [f"## {x['title']}", "", x["caption"], ""]
        if x["table"]:
            lines += ["```", x["table"], "```", "", cap, ""]
        else:
            lines += [x["error"], ""]
    lines += ["## What each peer could not do", ""]
    lines += [f"- **{d}**: {note}" for d, note in res["cannot"].items()]
    lines += ["", "## Notes", ""] + [f"- {n}" for n in res.get("notes", [])] + [""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# Plots
# ---------------------------------------------------------------------------------------


def _plot_panel(
    ax: Any, series: list[Series], title: str, xlabel: str, promise: str, loglog: bool
) -> None:
    for s in series:
        if not s.points:
            continue
        xs = [p[0] for p in s.points]
        ys = [p[1] for p in s.points]
        xs_ = _is_xs(s.label)
        ax.plot(xs, ys, "-o" if xs_ else "--s", label=s.label, linewidth=2 if xs_ else 1.2,
                markersize=4)  # fmt: skip
    ax.set_xscale("log")
    if loglog:
        ax.set_yscale("log")
        ys_all = [p[1] for s in series for p in s.points if p[1] > 0]
        if ys_all:
            lo, hi = min(ys_all), max(ys_all)
            if hi / lo < 30:  # at least 1.5 decades, so noise does not look like growth
                mid = (lo * hi) ** 0.5
                ax.set_ylim(mid / 5.5, mid * 5.5)
        ax.set_title(f"{title}\nall peers, log-log (flat = O(1), slope 1 = O(n))", fontsize=9)
    else:
        ax.set_ylim(bottom=0)
        ax.set_title(f"{title}\nxstreams, linear y from 0 (design: {promise})", fontsize=9)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("µs per op")
    ax.grid(True, which="both" if loglog else "major", alpha=0.3)
    ax.legend(fontsize=7)


def plots(res: dict, out_dir: str) -> list[str]:
    """One row per metric: xstreams alone on a linear axis, then every peer on log-log."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    sc = res.get("scaling") or {}
    meta = res["meta"]
    foot = (f"{meta['date']} · {meta['machine']['nproc']} cores {meta['machine']['cpu']} · "
            f"{meta['command']}")  # fmt: skip
    pdir = os.path.join(out_dir, "plots")
    os.makedirs(pdir, exist_ok=True)
    written = []

    def figure(rows: list[tuple[list[Series], str]], xlabel: str, name: str) -> None:
        fig, axes = plt.subplots(len(rows), 2, figsize=(12, 4.2 * len(rows)), squeeze=False)
        for (series, metric), (a, b) in zip(rows, axes):
            title, promise = SCALING_TEXT[metric]
            _plot_panel(a, [s for s in series if _is_xs(s.label)], title, xlabel, promise, False)
            _plot_panel(b, series, title, xlabel, promise, True)
        fig.text(0.5, 0.004, foot, ha="center", fontsize=7, color="gray")
        fig.tight_layout(rect=(0, 0.015, 1, 1))
        path = os.path.join(pdir, name)
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)

    if "stream" in sc:
        figure([(sc["stream"][m], m) for m in ("xadd", "xrange")], "stream length (entries)",
               "stream_scaling.png")  # fmt: skip
    if "pel" in sc:
        figure([(sc["pel"][m], m) for m in ("nackclaim", "xpending", "xpending-range",
                                              "readack")],
               "pending entries (PEL size)", "pel_scaling.png")  # fmt: skip
    if "producers" in sc:
        figure([(sc["producers"], "producers")], "IDMP producers", "idmp_producers.png")
    return written


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and math.isfinite(v)
