"""`import xstreams` exposes its public API and nothing else (issue 47)."""

import inspect
import types

import xstreams


def test_dir_is_the_public_api():
    assert dir(xstreams) == sorted(xstreams.__all__)
    for leaked in ("os", "threading", "Any", "annotations"):
        assert leaked not in dir(xstreams)
        assert leaked not in vars(xstreams), leaked


def test_no_stray_public_globals():
    # Submodules become attributes once imported (Python's import system does that);
    # every other public global is in __all__.
    stray = [
        name
        for name, value in vars(xstreams).items()
        if not name.startswith("_")
        and name not in xstreams.__all__
        and not isinstance(value, types.ModuleType)
    ]
    assert stray == []


def test_every_public_name_resolves_and_is_documented():
    for name in xstreams.__all__:
        value = getattr(xstreams, name)
        if name == "__version__":
            assert isinstance(value, str) and value
            continue
        doc = inspect.getdoc(value)
        assert doc and doc.strip(), f"xstreams.{name} has no docstring"


def test_star_import_gives_all():
    ns: dict = {}
    exec("from xstreams import *", ns)
    assert sorted(k for k in ns if k != "__builtins__") == sorted(xstreams.__all__)


def test_lazy_client_names_and_unknown_attribute():
    import xstreams.client

    # The client class itself, as the client package exports it (it is defined in
    # xstreams.client.sync since the client became a package).
    assert xstreams.Redis is xstreams.client.Redis
    assert xstreams.Redis.__module__ == "xstreams.client.sync"
    assert xstreams.StrictRedis is not None and xstreams.Pipeline is not None
    try:
        xstreams.os  # noqa: B018 - the point is that it raises
    except AttributeError as e:
        assert "has no attribute 'os'" in str(e)
    else:
        raise AssertionError("xstreams.os exists")


def test_store_errors_are_exported_from_the_package():
    assert issubclass(xstreams.StoreLockedError, xstreams.StoreError)
    assert issubclass(xstreams.CorruptStoreError, xstreams.StoreError)
    assert xstreams.WatchError is xstreams.exceptions.WatchError


def test_deduper_is_public_and_lazy():
    # xstreams.Deduper (the IDMP dedup of dataframes) is the dedup module's class, loaded
    # on first use like the client; the extension's kernel class stays private.
    import xstreams.dedup

    assert "Deduper" in xstreams.__all__
    assert xstreams.Deduper is xstreams.dedup.Deduper
    assert "_Dedup" not in xstreams.__all__
