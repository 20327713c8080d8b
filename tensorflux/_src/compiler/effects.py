"""Run-time checks and host callbacks that lowerings request without leaving XLA.

Some ops must fail or talk to the host at run time: `tf.Assert`, `tf.check_numerics`,
sparse cross-entropy's label range check, `tf.Print`. Making each a host op would cut
every compiled cluster in two, so their lowerings call

    effects.check(ok, message, data)    # fail the run with an OpError unless `ok`
    effects.emit(callback, data)        # call `callback(*numpy data)` on the host

and the surrounding evaluation decides how:

- values all static (folding, host steps): right away;
- in a compiled cluster: the flag and data become extra outputs of the executable and
  are looked at after it ran (`Collector`). A failing check also keeps the variables
  the run would have written at their old values, so a failed step loses nothing;
- inside a control-flow body (a loop runs its body many times inside XLA): through
  `jax.debug.callback`, recorded when a check fails and raised after the run.

Keeping old values must not cost a copy of every variable a run writes: an embedding
table updated in a few rows would be selected whole (`where(ok, new, old)`), so XLA
could no longer scatter into its donated buffer in place. Writers that update rows
(scatters, sparse optimizer updates) build them with `scatter(base, indices, updates)`;
when such a scatter of a variable's start value is its final value, the cluster guards
it by dropping every row of a failed run instead (`Collector.guarded`).

Nor may the guard make XLA copy an optimizer's slots. A fused update computes a slot
(Adam's m) and then its variable from the new slot; guarded only at the end, the
variable's select recomputes the slot from its old value while the slot's own select
overwrites that value in place, so XLA copied every slot first: Adam over GPT-2
small's 124M parameters in plain JAX took 249 ms with the guard at the end and 127 ms
with none (medians). Updates therefore `settle(new, old)` each slot before computing
on from it: the slot is guarded by the checks traced so far, the variable is computed
from that, and the slot needs no second guard when no check came after (128 ms, no
copies).
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field

import jax
import numpy as np

from tensorflux._src.framework import errors

_local = threading.local()


def _collectors():
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def set_current_op(op):
    """Lowering calls this before each op, so a check knows which node it belongs to."""
    _local.op = op


def current_op():
    return getattr(_local, "op", None)


@dataclass
class Failure:
    """A failed check: everything needed to build its error after the run."""

    op: object
    message: object  # str, or callable(*numpy data) -> str
    error: type
    data: tuple = ()

    def exception(self):
        data = [np.asarray(d) for d in self.data]
        text = self.message(*data) if callable(self.message) else self.message
        name = self.op.name if self.op is not None else "?"
        return self.error(None, self.op, f"{text}\n\t [[{{{{node {name}}}}}]]")


@dataclass
class Collector:
    """Checks and callbacks met while tracing one compiled cluster.

    `checks` and `emits` hold (op, message/callback, error) in trace order; the traced
    function returns their flags and data (`outputs()`), and `after_run` acts on them.
    `pending` receives failures reported by callbacks from inside loop bodies.
    """

    checks: list = field(default_factory=list)
    check_values: list = field(default_factory=list)
    emits: list = field(default_factory=list)
    emit_values: list = field(default_factory=list)
    pending: list = field(default_factory=list)
    uses_callbacks: bool = False
    row_writes: dict = field(default_factory=dict)  # id(new) -> (new, base, idx, upd, add)
    settled: dict = field(default_factory=dict)  # id(value) -> (value, old, checks then)
    _ok: tuple = (0, None)  # (number of checks, all_ok() of them)

    def reset(self):  # a re-trace (new input shapes) records the same effects again
        self.checks.clear(), self.check_values.clear()
        self.emits.clear(), self.emit_values.clear()
        self.forget_values()
        self.uses_callbacks = False

    def forget_values(self):
        """Drops the traced values kept for guarding (after a trace: keep no tracer alive)."""
        self.row_writes.clear(), self.settled.clear()
        self._ok = (0, None)

    def settle(self, new, old):
        """`new` if every check traced so far passed, else `old` (see `settle`)."""
        ok = self.all_ok()
        if ok is None:
            return new
        value = jax.numpy.where(ok, new, old)
        self.settled[id(value)] = (value, old, len(self.check_values))
        return value

    def guarded(self, new, old, ok):
        """`new` if every check passed (`ok`), else `old`: for a recorded scatter of `old`,
        the same scatter with all rows dropped when a check failed (in place), else a
        select of the whole value."""
        settled = self.settled.get(id(new))
        if (settled is not None and settled[0] is new and settled[1] is old
                and settled[2] == len(self.check_values)):
            return new  # settled by every check already
        entry = self.row_writes.get(id(new))
        if entry is not None and entry[0] is new and entry[1] is old:
            _, base, indices, updates, add = entry
            indices = jax.numpy.where(ok, indices, base.shape[0])
            return _scatter(base, indices, updates, add)
        return jax.numpy.where(ok, new, old)

    def outputs(self):
        return (tuple(self.check_values), tuple(self.emit_values))

    def all_ok(self):
        """One traced bool: every check of the cluster passed (None without checks)."""
        count, ok = self._ok  # one chain of ands, extended as checks come (settle asks often)
        for flag, _ in self.check_values[count:]:
            ok = flag if ok is None else jax.numpy.logical_and(ok, flag)
        self._ok = (len(self.check_values), ok)
        return ok

    def first_failure(self, check_outputs):
        for (op, message, error), (flag, data) in zip(self.checks, check_outputs):
            if not bool(np.asarray(flag)):
                return Failure(op, message, error, tuple(data))
        if self.uses_callbacks:
            jax.effects_barrier()
            if self.pending:
                failure = self.pending[0]
                self.pending.clear()
                return failure
        return None

    def run_emits(self, emit_outputs):
        for (op, callback), data in zip(self.emits, emit_outputs):
            callback(*[np.asarray(d) for d in data])


class collecting:  # noqa: N801 - used as a context manager
    """Routes `check`/`emit` calls made while tracing a cluster to `collector`."""

    def __init__(self, collector, in_body=False):
        self.entry = (collector, in_body)

    def __enter__(self):
        _collectors().append(self.entry)
        return self.entry[0]

    def __exit__(self, *exc):
        _collectors().pop()


def _is_static(values):
    """Known now (numpy, Python, concrete jax arrays), not a value of a traced run."""
    return not any(isinstance(v, jax.core.Tracer) for v in values)


def check(ok, message, data=(), error=errors.InvalidArgumentError, in_loop_bodies=True):
    """Fails the run with `error(message)` unless `ok` (a scalar bool) holds.

    With `in_loop_bodies=False` the check is left out of loop bodies, where it would be a
    host callback that also keeps the cluster out of the executable store: for checks
    on ops that internal code emits inside loops too (UnsortedSegmentSum densifies
    gradients) and that drop bad input harmlessly there."""
    op = current_op()
    data = tuple(data)
    stack = _collectors()
    if _is_static((ok,)):
        if bool(np.asarray(ok)):
            return
        if _is_static(data) or not stack:
            raise Failure(op, message, error, data).exception()
    elif not stack:
        raise errors.InternalError(None, op, "A run-time check was traced outside a run.")
    collector, in_body = stack[-1]
    if in_body and not in_loop_bodies:
        return
    if in_body:
        collector.uses_callbacks = True

        def record(*values):
            collector.pending.append(Failure(op, message, error, values))

        jax.lax.cond(jax.numpy.asarray(ok, bool), lambda *_: None,
                     lambda *d: jax.debug.callback(record, *d), *data)
        return
    collector.checks.append((op, message, error))
    collector.check_values.append((jax.numpy.asarray(ok, bool), data))


def settle(new, old):
    """`new`, or `old` when a check of the run traced so far fails: for a value an update
    goes on computing from and also writes (an optimizer's slot, before its variable's
    step), so that the run's guard (`Collector.guarded`) need not select it again.
    `new` unchanged outside a compiled cluster's trace and in loop bodies."""
    stack = _collectors()
    if not stack or stack[-1][1] or not isinstance(new, jax.core.Tracer):
        return new
    return stack[-1][0].settle(new, old)


def _scatter(base, indices, updates, add):
    at = base.at[indices]
    return at.add(updates, mode="drop") if add else at.set(updates, mode="drop")


def scatter(base, indices, updates, add=False):
    """`base` with rows `indices` set to (or, with `add`, increased by) `updates`; indices
    outside [0, len(base)) are dropped. Recorded for `Collector.guarded` when traced in a
    compiled cluster."""
    new = _scatter(base, indices, updates, add)
    stack = _collectors()
    if stack and not stack[-1][1] and isinstance(new, jax.core.Tracer):
        stack[-1][0].row_writes[id(new)] = (new, base, indices, updates, add)
    return new


def emit(callback, data=()):
    """Calls `callback(*numpy data)` on the host once the values exist."""
    op = current_op()
    data = tuple(data)
    stack = _collectors()
    if not stack:  # evaluated now (folding, host steps): call it now
        callback(*[np.asarray(d) for d in data])
        return
    # Inside a compiled cluster, even constant data is emitted on every run, not once
    # when the cluster is traced.
    collector, in_body = stack[-1]
    if in_body:
        jax.debug.callback(lambda *d: callback(*[np.asarray(v) for v in d]), *data)
        return
    collector.emits.append((op, callback))
    collector.emit_values.append(data)


@contextlib.contextmanager
def in_body():
    """Checks and callbacks met inside a control-flow body use host callbacks."""
    stack = _collectors()
    if not stack:
        yield
        return
    stack.append((stack[-1][0], True))
    try:
        yield
    finally:
        stack.pop()
