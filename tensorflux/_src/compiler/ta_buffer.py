"""The run-time value of a TensorArray: a fixed-capacity buffer carried as the flow.

TF1's TensorArray is a resource mutated in place; its `flow` (a float scalar) only
orders the ops. XLA has no resources, so here the flow tensor's value *is* the array
(TF 2's TensorList design): a `TABuffer` holding

    data     [capacity, *element_shape] of the array's dtype (None until the element
             shape is known: the first write allocates it)
    written  [capacity] bool: which elements were written
    size     int32 scalar: the array's size (fixed arrays: capacity; dynamic ones: one
             past the largest index written, or the size they were created with)

as a JAX pytree, so it flows through `lax.while_loop`/`lax.scan` carries, `jax.vjp`
and cluster boundaries like any array. Static facts (dtype, dynamic_size, whether it is
a gradient array, its name for messages) are the pytree's aux data.

Capacity is static. A fixed-size array's capacity is its size; a dynamic one grows by
doubling while indices are known at compile time, and a loop that writes into it is
given room for its bound (control_flow_ops._lower_while). When a run needs more than a
compiled loop provided, the loop fails with `CapacityExceeded` and the cluster
recompiles with twice the room (compiler/cluster.py), as TF's vector would reserve.

To the graph a flow is still TF's float32 scalar: `dtype`/`shape` below say so, sums of
gradient flows (AddN) add the buffers, and fetching a flow gives 0.0.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import effects
from tensorflux._src.framework import errors

# A compiled loop of unknown trip count that carries a TensorArray runs at most this many
# iterations times its op's growth factor (doubled, and recompiled, when a run needs
# more); differentiating it scans that many steps.
LOOP_CAP = 32
MAX_GROWTH = 1 << 16


class CapacityExceeded(errors.InvalidArgumentError):
    """A compiled loop needed more iterations or TensorArray elements than it was given
    room for; the cluster recompiles with twice the room and runs again."""


@jax.tree_util.register_pytree_node_class
class TABuffer:
    """A TensorArray's elements; see the module docstring."""

    __array_ufunc__ = None  # numpy defers `array + buffer` to __radd__
    dtype = np.dtype(np.float32)  # what the graph declares for a flow
    shape = ()
    ndim = 0

    def __init__(self, data, written, size, aux):
        self.data, self.written, self.size, self.aux = data, written, size, aux

    # aux: (element dtype name, dynamic_size, is_grad, name for messages)
    @property
    def elem_dtype(self):
        return np.dtype(self.aux[0])

    @property
    def dynamic(self):
        return self.aux[1]

    @property
    def is_grad(self):
        return self.aux[2]

    @property
    def name(self):
        return self.aux[3]

    @property
    def capacity(self):
        return int(self.written.shape[0])

    def replace(self, data=None, written=None, size=None, aux=None):
        return TABuffer(self.data if data is None else data,
                        self.written if written is None else written,
                        self.size if size is None else size,
                        self.aux if aux is None else aux)

    def tree_flatten(self):
        return (self.data, self.written, self.size), self.aux

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, aux)

    # Gradient flows are summed by AddN (several reads of one array); a zero scalar
    # stands for "no gradient".
    def __add__(self, other):
        if not isinstance(other, TABuffer):
            return self
        if self.data is None:
            return other
        if other.data is None:
            return self
        # Gradient arrays from clusters compiled with different room: pad to the larger.
        a, b = grow(self, other.capacity), grow(other, self.capacity)
        return a.replace(data=a.data + b.data,
                         written=jnp.logical_or(a.written, b.written),
                         size=jnp.maximum(a.size, b.size))

    __radd__ = __add__

    def fetch_value(self):
        return np.float32(0.0)

    def __repr__(self):
        shape = None if self.data is None else tuple(self.data.shape)
        return f"TABuffer({self.name!r}, capacity={self.capacity}, data={shape})"


def is_buffer(value) -> bool:
    return isinstance(value, TABuffer)


def is_static(value) -> bool:
    return isinstance(value, (np.ndarray, np.generic, int))


def _where(static_fn, traced_fn, *values):
    return static_fn(*values) if all(is_static(v) for v in values) else traced_fn(*values)


def create(dtype, size, dynamic, name, element_shape=None):
    """A new empty array of `size` elements; data allocated when element_shape is known."""
    size = int(size)
    data = None
    if element_shape is not None:
        data = np.zeros((size,) + tuple(element_shape), np.dtype(dtype))
    return TABuffer(data, np.zeros((size,), np.bool_), np.int32(size),
                    (np.dtype(dtype).name, bool(dynamic), False, name))


def zeros_like_grad(buf):
    """The gradient array of `buf` (TensorArrayGrad): same shape, all zeros. Its elements
    count as written where the forward array's are, and writes into it add up."""
    data = None if buf.data is None else jnp.zeros_like(buf.data)
    return TABuffer(data, buf.written, buf.size, buf.aux[:2] + (True,) + buf.aux[3:])


def allocate(buf, element_shape):
    if buf.data is not None:
        return buf
    return buf.replace(data=jnp.zeros((buf.capacity,) + tuple(element_shape),
                                      buf.elem_dtype))


def grow(buf, capacity):
    """`buf` with room for `capacity` elements (new ones unwritten, zero)."""
    extra = int(capacity) - buf.capacity
    if extra <= 0:
        return buf
    pad = lambda x: _where(lambda v: np.concatenate([v, np.zeros((extra,) + v.shape[1:],
                                                                  v.dtype)]),
                           lambda v: jnp.concatenate([v, jnp.zeros((extra,) + v.shape[1:],
                                                                   v.dtype)]), x)
    data = None if buf.data is None else pad(buf.data)
    return TABuffer(data, pad(buf.written), buf.size, buf.aux)


def fit(buf, capacity):
    """`buf` with exactly `capacity` elements (grown, or cut past that)."""
    if buf.capacity >= capacity:
        cut = lambda x: x[:capacity]
        return TABuffer(None if buf.data is None else cut(buf.data), cut(buf.written),
                        buf.size, buf.aux)
    return grow(buf, capacity)


def _shape_str(shape):
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def _partial_str(shape):
    if shape is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(int(d)) for d in shape) + "]"


def _room_for(buf, needed):
    """A dynamic array grown (by doubling) so static indices below `needed` fit."""
    if needed <= buf.capacity:
        return buf
    return grow(buf, max(needed, 2 * buf.capacity))


def _check_shape(buf, index_text, value_shape):
    if tuple(buf.data.shape[1:]) != tuple(value_shape):
        raise errors.InvalidArgumentError(
            None, None, f"TensorArray {buf.name}: Could not write to TensorArray index "
            f"{index_text} because the value shape is {_shape_str(value_shape)} which is "
            f"incompatible with the TensorArray's inferred element shape: "
            f"{_shape_str(buf.data.shape[1:])} (consider setting infer_shape=False).")


def _xp(*values):
    """numpy while every value is known at compile time, else jax.numpy."""
    return np if all(v is None or is_static(v) for v in values) else jnp


def _check_writable(buf, indices):
    """TF's write checks: indices in range (fixed arrays), not written before."""
    xp = _xp(indices, buf.written, buf.size)
    if not indices.size:
        return
    flat = xp.asarray(indices).reshape(-1)
    lo, hi = flat.min(), flat.max()
    bad = xp.where(lo < 0, lo, hi)
    if not buf.dynamic and not buf.is_grad:
        effects.check(xp.logical_and(lo >= 0, hi < buf.size),
                      lambda i, n: f"TensorArray {buf.name}: Tried to write to index "
                      f"{int(i)} but array is not resizeable and size is: {int(n)}",
                      data=(bad, buf.size))
    else:
        effects.check(lo >= 0, lambda i: f"TensorArray {buf.name}: Tried to write to index "
                      f"{int(i)} but array is not resizeable and size is: {buf.capacity}",
                      data=(lo,))
    if buf.is_grad or not buf.capacity:
        return  # gradient arrays add up repeated writes; an empty one has nothing written
    written = xp.asarray(buf.written)
    hit = written[xp.clip(flat, 0, buf.capacity - 1)] & (flat >= 0) & (flat < buf.capacity)
    effects.check(xp.logical_not(hit.any()),
                  lambda i: f"TensorArray {buf.name}: Could not write to TensorArray index "
                  f"{int(i)} because it has already been written to.",
                  data=(flat[xp.argmax(hit)],))


def write_many(buf, indices, values):
    """Writes values[k] at indices[k] (TensorArrayWrite/Scatter/Unstack/Split)."""
    indices = np.asarray(indices, np.int32) if is_static(indices) else \
        jnp.asarray(indices, jnp.int32)
    values_shape = tuple(values.shape)[indices.ndim:]
    if buf.data is None:
        buf = allocate(buf, values_shape)
    if is_static(indices) and buf.dynamic and indices.size:
        buf = _room_for(buf, int(indices.max()) + 1)
    _check_shape(buf, int(indices.reshape(-1)[0]) if is_static(indices) and indices.size
                 else "?", values_shape)
    _check_writable(buf, indices)
    if values.dtype != buf.elem_dtype:
        values = values.astype(buf.elem_dtype)
    if _xp(indices, values, buf.data) is np:
        data = np.array(buf.data)
        if buf.is_grad:
            np.add.at(data, indices, values)
        else:
            data[indices] = values
    else:
        at = jnp.asarray(buf.data).at[indices]
        data = at.add(values, mode="drop") if buf.is_grad else at.set(values, mode="drop")
    if _xp(indices, buf.written) is np:  # which elements are written stays static if it can
        written = np.array(buf.written)
        written[indices] = True
    else:
        written = jnp.asarray(buf.written).at[indices].set(True, mode="drop")
    size = buf.size
    if buf.dynamic and indices.size:
        xp = _xp(size, indices)
        size = xp.maximum(size, indices.max() + 1).astype(np.int32)
    return TABuffer(data, written, size, buf.aux)


def _zeros_shape(buf, element_shape, index_text):
    """The element shape an unallocated array reads as zeros, or TF's error."""
    if element_shape is not None and all(d is not None for d in element_shape):
        return tuple(element_shape)
    raise errors.InvalidArgumentError(
        None, None, f"TensorArray {buf.name}: Could not read from TensorArray index "
        f"{index_text}.  Furthermore, the element shape is not fully defined: "
        f"{_partial_str(element_shape)}.  It is possible you are working with a resizeable "
        f"TensorArray and stop_gradients is not allowing the gradients to be written.  If "
        f"you set the full element_shape property on the forward TensorArray, the proper "
        f"all-zeros tensor will be returned instead of incurring this error.")


def read_many(buf, indices, element_shape=None):
    """The elements at `indices` (TensorArrayRead/Gather). Unwritten elements read as
    zeros, as TF 1.15's kernel returns once the element shape is known; indices past
    the size fail (gradient arrays read zeros there)."""
    indices = np.asarray(indices, np.int32) if is_static(indices) else \
        jnp.asarray(indices, jnp.int32)
    if indices.size and not buf.is_grad:
        xp = _xp(indices, buf.size)
        flat = indices.reshape(-1)
        lo, hi = flat.min(), flat.max()
        effects.check(xp.logical_and(lo >= 0, hi < buf.size),
                      lambda i, n: f"Tried to read from index {int(i)} but array size is: "
                      f"{int(n)}", data=(xp.where(lo < 0, lo, hi), buf.size))
    if buf.data is None:
        index_text = int(indices.reshape(-1)[0]) if is_static(indices) and indices.size \
            else "?"
        shape = _zeros_shape(buf, element_shape, index_text)
        return np.zeros(tuple(indices.shape) + shape, buf.elem_dtype)
    if _xp(indices, buf.data) is np:
        inside = (indices >= 0) & (indices < buf.capacity)
        out = buf.data[np.clip(indices, 0, max(buf.capacity - 1, 0))] if buf.capacity else \
            np.zeros(tuple(indices.shape) + buf.data.shape[1:], buf.data.dtype)
        mask = inside.reshape(inside.shape + (1,) * (out.ndim - inside.ndim))
        return np.where(mask, out, np.zeros_like(out))
    if not buf.capacity:
        return jnp.zeros(tuple(indices.shape) + tuple(buf.data.shape[1:]), buf.data.dtype)
    return jnp.asarray(buf.data).at[indices].get(mode="fill", fill_value=0)


def concat(buf, element_shape_except0=None):
    """All `size` elements concatenated along their first dimension, and their lengths
    (TensorArrayConcat; elements here share one shape)."""
    size = buf.size
    if not is_static(size):
        raise errors.StaticValueRequired(
            None, None, "TensorArrayConcat needs the array's size when the graph is "
            "compiled")
    size = int(size)
    if buf.data is None:
        if size == 0 and element_shape_except0 is not None and \
                all(d is not None for d in element_shape_except0):
            return (np.zeros((0,) + tuple(element_shape_except0), buf.elem_dtype),
                    np.zeros((0,), np.int64))
        if size == 0:
            raise errors.UnimplementedError(
                None, None, f"TensorArray has size zero, but element_shape_except0 "
                f"{_partial_str(element_shape_except0)} is not fully defined. Currently "
                f"only static shapes are supported when concatenating zero-size "
                f"TensorArrays.")
        _zeros_shape(buf, None, 0)
    if buf.data.ndim < 2:
        raise errors.InvalidArgumentError(
            None, None, "Concat saw a scalar shape at index 0 but requires at least "
            "vectors.  Did you mean to call pack?")
    elements = read_many(buf, np.arange(size, dtype=np.int32))
    rows = elements.shape[1]
    out = elements.reshape((size * rows,) + tuple(elements.shape[2:]))
    return out, np.full((size,), rows, np.int64)


def to_cotangent(primal, grad):
    """A gradient flow (a gradient array, or a zero scalar for none) as the cotangent of
    `primal` for jax.vjp: the same pytree, float0 for its non-float leaves."""
    def zero(x):
        return np.zeros(np.shape(x), jax.dtypes.float0)

    data = None
    if primal.data is not None:
        if isinstance(grad, TABuffer) and grad.data is not None:
            # The gradient may come from a cluster that compiled the loop with another
            # room: elements past either capacity were never read, so pad or cut.
            data = jnp.asarray(fit(grad, primal.capacity).data, primal.data.dtype)
        else:
            data = jnp.zeros(primal.data.shape, primal.data.dtype)
    return TABuffer(data, zero(primal.written), zero(primal.size), primal.aux)


def from_cotangent(primal, cotangent):
    """The gradient array for `primal` from its cotangent (inverse of to_cotangent)."""
    data = None if primal.data is None else cotangent.data
    return TABuffer(data, primal.written, primal.size,
                    primal.aux[:2] + (True,) + primal.aux[3:])


def bump_growth(op) -> bool:
    """Doubles the room a compiled loop gives its arrays (and its iterations, when its
    trip count is unknown); False once that stops being sensible."""
    growth = getattr(op, "_ta_growth", 1) * 2
    if growth > MAX_GROWTH:
        return False
    op._ta_growth = growth
    return True


def growth(op) -> int:
    return getattr(op, "_ta_growth", 1)


# -- while loops carrying TensorArrays ---------------------------------------------------

def _static_int(value):
    return int(value) if is_static(value) else None


def run_loop(op, step, keep_going, start, trips, max_iter, differentiating):
    """A `tf.while_loop` whose loop variables include TensorArrays (While's lowering).

    XLA carries fixed shapes, so before the loop every array gets its element shape
    (an array first written inside the loop is allocated from one abstract iteration)
    and every dynamic array room for what the loop can write: its size plus the loop's
    bound (static trip count, or static maximum_iterations) times the op's growth
    factor. A loop of unknown trip count runs at most LOOP_CAP x growth iterations
    (differentiated, it scans that many guarded steps). A run that needs more, or writes
    past an array's room, fails with CapacityExceeded after the loop; the cluster then
    doubles the growth and recompiles (compiler/cluster.py).
    """
    factor = growth(op)
    bound = trips if trips is not None else _static_int(max_iter) if max_iter is not None \
        else None
    cap = None if bound is not None else LOOP_CAP * factor
    room = (bound if bound is not None else cap) * factor
    loop_vars = [grow(v, (_static_int(v.size) if _static_int(v.size) is not None
                          else v.capacity) + room)
                 if is_buffer(v) and v.dynamic else v for v in start[0]]
    start = _materialize(step, (loop_vars, start[1]))
    if trips is not None:
        if trips == 0:
            return start
        final, _ = jax.lax.scan(lambda carry, i: (step(*carry, i), None), start,
                                jnp.arange(trips))
        capped = False
    elif differentiating or (max_iter is not None and is_static(max_iter)):
        steps = bound if bound is not None else cap

        def guarded(carry, i):  # runs the body only while the condition holds
            go = keep_going(*carry)
            return jax.lax.cond(go, lambda: step(*carry, i), lambda: carry), None

        final, _ = jax.lax.scan(guarded, start, jnp.arange(steps))
        capped = cap is not None
    else:
        def loop_cond(carry):
            i, loop_vars, written_values = carry
            go = keep_going(loop_vars, written_values)
            if max_iter is not None:
                go = jnp.logical_and(go, i < max_iter)
            return jnp.logical_and(go, i < cap) if cap is not None else go

        def loop_body(carry):
            i, loop_vars, written_values = carry
            return (i + 1,) + tuple(step(loop_vars, written_values, i))

        out = jax.lax.while_loop(loop_cond, loop_body, (jnp.asarray(0, jnp.int32),) + start)
        final, capped = out[1:], cap is not None
    _check_room(op, final, keep_going, capped, cap)
    return final


def _materialize(step, start):
    """Arrays that enter the loop unallocated get their element shape from one abstract
    iteration (XLA needs the carry's shapes before the loop)."""
    if not any(is_buffer(v) and v.data is None for v in start[0]):
        return start
    out = jax.eval_shape(lambda carry: step(*carry, jnp.int32(0)), start)
    loop_vars = [allocate(v, o.data.shape[1:])
                 if is_buffer(v) and v.data is None and o.data is not None else v
                 for v, o in zip(start[0], out[0])]
    return (loop_vars, start[1])


def _check_room(op, final, keep_going, capped, cap):
    """Fails the run with CapacityExceeded when the loop needed more room than it had."""
    overflow = jnp.asarray(False)
    for v in final[0]:
        if is_buffer(v) and v.dynamic:
            overflow = jnp.logical_or(overflow, v.size > v.capacity)
    if capped:
        overflow = jnp.logical_or(overflow, keep_going(*final))
    effects.set_current_op(op)
    effects.check(jnp.logical_not(overflow),
                  f"tf.while_loop '{op.name}' carries TensorArrays and ran out of the room "
                  f"compiled for them ({cap} iterations)" if capped else
                  f"tf.while_loop '{op.name}' wrote past the room compiled for its "
                  f"TensorArrays. Inside another loop or cond this cannot grow: pass "
                  f"maximum_iterations to the inner tf.while_loop.",
                  error=CapacityExceeded)
