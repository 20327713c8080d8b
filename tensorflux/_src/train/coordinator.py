"""`tf.train.Coordinator`: lets threads (queue runners, hooks) stop together."""

from __future__ import annotations

import contextlib
import sys
import threading
import time

from tensorflux._src.framework import errors

__all__ = ["Coordinator", "LooperThread"]


class Coordinator:
    """Threads poll `should_stop()`; any of them may `request_stop(ex)`; `join` waits."""

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info = None
        self._joined = False
        self._registered = set()

    def request_stop(self, ex=None):
        """Asks every thread to stop; remembers `ex` (not a clean-stop type) for `join`.

        As TF1, only the request that stops the threads records its exception: errors
        raised while they stop (a cancelled enqueue) are not reported."""
        with self._lock:
            if ex is not None and self._exc_info is None and not self._joined \
                    and not self._stop_event.is_set():
                exc_info = ex if isinstance(ex, tuple) else (type(ex), ex, ex.__traceback__)
                if not issubclass(exc_info[0], self._clean_stop_types):
                    self._exc_info = exc_info
            self._stop_event.set()

    def clear_stop(self):
        with self._lock:
            self._joined = False
            self._exc_info = None
            self._stop_event.clear()

    def should_stop(self):
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """Inside the block, an exception requests a stop instead of propagating."""
        try:
            yield
        except BaseException:  # noqa: BLE001 - reported through join()
            self.request_stop(sys.exc_info())

    def wait_for_stop(self, timeout=None):
        return self._stop_event.wait(timeout)

    def register_thread(self, thread):
        with self._lock:
            self._registered.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for the threads after a stop request; re-raises a thread's exception."""
        threads = set(threads or ()) | self._registered
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(0.05):
            pass
        deadline = time.time() + stop_grace_period_secs
        for t in threads:
            t.join(max(0.0, deadline - time.time()))
        with self._lock:
            self._joined = True
            self._registered = set()
            exc_info = self._exc_info
        if exc_info is not None:
            raise exc_info[1].with_traceback(exc_info[2])
        stragglers = [t.name for t in threads if t.is_alive()]
        if stragglers and not ignore_live_threads:
            raise RuntimeError(f"Coordinator stopped with threads still running: "
                               f"{' '.join(stragglers)}")

    @property
    def joined(self):
        return self._joined

    def raise_requested_exception(self):
        with self._lock:
            if self._exc_info is not None:
                raise self._exc_info[1].with_traceback(self._exc_info[2])


class LooperThread(threading.Thread):
    """A daemon thread calling `run_loop` (by default `target(*args, **kwargs)`) every
    `timer_interval_secs` (back to back when None) until the coordinator stops; an
    exception it raises requests the stop."""

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError(f"'coord' argument must be a Coordinator: {coord}")
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._loop_target = target
        if target:
            self._loop_args = args or ()
            self._loop_kwargs = kwargs or {}
        elif args or kwargs:
            raise ValueError("'args' and 'kwargs' argument require that you also pass "
                             "'target'")
        self._coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        """Starts a LooperThread calling `target` and returns it."""
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args,
                              kwargs=kwargs)
        looper.start()
        return looper

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                # The first call is right away, then one per interval.
                next_time = time.time()
                while not self._coord.wait_for_stop(max(0.0, next_time - time.time())):
                    next_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        """Called once when the thread starts."""

    def stop_loop(self):
        """Called once when the loop ends."""

    def run_loop(self):
        """One iteration; calls the target by default."""
        if self._loop_target:
            self._loop_target(*self._loop_args, **self._loop_kwargs)
