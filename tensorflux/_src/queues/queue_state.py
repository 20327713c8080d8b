"""The queues themselves: thread-safe, blocking containers living in a Session.

A queue holds elements (tuples of NumPy arrays, one per component). Enqueue and
dequeue *attempts* are served in arrival order, as TF's QueueBase serves them:

- an enqueue waits while the queue is at capacity; `enqueue_many` inserts elements
  one by one as room appears;
- a dequeue waits until it can take its elements; `dequeue_many(n)` takes them as
  they arrive (so n may exceed the capacity) and returns them stacked;
- `close()` makes later enqueues fail (CancelledError "... is closed."); dequeues
  then take what is left and fail with OutOfRangeError "... is closed and has
  insufficient elements (requested n, current size m)"; a partly filled
  `dequeue_many` puts its elements back first. `dequeue_up_to` returns what is left;
- `close(cancel_pending_enqueues=True)` also fails the waiting enqueues;
- `cancel()` (Session.close) fails every waiting attempt with CancelledError
  "Enqueue/Dequeue operation was cancelled".

`RandomShuffleQueue` takes a random element, and only while more than
`min_after_dequeue` remain (until closed). `PaddingFIFOQueue` accepts dims of unknown
size and pads a `dequeue_many` batch to its largest element with zeros (b"" for
strings).
"""

from __future__ import annotations

import collections
import heapq
import threading

import numpy as np

from tensorflux._src.framework import errors

_UNBOUNDED = 2**31 - 1


def _shape_str(shape):
    return "[" + ",".join("?" if d is None or d < 0 else str(d) for d in shape) + "]"


class _Attempt:
    """One waiting enqueue or dequeue; the queue completes it under its lock."""

    __slots__ = ("count", "taken", "error", "done", "allow_small")

    def __init__(self, count, allow_small=False):
        self.count = count  # elements still to move (None: a close())
        self.allow_small = allow_small  # dequeue_up_to
        self.taken = []  # dequeue: elements taken so far
        self.error = None
        self.done = False


class Queue:
    """FIFO order; the base of the other kinds."""

    kind = "FIFOQueue"

    def __init__(self, name, capacity, dtypes, shapes):
        self.name = name
        self.capacity = _UNBOUNDED if capacity is None or capacity < 0 else capacity
        self.dtypes = list(dtypes)  # numpy dtypes, one per component
        self.shapes = shapes  # list of tuples (None: unknown dim) or None if unspecified
        self._items = collections.deque()
        self._cond = threading.Condition()
        self._enqueues = collections.deque()  # waiting _Attempt, in arrival order
        self._dequeues = collections.deque()
        self.closed = False
        self.cancelled = False

    # -- the public operations (each blocks until its attempt completes) ---------------
    def enqueue(self, components):
        self._check_element(components, batched=False)
        self._wait(self._enqueues, _Attempt(1), [tuple(components)])

    def enqueue_many(self, components):
        self._check_element(components, batched=True)
        n = components[0].shape[0] if components[0].ndim else 0
        for i, c in enumerate(components[1:], 1):
            if c.ndim == 0 or c.shape[0] != n:
                raise errors.InvalidArgumentError(
                    None, None, f"All input tensors must have the same size in the 0th "
                    f"dimension. Component {i} has {c.shape[0] if c.ndim else 0}, and should "
                    f"have {n}")
        if n == 0:
            return
        elements = [tuple(c[i] for c in components) for i in range(n)]
        self._wait(self._enqueues, _Attempt(n), elements)

    def dequeue(self):
        attempt = self._wait(self._dequeues, _Attempt(1))
        return list(attempt.taken[0])

    def dequeue_many(self, n, allow_small_batch=False):
        if self.shapes is None:
            raise errors.InvalidArgumentError(
                None, None, f"{self.kind}'s DequeueMany and DequeueUpTo require the "
                f"components to have specified shapes.")
        if n < 0:
            raise errors.InvalidArgumentError(
                None, None, f"{'DequeueUpTo' if allow_small_batch else 'DequeueMany'} "
                f"requested {n} < 0 elements")
        if n == 0:
            return [np.zeros((0,) + tuple(0 if d is None else d for d in s), dtype)
                    for s, dtype in zip(self.shapes, self.dtypes)]
        attempt = _Attempt(n, allow_small_batch)
        self._wait(self._dequeues, attempt)
        return self._stack(attempt.taken)

    def size(self):
        with self._cond:
            return len(self._items)

    def close(self, cancel_pending_enqueues=False):
        if cancel_pending_enqueues:
            with self._cond:
                self.closed = True
                for attempt in self._enqueues:
                    if attempt.count is not None:
                        self._finish(attempt, errors.CancelledError(
                            None, None, "Enqueue operation was cancelled"))
                    else:  # a waiting close(): the queue is closed now
                        self._finish(attempt)
                self._enqueues.clear()
                self._flush()
            return
        # Queued behind the enqueues already waiting, which may still complete.
        self._wait(self._enqueues, _Attempt(None), [])

    def cancel(self):
        """Session.close: every waiting attempt fails; nothing waits again."""
        with self._cond:
            self.closed = self.cancelled = True
            for attempts, what in ((self._enqueues, "Enqueue"), (self._dequeues, "Dequeue")):
                for attempt in attempts:
                    self._finish(attempt, errors.CancelledError(
                        None, None, f"{what} operation was cancelled"))
                attempts.clear()
            self._cond.notify_all()

    # -- machinery ---------------------------------------------------------------------
    def _wait(self, attempts, attempt, elements=None):
        with self._cond:
            if self.cancelled:
                what = "Enqueue" if attempts is self._enqueues else "Dequeue"
                raise errors.CancelledError(None, None, f"{what} operation was cancelled")
            if elements is not None:
                attempt.taken = collections.deque(elements)  # enqueue: what is left to put
            attempts.append(attempt)
            self._flush()
            while not attempt.done:
                self._cond.wait()
        if attempt.error is not None:
            raise attempt.error
        return attempt

    def _finish(self, attempt, error=None):
        attempt.error, attempt.done = error, True

    def _flush(self):
        """Completes what can complete, in order (TF's FlushUnlocked); holds the lock."""
        progress = True
        while progress:
            progress = self._try_enqueues() | self._try_dequeues()
        self._cond.notify_all()

    def _try_enqueues(self):
        progress = False
        while self._enqueues:
            attempt = self._enqueues[0]
            if attempt.count is None:  # close()
                self._finish(attempt, errors.CancelledError(
                    None, None, f"Queue '{self.name}' is already closed.")
                    if self.closed else None)
                self.closed = True
            elif self.closed:
                self._finish(attempt, errors.CancelledError(
                    None, None, f"{self.kind} '{self.name}' is closed."))
            else:
                while attempt.taken and len(self._items) < self.capacity:
                    self._items.append(attempt.taken.popleft())
                    progress = True
                if attempt.taken:
                    return progress
                self._finish(attempt)
            self._enqueues.popleft()
            progress = True
        return progress

    def _available(self):
        """How many elements a dequeue may take now."""
        return len(self._items)

    def _take(self):
        return self._items.popleft()

    def _put_back(self, elements):
        self._items.extendleft(reversed(elements))

    def _try_dequeues(self):
        progress = False
        while self._dequeues:
            attempt = self._dequeues[0]
            size = len(self._items)
            if self.closed and size < attempt.count:
                if attempt.taken:  # put a partial batch back
                    self._put_back(attempt.taken)
                    attempt.count += len(attempt.taken)
                    attempt.taken = []
                if attempt.allow_small and self._items:
                    attempt.count = len(self._items)
                elif attempt.allow_small and self._enqueues:
                    return progress  # an enqueue still waiting may add elements
                else:
                    self._finish(attempt, errors.OutOfRangeError(
                        None, None, f"{self.kind} '{self.name}' is closed and has "
                        f"insufficient elements (requested {attempt.count}, current size "
                        f"{size})"))
                    self._dequeues.popleft()
                    progress = True
                    continue
            while attempt.count and self._available() > 0:
                attempt.taken.append(self._take())
                attempt.count -= 1
                progress = True
            if attempt.count:
                return progress
            self._finish(attempt)
            self._dequeues.popleft()
        return progress

    def _check_element(self, components, batched):
        if len(components) != len(self.dtypes):
            raise errors.InvalidArgumentError(
                None, None, f"Wrong number of components in tuple. Expected "
                f"{len(self.dtypes)}, got {len(components)}")
        if self.shapes is None:
            return
        for i, (value, shape) in enumerate(zip(components, self.shapes)):
            got = value.shape[1:] if batched else value.shape
            if len(got) != len(shape) or any(d is not None and d != g
                                             for d, g in zip(shape, got)):
                expected = ((value.shape[0] if value.ndim else 0,) if batched else ()) \
                    + tuple(shape)
                raise errors.InvalidArgumentError(
                    None, None, f"Shape mismatch in tuple component {i}. Expected "
                    f"{_shape_str(expected)}, got {_shape_str(value.shape)}")

    def _stack(self, elements):
        return [np.stack([e[i] for e in elements]).astype(dtype, copy=False)
                for i, dtype in enumerate(self.dtypes)]


class RandomShuffleQueue(Queue):
    """Dequeues a uniformly random element while more than `min_after_dequeue` remain."""

    kind = "RandomShuffleQueue"

    def __init__(self, name, capacity, dtypes, shapes, min_after_dequeue, seed, seed2):
        super().__init__(name, capacity, dtypes, shapes)
        self._items = []  # random access; order does not matter
        self.min_after_dequeue = min_after_dequeue
        seeds = None if seed == 0 and seed2 == 0 else [seed, seed2]
        self._rng = np.random.default_rng(seeds)

    def _available(self):
        if self.closed:
            return len(self._items)
        return max(0, len(self._items) - self.min_after_dequeue)

    def _take(self):
        # Swap a random element with the last one and pop it (O(1), as TF does).
        i = int(self._rng.integers(len(self._items)))
        items = self._items
        items[i], items[-1] = items[-1], items[i]
        return items.pop()

    def _put_back(self, elements):
        self._items.extend(elements)


class PaddingFIFOQueue(Queue):
    """FIFO; `dequeue_many` pads each component to the batch's largest shape."""

    kind = "PaddingFIFOQueue"

    def _stack(self, elements):
        out = []
        for i, dtype in enumerate(self.dtypes):
            values = [np.asarray(e[i]) for e in elements]
            shape = tuple(max(v.shape[d] for v in values) for d in range(values[0].ndim))
            fill = b"" if dtype == object else 0
            batch = np.full((len(values),) + shape, fill, dtype=dtype)
            for j, v in enumerate(values):
                batch[(j,) + tuple(slice(0, n) for n in v.shape)] = v
            out.append(batch)
        return out


class PriorityQueue(Queue):
    """Component 0 is an int64 scalar priority; the smallest priority dequeues first
    (ties in arrival order). As TF's kernel, `dequeue_many(n)` waits until n elements are
    there, so each batch is sorted."""

    kind = "PriorityQueue"

    def __init__(self, name, capacity, dtypes, shapes):
        super().__init__(name, capacity, dtypes, shapes)
        self._items = []  # heap of (priority, arrival, element)
        self._arrivals = 0

    def _check_element(self, components, batched):
        super()._check_element(components, batched)
        priority = components[0]
        shape = priority.shape[1:] if batched else priority.shape
        if shape != ():
            raise errors.InvalidArgumentError(
                None, None, f"Expected the priority element to be a scalar, but received "
                f"shape: {_shape_str(shape)}")

    def _try_enqueues(self):
        progress = False
        while self._enqueues:
            attempt = self._enqueues[0]
            if attempt.count is None or self.closed:
                return super()._try_enqueues() or progress
            while attempt.taken and len(self._items) < self.capacity:
                element = attempt.taken.popleft()
                heapq.heappush(self._items, (int(element[0]), self._arrivals, element))
                self._arrivals += 1
                progress = True
            if attempt.taken:
                return progress
            self._finish(attempt)
            self._enqueues.popleft()
            progress = True
        return progress

    def _try_dequeues(self):
        progress = False
        while self._dequeues:
            attempt = self._dequeues[0]
            size = len(self._items)
            if self.closed and (size == 0 or (not attempt.allow_small
                                              and size < attempt.count)):
                self._finish(attempt, errors.OutOfRangeError(
                    None, None, f"{self.kind} '{self.name}' is closed and has insufficient "
                    f"elements (requested {attempt.count}, current size {size})"))
            elif size < attempt.count and (size == 0 or not (self.closed
                                                              and attempt.allow_small)):
                return progress  # wait for the whole batch
            else:
                for _ in range(min(size, attempt.count)):
                    attempt.taken.append(heapq.heappop(self._items)[2])
                self._finish(attempt)
            self._dequeues.popleft()
            progress = True
        return progress
