"""The whole state of a store as plain data: what ``xstreams dump`` prints.

For each key its type and expiry; for a string its value; for a stream what XINFO STREAM
FULL shows plus what no command shows (the NACK zone in order, the delivery order of the
pending entries, the IDMP producers with their IIDs in FIFO order). Values stay bytes.
Everything is read through commands and ``key_internals`` on an open store.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from xstreams import _progress


def _keys_of(store, db: int) -> List[bytes]:
    """Every key of database ``db`` (SCAN), sorted."""
    keys: List[bytes] = []
    cursor = b"0"
    while True:
        cursor, batch = store.execute_command("SCAN", cursor, "COUNT", 1000, db=db)
        keys.extend(batch)
        if cursor in (b"0", 0):
            return sorted(set(keys))


def _id(v: Any) -> Any:
    return v.decode() if isinstance(v, bytes) else v


def stream_view(store, db: int, key: bytes) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """A stream as XINFO STREAM FULL shows it, plus the NACK zone, delivery order and IDMP
    producers (bytes values kept as bytes); and the key's internals."""
    from xstreams import _xstreams  # noqa: PLC0415

    info = store.execute_command("XINFO", "STREAM", key, "FULL", "COUNT", "0", db=db, protocol=3)
    # After XINFO, which drops expired IIDs first.
    extra = _xstreams.key_internals(store, key, db)
    view: Dict[str, Any] = {}
    for field, value in info.items():
        name = field.decode()
        if name not in ("entries", "groups", "radix-tree-nodes"):
            view[name] = _id(value)
    view["idmp-producers"] = [
        {"pid": p["pid"], "iids": [[iid, i] for iid, i in p["iids"]]} for p in extra["producers"]
    ]
    view["entries"] = [[_id(e[0]), list(e[1])] for e in info[b"entries"]]
    orders = {g["name"]: g for g in extra["groups"]}
    groups = []
    for g in info[b"groups"]:
        order = orders[g[b"name"]]
        nacked = set(order["nack_zone"])
        groups.append(
            {
                "name": g[b"name"],
                "last-delivered-id": _id(g[b"last-delivered-id"]),
                "entries-read": g[b"entries-read"],
                "lag": g[b"lag"],
                "pel-count": g[b"pel-count"],
                "nacked-count": g[b"nacked-count"],
                "pending": [
                    [_id(eid), None if _id(eid) in nacked else owner, t, n]
                    for eid, owner, t, n in g[b"pending"]
                ],
                "nack-zone": order["nack_zone"],
                "delivery-order": order["delivery_order"],
                "consumers": [
                    {
                        "name": c[b"name"],
                        "seen-time": c[b"seen-time"],
                        "active-time": c[b"active-time"],
                        "pel-count": c[b"pel-count"],
                        "pending": [[_id(eid), t, n] for eid, t, n in c[b"pending"]],
                    }
                    for c in g[b"consumers"]
                ],
            }
        )
    view["groups"] = groups
    return view, extra


def _listed(store, db: int, key: Optional[bytes]) -> List[bytes]:
    return _keys_of(store, db) if key is None else [key]


def read_keys(store, db: Optional[int], key: Optional[bytes]) -> List[Dict[str, Any]]:
    """Every key (of database ``db``, or only ``key``) with its type, expiry and value."""
    from xstreams import _xstreams  # noqa: PLC0415

    out = []
    todo = [(d, k) for d in (range(16) if db is None else [db]) for k in _listed(store, d, key)]
    for d, k in _progress.items("reading keys", todo, len(todo)):
        kind = store.execute_command("TYPE", k, db=d)
        if kind == b"stream":
            view, extra = stream_view(store, d, k)
        elif kind == b"string":
            view = {"value": store.execute_command("GET", k, db=d)}
            extra = _xstreams.key_internals(store, k, d)
        else:
            continue
        item: Dict[str, Any] = {
            "db": d,
            "key": k,
            "type": kind.decode(),
            "expire-at-ms": extra["expire_at"],
        }
        item.update(view)
        out.append(item)
    return out
