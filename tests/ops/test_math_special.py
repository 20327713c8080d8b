"""Special functions beyond the registry cases: the composites (erfcinv, lbeta,
reciprocal_no_nan), values at the edges of the domains (TF's kernels, noted where SciPy
differs), gradients at the points TF imputes, names and aliases."""

import re

import numpy as np
import pytest
import scipy.special as sp

import tensorflux as tf


def run(fetches, feeds=None):
    with tf.Session() as sess:
        return sess.run(fetches, feeds)


def test_composites_against_scipy():
    x = np.array([0.1, 0.7, 1.0, 1.6, 1.95])
    a = np.array([[0.5, 2.0, 3.0], [1.5, 4.0, 0.25]])
    xs, as_ = tf.placeholder(tf.float64, [5]), tf.placeholder(tf.float64, [2, 3])
    got = run([tf.math.erfcinv(xs),
               tf.math.lbeta(as_),
               tf.lbeta(tf.zeros([2, 0])),
               tf.math.reciprocal_no_nan(tf.constant([0.0, 2.0, -4.0])),
               tf.math.polyval([1.0, -2.0, 3.0], tf.constant([0.0, 1.0, 2.5])),
               tf.math.polyval([], tf.constant([1.0, 2.0]))], {xs: x, as_: a})
    np.testing.assert_allclose(got[0], sp.erfcinv(x), rtol=1e-12)
    np.testing.assert_allclose(got[1], sp.gammaln(a).sum(-1) - sp.gammaln(a.sum(-1)),
                               rtol=1e-6)
    np.testing.assert_array_equal(got[2], [-np.inf, -np.inf])  # lgamma(0) = inf, as in TF
    np.testing.assert_array_equal(got[3], [0, 0.5, -0.25])
    np.testing.assert_allclose(got[4], np.polyval([1, -2, 3], [0, 1, 2.5]))
    np.testing.assert_array_equal(got[5], [0, 0])


def test_polyval_needs_a_list():
    with pytest.raises(ValueError, match="Argument coeffs must be list type found "
                                         "<class 'tuple'>."):
        tf.math.polyval((1.0, 2.0), 1.0)


def test_edge_values():
    # Fed, not constants: an op on constants is folded before the run, op by op.
    inf, nan = np.inf, np.nan
    x, e, a, b, q, r = (tf.placeholder(tf.float32, [None]) for _ in range(6))
    got = run([tf.math.special.bessel_k0(x), tf.math.special.bessel_k1e(x),
               tf.math.special.bessel_y0(x), tf.math.special.bessel_y1(x),
               tf.math.special.bessel_j0(x), tf.math.special.bessel_j1(x),
               tf.math.special.expint(e), tf.math.igamma(a, b), tf.math.zeta(q, r),
               tf.math.xlog1py(a, b),
               tf.math.nextafter(tf.constant([1.0, 1.0], tf.float64), [2.0, 0.0]),
               tf.math.nextafter(tf.constant(0.0), 1.0)],
              {x: [0.0, -1.0, nan], e: [0.0, inf, -inf], a: [0.0, -1.0, 2.0, 0.0],
               b: [1.0, 1.0, 0.0, -1.0], q: [1.0, 2.0], r: [1.0, 1.0]})
    # Eigen's (TF's) K and Y are +inf / -inf for all x <= 0; SciPy gives NaN below 0.
    np.testing.assert_array_equal(got[0], [inf, inf, nan])
    np.testing.assert_array_equal(got[1], [inf, inf, nan])
    np.testing.assert_array_equal(got[2], [-inf, -inf, nan])
    np.testing.assert_array_equal(got[3], [-inf, -inf, nan])
    np.testing.assert_allclose(got[4], [1, sp.j0(-1.0), nan], rtol=1e-6)
    np.testing.assert_allclose(got[5], [0, sp.j1(-1.0), nan], rtol=1e-6)
    np.testing.assert_array_equal(got[6], [-inf, inf, 0])
    np.testing.assert_array_equal(got[7], sp.gammainc([0.0, -1.0, 2.0, 0.0],
                                                      [1.0, 1.0, 0.0, -1.0]))
    np.testing.assert_allclose(got[8], [inf, np.pi ** 2 / 6], rtol=1e-6)
    # 0 where x == 0, even where log1p(y) is -inf or NaN
    np.testing.assert_array_equal(got[9], [0, -np.log(2.0).astype(np.float32), 0, 0])
    np.testing.assert_array_equal(got[10], [np.nextafter(1.0, 2.0), np.nextafter(1.0, 0.0)])
    assert got[11] == np.nextafter(np.float32(0), np.float32(1)) and got[11].dtype == np.float32


def test_gradients_at_imputed_points():
    x, s, y = (tf.placeholder(tf.float64, [3]) for _ in range(3))
    bessel_grad = tf.gradients([tf.math.bessel_i1(x), tf.math.special.bessel_j1(x)], x)[0]
    spence_grad = tf.gradients(tf.math.special.spence(s), s)[0]
    xlog1py_grad = tf.gradients(tf.math.xlog1py(x, y), [x, y])
    got = run([bessel_grad, spence_grad] + xlog1py_grad,
              {x: [0.0, 1.0, 2.0], s: [0.5, 1.0, 2.0], y: [0.5, 0.5, 0.5]})
    # d/dx (I1 + J1) at 0 is 0.5 + 0.5 (TF imputes 1.0 for I1 there; its limit is 0.5).
    h = 1e-6
    fd = [(sp.i1(v + h) + sp.j1(v + h) - sp.i1(v - h) - sp.j1(v - h)) / (2 * h)
          for v in (1.0, 2.0)]
    np.testing.assert_allclose(got[0], [1.0] + fd, rtol=1e-6)
    # spence'(x) = log(x) / (1 - x), and -1 at x = 1 (its limit).
    np.testing.assert_allclose(got[1], [np.log(0.5) / 0.5, -1.0, -np.log(2.0)], rtol=1e-12)
    # xlog1py: d/dx is log1p(y) except 0 where x == 0; d/dy = x / (1 + y).
    np.testing.assert_allclose(got[2], [0, np.log1p(0.5), np.log1p(0.5)])
    np.testing.assert_allclose(got[3], [0, 1 / 1.5, 2 / 1.5])


def test_no_gradient_for_orders():
    a, b, x = (tf.placeholder(tf.float64, [2]) for _ in range(3))
    assert tf.gradients(tf.math.betainc(a, b, x), [a, b]) == [None, None]
    assert tf.gradients(tf.math.zeta(a, x), a) == [None]
    second = tf.gradients(tf.math.igamma(a, x), a)[0]
    with pytest.raises(LookupError, match="No gradient defined for operation .* "
                                          r"\(op type: IgammaGradA\)"):
        tf.gradients(second, a)


def test_betainc_shapes():
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal"):
        tf.math.betainc(tf.ones([2]), tf.ones([3]), 0.5)
    assert tf.math.betainc(1.0, tf.ones([4, 2]), 0.5).shape.as_list() == [4, 2]
    a = tf.placeholder(tf.float32)
    out = tf.math.betainc(a, tf.ones([3]), tf.ones([3]) * 0.5)
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(
            "Shapes of a, b, and x are inconsistent: [2] vs. [3] vs. [3]")):
        run(out, {a: [1.0, 2.0]})


def test_dtypes_names_and_aliases():
    with pytest.raises(TypeError, match="DataType int32 not in list of allowed values: "
                                        "float32, float64"):
        tf.math.igamma(tf.constant([1]), tf.constant([1]))
    with pytest.raises(TypeError, match="DataType float16 not in list of allowed values"):
        tf.math.zeta(tf.constant([2.0], tf.float16), tf.constant([1.0], tf.float16))
    half = tf.math.special.bessel_j0(tf.constant([0.5, 3.0], tf.float16))
    assert half.dtype == tf.float16 and half.op.name == "bessel_j0/BesselJ0"
    np.testing.assert_allclose(run(half), sp.j0([0.5, 3.0]), rtol=2e-3, atol=2e-3)
    assert tf.math.bessel_i0e is tf.math.special.bessel_i0e
    assert tf.math.bessel_i1 is tf.math.special.bessel_i1
    assert tf.math.igamma(1.0, 2.0).op.type == "Igamma"
    assert tf.math.erfcinv(0.5).op.name.startswith("erfcinv/")
