"""Test support for the redis-py compatible client (``xstreams.client``)."""
