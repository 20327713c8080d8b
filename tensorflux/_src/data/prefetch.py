"""prefetch: a background thread keeps up to `buffer_size` elements ready, so producing
the next batch overlaps with the training step that consumes the current one."""

from __future__ import annotations

import atexit
import queue
import threading

from tensorflux._src.data.dataset_ops import AUTOTUNE, Dataset

_END = object()

# Producer threads still running, as (stop event, thread). A daemon thread that is
# inside a compiled call when the interpreter tears down aborts the process, so they
# are stopped and joined at exit, while the interpreter is still whole.
_running = set()


@atexit.register
def _stop_producers():
    producers = list(_running)
    for stop, _ in producers:
        stop.set()
    for _, thread in producers:
        thread.join(timeout=10)


class PrefetchDataset(Dataset):
    def __init__(self, input_dataset, buffer_size):
        self._children = (input_dataset,)
        self._structure = input_dataset._structure
        self._buffer_size = buffer_size
        self._tensor_args = (buffer_size,)

    def _iterate(self, ctx):
        buffer_size = ctx.int_arg(self._buffer_size, "buffer_size")
        if buffer_size == AUTOTUNE:
            buffer_size = 2  # one element being consumed, one being produced
        if buffer_size < 1:
            raise ValueError(f"buffer_size must be positive or AUTOTUNE, got {buffer_size}")
        ready = queue.Queue(maxsize=buffer_size)
        stop = threading.Event()
        source = self._children[0]._iterate(ctx)

        def produce():
            try:
                for element in source:
                    if not _put(ready, (element, None), stop):
                        return
                _put(ready, (_END, None), stop)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the consumer
                _put(ready, (_END, exc), stop)
            finally:
                source.close()
                _running.discard(producer)

        thread = threading.Thread(target=produce, name="tf.data.prefetch", daemon=True)
        producer = (stop, thread)
        _running.add(producer)
        ctx.on_close(stop.set)
        thread.start()
        try:
            while True:
                element, error = ready.get()
                if element is _END:
                    if error is not None:
                        raise error
                    return
                yield element
        finally:
            stop.set()


    def _cardinality(self, ctx):
        return self._children[0]._cardinality(ctx)


def _put(ready, item, stop) -> bool:
    """Blocks until there is room, or returns False once the consumer has gone."""
    while not stop.is_set():
        try:
            ready.put(item, timeout=0.1)
            return True
        except queue.Full:
            continue
    return False
