"""Gradients of the math, reduction and matmul ops beyond the registry's finite-difference
check: second order, TF's choices at special points (ties, zeros, x <= 0), ops without
gradients, naming, and gradients built for inputs whose dimensions are unknown.

Expectations are hand-computed or central differences of NumPy, never tensorflux itself.
"""

import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special

import tensorflux as tf
from tests.ops.harness import numeric_gradient
from tensorflux._src.ops import registry
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, all_ops, register


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def f64(values):
    return tf.constant(np.asarray(values, np.float64))


# -- second order -----------------------------------------------------------------------------
def test_second_derivative_of_cube():
    x = f64([-1.5, 0.5, 2.0])
    (dx,) = tf.gradients(x ** 3, x)
    (ddx,) = tf.gradients(dx, x)
    (dddx,) = tf.gradients(ddx, x)
    v = np.array([-1.5, 0.5, 2.0])
    got = run([dx, ddx, dddx])
    np.testing.assert_allclose(got[0], 3 * v ** 2, rtol=1e-12)
    np.testing.assert_allclose(got[1], 6 * v, rtol=1e-12)
    np.testing.assert_allclose(got[2], [6.0, 6.0, 6.0], rtol=1e-12)


def test_second_derivative_of_tanh_and_sigmoid():
    v = np.array([-2.0, -0.3, 0.0, 0.7, 1.9])
    x = f64(v)
    (dt,) = tf.gradients(tf.tanh(x), x)
    (ddt,) = tf.gradients(dt, x)
    (ds,) = tf.gradients(tf.sigmoid(x), x)
    (dds,) = tf.gradients(ds, x)
    got = run([dt, ddt, ds, dds])
    t = np.tanh(v)
    s = 1 / (1 + np.exp(-v))
    np.testing.assert_allclose(got[0], 1 - t ** 2, rtol=1e-12)
    np.testing.assert_allclose(got[1], -2 * t * (1 - t ** 2), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got[2], s * (1 - s), rtol=1e-12)
    np.testing.assert_allclose(got[3], s * (1 - s) * (1 - 2 * s), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("fn, second", [
    (tf.sqrt, lambda v: -0.25 * v ** -1.5),
    (tf.rsqrt, lambda v: 0.75 * v ** -2.5),
    (tf.reciprocal, lambda v: 2 / v ** 3),
    (tf.log, lambda v: -1 / v ** 2),
    (tf.exp, np.exp),
    (tf.sin, lambda v: -np.sin(v)),
    (tf.atan, lambda v: -2 * v / (1 + v ** 2) ** 2),
    (tf.lgamma, lambda v: scipy.special.polygamma(1, v)),
], ids=["sqrt", "rsqrt", "reciprocal", "log", "exp", "sin", "atan", "lgamma"])
def test_second_derivatives_of_unary_ops(fn, second):
    v = np.array([0.4, 1.3, 2.5])
    x = f64(v)
    (d,) = tf.gradients(fn(x), x)
    (dd,) = tf.gradients(d, x)
    np.testing.assert_allclose(run(dd), second(v), rtol=1e-10)


def test_mixed_second_derivative_through_reductions_and_matmul():
    # f = sum((a @ b)^2): df/da = 2 (a @ b) @ b^T; d/db of sum(df/da) = 2 [(a @ 1) ...]
    a_v = np.array([[1.0, 2.0], [3.0, -1.0]])
    b_v = np.array([[0.5, -2.0, 1.0], [1.5, 0.25, -1.0]])
    a, b = f64(a_v), f64(b_v)
    f = tf.reduce_sum(tf.square(tf.matmul(a, b)))
    (da,) = tf.gradients(f, a)
    (dab,) = tf.gradients(tf.reduce_sum(da), b)
    # sum_ij da_ij = 2 sum_ij sum_k (ab)_ik b_jk = 2 sum_ik (ab)_ik s_k, s_k = sum_j b_jk;
    # d/db_pq = 2 [ (sum_i a_ip) s_q + sum_i (ab)_iq ]
    s = b_v.sum(0)
    want = 2 * (np.outer(a_v.sum(0), s) + np.tile((a_v @ b_v).sum(0), (2, 1)))
    np.testing.assert_allclose(run(dab), want, rtol=1e-12)


# -- what gets no gradient --------------------------------------------------------------------
def test_integer_inputs_and_unconnected_xs_get_none():
    i = tf.constant([1, 2, 3])
    x = f64([1.0, 2.0, 3.0])
    unused = f64([4.0])
    y = tf.cast(i, tf.float64) * x + tf.cast(i * i, tf.float64)
    gi, gx, gu = tf.gradients(y, [i, x, unused])
    assert gi is None and gu is None
    np.testing.assert_allclose(run(gx), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("fn", [tf.floor, tf.ceil, tf.round, tf.rint,
                                lambda x: x // f64(0.7), lambda x: tf.truncatemod(x, 0.7),
                                lambda x: tf.cast(tf.cast(x, tf.int32), tf.float64)],
                         ids=["floor", "ceil", "round", "rint", "floordiv", "truncatemod",
                              "cast through int32"])
def test_piecewise_constant_ops_have_no_gradient(fn):
    x = f64([0.3, 1.6])
    assert tf.gradients(fn(x), x) == [None]


def test_sign_gradient_is_zeros_and_comparisons_are_not_differentiable():
    x = f64([-2.0, 0.0, 3.0])
    (g,) = tf.gradients(tf.sign(x), x)
    np.testing.assert_array_equal(run(g), [0.0, 0.0, 0.0])
    for op_type in ("Equal", "Less", "GreaterEqual", "LogicalAnd", "IsNan", "IsFinite",
                    "ArgMax", "ArgMin", "FloorDiv", "TruncateDiv", "Floor", "Any", "All"):
        assert all_ops()[op_type].not_differentiable, op_type
    y = tf.cast(tf.less(x, 1.0), tf.float64) * x
    np.testing.assert_array_equal(run(tf.gradients(y, x)[0]), [1.0, 1.0, 0.0])


def test_stop_gradient_blocks_one_path():
    x = f64([2.0, -1.0])
    y = tf.exp(x) * tf.stop_gradient(tf.square(x))
    np.testing.assert_allclose(run(tf.gradients(y, x)[0]), np.exp([2.0, -1.0]) * [4.0, 1.0])


@pytest.fixture
def op_without_gradient():
    """A throwaway op type with neither `grad` nor `not_differentiable`, removed afterwards
    so the registry's coverage test does not see it."""
    name = "TestMathOpWithoutGradient"
    register(OpDef(name, inputs=("x: T",), outputs=("y: T",), attrs={"T": (tf.float64,)},
                   shape=lambda op: op.inputs[0].shape, lower=jnp.negative))
    yield name
    registry._REGISTRY.pop(name)


def test_op_without_gradient_raises_lookup_error(op_without_gradient):
    x = f64([1.0])
    y = tf.exp(apply_op(op_without_gradient, x=x, name="mystery"))
    with pytest.raises(LookupError, match=r"No gradient defined for operation 'mystery' "
                                          r"\(op type: TestMathOpWithoutGradient\)"):
        tf.gradients(y, x)


def test_gradient_ops_are_named_under_gradients_op_grad():
    a, b = f64([[1.0, 2.0]]), f64([[3.0], [4.0]])
    y = tf.matmul(a, b, name="product")
    z = tf.reduce_sum(tf.tanh(y, name="squash"), name="total")
    before = {op.name for op in tf.get_default_graph().get_operations()}
    ga, gb = tf.gradients(z, [a, b])
    new = [op.name for op in tf.get_default_graph().get_operations() if op.name not in before]
    assert new and all(name.startswith("gradients/") for name in new)
    assert ga.op.name.startswith("gradients/product_grad/")
    assert gb.op.name.startswith("gradients/product_grad/")
    assert any(name.startswith("gradients/squash_grad/") for name in new)
    assert any(name.startswith("gradients/total_grad/") for name in new)


def test_matmul_gradient_values():
    a, b = f64([[1.0, 2.0]]), f64([[3.0], [4.0]])
    ga, gb = tf.gradients(tf.reduce_sum(tf.matmul(a, b)), [a, b])
    np.testing.assert_allclose(run(ga), [[3.0, 4.0]])
    np.testing.assert_allclose(run(gb), [[1.0], [2.0]])


# -- TF's choices at special points -------------------------------------------------------------
def test_maximum_minimum_ties_go_to_x():
    x, y = f64([1.0, 2.0, 3.0]), f64([1.0, 5.0, 3.0])
    gx, gy = tf.gradients(tf.maximum(x, y), [x, y])
    hx, hy = tf.gradients(tf.minimum(x, y), [x, y])
    got = run([gx, gy, hx, hy])
    np.testing.assert_array_equal(got[0], [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(got[1], [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(got[2], [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(got[3], [0.0, 0.0, 0.0])


def test_reduce_max_and_min_split_ties_equally():
    v = np.array([[3.0, 1.0, 3.0, 3.0], [0.0, -1.0, -1.0, 2.0]])
    x = f64(v)
    (gmax,) = tf.gradients(tf.reduce_max(x, 1), x)
    (gmin,) = tf.gradients(tf.reduce_min(x, 1, keepdims=True) * f64([[2.0], [6.0]]), x)
    (gall,) = tf.gradients(tf.reduce_max(x), x)
    got = run([gmax, gmin, gall])
    np.testing.assert_allclose(got[0], [[1 / 3, 0, 1 / 3, 1 / 3], [0, 0, 0, 1]])
    np.testing.assert_allclose(got[1], [[0, 2, 0, 0], [0, 3, 3, 0]])
    np.testing.assert_allclose(got[2], [[1 / 3, 0, 1 / 3, 1 / 3], [0, 0, 0, 0]])


def test_reduce_prod_gradient_with_zeros():
    x = f64([[0.0, 2.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]])
    (g,) = tf.gradients(tf.reduce_prod(x, 1), x)
    np.testing.assert_allclose(run(g), [[6, 0, 0], [0, 0, 0], [8, 4, 2]])


def test_pow_gradient_at_zero_and_negative_base():
    x, y = f64([0.0, -2.0, 2.0]), f64([2.0, 3.0, 0.5])
    gx, gy = tf.gradients(tf.pow(x, y), [x, y])
    got = run([gx, gy])
    np.testing.assert_allclose(got[0], [0.0, 12.0, 0.5 * 2 ** -0.5])
    # d/dy = x^y log(x), taken as 0 where x <= 0 (TF's mask), not NaN.
    np.testing.assert_allclose(got[1], [0.0, 0.0, 2 ** 0.5 * np.log(2.0)])


def test_no_nan_ops_at_zero():
    x, y = f64([0.0, 2.0]), f64([0.5, 4.0])
    gx, gy = tf.gradients(tf.xlogy(x, y) + tf.xdivy(x, y + 1.0), [x, y])
    got = run([gx, gy])
    # At x == 0 TF takes d/dx of xlogy and xdivy as 0 (not log(y), 1 / y).
    np.testing.assert_allclose(got[0], [0.0, np.log(4.0) + 1 / 5.0])
    np.testing.assert_allclose(got[1], [0.0, 2.0 / 4.0 - 2.0 / 25.0])
    x, y = f64([1.0, 2.0, 3.0]), f64([0.5, 0.0, 4.0])
    hx, hy = tf.gradients(tf.div_no_nan(x, y), [x, y])
    kx, ky = tf.gradients(tf.multiply_no_nan(x, y), [x, y])
    got = run([hx, hy, kx, ky])
    np.testing.assert_allclose(got[0], [2.0, 0.0, 0.25])  # 0 where y == 0
    np.testing.assert_allclose(got[1], [-4.0, 0.0, -3.0 / 16])
    np.testing.assert_allclose(got[2], [0.5, 0.0, 4.0])
    np.testing.assert_allclose(got[3], [1.0, 2.0, 3.0])


def test_bessel_i1e_gradient_at_zero_is_one_half():
    x = f64([0.0, 1e-3])
    (g,) = tf.gradients(tf.bessel_i1e(x), x)
    (gg,) = tf.gradients(g, x)
    got = run([g, gg])
    np.testing.assert_allclose(got[0], [0.5, 0.5 - 1e-3], rtol=1e-5)
    assert np.all(np.isfinite(got[1]))


def test_cast_gradients_between_float_types():
    x = tf.constant([1.5, -2.0], dtype=tf.float32)
    y = tf.cast(x, tf.float64) * f64([3.0, 4.0])
    (g,) = tf.gradients(y, x)
    assert g.dtype == tf.float32
    np.testing.assert_allclose(run(g), [3.0, 4.0])
    # To complex and back: the gradient is the real part of the complex one.
    z = tf.cast(x, tf.complex64)
    w = tf.real(z * tf.complex(0.0, 1.0) + tf.complex(2.0, 0.0) * z)
    np.testing.assert_allclose(run(tf.gradients(w, x)[0]), [2.0, 2.0])


def test_complex_gradient_is_conjugate_direction():
    # L = real(z * c): dL/dRe(z) + i dL/dIm(z) = conj(c).
    zr, zi = f64([1.0, -2.0]), f64([0.5, 3.0])
    c = tf.complex(f64([2.0, 1.0]), f64([-1.0, 4.0]))
    gr, gi = tf.gradients(tf.real(tf.complex(zr, zi) * c), [zr, zi])
    got = run([gr, gi])
    np.testing.assert_allclose(got[0], [2.0, 1.0])
    np.testing.assert_allclose(got[1], [1.0, -4.0])


# -- unknown dimensions: the gradient is built from tf.shape and folds at compile time -------
def _numeric_grad(expect, arrays, i, weights, eps=1e-6):
    return numeric_gradient(lambda *xs: float(np.sum(weights * expect(*xs))), arrays, i, eps)


UNKNOWN_DIM_CASES = [
    ("add", tf.add, np.add, [(4, 1, 3), (2, 1)]),
    ("mul", tf.multiply, np.multiply, [(2, 3), (3,)]),
    ("realdiv", tf.realdiv, np.divide, [(2, 1), (1, 3)]),
    ("pow", tf.pow, np.power, [(2, 3), (1,)]),
    ("maximum", tf.maximum, np.maximum, [(3, 1), (1, 4)]),
    ("squared_difference", tf.squared_difference, lambda x, y: (x - y) ** 2, [(2, 3), (3,)]),
    ("atan2", tf.atan2, np.arctan2, [(2, 3), (3,)]),
    ("xlogy", tf.xlogy, lambda x, y: x * np.log(y), [(2, 3), (2, 1)]),
    ("floormod", tf.floormod, np.remainder, [(2, 3), (3,)]),
    ("reduce_sum", lambda x: tf.reduce_sum(x, 1), lambda x: np.sum(x, 1), [(2, 3, 4)]),
    ("reduce_mean", lambda x: tf.reduce_mean(x, [0, 2]), lambda x: np.mean(x, (0, 2)),
     [(2, 3, 4)]),
    ("reduce_prod", lambda x: tf.reduce_prod(x, -1), lambda x: np.prod(x, -1), [(2, 3)]),
    ("reduce_max", lambda x: tf.reduce_max(x, 0, keepdims=True),
     lambda x: np.max(x, 0, keepdims=True), [(3, 4)]),
    ("reduce_euclidean_norm", lambda x: tf.reduce_euclidean_norm(x, 1),
     lambda x: np.sqrt(np.sum(x * x, 1)), [(2, 3)]),
    ("reduce_logsumexp", lambda x: tf.reduce_logsumexp(x, 1),
     lambda x: np.log(np.sum(np.exp(x), 1)), [(2, 3)]),
    ("batch_matmul", tf.matmul, np.matmul, [(2, 1, 3, 4), (5, 4, 2)]),
    ("einsum_ellipsis", lambda a, b: tf.einsum("...ij,jk->...ik", a, b),
     lambda a, b: np.einsum("...ij,jk->...ik", a, b), [(2, 1, 3, 4), (4, 2)]),
    ("einsum_summed_label", lambda a: tf.einsum("abc->b", a), lambda a: np.sum(a, (0, 2)),
     [(2, 3, 4)]),
]


@pytest.mark.parametrize("name, fn, expect, shapes", UNKNOWN_DIM_CASES,
                         ids=[c[0] for c in UNKNOWN_DIM_CASES])
def test_gradients_with_unknown_dimensions(name, fn, expect, shapes):
    rng = np.random.default_rng(3)
    arrays = [rng.uniform(0.5, 2.0, s) for s in shapes]
    if name in ("maximum", "floormod"):
        arrays[1] = -arrays[1] + 2.4  # values in (0.4, 1.9): away from ties and jumps
    phs = [tf.placeholder(tf.float64, [None] * len(s)) for s in shapes]
    out = fn(*phs)
    weights = rng.uniform(0.5, 1.5, np.shape(expect(*arrays)))
    grads = tf.gradients(tf.reduce_sum(out * tf.constant(weights)), phs)
    got = run(grads, dict(zip(phs, arrays)))
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, _numeric_grad(expect, arrays, i, weights), rtol=1e-6,
                                   atol=1e-6, err_msg=f"{name}: input {i}")


def test_reduction_gradients_with_unknown_rank():
    v = np.arange(1.0, 7.0).reshape(2, 3)
    x = tf.placeholder(tf.float64, None)
    (gs,) = tf.gradients(tf.reduce_sum(tf.square(x), 1), x)
    (gm,) = tf.gradients(tf.reduce_max(x, 0), x)
    (ga,) = tf.gradients(tf.reduce_mean(x), x)
    got = run([gs, gm, ga], {x: v})
    np.testing.assert_allclose(got[0], 2 * v)
    np.testing.assert_allclose(got[1], [[0, 0, 0], [1, 1, 1]])
    np.testing.assert_allclose(got[2], np.full((2, 3), 1 / 6))


def test_reduce_prod_gradient_with_unknown_rank():
    v = np.array([[0.5, 2.0, 3.0], [0.0, 4.0, -1.0]])
    x = tf.placeholder(tf.float64, None)
    (g1,) = tf.gradients(tf.reduce_prod(x, 1), x)
    (g0,) = tf.gradients(tf.reduce_prod(x, [0]), x)
    got = run([g1, g0], {x: v})
    np.testing.assert_allclose(got[0], [[6.0, 1.5, 1.0], [-4.0, 0.0, 0.0]])
    np.testing.assert_allclose(got[1], [[0.0, 4.0, -1.0], [0.5, 2.0, 3.0]])


@pytest.mark.parametrize("dtype", [tf.float16, tf.bfloat16, tf.float32])
def test_gradients_keep_low_precision_dtypes(dtype):
    v = np.array([[0.5, 1.0, 2.0], [1.5, 0.25, 3.0]])
    x = tf.constant(v, dtype=dtype)
    y = (tf.sqrt(x) + tf.rsqrt(x) + tf.tanh(x) + tf.sigmoid(x) + tf.erf(x) + tf.square(x)
         + tf.maximum(x, 1.0) + tf.reciprocal(x) + tf.log1p(x) + tf.atan(x))
    z = tf.reduce_mean(y, 1) + tf.reduce_prod(x, 0, keepdims=True)[0, 0]
    (g,) = tf.gradients(z, x)
    assert g.dtype == dtype
    s = 1 / (1 + np.exp(-v))
    dy = (0.5 / np.sqrt(v) - 0.5 * v ** -1.5 + 1 - np.tanh(v) ** 2 + s * (1 - s)
          + 2 / np.sqrt(np.pi) * np.exp(-v * v) + 2 * v + (v >= 1.0) - 1 / v ** 2
          + 1 / (1 + v) + 1 / (1 + v * v))
    # z has two elements, each adding the product of column 0.
    want = dy / 3 + 2 * np.array([[v[1, 0], 0, 0], [v[0, 0], 0, 0]])
    np.testing.assert_allclose(run(g).astype(np.float64), want, rtol=2e-2, atol=2e-2)
