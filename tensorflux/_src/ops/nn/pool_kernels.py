"""The JAX side of the pooling ops: windows over every axis of the op's own layout.

All functions take `ksize`/`strides` with one entry per axis of `x` (TF's attr order for
the data format), so NHWC, NCHW, NDHWC and NCDHW need no transposes: XLA's
reduce_window works on any axis. Window geometry (TF's SAME padding, output sizes)
comes from `window_utils.window_pads`, the same rule the shape functions use.

Forward:
- max pooling is `lax.reduce_window(max)` with -inf (the dtype's lowest) padding, or,
  when the windows tile the input (stride == ksize), a reshape to (out, k) tiles and
  the elementwise maximum of the k positions' views: the same values, and the layout
  the tiled gradient uses;
- average pooling is `lax.reduce_window(add)` divided by the number of *valid* elements
  in each window, as TF's AvgPool does with SAME padding (edge windows average only
  what they cover). The counts are a product of static per-axis counts.

Max-pool gradient (MaxPoolGrad): TF routes each output's gradient to the *first*
maximum of its window (row-major window order), never to padding. The first maximum is
found by `window_argmax`: one strided slice of the padded input per window offset and a
running "strictly greater" comparison. Two lowerings for the scatter back:

- windows that tile the input (stride == ksize on every axis: 2x2 / stride 2, VALID or
  SAME, the common case): reshape-based, no scatter and no reduce_window. Without
  padding (`_grad_exact_tiles`), the input is viewed as (out_0, k_0, out_1, k_1, ...),
  the first maximum is searched over the k positions of that view, and each element
  keeps the gradient where its own offset is the chosen one: one fused loop. With SAME
  padding (`_grad_tiles`), each offset's masked gradient is laid out in that tile
  layout with concatenates, reshaped and cropped to the input. On a 2-core CPU, for
  [32, 56, 56, 64] 2x2 / stride 2 the concatenated form was ~7 ms against ~180 ms for
  XLA's SelectAndScatter (the reduce_window-based gradient), i.e. ~25x; the exact form
  is ~4x faster again (ReLU + gradient of [128, 32, 32, 32]: 3.7 -> 0.9 ms).
- overlapping windows (or strides past the window): XLA's SelectAndScatter, the
  transpose of reduce_window(max), whose GE select keeps the first maximum in window
  order, as TF's own XLA kernels do. An unrolled alternative (one strided pad per
  offset) measured no faster: XLA fuses the pads into one loop that recomputes the
  window search for every offset. Integer inputs (not differentiable in JAX) use that
  unrolled form.

MaxPoolGradGrad (the gradient of MaxPoolGrad) is the gather in the other direction:
each output picks the incoming gradient at its window's first maximum, one strided
slice per offset. It is exact on ties (JAX's select-and-gather leaves the tie order
to the backend).

MaxPoolWithArgmax uses the unrolled search and returns TF's flattened index
((b * H + y) * W + x) * C + c (without the batch term unless include_batch_in_index).
"""

from __future__ import annotations

import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tensorflux._src.ops.nn.window_utils import window_pads


def geometry(shape, ksize, strides, padding):
    """Per axis (pad_before, pad_after, out_size), by TF's rule (dilation 1)."""
    return [window_pads(int(d), k, 1, s, padding) for d, k, s in zip(shape, ksize, strides)]


def _lowest(dtype):
    dtype = jnp.dtype(dtype)
    if jnp.issubdtype(dtype, jnp.floating):
        return np.array(-np.inf, dtype)
    return np.array(jnp.iinfo(dtype).min, dtype)


def _zero(dtype):
    return np.zeros((), jnp.dtype(dtype))


# -- forward ---------------------------------------------------------------------------------
def max_pool(x, ksize, strides, padding):
    geo = geometry(x.shape, ksize, strides, padding)
    if _tiles(ksize, strides):
        return _max_pool_tiles(x, ksize, geo)
    return lax.reduce_window(x, _lowest(x.dtype), lax.max, tuple(ksize), tuple(strides),
                             [(b, a) for b, a, _ in geo])


def _max_pool_tiles(x, ksize, geo):
    """Windows that tile the input: pad (with the lowest value) or crop each axis to
    out * k, view it as (out_0, k_0, out_1, k_1, ...) and take the max over the k axes.
    The same values as reduce_window, in the layout XLA:CPU vectorizes best (the form
    the gradient uses too)."""
    config = [(b, o * k - b - d, 0) for (b, _, o), d, k in zip(geo, x.shape, ksize)]
    if any(c != (0, 0, 0) for c in config):
        x = lax.pad(x, _lowest(x.dtype), config)
    tiled = x.reshape([n for (_, _, o), k in zip(geo, ksize) for n in (o, k)])
    # An elementwise maximum of the window offsets' views, not a reduction over the k
    # axes: XLA fuses it with the producer (ReLU) into one loop, where a reduction is a
    # library kernel of its own (bias + ReLU + 2x2 pool of [128, 32, 32, 32]: 2.1 ->
    # 1.2 ms). NaNs propagate either way.
    views = [_tile_view(tiled, offset) for offset in _offsets(ksize)]
    return functools.reduce(jnp.maximum, views)


def _tile_view(tiled, offset):
    """The element at window offset `offset` of every window, from the tiled view
    (out_0, k_0, out_1, k_1, ...): shape (out_0, out_1, ...)."""
    return tiled[tuple(i for j in offset for i in (slice(None), j))]


def _valid_counts(shape, ksize, strides, geo):
    """Number of non-padding elements in each window: a product of per-axis counts."""
    count = None
    for axis, (d, k, s, (before, _, out)) in enumerate(zip(shape, ksize, strides, geo)):
        if k == 1 and before == 0:
            continue
        start = np.arange(out) * s - before
        per_axis = np.minimum(start + k, d) - np.maximum(start, 0)
        bshape = [1] * len(shape)
        bshape[axis] = out
        per_axis = per_axis.reshape(bshape)
        count = per_axis if count is None else count * per_axis
    return 1 if count is None else count


def avg_pool(x, ksize, strides, padding):
    """Mean over the valid (non-padded) elements of each window."""
    geo = geometry(x.shape, ksize, strides, padding)
    acc = jnp.float32 if x.dtype in (jnp.float16, jnp.bfloat16) else x.dtype
    total = lax.reduce_window(x.astype(acc), _zero(acc), lax.add, tuple(ksize),
                              tuple(strides), [(b, a) for b, a, _ in geo])
    count = _valid_counts(x.shape, ksize, strides, geo)
    return (total / jnp.asarray(count, acc)).astype(x.dtype)


def avg_pool_grad(input_shape, grad, ksize, strides, padding):
    """The adjoint of avg_pool: each output's gradient / count, spread over its window."""
    spec = jax.ShapeDtypeStruct(tuple(input_shape), grad.dtype)
    transpose = jax.linear_transpose(lambda x: avg_pool(x, ksize, strides, padding), spec)
    return transpose(grad)[0]


# -- the max-pool gradient ---------------------------------------------------------------------
def _offsets(ksize):
    return list(itertools.product(*[range(k) for k in ksize]))


def _offset_valid(shape, strides, geo, offset):
    """Static mask over the output: does this window offset land on the input (not on
    padding)? None when it always does."""
    valid = None
    for axis, (d, s, (before, _, out), j) in enumerate(zip(shape, strides, geo, offset)):
        index = np.arange(out) * s + j - before
        if index.min(initial=0) < 0 or index.max(initial=0) >= d:
            bshape = [1] * len(shape)
            bshape[axis] = out
            axis_valid = ((index >= 0) & (index < d)).reshape(bshape)
            valid = axis_valid if valid is None else valid & axis_valid
    return valid


def _window_slice(padded, offset, strides, geo):
    limit = [j + (o - 1) * s + 1 for j, s, (_, _, o) in zip(offset, strides, geo)]
    return lax.slice(padded, offset, limit, strides)


def window_argmax(x, ksize, strides, padding, codes=None):
    """(max, code of the first maximum's window offset) for every output position.

    A running "strictly greater" comparison over the window offsets in row-major order
    keeps the first maximum; padding never wins. `codes[j]` is recorded for offset j
    (default: j itself).
    """
    geo = geometry(x.shape, ksize, strides, padding)
    padded = lax.pad(x, _lowest(x.dtype), [(b, a, 0) for b, a, _ in geo])
    offsets = _offsets(ksize)
    codes = np.arange(len(offsets), dtype=np.int32) if codes is None else np.asarray(codes)
    candidates = ((_window_slice(padded, offset, strides, geo),
                   _offset_valid(x.shape, strides, geo, offset)) for offset in offsets)
    return _first_max(candidates, codes, [o for _, _, o in geo], x.dtype)


def _first_max(candidates, codes, out_shape, dtype):
    """(max, code) over `candidates`, (value, valid mask or None) per window offset in
    row-major order: a running "strictly greater" comparison keeps the first maximum
    (the first valid value is always taken, NaN or not)."""
    best = jnp.full(out_shape, _lowest(dtype))
    chosen = jnp.full(out_shape, -1, codes.dtype)
    for (value, valid), code in zip(candidates, codes):
        better = (value > best) | (chosen < 0)
        if valid is not None:
            better = better & valid
        best = jnp.where(better, value, best)
        chosen = jnp.where(better, code, chosen)
    return best, chosen


def _tiles(ksize, strides):
    return all(k == s for k, s in zip(ksize, strides))


def _grad_exact_tiles(x, grad, ksize, geo):
    """Windows that tile the input with no padding (a remainder VALID leaves out gets
    zeros): on the input viewed as (out_0, k_0, out_1, k_1, ...), `window_argmax`'s
    search (`_first_max`) over the k positions, then one select per input element, "is
    my offset the chosen one", in a single fused loop. The concatenated form (`_grad_tiles`) wrote
    each offset's piece on its own: ReLU + 2x2 max-pool gradient of [128, 32, 32, 32]
    3.7 -> 0.9 ms on the 2-core AVX-512 machine."""
    shape, outs = list(x.shape), [o for _, _, o in geo]
    covered = [o * k for o, k in zip(outs, ksize)]
    if covered != shape:
        x = lax.slice(x, [0] * x.ndim, covered)
    tiled = x.reshape([n for o, k in zip(outs, ksize) for n in (o, k)])
    offsets = _offsets(ksize)
    codes = np.arange(len(offsets), dtype=np.int32)
    _, chosen = _first_max(((_tile_view(tiled, offset), None) for offset in offsets), codes,
                           outs, x.dtype)
    # Each element's own offset code (row-major over the k axes), on the tiled view.
    codes = codes.reshape([n for k in ksize for n in (1, k)])

    def per_element(v):  # (out...) -> (out_0, 1, out_1, 1, ...), broadcast over the k axes
        return v.reshape([n for o in outs for n in (o, 1)])

    dx = jnp.where(per_element(chosen) == codes, per_element(grad), _zero(grad.dtype))
    dx = dx.reshape(covered)
    if covered != shape:
        dx = lax.pad(dx, _zero(grad.dtype), [(0, d - c, 0) for d, c in zip(shape, covered)])
    return dx


def _grad_tiles(x, grad, ksize, strides, padding):
    """Windows tile the input: the gradient is assembled in the (out, k) tile layout.

    Each window offset j contributes where(chosen == j, grad, 0) at tile position j;
    the pieces are concatenated along the k axes of (out_0, k_0, out_1, k_1, ...) and
    reshaped to the (padded) input, then cropped to it. No scatter, no reduce_window.
    """
    geo = geometry(x.shape, ksize, strides, padding)
    _, chosen = window_argmax(x, ksize, strides, padding)
    zero = _zero(grad.dtype)
    interleaved = [n for (_, _, o) in geo for n in (o, 1)]
    pieces = {offset: jnp.where(chosen == j, grad, zero).reshape(interleaved)
              for j, offset in enumerate(_offsets(ksize))}

    def assemble(prefix, axis):  # window axes < axis are fixed by prefix
        if axis == len(ksize):
            return pieces[tuple(prefix)]
        parts = [assemble(prefix + [j], axis + 1) for j in range(ksize[axis])]
        return parts[0] if len(parts) == 1 else jnp.concatenate(parts, axis=2 * axis + 1)

    tiles = assemble([], 0).reshape([o * k for (_, _, o), k in zip(geo, ksize)])
    # The tiles cover input rows [-before, out * k - before): crop or zero-pad to the input.
    config = [(-b, d - o * k + b, 0) for (b, _, o), d, k in zip(geo, x.shape, ksize)]
    return lax.pad(tiles, zero, config)


def _grad_select_and_scatter(x, grad, ksize, strides, padding):
    """Overlapping windows: XLA's SelectAndScatter (the transpose of reduce_window max),
    whose GE select keeps the first maximum of each window, as TF's XLA kernels use."""
    _, vjp = jax.vjp(lambda v: max_pool(v, ksize, strides, padding), jnp.asarray(x))
    return vjp(jnp.asarray(grad, x.dtype))[0]


def _grad_unrolled(x, grad, ksize, strides, padding):
    """Any window, any dtype: one strided pad per window offset (integer inputs)."""
    geo = geometry(x.shape, ksize, strides, padding)
    _, chosen = window_argmax(x, ksize, strides, padding)
    padded_shape = [d + b + a for d, (b, a, _) in zip(x.shape, geo)]
    zero = _zero(grad.dtype)
    dx = jnp.zeros(padded_shape, grad.dtype)
    for j, offset in enumerate(_offsets(ksize)):
        contribution = jnp.where(chosen == j, grad, zero)
        config = [(o_j, p - o_j - (o - 1) * s - 1, s - 1)
                  for o_j, p, s, (_, _, o) in zip(offset, padded_shape, strides, geo)]
        dx = dx + lax.pad(contribution, zero, config)
    return lax.slice(dx, [b for b, _, _ in geo],
                     [b + d for d, (b, _, _) in zip(x.shape, geo)])


def max_pool_grad(x, grad, ksize, strides, padding):
    """d(max_pool)/dx applied to `grad`: each output's gradient to its window's first max.

    Lowering choice (see the module docstring): tiling windows -> `_grad_tiles`
    (reshape/concatenate, ~25x faster than SelectAndScatter on CPU for 2x2 / stride 2);
    overlapping windows -> XLA's SelectAndScatter, which measured as fast as or faster
    than unrolled strided scatters there (XLA fuses the per-offset scatters into one
    loop that recomputes the window search for every offset).
    """
    if _tiles(ksize, strides):
        geo = geometry(x.shape, ksize, strides, padding)
        if all(b == 0 and o * k <= d for (b, _, o), k, d in zip(geo, ksize, x.shape)):
            return _grad_exact_tiles(x, grad, ksize, geo)
        return _grad_tiles(x, grad, ksize, strides, padding)
    if jnp.issubdtype(jnp.dtype(x.dtype), jnp.floating):
        return _grad_select_and_scatter(x, grad, ksize, strides, padding)
    return _grad_unrolled(x, grad, ksize, strides, padding)


def max_pool_grad_grad(x, grad, ksize, strides, padding):
    """The transpose of max_pool_grad: each output picks `grad` at its window's first
    max (one gather per window offset from strided slices; exact on ties)."""
    geo = geometry(x.shape, ksize, strides, padding)
    _, chosen = window_argmax(x, ksize, strides, padding)
    zero = _zero(grad.dtype)
    padded = lax.pad(grad, zero, [(b, a, 0) for b, a, _ in geo])
    out = jnp.zeros([o for _, _, o in geo], grad.dtype)
    for j, offset in enumerate(_offsets(ksize)):
        out = out + jnp.where(chosen == j, _window_slice(padded, offset, strides, geo), zero)
    return out


# -- argmax variants ---------------------------------------------------------------------------
def max_pool_with_argmax(x, ksize, strides, padding, include_batch_in_index, index_dtype):
    """Max pooling and TF's flattened input index of each output's (first) maximum."""
    shape = x.shape
    # Row-major strides of the input; the batch term only when asked for.
    mults = [int(np.prod(shape[i + 1:])) for i in range(len(shape))]
    if not include_batch_in_index:
        mults[0] = 0
    index_dtype = np.dtype(index_dtype)
    codes = [sum(j * m for j, m in zip(offset, mults)) for offset in _offsets(ksize)]
    best, chosen = window_argmax(x, ksize, strides, padding,
                                 codes=np.asarray(codes, index_dtype))
    geo = geometry(shape, ksize, strides, padding)
    out_shape = [o for _, _, o in geo]
    base = jnp.zeros(out_shape, index_dtype)
    for axis, (s, (before, _, _)) in enumerate(zip(strides, geo)):
        if mults[axis]:
            start = lax.broadcasted_iota(index_dtype, out_shape, axis) * s - before
            base = base + start * np.asarray(mults[axis], index_dtype)
    return best, base + chosen


def _flat_indices(input_shape, argmax, include_batch_in_index):
    index = argmax.astype(jnp.int64) if jax.config.jax_enable_x64 else argmax
    if not include_batch_in_index:
        per_batch = int(np.prod(input_shape[1:]))
        batch = lax.broadcasted_iota(index.dtype, argmax.shape, 0)
        index = index + batch * np.asarray(per_batch, index.dtype)
    return index.reshape(-1)


def max_pool_grad_with_argmax(input_shape, grad, argmax, include_batch_in_index):
    """Scatter-adds each output's gradient at its recorded argmax."""
    index = _flat_indices(input_shape, argmax, include_batch_in_index)
    size = int(np.prod(input_shape))
    flat = jnp.zeros(size, grad.dtype).at[index].add(jnp.asarray(grad).reshape(-1),
                                                     mode="drop")
    return flat.reshape(input_shape)


def max_pool_grad_grad_with_argmax(grad, argmax, include_batch_in_index):
    """Gathers `grad` (input-shaped) at each output's recorded argmax."""
    index = _flat_indices(grad.shape, argmax, include_batch_in_index)
    picked = jnp.asarray(grad).reshape(-1).at[index].get(mode="fill", fill_value=0)
    return picked.reshape(argmax.shape)
