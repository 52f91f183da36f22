"""Fixtures every test module here shares."""

import pytest
from support_streams import new_store


@pytest.fixture
def s():
    """A fresh in-memory store, checked for internal consistency after the test."""
    store = new_store()
    yield store
    store.validate()
