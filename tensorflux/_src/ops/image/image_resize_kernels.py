"""JAX kernels of TF1's resize ops, with the CPU kernels' exact sampling rules.

Output sizes are static when a run compiles, so every source index and weight is
computed once in NumPy (float32 arithmetic, as the C++ kernels do it) and the lowering
is only gathers and multiply-adds; JAX differentiates those for the *Grad ops.

Coordinates (image_resizer_state.h), for output index x along an axis of size in -> out:
    scale = (in - 1) / (out - 1)  with align_corners (and out > 1), else in / out
    legacy (TF1 default):  src = x * scale
    half_pixel_centers:    src = (x + 0.5) * scale - 0.5   (nearest: (x + 0.5) * scale)
- bilinear: lower = max(floor(src), 0), upper = min(ceil(src), in - 1), lerp = src - floor,
  interpolated along x first, then y: top + (bottom - top) * y_lerp.
- nearest: min(round(src) if align_corners else floor(src), in - 1), round half away
  from zero (C's roundf).
- bicubic: Keys' cubic convolution sampled from a 1025-entry table, a = -0.75 (legacy,
  edge pixels repeated) or a = -0.5 with half_pixel_centers (outside taps get weight 0
  and the rest are renormalized); interpolated along y first, then x.
- area: each output cell averages the input cells it covers, weighted by the covered
  fraction; indices past the edge are clamped to it.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.ops.op_helpers import dims_str, kernel_error, static_input

_F32 = np.float32
_TABLE_SIZE = 1024


def calculate_scale(in_size, out_size, align_corners):
    if align_corners and out_size > 1:
        return _F32(in_size - 1) / _F32(out_size - 1)
    return _F32(in_size) / _F32(out_size)


def _source(out_size, scale, half_pixel_centers, nearest=False):
    x = np.arange(out_size, dtype=_F32)
    if not half_pixel_centers:
        return x * scale
    src = (x + _F32(0.5)) * scale
    return src if nearest else src - _F32(0.5)


@functools.lru_cache(maxsize=256)
def linear_taps(in_size, out_size, align_corners, half_pixel_centers):
    """(lower, upper, lerp) per output index."""
    src = _source(out_size, calculate_scale(in_size, out_size, align_corners),
                  half_pixel_centers)
    floor = np.floor(src)
    lower = np.maximum(floor, 0).astype(np.int64)
    upper = np.minimum(np.ceil(src), in_size - 1).astype(np.int64)
    return lower, upper, (src - floor).astype(_F32)


@functools.lru_cache(maxsize=256)
def nearest_taps(in_size, out_size, align_corners, half_pixel_centers):
    src = _source(out_size, calculate_scale(in_size, out_size, align_corners),
                  half_pixel_centers, nearest=True)
    floor = np.floor(src)
    # roundf rounds halves away from zero (src >= 0 here), unlike np.round.
    index = np.where(src - floor >= 0.5, floor + 1, floor) if align_corners else floor
    return np.clip(index, 0, in_size - 1).astype(np.int64)


@functools.lru_cache(maxsize=4)
def _cubic_table(a):
    """Keys' kernel at the table's sample points: (|t| <= 1 branch, 1 < |t| <= 2 branch)."""
    x = (np.arange(_TABLE_SIZE + 1) / _TABLE_SIZE).astype(_F32).astype(np.float64)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    x1 = x + 1.0
    far = ((a * x1 - 5 * a) * x1 + 8 * a) * x1 - 4 * a
    return near.astype(_F32), far.astype(_F32)


@functools.lru_cache(maxsize=256)
def cubic_taps(in_size, out_size, align_corners, half_pixel_centers):
    """(indices, weights), each (out_size, 4): taps at floor(src) - 1 ... floor(src) + 2."""
    src = _source(out_size, calculate_scale(in_size, out_size, align_corners),
                  half_pixel_centers)
    floor = np.floor(src)
    offset = np.rint((src - floor) * _F32(_TABLE_SIZE)).astype(np.int64)  # lrintf
    near, far = _cubic_table(-0.5 if half_pixel_centers else -0.75)
    weights = np.stack([far[offset], near[offset], near[_TABLE_SIZE - offset],
                        far[_TABLE_SIZE - offset]], axis=1)
    taps = floor.astype(np.int64)[:, None] + np.arange(-1, 3)
    index = np.clip(taps, 0, in_size - 1)
    if half_pixel_centers:
        weights = np.where(index == taps, weights, _F32(0))
        total = weights[:, 0] + weights[:, 1] + weights[:, 2] + weights[:, 3]
        ok = np.abs(total) >= 1000 * np.finfo(_F32).tiny
        weights = np.where(ok[:, None], weights * (_F32(1) / np.where(ok, total, 1))[:, None],
                           weights)
    return index, weights.astype(_F32)


@functools.lru_cache(maxsize=256)
def area_matrix(in_size, out_size, align_corners):
    """(out_size, in_size) covered fractions, and the 1 / scale normalizer."""
    scale = calculate_scale(in_size, out_size, align_corners)
    weights = np.zeros((out_size, in_size), _F32)
    for y in range(out_size):
        start, end = _F32(y) * scale, _F32(y + 1) * scale
        for i in range(int(np.floor(start)), int(np.ceil(end))):
            if i < start:
                w = scale if i + 1 > end else _F32(i + 1) - start
            else:
                w = end - _F32(i) if i + 1 > end else _F32(1)
            weights[y, min(max(i, 0), in_size - 1)] += w
    return weights, scale


# -- lowerings --------------------------------------------------------------------------------
def output_size(op_type, images, size, align_corners=False, half_pixel_centers=False):
    """(out_height, out_width) after ImageResizerState's checks, with its messages."""
    if half_pixel_centers and align_corners:
        raise kernel_error(f"{op_type}: If half_pixel_centers is True, align_corners must be "
                           f"False.")
    if images.ndim != 4:
        raise kernel_error(f"{op_type}: input must be 4-dimensional{dims_str(images.shape)}")
    size = static_input(size, op_type, "size")
    if size.ndim != 1:
        raise kernel_error(f"{op_type}: shape_t must be 1-dimensional{dims_str(size.shape)}")
    if size.size != 2:
        raise kernel_error(f"{op_type}: shape_t must have two elements{dims_str(size.shape)}")
    out_h, out_w = (int(s) for s in size)
    if out_h <= 0 or out_w <= 0:
        raise kernel_error(f"{op_type}: output dimensions must be positive, got size "
                           f"[{out_h}, {out_w}]")
    if images.shape[3] <= 0:
        raise kernel_error(f"{op_type}: image must have at least one channel")
    if images.shape[1] <= 0 or images.shape[2] <= 0:
        raise kernel_error(f"{op_type}: input image must be of non-zero size, got shape "
                           f"{dims_str(images.shape)}")
    return out_h, out_w


# Each lowering checks its inputs, then calls a jitted core with static sizes: a resize
# of constant images is folded when the graph is planned, and one compiled call is far
# cheaper there than evaluating the gathers primitive by primitive.
_static = functools.partial(jax.jit, static_argnums=(1, 2, 3, 4))


@_static
def _bilinear(images, out_h, out_w, align_corners, half_pixel_centers):
    _, in_h, in_w, _ = images.shape
    y0, y1, fy = linear_taps(in_h, out_h, align_corners, half_pixel_centers)
    x0, x1, fx = linear_taps(in_w, out_w, align_corners, half_pixel_centers)
    x = images.astype(jnp.float32)
    fx, fy = fx[:, None], fy[:, None, None]
    top, bottom = x[:, y0], x[:, y1]  # (n, out_h, in_w, c)
    top = top[:, :, x0] + (top[:, :, x1] - top[:, :, x0]) * fx
    bottom = bottom[:, :, x0] + (bottom[:, :, x1] - bottom[:, :, x0]) * fx
    return top + (bottom - top) * fy


@_static
def _nearest(images, out_h, out_w, align_corners, half_pixel_centers):
    _, in_h, in_w, _ = images.shape
    ys = nearest_taps(in_h, out_h, align_corners, half_pixel_centers)
    xs = nearest_taps(in_w, out_w, align_corners, half_pixel_centers)
    return images[:, ys][:, :, xs]


def _weighted_taps(x, axis, index, weights):
    """sum_k weights[:, k] * x.take(index[:, k], axis), summed left to right as TF does."""
    shape = [1] * x.ndim
    shape[axis] = -1
    total = None
    for k in range(index.shape[1]):
        term = jnp.take(x, index[:, k], axis=axis) * weights[:, k].reshape(shape)
        total = term if total is None else total + term
    return total


@_static
def _bicubic(images, out_h, out_w, align_corners, half_pixel_centers):
    _, in_h, in_w, _ = images.shape
    x = images.astype(jnp.float32)
    rows = _weighted_taps(x, 1, *cubic_taps(in_h, out_h, align_corners, half_pixel_centers))
    return _weighted_taps(rows, 2, *cubic_taps(in_w, out_w, align_corners,
                                               half_pixel_centers))


@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def _area(images, out_h, out_w, align_corners):
    _, in_h, in_w, _ = images.shape
    wy, scale_y = area_matrix(in_h, out_h, align_corners)
    wx, scale_x = area_matrix(in_w, out_w, align_corners)
    exact = jax.lax.Precision.HIGHEST  # no reduced-precision matmuls on accelerators
    x = images.astype(jnp.float32)
    rows = jnp.einsum("xj,nijc->nixc", wx, x, precision=exact)
    out = jnp.einsum("yi,nixc->nyxc", wy, rows, precision=exact)
    return out * (_F32(1) / (scale_y * scale_x))


def resize_bilinear(images, size, align_corners, half_pixel_centers):
    out_h, out_w = output_size("ResizeBilinear", images, size, align_corners,
                               half_pixel_centers)
    return _bilinear(images, out_h, out_w, align_corners, half_pixel_centers)


def resize_nearest(images, size, align_corners, half_pixel_centers):
    out_h, out_w = output_size("ResizeNearestNeighbor", images, size, align_corners,
                               half_pixel_centers)
    return _nearest(images, out_h, out_w, align_corners, half_pixel_centers)


def resize_bicubic(images, size, align_corners, half_pixel_centers):
    out_h, out_w = output_size("ResizeBicubic", images, size, align_corners,
                               half_pixel_centers)
    return _bicubic(images, out_h, out_w, align_corners, half_pixel_centers)


def resize_area(images, size, align_corners):
    out_h, out_w = output_size("ResizeArea", images, size, align_corners)
    return _area(images, out_h, out_w, align_corners)


# -- gradients (the adjoints of the linear maps above) ------------------------------------------
@functools.partial(jax.jit, static_argnums=(0, 2, 3, 4))
def _adjoint(core, grads, in_shape, align_corners, half_pixel_centers):
    out_h, out_w = grads.shape[1:3]
    _, vjp = jax.vjp(lambda x: core(x, out_h, out_w, align_corners, half_pixel_centers),
                     jnp.zeros(in_shape, jnp.float32))
    return vjp(grads.astype(jnp.float32))[0]


def _check_grad_inputs(op_type, grads, original_shape):
    if grads.ndim != 4:
        raise kernel_error(f"{op_type}: input_grad must be 4-dimensional"
                           f"{dims_str(grads.shape)}")
    if len(original_shape) != 4:
        raise kernel_error(f"{op_type}: original_image must be 4-dimensional"
                           f"{dims_str(original_shape)}")
    if grads.shape[0] != original_shape[0] or grads.shape[3] != original_shape[3]:
        raise kernel_error(f"{op_type}: input_grad {dims_str(grads.shape)} and "
                           f"original_image {dims_str(original_shape)} must have the same "
                           f"batch size and channels")


def bilinear_grad(grads, original_image, align_corners, half_pixel_centers):
    """d(loss)/d(original_image) given d(loss)/d(resized) `grads` (float32)."""
    _check_grad_inputs("ResizeBilinearGrad", grads, original_image.shape)
    return _adjoint(_bilinear, grads, tuple(original_image.shape), align_corners,
                    half_pixel_centers).astype(original_image.dtype)


def bicubic_grad(grads, original_image, align_corners, half_pixel_centers):
    _check_grad_inputs("ResizeBicubicGrad", grads, original_image.shape)
    return _adjoint(_bicubic, grads, tuple(original_image.shape), align_corners,
                    half_pixel_centers).astype(original_image.dtype)


@_static
def _nearest_adjoint(grads, in_h, in_w, align_corners, half_pixel_centers):
    n, out_h, out_w, c = grads.shape
    ys = nearest_taps(in_h, out_h, align_corners, half_pixel_centers)
    xs = nearest_taps(in_w, out_w, align_corners, half_pixel_centers)
    out = jnp.zeros((n, in_h, in_w, c), grads.dtype)
    return out.at[:, ys[:, None], xs[None, :]].add(grads)


def nearest_grad(grads, size, align_corners, half_pixel_centers):
    """Sums each output gradient into the input pixel it was copied from (any dtype)."""
    size = static_input(size, "ResizeNearestNeighborGrad", "size")
    if grads.ndim != 4 or size.shape != (2,):
        raise kernel_error(f"ResizeNearestNeighborGrad: expected 4-D grads and 2 sizes, got "
                           f"grads {dims_str(grads.shape)} and size {dims_str(size.shape)}")
    in_h, in_w = (int(s) for s in size)
    return _nearest_adjoint(grads, in_h, in_w, align_corners, half_pixel_centers)
