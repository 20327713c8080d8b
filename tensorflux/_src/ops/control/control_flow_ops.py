"""`tf.cond`, `tf.case` and `tf.while_loop`, compiled to XLA control flow (not unrolled).

Each construct records its branches or loop body as `Body` objects (ops/control/bodies.py) and
adds one functional op to the graph: `If` (lowered to `lax.cond`) or `While` (lowered
to `lax.scan` when the trip count is known, else `lax.while_loop`). Outputs get TF1's
names: `cond/Merge:0`, `while/Exit:0`; loop variables inside the body are
`while/Identity:0`, ...

Gradients (`FunctionalGrad`) are the VJP of the construct's lowering (see
compiler/functional.py). Reverse-mode needs a loop whose length is bounded before it
runs, so **a while_loop is differentiable when `maximum_iterations` is given or its
trip count is static** (the loop variables its condition depends on start from
values known before the run, e.g. `i = 0; i < 10` or `i < tf.shape(x)[0]`);
otherwise computing its gradient raises InvalidArgumentError saying so.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import functional, state, ta_buffer
from tensorflux._src.compiler.state import aliased_variable
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.behaviour import executing_eagerly
from tensorflux._src.framework.operation import Operation, Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape, as_shape
from tensorflux._src.ops import op_builder
from tensorflux._src.ops.array.array_ops import identity, stack
from tensorflux._src.ops.array.generator_ops import zeros_like
from tensorflux._src.ops.constant import constant
from tensorflux._src.ops.control.bodies import Body, body_bundle
from tensorflux._src.ops.math.math_ops import cast
from tensorflux._src.ops.math.reduce_ops import reduce_sum
from tensorflux._src.ops.registry import OpDef, lookup, register

__all__ = ["cond", "case", "while_loop"]

# Reverse-mode through a loop whose trip count must be found by running its condition
# at compile time gives up beyond this many iterations.
MAX_STATIC_TRIP_COUNT = 10_000


# -- structures -------------------------------------------------------------------------

def _is_leaf(x):
    return x is None or isinstance(x, (Tensor, Operation)) or hasattr(x, "_as_graph_element")


def flatten(structure):
    """Leaves (tensors, ops, Python values) and a treedef, for TF1's nested structures."""
    return jax.tree_util.tree_flatten(structure, is_leaf=_is_leaf)


def same_structure(a, b) -> bool:
    """TF's nest rule for loops and branches: lists and tuples count as the same."""
    def normalize(x):
        if isinstance(x, list) or (type(x) is tuple):
            return tuple(normalize(v) for v in x)
        if isinstance(x, dict):
            return {k: normalize(v) for k, v in x.items()}
        return x
    return (jax.tree_util.tree_structure(normalize(a), is_leaf=_is_leaf)
            == jax.tree_util.tree_structure(normalize(b), is_leaf=_is_leaf))


def pack(treedef, leaves):
    return jax.tree_util.tree_unflatten(treedef, list(leaves))


# -- creating a functional op -------------------------------------------------------------

def make_functional(op_type, values, bodies, out_dtypes, out_shapes, attrs, name):
    """Adds the functional op standing for `bodies`; values: its non-Ref inputs."""
    graph = _graph.get_default_graph()
    from tensorflux._src.compiler.state import variable_of
    captures, ref_tensors, written, controls = body_bundle(bodies)
    refs = [variable_of(t) for t in ref_tensors]
    inputs = list(values) + ref_tensors
    random_ops = [op for b in bodies for op in b.ops if functional.needs_key(op)]
    attrs = dict(attrs)
    attrs.update(
        Tin=tuple(t.dtype for t in inputs), Tout=tuple(out_dtypes),
        output_shapes=tuple(as_shape(s) for s in out_shapes), n_values=len(values),
        refs=tuple(refs), body_writes=tuple(written),
        body_writes_ordered=tuple(v for v in refs if v in written),
        random=bool(random_ops))
    if random_ops:  # the PRNG key the session draws for it follows its first random op
        attrs["seed"] = random_ops[0].get_attr("seed")
        attrs["seed2"] = random_ops[0].get_attr("seed2")
    with graph.name_scope(name) as scope:
        op = op_builder._create_op(graph, lookup(op_type), scope[:-1], inputs, attrs)
    op._add_control_inputs([c for c in controls if c not in op._control_inputs])
    return op


def _functional_shapes(op):
    return list(op.get_attr("output_shapes"))


def functional_grad(op, *grads):
    """Gradient of If/While/Scan: one FunctionalGrad op, the VJP of the forward op."""
    n = op._attrs["n_values"]
    result = [None] * len(op.inputs)
    float_in = functional.differentiable_inputs(op)
    float_out = functional.differentiable_outputs(op)
    if not op._attrs.get("back_prop", True) or not float_in or not float_out:
        return result
    out_grads = [grads[j] if grads[j] is not None else zeros_like(op.outputs[j])
                 for j in float_out]
    graph = op.graph
    refs = op._attrs["refs"]
    attrs = dict(forward=op, n_forward=n, Tin=None, Tout=tuple(op.inputs[i].dtype.base_dtype
                                                                for i in float_in),
                 output_shapes=tuple(op.inputs[i].shape for i in float_in),
                 n_values=n + len(out_grads), refs=refs, body_writes=(),
                 body_writes_ordered=(), random=op._attrs["random"])
    for seed in ("seed", "seed2"):
        if seed in op._attrs:
            attrs[seed] = op._attrs[seed]
    inputs = list(op.inputs[:n]) + out_grads + list(op.inputs[n:])
    attrs["Tin"] = tuple(t.dtype for t in inputs)
    with graph.name_scope(op.type) as scope:
        grad_op = op_builder._create_op(graph, lookup("FunctionalGrad"), scope[:-1], inputs,
                                        attrs)
    for k, i in enumerate(float_in):
        result[i] = grad_op.outputs[k]
    return result


def _lower_functional_grad(op, values, ref_values, key):
    forward, n = op._attrs["forward"], op._attrs["n_forward"]
    vjp = functional.cached_vjp(forward)
    if vjp is None:  # forward computed in another cluster or run: recompute it here
        _, _, vjp = functional.forward_with_vjp(forward, values[:n], ref_values, key)
    return list(vjp(values[n:])), []


register(OpDef("FunctionalGrad", inputs=("input: list(Tin)",), outputs=("output: list(Tout)",),
               shape=_functional_shapes, lower=_lower_functional_grad, functional=True))


# -- tf.cond ------------------------------------------------------------------------------

def _branch_results(result, strict):
    """A branch's return value as flat tensors (created inside the branch) and a treedef."""
    if not strict and isinstance(result, (list, tuple)) and len(result) == 1 \
            and not hasattr(result, "_fields"):
        result = result[0]  # TF1's non-strict mode unpacks singleton lists
    leaves, treedef = flatten(result)
    tensors = []
    for leaf in leaves:
        if isinstance(leaf, Operation):
            # An op as a branch result: a boolean that exists once the op has run.
            with _graph.control_dependencies([leaf]):
                leaf = constant(True)
        tensors.append(leaf if isinstance(leaf, Tensor) else convert_to_tensor(leaf))
    return tensors, treedef


def _lower_if(op, values, ref_values, key):
    true_body, false_body = op._attrs["branches"]
    pred, captures = values[0], dict(zip(op.inputs[1:op._attrs["n_values"]], values[1:]))
    refs, written = op._attrs["refs"], op._attrs["body_writes_ordered"]

    def branch(body):
        def run_branch():
            outs, new_refs = functional.evaluate_body(body, [], captures,
                                                      dict(zip(refs, ref_values)), key)
            return (functional.cast_like(outs, op.outputs), [new_refs[v] for v in written])
        return run_branch

    if functional.is_static(pred):  # known at compile time: only that branch is built
        return branch(true_body if bool(pred) else false_body)()
    # Both branches are traced: each returns every variable either assigns.
    state.check_initialized(op, [x for v, x in zip(refs, ref_values) if v in written])
    return jax.lax.cond(jnp.asarray(pred, bool), branch(true_body), branch(false_body))


register(OpDef("If", inputs=("input: list(Tin)",), outputs=("output: list(Tout)",),
               shape=_functional_shapes, lower=_lower_if, grad=functional_grad,
               functional=True))


def _merged_shape(a, b, i):
    if a.ndims is not None and b.ndims is not None and a.is_fully_defined() \
            and b.is_fully_defined() and a != b:
        raise ValueError(f"Outputs {i} of true_fn and false_fn have shapes {a} and {b}. XLA "
                         f"compiles static shapes, so both branches of tf.cond must return "
                         f"the same shape.")
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x.value if x.value == y.value else None for x, y in zip(a.dims, b.dims)])


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """`true_fn()` if `pred` else `false_fn()`; only ops created in a branch are conditional."""
    true_fn = true_fn if true_fn is not None else fn1
    false_fn = false_fn if false_fn is not None else fn2
    if executing_eagerly() and callable(true_fn) and callable(false_fn):
        return true_fn() if bool(pred) else false_fn()  # TF's eager cond: Python's if
    if not callable(true_fn):
        raise TypeError("true_fn must be callable.")
    if not callable(false_fn):
        raise TypeError("false_fn must be callable.")
    if isinstance(pred, bool):
        raise TypeError("pred must not be a Python bool")
    with _graph.name_scope(name, "cond", [pred]):
        pred = convert_to_tensor(pred, name="pred")
        if pred.dtype.base_dtype != _dtypes.bool or pred.shape.ndims not in (None, 0):
            raise ValueError(f"pred must be a scalar boolean tensor, got {pred.dtype.name} "
                             f"with shape {pred.shape}.")
        graph = _graph.get_default_graph()
        bodies, flats, treedefs = [], [], []
        for fn in (true_fn, false_fn):
            body = Body(graph, "cond")
            with body:
                tensors, treedef = _branch_results(fn(), strict)
            body.finish(tensors)
            bodies.append(body), flats.append(tensors), treedefs.append(treedef)
        if not same_structure(pack(treedefs[0], flats[0]), pack(treedefs[1], flats[1])):
            raise ValueError(f"true_fn and false_fn must return the same structure; got "
                             f"{treedefs[0]} and {treedefs[1]}.")
        for t, f in zip(*flats):
            if t.dtype.base_dtype != f.dtype.base_dtype:
                raise ValueError(f"Outputs of true_fn and false_fn must have the same type: "
                                 f"{t.dtype.base_dtype.name}, {f.dtype.base_dtype.name}")
        shapes = [_merged_shape(t.shape, f.shape, i) for i, (t, f) in enumerate(zip(*flats))]
        captures = body_bundle(bodies)[0]
        op = make_functional("If", [pred] + captures, bodies,
                             [t.dtype.base_dtype for t in flats[0]], shapes,
                             {"branches": tuple(bodies)}, "If")
        if not op.outputs:
            return op
        outs = [identity(t, name="Merge") for t in op.outputs]
        return pack(treedefs[0], outs)


# -- tf.case ------------------------------------------------------------------------------

def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The fn of the first pair whose predicate holds, else `default` (nested conds).

    Without `default`, the last pair's fn runs when no earlier predicate holds. With
    `exclusive=True`, more than one true predicate fails the run, as in TF.
    """
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) \
        else list(pred_fn_pairs)
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in pred_fn_pairs must be a 2-tuple, got {pair!r}")
        if not callable(pair[1]):
            raise TypeError("fn for pred %s must be callable." % getattr(pair[0], "name",
                                                                         pair[0]))
    if default is not None and not callable(default):
        raise TypeError("default must be callable.")
    if not pairs:
        if default is None:
            raise ValueError("pred_fn_pairs must not be empty when default is None.")
        return default()
    with _graph.name_scope(name, "case", [p for p, _ in pairs]):
        preds = [convert_to_tensor(p) for p, _ in pairs]
        fns = [fn for _, fn in pairs]
        if default is None:
            default, preds, fns = fns[-1], preds[:-1], fns[:-1]
        if exclusive and len(preds) > 1:
            preds = _exclusive_preds(preds)
        chain = default
        for pred, fn in reversed(list(zip(preds, fns))):
            chain = _bind_cond(pred, fn, chain, strict)
        return chain()


def _bind_cond(pred, fn, otherwise, strict):
    return lambda: cond(pred, fn, otherwise, strict=strict)


def _exclusive_preds(preds):
    """The predicates, available only after a check that at most one of them holds."""
    count = reduce_sum(cast(stack(preds), _dtypes.int32))
    check = op_builder.apply_op("_AtMostOneTrue", name="ExclusiveCheck", count=count)
    with _graph.control_dependencies([check]):
        return [identity(p) for p in preds]


def _lower_at_most_one(count):
    from tensorflux._src.compiler import effects
    effects.check(count <= 1, lambda n: f"Input error: exclusive=True: {int(n)} conditions "
                  f"evaluated as True", data=(count,))
    return ()


register(OpDef("_AtMostOneTrue", inputs=("count: int32",), outputs=(),
               lower=_lower_at_most_one, stateful=True, not_differentiable=True))


# -- tf.while_loop ------------------------------------------------------------------------

def _shape_allows(invariant, shape):
    """TF's rule: a loop variable's shape after an iteration must fit its invariant."""
    if invariant.ndims is None:
        return True
    if shape.ndims != invariant.ndims:
        return False
    return all(i.value is None or i.value == s.value for i, s in zip(invariant.dims, shape.dims))


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, name=None, maximum_iterations=None,
               return_same_structure=False):
    """Repeats `body` while `cond` holds; compiled to one XLA loop."""
    if executing_eagerly():
        return _eager_while_loop(cond, body, loop_vars, maximum_iterations,
                                 return_same_structure)
    if not callable(cond):
        raise TypeError("cond must be callable.")
    if not callable(body):
        raise TypeError("body must be callable.")
    if parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer.")
    leaves, treedef = flatten(loop_vars)
    if not leaves:
        raise ValueError("No loop variables provided")
    with _graph.name_scope(name, "while", [x for x in leaves if isinstance(x, Tensor)]):
        inits = [convert_to_tensor(v) for v in leaves]
        invariants = _invariants(shape_invariants, inits)
        max_iter = None
        if maximum_iterations is not None:
            max_iter = convert_to_tensor(maximum_iterations, name="maximum_iterations")
            if max_iter.shape.ndims not in (None, 0):
                raise ValueError(f"maximum_iterations must be a scalar, saw shape: "
                                 f"{max_iter.shape}")
            if not max_iter.dtype.is_integer:
                raise TypeError(f"maximum_iterations must be an integer, got "
                                f"{max_iter.dtype.name}")
        graph = _graph.get_default_graph()
        loop = Body(graph, "while")
        params = [loop.add_param(t.dtype.base_dtype, s, "Identity")
                  for t, s in zip(inits, invariants)]
        with loop:
            packed = pack(treedef, params)
            args = packed if isinstance(packed, (list, tuple)) and not hasattr(packed, "_fields") \
                else [packed]
            keep_going = convert_to_tensor(cond(*args), name="LoopCond")
            results = body(*args)
            if isinstance(loop_vars, (list, tuple)) and len(loop_vars) == 1 \
                    and same_structure(loop_vars[0], results):
                results = [results]  # the body returned the single loop variable unwrapped
            flat_results, result_treedef = flatten(results)
            if not same_structure(pack(treedef, leaves), results) \
                    and not (len(leaves) == 1 and len(flat_results) == 1):
                raise ValueError(f"The two structures don't have the same nested structure.\n\n"
                                 f"First structure: {treedef}\n\nSecond structure: "
                                 f"{result_treedef}")
            flat_results = [convert_to_tensor(r) for r in flat_results]
        if keep_going.dtype.base_dtype != _dtypes.bool or keep_going.shape.ndims not in (None, 0):
            raise ValueError(f"The loop condition must return a scalar boolean tensor, got "
                             f"{keep_going.dtype.name} with shape {keep_going.shape}.")
        for init, result, invariant in zip(inits, flat_results, invariants):
            if result.dtype.base_dtype != init.dtype.base_dtype:
                raise ValueError(f"Input tensor '{init.name}' enters the loop with type "
                                 f"{init.dtype.base_dtype.name}, but has type "
                                 f"{result.dtype.base_dtype.name} after one iteration.")
            if not _shape_allows(invariant, result.shape):
                raise ValueError(
                    f"Input tensor '{init.name}' enters the loop with shape {init.shape}, but "
                    f"has shape {result.shape} after one iteration. To allow the shape to vary "
                    f"across iterations, use the `shape_invariants` argument of tf.while_loop "
                    f"to specify a less-specific shape.")
        loop.finish([keep_going] + flat_results)
        values = inits + loop.captures + ([max_iter] if max_iter is not None else [])
        op = make_functional("While", values, [loop],
                             [t.dtype.base_dtype for t in inits], invariants,
                             {"body": loop, "n_loop_vars": len(inits),
                              "has_maximum_iterations": max_iter is not None,
                              "back_prop": bool(back_prop),
                              "carries_arrays": any(
                                  getattr(x, "_is_tensor_array", False) for x in
                                  jax.tree_util.tree_leaves(loop_vars, is_leaf=lambda v: (
                                      _is_leaf(v) or getattr(v, "_is_tensor_array", False)))),
                              "host_loop": any(_changes_shape(t.shape, r.shape, s) for t, r, s
                                               in zip(inits, flat_results, invariants))},
                             "While")
        outs = [identity(t, name="Exit") for t in op.outputs]
        if not return_same_structure and len(outs) == 1:
            return outs[0]
        return pack(treedef, outs)


def _changes_shape(init, result, invariant) -> bool:
    """Whether a loop variable may change shape across iterations: its invariant is less
    specific than the shape it enters with, and its shape after one iteration is not
    known to be that shape. XLA's loops keep shapes fixed, so such a loop runs on the
    host (see _lower_while)."""
    if _same_shape(invariant, init):
        return False
    return not (_same_shape(result, init) and result.is_fully_defined())


def _same_shape(a, b) -> bool:
    if a.ndims is None or b.ndims is None:
        return a.ndims is None and b.ndims is None
    return a.as_list() == b.as_list()


def _invariants(shape_invariants, inits):
    if shape_invariants is None:
        return [t.shape for t in inits]
    flat, _ = jax.tree_util.tree_flatten(shape_invariants,
                                         is_leaf=lambda s: isinstance(s, TensorShape) or
                                         s is None or (isinstance(s, list) and
                                                       all(isinstance(d, (int, type(None)))
                                                           for d in s)))
    if len(flat) != len(inits):
        raise ValueError(f"shape_invariants has {len(flat)} entries for {len(inits)} loop "
                         f"variables.")
    shapes = [as_shape(s) for s in flat]
    for t, s in zip(inits, shapes):
        if not _shape_allows(s, t.shape):
            raise ValueError(f"The shape invariant specified for {t.name} is not compatible "
                             f"with the initial shape of the loop variable. It enters the loop "
                             f"with shape {t.shape}, but the specified shape invariant is {s}.")
    return shapes


def _lower_while(op, values, ref_values, key):
    loop, n = op._attrs["body"], op._attrs["n_loop_vars"]
    n_captures = len(loop.captures)
    inits = values[:n]
    captures = dict(zip(loop.captures, values[n:n + n_captures]))
    max_iter = values[n + n_captures] if op._attrs["has_maximum_iterations"] else None
    refs, written = op._attrs["refs"], op._attrs["body_writes_ordered"]
    read_only = {v: x for v, x in zip(refs, ref_values) if v not in written}
    written_start = [x for v, x in zip(refs, ref_values) if v in written]
    state.check_initialized(op, written_start)  # a loop carries what it assigns
    body_results = list(range(1, n + 1))

    def ref_env(written_values):
        env = dict(read_only)
        env.update(zip(written, written_values))
        return env

    def keep_going(loop_vars, written_values):
        (flag,), _ = functional.evaluate_body(loop, loop_vars, captures, ref_env(written_values),
                                              key, [0])
        return jnp.asarray(flag, bool)

    def step(loop_vars, written_values, i):
        step_key = jax.random.fold_in(key, i) if key is not None else None
        outs, new_refs = functional.evaluate_body(loop, loop_vars, captures,
                                                  ref_env(written_values), step_key, body_results)
        return functional.cast_like(outs, op.outputs), [new_refs[v] for v in written]

    start = (functional.cast_like(inits, op.outputs), written_start)
    if not op._attrs.get("host_loop") and any(ta_buffer.is_buffer(v) for v in start[0]):
        # TensorArrays among the loop variables: sized for the loop, then one XLA loop.
        trips = static_trip_count(op, inits, captures, max_iter)
        return ta_buffer.run_loop(op, step, keep_going, start, trips, max_iter,
                                  functional.differentiating(op))
    if op._attrs.get("host_loop") or not _keeps_shapes(op, step, start):
        # Loop variables change shape across iterations (shape_invariants allow it): no
        # XLA loop can carry them. A host loop (a HostStep, values concrete) iterates in
        # Python, as TF1's executor does; a compiled one with a static trip count is
        # unrolled, each iteration with its own shapes.
        if functional.differentiating(op):
            raise errors.InvalidArgumentError(
                None, op, f"Cannot compute the gradient of tf.while_loop '{op.name}': its "
                f"loop variables change shape across iterations.\n\t [[{{{{node {op.name}}}}}]]")
        if op._attrs.get("host_loop"):
            return _host_iterations(step, keep_going, start, max_iter)
        trips = static_trip_count(op, inits, captures, max_iter)
        if trips is None:
            raise errors.UnimplementedError(
                None, op, f"The loop variables of tf.while_loop '{op.name}' change shape "
                f"across iterations, which a compiled loop cannot do unless its trip count "
                f"is known before it runs; give the changing loop variables shape_invariants "
                f"less specific than the shapes they enter the loop with (such a loop runs on "
                f"the host).\n\t "
                f"[[{{{{node {op.name}}}}}]]")
        carry = start
        for i in range(trips):
            carry = step(*carry, np.int32(i))
        return carry
    trips = static_trip_count(op, inits, captures, max_iter)
    if trips is not None:
        if trips == 0:
            return start
        (final, final_refs), _ = jax.lax.scan(
            lambda carry, i: (step(*carry, i), None), start, jnp.arange(trips))
        return final, final_refs
    if functional.differentiating(op):
        if max_iter is None or not functional.is_static(max_iter):
            raise errors.InvalidArgumentError(
                None, op, f"Cannot compute the gradient of tf.while_loop '{op.name}': its trip "
                f"count is not known before the loop runs. Pass maximum_iterations (a "
                f"constant) to tf.while_loop, or make its condition depend only on values "
                f"known before the run.\n\t [[{{{{node {op.name}}}}}]]")

        def bounded_step(carry, i):  # runs the body only while the condition holds
            loop_vars, written_values = carry
            go = keep_going(loop_vars, written_values)
            return jax.lax.cond(go, lambda: step(loop_vars, written_values, i),
                                lambda: (loop_vars, written_values)), None

        (final, final_refs), _ = jax.lax.scan(bounded_step, start, jnp.arange(int(max_iter)))
        return final, final_refs

    def loop_cond(carry):
        i, loop_vars, written_values = carry
        go = keep_going(loop_vars, written_values)
        return go if max_iter is None else jnp.logical_and(go, i < max_iter)

    def loop_body(carry):
        i, loop_vars, written_values = carry
        return (i + 1,) + step(loop_vars, written_values, i)

    _, final, final_refs = jax.lax.while_loop(loop_cond, loop_body,
                                              (jnp.asarray(0, jnp.int32),) + start)
    return final, final_refs


def _host_iterations(step, keep_going, start, max_iter):
    """The loop on concrete values, iteration by iteration (body ops run eagerly)."""
    carry, i = start, 0
    while (max_iter is None or i < int(max_iter)) and bool(keep_going(*carry)):
        carry = step(*carry, np.int32(i))
        i += 1
    return carry


def _keeps_shapes(op, step, start):
    """Whether one iteration returns loop variables of the shapes they entered with
    (asked only when an invariant leaves dimensions unknown)."""
    if all(t.shape.is_fully_defined() for t in op.outputs):
        return True
    out = jax.eval_shape(lambda carry: step(*carry, jnp.int32(0)), start)
    return all(np.shape(a) == tuple(b.shape) for a, b in zip(start[0], out[0]))


register(OpDef("While", inputs=("input: list(Tin)",), outputs=("output: list(Tout)",),
               shape=_functional_shapes, lower=_lower_while, grad=functional_grad,
               functional=True))


# -- static trip counts -------------------------------------------------------------------

def _trip_dependencies(op):
    """Loop variables (indices) the condition depends on, through the body, transitively.

    None when the condition reads variables or random numbers (never static).
    """
    loop, n = op._attrs["body"], op._attrs["n_loop_vars"]
    cached = loop.__dict__.get("_trip_dependencies", False)
    if cached is not False:
        return cached
    param_index = {p: i for i, p in enumerate(loop.params)}
    mine = set(loop.ops)
    written = set(loop.written)

    def params_of(tensor):
        found, seen, stack = set(), set(), [tensor.op]
        while stack:
            o = stack.pop()
            if o in seen or o not in mine:
                continue
            seen.add(o)
            if o.op_def.stateful and o.type != "_BodyParameter":
                return None
            for t in o.outputs:
                if t in param_index:
                    found.add(param_index[t])
            if any(t.dtype._is_ref_dtype or aliased_variable(t)[0] in written
                   for t in o.inputs):
                return None  # reads a variable (one the loop assigns, if only a capture)
            stack.extend(t.op for t in o.inputs)
            stack.extend(o._control_inputs)
        return found

    needed = params_of(loop.results[0])
    todo = list(needed or ())
    while needed is not None and todo:
        more = params_of(loop.results[1 + todo.pop()])
        if more is None:
            needed = None
            break
        todo.extend(more - needed)
        needed |= more
    result = None if needed is None else sorted(needed)
    loop.__dict__["_trip_dependencies"] = result
    return result


def static_trip_count(op, inits, captures, max_iter):
    """How many times the loop runs, if its condition can be run at compile time."""
    indices = _trip_dependencies(op)
    if indices is None or any(not functional.is_static(inits[i]) for i in indices):
        return None
    if max_iter is not None and not functional.is_static(max_iter):
        return None
    loop = op._attrs["body"]
    limit = MAX_STATIC_TRIP_COUNT if max_iter is None else int(max_iter)
    loop_vars = [inits[i] if i in indices else None for i in range(len(inits))]
    trips = 0
    with jax.ensure_compile_time_eval():
        while trips < limit:
            try:
                (flag,), _ = functional.evaluate_body(loop, loop_vars, captures, {}, None, [0])
            except KeyError:  # a capture the condition needs is not known statically
                return None
            if not functional.is_static(flag):
                return None
            if not bool(flag):
                return trips
            outs, _ = functional.evaluate_body(loop, loop_vars, captures, {}, None,
                                               [1 + i for i in indices])
            if not all(functional.is_static(v) for v in outs):
                return None
            for i, v in zip(indices, outs):
                loop_vars[i] = v
            trips += 1
    return trips if max_iter is not None else None


def _eager_while_loop(cond, body, loop_vars, maximum_iterations, return_same_structure):
    """TF's while_loop when eager: a Python loop on values."""
    single = not isinstance(loop_vars, (list, tuple))
    values = [loop_vars] if single else list(loop_vars)
    i = 0
    while (maximum_iterations is None or i < int(maximum_iterations)) and bool(cond(*values)):
        out = body(*values)
        values = [out] if single or not isinstance(out, (list, tuple)) else list(out)
        i += 1
    if single or (len(values) == 1 and not return_same_structure):
        return values[0]
    return type(loop_vars)(values) if isinstance(loop_vars, tuple) else values
