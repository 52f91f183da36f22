"""``xstreams.Deduper``: the IDMP dedup of rows outside Spark (pandas, Arrow, polars).

The reference is the store itself: each producer's rows sent, in (time, tie) order, as
XADD IDMP (or IDMPAUTO) to a store of that producer's own through ``Store.xadd_batch``
with the clock at each row's time; a Deduper called chunk after chunk must answer as
those stores fed the chunks in turn. Random rows come from fixed seeds.
"""

from __future__ import annotations

import random
from typing import Any, Dict, List, Optional

import pytest
import xstreams

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")

NOW = 1_700_000_000_000


def make_rows(seed: int, n: int = 400, producers: int = 4) -> Dict[str, list]:
    """Rows in a shuffled order: a few producers, repeated IIDs, equal times, jumps past
    the window, integer content columns with nulls."""
    rnd = random.Random(seed)
    cols: Dict[str, list] = {"pid": [], "iid": [], "ts": [], "a": [], "b": []}
    clock = {p: NOW + rnd.randrange(2000) for p in range(producers)}
    for _ in range(n):
        p = rnd.randrange(producers)
        clock[p] += rnd.choice([0, 0, 3, 250, 900, 2600])
        cols["pid"].append(f"p{p}")
        cols["iid"].append(f"e{rnd.randrange(30)}")
        cols["ts"].append(clock[p])
        cols["a"].append(rnd.choice([None, 1, 2, 3]))
        cols["b"].append(rnd.choice(["x", "y", None]) if cols["a"][-1] is not None else "z")
    order = list(range(n))
    rnd.shuffle(order)
    return {k: [v[i] for i in order] for k, v in cols.items()}


def _null_first(values: Any) -> list:
    return [(0,) if v is None else (1, v) for v in values]


class StoreReference:
    """One store per producer, fed each call's rows of that producer in (time, tie)
    order: the answers a Deduper carrying its state must give."""

    def __init__(self, duration: int, maxsize: int, content: Optional[List[str]] = None):
        self.duration, self.maxsize, self.content = duration, maxsize, content
        self.stores: Dict[str, Any] = {}

    def answers(self, rows: Dict[str, list]) -> List[tuple]:
        ties = self.content or ["iid"]
        table = pa.table(rows)
        out: List[Any] = [None] * table.num_rows
        for p in dict.fromkeys(rows["pid"]):
            idx = [i for i, v in enumerate(rows["pid"]) if v == p]
            # Nulls first, as the dedup's (and Arrow's) ascending sort.
            idx.sort(key=lambda i: (rows["ts"][i], *_null_first(rows[c][i] for c in ties)))
            store = self.stores.setdefault(
                p,
                xstreams.Store(
                    config={
                        "stream-idmp-duration": self.duration,
                        "stream-idmp-maxsize": self.maxsize,
                    }
                ),
            )
            res = store.xadd_batch(
                None,
                table.take(pa.array(idx)),
                key_column="pid",
                producer="pid",
                iid=None if self.content else "iid",
                idmpauto=self.content is not None,
                fields=self.content or ["iid"],
                clock="ts",
            )
            for i, d, e in zip(
                idx, res.column("duplicate").to_pylist(), res.column("id").to_pylist()
            ):
                out[i] = (d, e)
        return out


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("kind", ["arrow", "batch", "pandas"])
def test_answers_equal_the_store_path(seed, kind):
    rows = make_rows(seed)
    table = pa.table(rows)
    data = {"arrow": table, "batch": table.to_batches()[0], "pandas": table.to_pandas()}[kind]
    d = xstreams.Deduper(producer="pid", iid="iid", time="ts", duration=2, maxsize=5)
    want = StoreReference(2, 5).answers(rows)
    got = d.answers(data)
    if kind == "pandas":
        assert isinstance(got, pd.DataFrame) and list(got.index) == list(data.index)
        pairs = list(zip(got["duplicate"], got["entry_id"]))
    else:
        assert isinstance(got, pa.Table) and got.column_names == ["duplicate", "entry_id"]
        pairs = list(zip(got.column("duplicate").to_pylist(), got.column("entry_id").to_pylist()))
    assert pairs == want
    assert 0 < sum(p[0] for p in pairs) < len(pairs)
    # The flags alone, of the input's kind, from a fresh Deduper.
    flags = xstreams.Deduper(iid="iid", duration=2, maxsize=5).duplicated(data)
    if kind == "pandas":
        assert isinstance(flags, pd.Series) and flags.name == "duplicate"
        assert flags.index.equals(data.index) and flags.dtype == bool
        flags = flags.tolist()
    else:
        assert isinstance(flags, pa.BooleanArray)
        flags = flags.to_pylist()
    assert flags == [w[0] for w in want]


@pytest.mark.parametrize("seed", [4, 5])
def test_state_is_carried_between_calls(seed):
    """Chunks answered one after another: as each producer's store fed them in turn; and
    when the chunks follow each other in time, as one call of all the rows."""
    rows = make_rows(seed, n=600)
    d = xstreams.Deduper(duration=3, maxsize=8)
    ref = StoreReference(3, 8)
    got: List[tuple] = []
    for lo in range(0, 600, 150):
        chunk = {k: v[lo : lo + 150] for k, v in rows.items()}
        out = d.answers(pd.DataFrame(chunk))
        assert list(zip(out["duplicate"], out["entry_id"])) == ref.answers(chunk)
        got += list(zip(out["duplicate"], out["entry_id"]))
    assert d.producers == 4
    # Time-ordered chunks give the one call's answers.
    by_time = sorted(range(600), key=lambda i: (rows["ts"][i], rows["iid"][i]))
    ordered = pa.table(rows).take(pa.array(by_time))
    whole = xstreams.Deduper(duration=3, maxsize=8).duplicated(ordered).to_pylist()
    d.reset()
    assert d.producers == 0
    parts = [d.duplicated(ordered.slice(lo, 100)).to_pylist() for lo in range(0, 600, 100)]
    assert sum(parts, []) == whole


def test_idmpauto_content_and_the_sorted_path():
    """IDMPAUTO over typed content with nulls (the first way), an integer IID and integer
    producers (the sorted way): the store's answers."""
    rows = make_rows(7)
    got = xstreams.Deduper(content=["a", "b"], duration=2, maxsize=6).answers(pa.table(rows))
    want = StoreReference(2, 6, content=["a", "b"]).answers(rows)
    assert (
        list(zip(got.column("duplicate").to_pylist(), got.column("entry_id").to_pylist())) == want
    )
    num = dict(rows, iid=[int(v[1:]) for v in rows["iid"]])
    d = xstreams.Deduper(duration=2, maxsize=6)
    flags = d.duplicated(pd.DataFrame(num))
    assert flags.tolist() == [w[0] for w in StoreReference(2, 6).answers(num)]
    ints = dict(rows, pid=[int(v[1:]) for v in rows["pid"]])
    want = [w[0] for w in StoreReference(2, 6).answers(rows)]
    assert xstreams.Deduper(duration=2, maxsize=6).duplicated(pa.table(ints)).to_pylist() == want


def test_polars_through_arrow():
    pl = pytest.importorskip("polars")
    rows = make_rows(8)
    flags = xstreams.Deduper(duration=2, maxsize=5).duplicated(pl.DataFrame(rows))
    assert isinstance(flags, pl.Series)
    assert flags.to_list() == [w[0] for w in StoreReference(2, 5).answers(rows)]


def test_bad_input_raises_a_data_error_and_keeps_the_state():
    d = xstreams.Deduper(duration=10, maxsize=10)
    first = pa.table({"pid": ["a"], "iid": ["x"], "ts": [NOW]})
    assert d.duplicated(first).to_pylist() == [False]
    bad = [
        (
            {"pid": ["a", None], "iid": ["y", "z"], "ts": [NOW, NOW]},
            "producer column 'pid' is null on row 1",
        ),
        (
            {"pid": ["a", "a"], "iid": ["y", None], "ts": [NOW, NOW]},
            "IID column 'iid' is null on row 1",
        ),
        (
            {"pid": ["a", "a"], "iid": ["y", "z"], "ts": [None, NOW]},
            "time column 'ts' is null on row 0",
        ),
        (
            {"pid": ["a", "a"], "iid": ["y", ""], "ts": [NOW + 2, NOW + 1]},
            "row 1 failed: .*non-empty",
        ),
        ({"pid": ["a"], "ts": [NOW]}, "column 'iid' is not in the data"),
    ]
    for cols, match in bad:
        with pytest.raises(xstreams.DataError, match=match):
            d.duplicated(pa.table(cols))
    # Nothing of the failed calls was kept: "y" is new, "x" still known.
    again = pa.table({"pid": ["a", "a"], "iid": ["y", "x"], "ts": [NOW + 5, NOW + 6]})
    assert d.answers(again).to_pydict() == {
        "duplicate": [False, True],
        "entry_id": [f"{NOW + 5}-0", f"{NOW}-0"],
    }
    for kw, match in [
        ({"duration": 0}, "duration must be in"),
        ({"maxsize": 10_001}, "maxsize must be in"),
        ({"iid": "i", "content": ["c"]}, "give iid or content"),
        ({"content": []}, "content needs at least one column"),
        ({"content": "c"}, "a list of column names"),
        ({"duration": 1.5}, "duration must be an integer"),
    ]:
        with pytest.raises(xstreams.DataError, match=match):
            xstreams.Deduper(**kw)
    with pytest.raises(TypeError, match="pyarrow Table"):
        d.duplicated([{"pid": "a"}])
    assert "Deduper(producer='pid', iid='iid'" in repr(d)


def test_empty_input():
    d = xstreams.Deduper()
    empty = pa.table({"pid": pa.array([], pa.string()), "iid": pa.array([], pa.string()),
                      "ts": pa.array([], pa.int64())})  # fmt: skip
    assert d.duplicated(empty).to_pylist() == []
    assert d.answers(empty.to_pandas()).empty
