"""The number of shards of the model step being built (TF's tpu_shard_context): set by
TPUEstimator while it calls the model_fn, read by CrossShardOptimizer."""

import contextlib
import threading

_state = threading.local()


def number_of_shards():
    return getattr(_state, "num_shards", None)


@contextlib.contextmanager
def tpu_shard_context(num_shards):
    previous = number_of_shards()
    _state.num_shards = num_shards
    try:
        yield
    finally:
        _state.num_shards = previous
