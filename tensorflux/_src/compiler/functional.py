"""Running control-flow bodies inside a compiled cluster: If, While, Scan, their gradients.

A functional op's `lower(op, values, ref_values, key)` gets the values of its non-Ref
inputs (captures, loop inits, scanned elements), the current values of the variables
its bodies use (`op._attrs["refs"]`, in input order) and a PRNG key when its bodies
draw random numbers. It returns its outputs and the new values of the variables its
bodies assign (`op._attrs["body_writes"]`, in ref order).

Gradients: a functional op's gradient op (FunctionalGrad) asks JAX for the VJP of the
op's lowering. When both sit in one cluster, the forward op is traced through
`jax.vjp` once and the gradient op reuses that VJP (`TraceScope`), so the forward
computation is not repeated, exactly as `jax.grad` of `lax.scan` would run it.
"""

from __future__ import annotations

import contextlib
import threading

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import effects, lowering, run_plan, state, ta_buffer
from tensorflux._src.framework import errors

_local = threading.local()


class TraceScope:
    """Per trace: the forward ops whose VJP a gradient op of the same cluster needs."""

    def __init__(self, wanted):
        self.wanted = set(wanted)
        self.vjps = {}


@contextlib.contextmanager
def trace_scope(ops):
    wanted = {op._attrs["forward"] for op in ops if op.type == "FunctionalGrad"}
    previous = getattr(_local, "scope", None)
    _local.scope = TraceScope(wanted & set(ops))
    try:
        yield
    finally:
        _local.scope = previous


def _scope():
    return getattr(_local, "scope", None)


def needs_key(op) -> bool:
    """Random ops, and functional ops whose bodies hold random ops, take a PRNG key."""
    return op.op_def.random or (op.op_def.functional and op._attrs.get("random", False))


def run(op, values, ref_values, key):
    """Evaluates a functional op (values: its non-Ref inputs' values)."""
    scope = _scope()
    try:
        if scope is not None and op in scope.wanted:
            outs, new_refs, vjp = forward_with_vjp(op, values, ref_values, key)
            scope.vjps[op] = vjp
            return outs, new_refs
        return op.op_def.lower(op, values, ref_values, key)
    except errors.OpError:
        raise
    except Exception as e:  # noqa: BLE001 - say which construct failed, as TF does
        raise errors.InvalidArgumentError(
            None, op, f"{type(e).__name__}: {e}\n\t [[{{{{node {op.name}}}}}]]") from e


def run_on_host(op, values, session_state):
    """Runs a functional op outside any compiled cluster (a run-plan host step) on
    concrete values: its variables come from, and go back to, the session's store, which
    the run's clusters read and write around it."""
    from tensorflux._src.compiler.cluster import prng_key
    key = prng_key(session_state.draw_keys([op])[0]) if needs_key(op) else None
    store = session_state.variables
    refs = op._attrs["refs"]
    # Under the lock for the whole construct: another thread's run could otherwise
    # donate (free) a variable buffer this one is still reading.
    with session_state.variables_lock:
        missing = next((v for v in refs if v not in store), None)
        if missing is not None:
            raise errors.FailedPreconditionError(
                None, op, f"Attempting to use uninitialized value {missing.name}\n\t "
                f"[[{{{{node {op.name}}}}}]]")
        outs, new_refs = run(op, values, [store[v] for v in refs], key)
        for var, value in zip(op._attrs["body_writes_ordered"], new_refs):
            store[var] = value
    return [jax.tree_util.tree_map(np.asarray, v) if ta_buffer.is_buffer(v) else np.asarray(v)
            for v in outs]


def cached_vjp(forward):
    scope = _scope()
    return scope.vjps.get(forward) if scope is not None else None


def forward_with_vjp(op, values, ref_values, key):
    """The op's outputs and new refs, plus the VJP over its floating-point inputs/outputs:
    `vjp(grads)` takes one gradient per float output (as the graph computed it) and
    returns one per float input."""
    float_in = differentiable_inputs(op)
    float_out = differentiable_outputs(op)

    def forward(*xs):
        vals = list(values)
        for i, x in zip(float_in, xs):
            vals[i] = x
        outs, new_refs = op.op_def.lower(op, vals, ref_values, key)
        return tuple(outs[j] for j in float_out), (outs, new_refs)

    # A TensorArray's flow (ta_buffer.TABuffer) is differentiated as the pytree it is.
    primals = [values[i] if ta_buffer.is_buffer(values[i]) else jnp.asarray(values[i])
               for i in float_in]
    marked = _differentiated()
    marked.append(op)
    try:
        _, raw_vjp, (outs, new_refs) = jax.vjp(forward, *primals, has_aux=True)
    finally:
        marked.pop()

    def vjp(grads):
        cotangents = []
        for g, j in zip(grads, float_out):
            if ta_buffer.is_buffer(outs[j]):
                cotangents.append(ta_buffer.to_cotangent(outs[j], g))
            else:
                want = op.outputs[j].dtype.base_dtype.as_numpy_dtype
                cotangents.append(jnp.broadcast_to(jnp.asarray(g, dtype=want),
                                                   jnp.shape(outs[j])))
        results = raw_vjp(tuple(cotangents))
        return [ta_buffer.from_cotangent(p, r) if ta_buffer.is_buffer(p) else r
                for p, r in zip(primals, results)]

    return outs, new_refs, vjp


def _differentiated():
    stack = getattr(_local, "differentiated", None)
    if stack is None:
        stack = _local.differentiated = []
    return stack


def differentiating(op) -> bool:
    """Whether `op` is being lowered for reverse-mode (loops must then be bounded)."""
    return op in _differentiated()


def differentiable_inputs(op):
    n = op._attrs["n_values"]
    return [i for i, t in enumerate(op.inputs[:n]) if t.dtype.base_dtype.is_floating]


def differentiable_outputs(op):
    return [j for j, t in enumerate(op.outputs) if t.dtype.base_dtype.is_floating]


# -- evaluating a body ---------------------------------------------------------------------

def ops_needed(body, tensors):
    """The body ops `tensors` depend on (data and control edges), in creation order."""
    mine = set(body.ops)
    needed = set()
    stack = [t.op for t in tensors]
    while stack:
        op = stack.pop()
        if op in needed or op not in mine:
            continue
        needed.add(op)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op._control_inputs)
    return [op for op in body.ops if op in needed]


def _needed_ops(body, result_indices):
    """`ops_needed` for some of the body's results, cached on the body."""
    cache = body.__dict__.setdefault("_needed_cache", {})
    key = tuple(result_indices)
    if key not in cache:
        cache[key] = ops_needed(body, [body.results[i] for i in result_indices])
    return cache[key]


def body_state(body, result_indices):
    """The state plan of the body ops the given results need (cached on the body): reads
    not ordered after a write of this run of the body see the value it started with."""
    cache = body.__dict__.setdefault("_state_cache", {})
    key = tuple(result_indices)
    if key not in cache:
        cache[key] = state.plan_state(_needed_ops(body, key), [], carried=body.written)
    return cache[key]


def evaluate_body(body, params, captures, refs, key, result_indices=None):
    """Runs a body once. captures: {tensor: value}; refs: {variable: value} at its start.

    Returns (values of the selected results, refs after the body's assignments). Reads
    and updates of variables follow TF1's ordering rules (compiler/state.py): a read
    sees a write of this run of the body when a dependency orders it after that write,
    and a captured read of a variable the body writes sees the value the body started
    with (in a loop: what earlier iterations left), not the value before the loop.
    """
    indices = tuple(range(len(body.results)) if result_indices is None else result_indices)
    plan = body_state(body, indices)
    env = dict(captures)
    env.update(zip(body.params, params))
    written = {}  # (writer op, variable) -> value
    with effects.in_body():
        for op in _needed_ops(body, indices):
            if op.type == "_BodyParameter":
                continue
            _check_runs_in_body(op, body)
            op_def = op.op_def
            values = []
            for i, t in enumerate(op.inputs):
                if (op, i) in plan.reads:
                    values.append(state.input_value(plan, op, i, refs, written))
                elif not t.dtype._is_ref_dtype:
                    values.append(env[t])
                elif op_def.checks_initialized:  # the construct got its value, or not
                    values.append(np.bool_(not isinstance(refs.get(state.variable_of(t)),
                                                          state.Uninitialized)))
                else:
                    values.append(None)  # overwritten without being read
            op_key = jax.random.fold_in(key, op._id) if key is not None and needs_key(op) \
                else None
            if op_def.functional:
                n = op._attrs["n_values"]
                outs, new_refs = run(op, values[:n], values[n:], op_key)
                for var, value in zip(op._attrs["body_writes_ordered"], new_refs):
                    written[(op, var)] = value
                env.update(zip(op.outputs, outs))
                continue
            state.check_initialized(op, values)  # a variable missing from the store
            if op_def.random:
                values.insert(0, op_key)
            if op_def.writes:
                written_refs = state.written_inputs(op)
                new_values = lowering.lower_writer(op, values, written_refs)
                for ref, value in zip(written_refs, new_values):
                    written[(op, state.variable_of(ref))] = value
                if op.outputs:  # SdcaShrinkL1 has none
                    env[op.outputs[0]] = lowering.writer_output(new_values, written_refs)
            else:
                env.update(zip(op.outputs, lowering.lower_op(op, values)))
    refs = dict(refs)
    for var, writer in plan.final_writer.items():
        refs[var] = written[(writer, var)]
    return [env[body.results[i]] for i in indices], refs


def _check_runs_in_body(op, body):
    if op.op_def.is_variable:
        raise errors.UnimplementedError(
            None, op, f"Variable '{op.name}' is created inside a {body.kind} body; create "
            f"variables outside control flow (tf.get_variable before the loop).")
    if run_plan.runs_on_host(op):
        raise errors.UnimplementedError(
            None, op, f"{op.type} op '{op.name}' runs on the host (its output shape depends "
            f"on the data, or it handles strings or Python), so it cannot run inside a "
            f"{body.kind} body, which XLA compiles as a whole. Move it out of the body.")


def cast_like(values, tensors):
    """Body results as arrays of the construct's declared output dtypes."""
    out = []
    for v, t in zip(values, tensors):
        if ta_buffer.is_buffer(v):  # a TensorArray's flow carries its buffer
            out.append(v)
            continue
        want = t.dtype.base_dtype.as_numpy_dtype
        out.append(jnp.asarray(v, dtype=want))
    return out


def is_static(value) -> bool:
    return isinstance(value, (np.ndarray, np.generic))
