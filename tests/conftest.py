import os

import pytest

# Tests never read or write the user's compilation cache (~/.cache/tensorflux): a cached
# executable would hide compile errors and make runs depend on earlier ones. Set before
# tensorflux is imported; subprocesses inherit it. Tests of the cache turn it on with a
# tmp directory (tests/runtime/test_compile_cache.py).
os.environ["TENSORFLUX_COMPILATION_CACHE"] = "0"

import tensorflux as tf


@pytest.fixture(autouse=True)
def fresh_default_graph():
    """Each test starts with an empty default graph, as a new TF1 program would."""
    tf.reset_default_graph()
    yield
