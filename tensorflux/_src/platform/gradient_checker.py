"""`tf.test.compute_gradient` / `compute_gradient_error`: TF1's gradient checker.

The theoretical Jacobian is built one column per output element by feeding a one-hot
`dy` through `tf.gradients(y, x, dy)`; the numeric one one row per input element by
central differences `(y(x + delta) - y(x - delta)) / (2 delta)`. Both are
`x_size x y_size` arrays (a complex x or y counts as twice as many reals), evaluated in
the default session.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.autodiff.gradients import gradients
from tensorflux._src.framework import dtypes
from tensorflux._src.framework.indexed_slices import IndexedSlicesValue
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.constant import constant
from tensorflux._src.framework import default_session

__all__ = ["compute_gradient", "compute_gradient_error"]


def _product(t):
    if isinstance(t, int):
        return t
    y = 1
    for x in t:
        y *= x
    return y


def _extra_feeds(extra_feed_dict, new_feeds):
    if not extra_feed_dict:
        return new_feeds
    r = dict(extra_feed_dict)
    r.update(new_feeds)
    return r


def _session():
    sess = default_session.get_default_session()
    if sess is None:
        raise ValueError("compute_gradient needs a default session: call it inside "
                         "`with tf.Session():` (or `with self.cached_session():`)")
    return sess


def _compute_theoretical_jacobian(x, x_shape, x_data, dy, dy_shape, dx, extra_feed_dict):
    if x.dtype.is_complex:
        x_shape = tuple(x_shape) + (2,)
    dy_factor = 2 if dy.dtype.is_complex else 1
    x_size = _product(x_shape)
    dy_size = _product(dy_shape) * dy_factor
    jacobian = np.zeros((x_size, dy_size), dtype=x.dtype.real_dtype.as_numpy_dtype)
    dy_data = np.zeros(dy_shape, dtype=dy.dtype.as_numpy_dtype)
    dy_data_flat = dy_data.ravel().view(dy.dtype.real_dtype.as_numpy_dtype)
    sess = _session()
    for col in range(dy_size):
        dy_data_flat[col] = 1
        dx_val = sess.run(dx, feed_dict=_extra_feeds(extra_feed_dict, {x: x_data, dy: dy_data}))
        if isinstance(dx_val, IndexedSlicesValue):  # a sparse gradient: rows add up, as TF
            column = np.zeros(x_data.shape, dx_val.values.dtype)
            np.add.at(column, dx_val.indices, dx_val.values)
            dx_val = column
        jacobian[:, col] = np.asarray(dx_val).ravel().view(jacobian.dtype)
        dy_data_flat[col] = 0
    if not dy_size:
        # An empty output: the gradient must still run and be all zeros.
        backprop = np.asarray(sess.run(
            dx, feed_dict=_extra_feeds(extra_feed_dict, {x: x_data, dy: dy_data})))
        if backprop.shape != x_data.shape:
            raise ValueError("Empty gradient has wrong shape: x_data.shape = %s, "
                             "backprop.shape = %s" % (x_data.shape, backprop.shape))
        if np.any(backprop):
            raise ValueError("Empty tensor with nonzero gradients")
    return jacobian


def _compute_numeric_jacobian(x, x_shape, x_data, y, y_shape, delta, extra_feed_dict):
    # bfloat16 cannot hold a small delta: difference in float32.
    if x.dtype == dtypes.bfloat16:
        x = math_ops.cast(x, dtypes.float32)
    if y.dtype == dtypes.bfloat16:
        y = math_ops.cast(y, dtypes.float32)
    if x_data.dtype == dtypes.bfloat16.as_numpy_dtype:
        x_data = x_data.astype(np.float32)
    x_size = _product(x_shape) * (2 if x.dtype.is_complex else 1)
    y_size = _product(y_shape) * (2 if y.dtype.is_complex else 1)
    x_dtype = x.dtype.real_dtype.as_numpy_dtype
    y_dtype = y.dtype.real_dtype.as_numpy_dtype
    x_data = np.asarray(x_data, dtype=x.dtype.as_numpy_dtype)
    scale = np.asarray(2 * delta, dtype=y_dtype)[()]
    jacobian = np.zeros((x_size, y_size), dtype=x_dtype)
    sess = _session()
    for row in range(x_size):
        x_pos = x_data.copy()
        x_neg = x_data.copy()
        x_pos.ravel().view(x_dtype)[row] += delta
        y_pos = sess.run(y, feed_dict=_extra_feeds(extra_feed_dict, {x: x_pos}))
        x_neg.ravel().view(x_dtype)[row] -= delta
        y_neg = sess.run(y, feed_dict=_extra_feeds(extra_feed_dict, {x: x_neg}))
        diff = (np.asarray(y_pos) - np.asarray(y_neg)) / scale
        jacobian[row, :] = diff.ravel().view(y_dtype)
    return jacobian


def _compute_dx_and_dy(x, y, y_shape):
    """The gradient of y w.r.t. x for a fed `dy` (a constant behind an identity, so
    fetching dx never fetches the fed tensor itself)."""
    with x.graph.as_default():
        dy_orig = constant(1.0, shape=y_shape, dtype=y.dtype)
        dy = array_ops.identity(dy_orig)
    grads = gradients(y, x, dy)
    assert len(grads) == 1
    return grads[0], dy_orig


_ALLOWED = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64,
            dtypes.complex64, dtypes.complex128)


def _compute_gradient(x, x_shape, dx, y, y_shape, dy, x_init_value=None, delta=1e-3,
                      extra_feed_dict=None):
    t = dtypes.as_dtype(x.dtype)
    assert t.base_dtype in _ALLOWED, "Don't support type %s for x" % t.name
    t2 = dtypes.as_dtype(y.dtype)
    assert t2.base_dtype in _ALLOWED, "Don't support type %s for y" % t2.name
    if x_init_value is not None:
        i_shape = list(x_init_value.shape)
        assert list(x_shape) == i_shape, "x_shape = %s, init_data shape = %s" % (x_shape,
                                                                              i_shape)
        x_data = x_init_value
    else:
        x_data = np.random.random_sample(x_shape).astype(t.as_numpy_dtype)
        if t.is_complex:
            x_data.imag = np.random.random_sample(x_shape)
    jacob_t = _compute_theoretical_jacobian(x, x_shape, x_data, dy, y_shape, dx,
                                            extra_feed_dict=extra_feed_dict)
    jacob_n = _compute_numeric_jacobian(x, x_shape, x_data, y, y_shape, delta,
                                        extra_feed_dict=extra_feed_dict)
    return jacob_t, jacob_n


def _compute_gradient_list(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3,
                           init_targets=None, extra_feed_dict=None):
    dx, dy = zip(*[_compute_dx_and_dy(xi, y, y_shape) for xi in x])
    if init_targets is not None:
        assert isinstance(init_targets, (list, tuple))
        for init in init_targets:
            _session().run(init)
    if x_init_value is None:
        x_init_value = [None] * len(x)
    return [_compute_gradient(xi, x_shapei, dxi, y, y_shape, dyi, x_init_valuei, delta,
                              extra_feed_dict=extra_feed_dict)
            for xi, x_shapei, dxi, dyi, x_init_valuei in zip(x, x_shape, dx, dy,
                                                            x_init_value)]


def compute_gradient(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3,
                     init_targets=None, extra_feed_dict=None):
    """The theoretical and numeric Jacobians of `y` w.r.t. `x`.

    Args: `x` a tensor (or list of tensors) fed with `x_init_value` (random in [0, 1)
    when None), `x_shape` its shape (list of shapes), `y`/`y_shape` the output,
    `delta` the finite-difference step, `init_targets` ops run first,
    `extra_feed_dict` more feeds. Returns `(jacob_t, jacob_n)`, each of shape
    `(x_size, y_size)` (a list of such pairs when `x` is a list).
    """
    if extra_feed_dict is None:
        extra_feed_dict = {}
    if isinstance(x, list):
        return _compute_gradient_list(x, x_shape, y, y_shape, x_init_value, delta,
                                      init_targets, extra_feed_dict=extra_feed_dict)
    if init_targets is not None:
        assert isinstance(init_targets, (list, tuple))
        for init in init_targets:
            _session().run(init)
    dx, dy = _compute_dx_and_dy(x, y, y_shape)
    return _compute_gradient(x, x_shape, dx, y, y_shape, dy, x_init_value, delta,
                             extra_feed_dict=extra_feed_dict)


def _compute_error(grad):
    if isinstance(grad, tuple):
        grad = [grad]
    error = 0
    for j_t, j_n in grad:
        if j_t.size or j_n.size:  # zero-size tensors have no error
            error = np.maximum(error, np.fabs(j_t - j_n).max())
    return error


def compute_gradient_error(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3,
                           init_targets=None, extra_feed_dict=None):
    """The largest absolute difference between the theoretical and numeric Jacobians
    of `compute_gradient` (over all of them when `x` is a list)."""
    grad = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, init_targets,
                            extra_feed_dict=extra_feed_dict)
    return _compute_error(grad)
