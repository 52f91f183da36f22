"""Every stream command of the core's command table (read through the extension) has a
sync client method, an asyncio client method, a pipeline method and a typed stub: a
command added to the table without them fails here, by name. (Its fuzz weight, log effect
and native-client flag are fields of its table row, which the fuzz crate, the replay
reader and the extension read; the table's own tests fail on a stream row lacking one.)"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Dict, List, Set

import xstreams
import xstreams.asyncio
from xstreams.client import Pipeline

ROOT = Path(__file__).resolve().parent.parent
STUB = ROOT / "python" / "xstreams" / "_xstreams.pyi"

#: The subcommands of the table's container commands that redis-py has a method for
#: (``xgroup_create``...). A container missing here fails the test.
SUBCOMMANDS: Dict[str, List[str]] = {
    "xgroup": ["create", "createconsumer", "delconsumer", "destroy", "setid"],
    "xinfo": ["consumers", "groups", "stream"],
    "xidmp": [],
}

#: Stream commands redis-py 8.1 has no method for (replication-internal, or Redis 8.6+
#: duplicate-suppression administration): ``execute_command`` runs them.
NO_METHOD = {"xsetid", "xidmprecord", "xidmp"}


def stream_commands() -> List[str]:
    return [n for n in xstreams.command_names() if n.startswith("x")]


def method_names() -> Dict[str, str]:
    """Command (``xgroup|create``) -> client method (``xgroup_create``)."""
    out = {}
    for name in stream_commands():
        if name in SUBCOMMANDS:
            for sub in SUBCOMMANDS[name]:
                out[f"{name}|{sub}"] = f"{name}_{sub}"
        if name not in NO_METHOD and name not in SUBCOMMANDS:
            out[name] = name
    return out


def native_stub_methods() -> Set[str]:
    tree = ast.parse(STUB.read_text())
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "_NativeClient":
            return {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
    raise AssertionError("no _NativeClient in the stub")


def test_the_table_has_the_stream_commands_this_test_knows() -> None:
    names = set(stream_commands())
    assert {"xadd", "xreadgroup", "xack", "xgroup", "xinfo"} <= names
    assert set(SUBCOMMANDS) <= names
    assert NO_METHOD <= names


def test_every_stream_command_has_sync_async_and_pipeline_methods() -> None:
    missing = []
    for command, method in method_names().items():
        if not callable(getattr(xstreams.Redis, method, None)):
            missing.append(f"{command}: xstreams.Redis.{method}")
        amethod = getattr(xstreams.asyncio.Redis, method, None)
        if not (inspect.iscoroutinefunction(amethod) or inspect.isasyncgenfunction(amethod)):
            missing.append(f"{command}: xstreams.asyncio.Redis.{method} (a coroutine)")
        if not callable(getattr(Pipeline, method, None)):
            missing.append(f"{command}: Pipeline.{method}")
        if not callable(getattr(xstreams.asyncio.Pipeline, method, None)):
            missing.append(f"{command}: xstreams.asyncio.Pipeline.{method}")
    assert missing == []


def test_every_stream_command_method_is_typed() -> None:
    stubbed = native_stub_methods()
    missing = []
    for command, method in method_names().items():
        attr = inspect.getattr_static(xstreams.Redis, method)
        for klass in xstreams.Redis.__mro__:
            if method in klass.__dict__:
                owner = klass
                break
        if owner.__module__ == "xstreams._xstreams":
            if method not in stubbed:
                missing.append(f"{command}: _NativeClient.{method} in _xstreams.pyi")
            continue
        sig = inspect.signature(attr)
        if sig.return_annotation is inspect.Signature.empty:
            missing.append(f"{command}: a return annotation on {owner.__name__}.{method}")
    assert missing == []


def test_redis_py_has_no_method_for_the_commands_left_to_execute_command() -> None:
    import pytest

    redis = pytest.importorskip("redis")
    for name in NO_METHOD:
        assert not hasattr(redis.Redis, name), f"redis-py has {name}: add the method"
    for command, method in method_names().items():
        assert hasattr(redis.Redis, method), f"{command}: redis-py has no {method}"
