"""pytest settings for the pages' Python examples (``pytest --markdown-docs``, run by
``.ci/dev docs``); not a page of the site (mkdocs.yml excludes it)."""

import tempfile

import pytest


@pytest.fixture(autouse=True)
def _fresh_example(tmp_path, monkeypatch):
    """Each example starts as a new program would: a fresh default store, and its
    temporary directories under the test's own."""
    import xstreams

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    xstreams.default_store().close()  # the next default_store() is a new, empty one
    yield
    xstreams.default_store().close()
