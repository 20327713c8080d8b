"""Server-side batching: concurrent requests merged along dim 0 into one Servable.run.

TF Serving's `--enable_batching` with its `--batching_parameters_file` options:

    max_batch_size        rows in one merged run (a larger request is refused with 400)
    batch_timeout_micros  how long an open batch waits for more rows (0: it is run as soon
                          as a batch thread is free, so batches form while threads are busy)
    max_enqueued_batches  batches that may wait per queue; a request that needs one more is
                          answered 429 (RESOURCE_EXHAUSTED)
    num_batch_threads     merged runs in flight at once
    allowed_batch_sizes   sizes a merged batch is padded up to (copies of its first row), so
                          each size compiles once; the last must equal max_batch_size

There is one queue per (signature, dtypes and non-batch shapes of the inputs): only
requests whose inputs can be concatenated are merged. A batch's outputs are split back
by row offsets; the padding rows are dropped.

The scheduler runs on the asyncio event loop (no locks: every queue operation happens on
the loop thread); the merged runs go to a thread pool of `num_batch_threads`.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import os
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from tensorflux.serving import text_format
from tensorflux.serving.rest_api import ApiError

_FIELDS = ("max_batch_size", "batch_timeout_micros", "max_enqueued_batches",
           "num_batch_threads", "allowed_batch_sizes", "pad_variable_length_inputs",
           "thread_pool_name", "enable_large_batch_splitting", "max_execution_batch_size")


@dataclass(frozen=True)
class BatchingParameters:
    # TF Serving's defaults (BasicBatchScheduler's options).
    max_batch_size: int = 1000
    batch_timeout_micros: int = 0
    max_enqueued_batches: int = 10
    num_batch_threads: int = field(default_factory=lambda: os.cpu_count() or 1)
    allowed_batch_sizes: tuple = ()

    def __post_init__(self):
        for name in ("max_batch_size", "max_enqueued_batches", "num_batch_threads"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"batching parameter {name} must be a positive integer, "
                                 f"got {getattr(self, name)!r}")
        if not isinstance(self.batch_timeout_micros, int) or self.batch_timeout_micros < 0:
            raise ValueError(f"batching parameter batch_timeout_micros must be >= 0, got "
                             f"{self.batch_timeout_micros!r}")
        sizes = tuple(self.allowed_batch_sizes)
        object.__setattr__(self, "allowed_batch_sizes", sizes)
        if sizes:
            if any(not isinstance(s, int) or s < 1 for s in sizes) or \
                    list(sizes) != sorted(set(sizes)):
                raise ValueError(f"allowed_batch_sizes must be increasing positive integers, "
                                 f"got {list(sizes)}")
            if sizes[-1] != self.max_batch_size:
                raise ValueError(f"the last entry of allowed_batch_sizes ({sizes[-1]}) must "
                                 f"equal max_batch_size ({self.max_batch_size})")

    def padded_size(self, rows):
        if not self.allowed_batch_sizes:
            return rows
        return self.allowed_batch_sizes[bisect.bisect_left(self.allowed_batch_sizes, rows)]


def parse_batching_parameters(text: str) -> BatchingParameters:
    """BatchingParameters from TF Serving's text-proto file, or a JSON object of the same."""
    if text.lstrip().startswith("{"):  # a text proto never opens with a brace
        try:
            fields = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"not valid JSON: {exc}") from None
        if not isinstance(fields, dict):
            raise ValueError("expected a JSON object of batching parameters")
        fields = {k: (v if isinstance(v, list) else [v]) for k, v in fields.items()}
    else:
        fields = text_format.parse(text)
    unknown = sorted(set(fields) - set(_FIELDS))
    if unknown:
        raise ValueError(f"unknown batching parameter {unknown[0]!r} (known: "
                         f"{', '.join(_FIELDS[:5])})")
    options = {}
    for name in ("max_batch_size", "batch_timeout_micros", "max_enqueued_batches",
                 "num_batch_threads"):
        value = text_format.scalar(fields, name, where="batching parameter ")
        if value is not None:
            options[name] = value
    if "allowed_batch_sizes" in fields:
        options["allowed_batch_sizes"] = tuple(fields["allowed_batch_sizes"])
    return BatchingParameters(**options)


class _Batch:
    __slots__ = ("signature", "tasks", "rows", "deadline", "closed")

    def __init__(self, signature, deadline):
        self.signature = signature
        self.tasks = []      # (feeds, rows, future)
        self.rows = 0
        self.deadline = deadline
        self.closed = False


class Batcher:
    """Merges `run(signature, feeds)` calls of one servable; `await batcher.run(...)`."""

    def __init__(self, run, params: BatchingParameters):
        self._run = run
        self.params = params
        self._queues = {}
        self._in_flight = 0
        self._executor = ThreadPoolExecutor(params.num_batch_threads,
                                            thread_name_prefix="batch")
        self._timer = None
        self.batches_run = 0

    @staticmethod
    def batch_rows(feeds):
        """The common dim-0 size of `feeds`, or None when they cannot be merged."""
        rows = {a.shape[0] if a.ndim else None for a in feeds.values()}
        return rows.pop() if len(rows) == 1 and None not in rows else None

    async def run(self, signature, feeds):
        rows = self.batch_rows(feeds)
        if rows is None:
            raise ApiError("batching needs every input to share its 0-th (batch) dimension")
        if rows > self.params.max_batch_size:
            raise ApiError(f"Task size {rows} is larger than maximum batch size "
                           f"{self.params.max_batch_size}")
        loop = asyncio.get_running_loop()
        key = (signature, tuple(sorted((k, a.dtype.str, a.shape[1:]) for k, a in feeds.items())))
        queue = self._queues.setdefault(key, deque())
        batch = queue[-1] if queue and not queue[-1].closed else None
        if batch is not None and batch.rows + rows > self.params.max_batch_size:
            batch.closed = True
            batch = None
        if batch is None:
            if len(queue) >= self.params.max_enqueued_batches:
                raise ApiError(f"The batch scheduling queue to which this task was submitted "
                               f"is full ({len(queue)} batches of up to "
                               f"{self.params.max_batch_size} rows wait)", 429)
            timeout = self.params.batch_timeout_micros / 1e6
            batch = _Batch(signature, time.monotonic() + timeout)
            queue.append(batch)
        future = loop.create_future()
        batch.tasks.append((feeds, rows, future))
        batch.rows += rows
        if batch.rows == self.params.max_batch_size:
            batch.closed = True
        self._dispatch()
        return await future

    def _next_ready(self):
        """(batch, its queue) of the oldest head batch that may run now, or None; and
        the earliest deadline among the head batches still waiting (or None)."""
        now = time.monotonic()
        best, waiting = None, None
        for queue in self._queues.values():
            if queue:
                head = queue[0]
                if head.closed or head.deadline <= now:
                    if best is None or head.deadline < best[0].deadline:
                        best = (head, queue)
                elif waiting is None or head.deadline < waiting:
                    waiting = head.deadline
        return best, waiting

    def _dispatch(self):
        loop = asyncio.get_running_loop()
        while self._in_flight < self.params.num_batch_threads:
            ready, waiting = self._next_ready()
            if ready is None:
                self._wake_at(loop, waiting)
                return
            batch, queue = ready
            queue.popleft()
            batch.closed = True
            self._in_flight += 1
            future = loop.run_in_executor(self._executor, self._process, batch)
            future.add_done_callback(lambda f, b=batch: self._finished(b, f))

    def _wake_at(self, loop, deadline):
        """Calls `_dispatch` again when the open batch's timeout runs out. The one timer
        is re-armed from every dispatch: a loop timer may fire a little before the
        deadline by our clock (its clock is coarser), and a batch must not then wait
        for the next request to be run."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if deadline is not None:
            delay = max(deadline - time.monotonic(), 0.0) + 50e-6
            self._timer = loop.call_later(delay, self._dispatch)

    def _finished(self, batch, future):
        self._in_flight -= 1
        self.batches_run += 1
        error = future.exception() if not future.cancelled() else asyncio.CancelledError()
        if error is None:
            for (_, _, waiter), outputs in zip(batch.tasks, future.result()):
                if not waiter.done():
                    waiter.set_result(outputs)
        else:
            for _, _, waiter in batch.tasks:
                if not waiter.done():
                    waiter.set_exception(error)
        self._dispatch()

    def _process(self, batch):
        """Runs in a batch thread: merge, pad, run once, split."""
        names = list(batch.tasks[0][0])
        if len(batch.tasks) == 1:
            feeds = dict(batch.tasks[0][0])
        else:
            feeds = {k: np.concatenate([task[0][k] for task in batch.tasks]) for k in names}
        padded = self.params.padded_size(batch.rows)
        if padded > batch.rows:
            extra = padded - batch.rows
            feeds = {k: np.concatenate([v, np.repeat(v[:1], extra, axis=0)])
                     for k, v in feeds.items()}
        outputs = self._run(batch.signature, feeds)
        for key, value in outputs.items():
            value = np.asarray(value)
            if value.ndim == 0 or value.shape[0] != padded:
                raise ApiError(f"batched output '{key}' has shape {list(value.shape)}; "
                               f"batching needs its 0-th dimension to be the batch size "
                               f"({padded})", 500)
        results, start = [], 0
        for _, rows, _ in batch.tasks:
            results.append({k: np.asarray(v)[start:start + rows] for k, v in outputs.items()})
            start += rows
        return results

    def close(self):
        self._executor.shutdown(wait=False, cancel_futures=False)
