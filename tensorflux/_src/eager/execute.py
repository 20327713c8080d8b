"""Running one op eagerly: its OpDef's lowering as a cached compiled kernel.

`execute(op, state)` computes the outputs of an op that `EagerGraph` has just built
(inputs already EagerTensors, attrs resolved, static shapes inferred):

- a compiled op (OpDef.lower) runs as `jax.jit` of its lowering with its attrs bound,
  one jitted function per (op type, attrs), which JAX specializes per input shapes and
  dtypes: a repeated op is one cached-executable call. Run-time checks and prints
  (`compiler/effects.py`) are collected as in a Session's cluster and acted on after
  the call. A lowering that needs a value while tracing (Reshape's shape, slice bounds:
  `StaticValueRequired`) gets a kernel keyed by those small integer values, baked in;
- a host op (OpDef.host) runs its NumPy kernel on host copies;
- VariableV2 makes the variable's buffer slot (its ref tensor); writers (Assign*,
  Apply*, scatters) run their lowering on the current buffers and store the new ones;
- random ops get a fresh key from `(seed, seed2, count)` like a Session's draws;
- functional ops (a `tf.cond`/`while_loop` built by code that bypasses the eager
  branches) run through `compiler/functional.py` on concrete values.
"""

from __future__ import annotations

import secrets
import threading

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import effects, functional, lowering, state
from tensorflux._src.compiler.cluster import prng_key
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors

_STATIC_MAX_ELEMENTS = 4096  # integer inputs up to this size may be baked into a kernel


class KernelStats:
    """Counts for tests and benchmarks: kernels built and calls made."""

    def __init__(self):
        self.kernels = 0
        self.calls = 0
        self.uncached = 0


stats = KernelStats()


class _Kernel:
    """A jitted lowering plus the effects (checks, prints) its trace recorded."""

    __slots__ = ("collector", "fn", "static_inputs")

    def __init__(self, op, static_inputs=None):
        op_def = op.op_def
        attrs = {k: op._attrs[k] for k in op_def.lower_attrs}
        single = len(op_def.output_args) == 1 and not op_def.output_args[0].is_list
        wanted = [np.dtype(t.dtype.as_numpy_dtype) for t in op.outputs]
        collector = self.collector = effects.Collector()
        self.static_inputs = static_inputs or {}  # input index -> numpy value baked in
        lower, random, writes = op_def.lower, op_def.random, bool(op_def.writes)
        baked = dict(self.static_inputs)

        def kernel(*args):
            collector.reset()
            args = list(args)
            if random:
                args[0] = prng_key(args[0])
            for i in sorted(baked):
                args.insert(i + (1 if random else 0), baked[i])
            with effects.collecting(collector):
                out = lower(*args, **attrs)
            if writes:
                outs = [out] if not isinstance(out, (tuple, list)) else list(out)
            else:
                outs = [out] if single else list(out)
                outs = [o if getattr(o, "dtype", None) == w else jnp.asarray(o).astype(w)
                        for o, w in zip(outs, wanted)]
            return outs, collector.outputs()

        self.fn = jax.jit(kernel)
        stats.kernels += 1

    def __call__(self, op, values):
        effects.set_current_op(op)
        if self.static_inputs:  # indices count the op's inputs (after a random op's row)
            skip = 1 if op.op_def.random else 0
            values = values[:skip] + [v for i, v in enumerate(values[skip:])
                                      if i not in self.static_inputs]
        outs, (check_values, emit_values) = self.fn(*values)
        if self.collector.checks or self.collector.uses_callbacks:
            failure = self.collector.first_failure(check_values)
            if failure is not None:
                raise failure.exception()
        if self.collector.emits:
            self.collector.run_emits(emit_values)
        return outs


last_kernel = [None]  # the cached kernel the last run_compiled used (fast_path.py)
_kernels = {}  # (op type, frozen attrs[, baked inputs]) -> _Kernel
_needs_static = set()  # (op type, frozen attrs) whose lowering needs concrete integers
_lock = threading.Lock()


def _freeze(value):
    """A hashable stand-in for an attr value (TypeError when there is none)."""
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return ("objarray", value.shape, tuple(value.reshape(-1).tolist()))
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, np.generic):
        return ("scalar", value.dtype.str, value.item())
    hash(value)
    return value


def _static_inputs(values):
    """Small integer inputs, as numpy, to bake into a kernel (index -> value)."""
    baked = {}
    for i, v in enumerate(values):
        dtype = getattr(v, "dtype", None)
        if dtype is not None and np.dtype(dtype).kind in "iub" and \
                np.size(v) <= _STATIC_MAX_ELEMENTS:
            baked[i] = np.asarray(v)
    return baked


def run_compiled(op, values):
    """Outputs of a compiled (lowered) op on concrete input values."""
    op_def = op.op_def
    stats.calls += 1
    try:
        # Output dtypes too: the kernel casts to them, and a lowering may not take T.
        key = (op_def.name, _freeze({k: op._attrs[k] for k in op_def.lower_attrs}),
               tuple(t.dtype for t in op.outputs))
    except TypeError:
        key = None
    if key is None or any(isinstance(v, np.ndarray) and v.dtype == object for v in values):
        # Unhashable attrs, or strings: evaluate the lowering on concrete values.
        stats.uncached += 1
        return lowering.fold_op(op, [np.asarray(v) for v in values], max_elements=None)
    if key not in _needs_static:
        kernel = _kernels.get(key)
        if kernel is None:
            kernel = _kernels[key] = _Kernel(op)
        try:
            outs = _run(kernel, op, values)
            last_kernel[0] = kernel
            return outs
        except _Retry as retry:
            # The lowering wanted a concrete value (some raise TF's ValueError for a
            # non-constant axis): try again with small integer inputs baked in.
            first_error = retry.error
    else:
        first_error = None
    baked = _static_inputs(values[1:] if op_def.random else values)
    static_key = key + (tuple((i, v.dtype.str, v.tobytes(), v.shape)
                              for i, v in sorted(baked.items())),)
    kernel = _kernels.get(static_key)
    if kernel is None:
        kernel = _kernels[static_key] = _Kernel(op, baked)
    try:
        outs = _run(kernel, op, values)
    except _Retry as retry:
        del _kernels[static_key]
        stats.uncached += 1
        try:
            return lowering.fold_op(op, [np.asarray(v) for v in values], max_elements=None)
        except errors.OpError:
            raise (first_error or retry.error) from None
    if first_error is not None:
        _needs_static.add(key)
    last_kernel[0] = kernel
    return outs


class _Retry(Exception):
    """A lowering failed while tracing with every input traced."""

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


def _run(kernel, op, values):
    try:
        return kernel(op, values)
    except errors.OpError as e:
        if isinstance(e, errors.StaticValueRequired):
            raise _Retry(lowering._with_node(op, e)) from None
        raise lowering._with_node(op, e) from None
    except Exception as e:
        raise _Retry(lowering._invalid_argument(op, e)) from e


class RandomState:
    """Per process: how many times each (seed, seed2) pair has drawn, as a Session keeps
    per random op; unseeded ops get fresh seeds per call."""

    def __init__(self):
        self.counts = {}

    def row(self, op):
        seed, seed2 = op._attrs.get("seed", 0), op._attrs.get("seed2", 0)
        if seed == 0 and seed2 == 0:
            seed, seed2 = secrets.randbits(31), secrets.randbits(31)
        count = self.counts.get((seed, seed2), 0)
        self.counts[(seed, seed2)] = count + 1
        return np.array([seed, seed2, count], np.uint32)


def execute(op, values, random_state, session_state):
    """The output values of `op` (see the module docstring). `values` are the inputs'
    current values (a ref input: its variable's buffer, None if uninitialized)."""
    op_def = op.op_def
    if op_def.name == "Const":  # the value is the attr: onto the device, no kernel
        value = op._attrs["value"]
        return [value if value.dtype == object else jax.device_put(value)]
    if op_def.is_variable:
        return [None]
    if op_def.functional:
        n = op._attrs["n_values"]
        key = prng_key(random_state.row(op)) if functional.needs_key(op) else None
        outs, new_refs = functional.run(op, values[:n], values[n:], key)
        written = {v: value for v, value in zip(op._attrs["body_writes_ordered"], new_refs)}
        for t in op.inputs:
            if t.dtype._is_ref_dtype:
                var = state.variable_of(t)
                if var in written:
                    var.outputs[0]._value = written[var]
        return list(outs)
    if op_def.host is not None:
        host_values = [v if v is None or isinstance(v, np.ndarray) else np.asarray(v)
                       for v in values]
        if op_def.random:
            host_values.insert(0, prng_key(random_state.row(op)))
        return lowering.run_host_kernel(op, host_values, session_state)
    if op_def.lower is None:
        raise errors.UnimplementedError(
            None, op, f"{op.type} cannot run when eager execution is enabled (it has no "
                      f"kernel); build it in a tf.Graph and run it in a tf.Session.")
    if op_def.checks_initialized:
        values = [np.bool_(v is not None) if t.dtype._is_ref_dtype else v
                  for t, v in zip(op.inputs, values)]
        return run_compiled(op, values)
    if op_def.random:
        values = [random_state.row(op)] + list(values)
    if not op_def.writes:
        return run_compiled(op, values)
    refs = state.written_inputs(op)
    for t, v in zip(op.inputs, values):
        if v is None and t.dtype._is_ref_dtype and not (op_def.overwrites and t in refs):
            raise _uninitialized(t, op)
    if op_def.overwrites:
        values = [None if t in refs else v for t, v in zip(op.inputs, values)]
        return _run_writer_uncached(op, values, refs)
    new_values = run_compiled(op, values)
    return _store(op, refs, new_values)


def _run_writer_uncached(op, values, refs):
    """Assign-like writers get None for the value they overwrite, which a jitted kernel
    cannot take; their lowering is a cast or a scatter, run directly."""
    new_values = lowering.lower_writer(op, values, refs)
    return _store(op, refs, [jnp.asarray(v) for v in new_values])


def _store(op, refs, new_values):
    new_values = [v if v.dtype == np.dtype(r.dtype.as_numpy_dtype) else
                  v.astype(r.dtype.as_numpy_dtype) for r, v in zip(refs, new_values)]
    for ref, value in zip(refs, new_values):
        variable = state.variable_of(ref).outputs[0]
        if variable._value is not None and tuple(variable._value.shape) != tuple(value.shape) \
                and op._attrs.get("validate_shape", True) and op.type in ("Assign",):
            raise errors.InvalidArgumentError(
                None, op, f"Trying to assign to variable with tensor with wrong shape. "
                          f"Expected {list(variable._value.shape)} got {list(value.shape)}")
        variable._value = value
    if not op.outputs:
        return []
    return [lowering.writer_output(new_values, refs)]


def _uninitialized(ref, op):
    return errors.FailedPreconditionError(
        None, op, f"Attempting to use uninitialized value {state.variable_of(ref).name}")


def is_string(dtype):
    return dtype.base_dtype in (_dtypes.string, _dtypes.resource, _dtypes.variant)
