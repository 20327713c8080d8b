"""Gradients of the array-family ops beyond the registry's one case per op: accumulation
of repeated gather indices, every strided-slice mask, graphs with unknown dimensions,
and second derivatives. Expectations are NumPy written here or finite differences of it.
"""

import numpy as np
import pytest

import tensorflux as tf
from tests.helpers import run
from tests.ops.harness import numeric_gradient
from tensorflux._src.ops.math.segment_ops import unsorted_segment_sum
from tensorflux._src.ops.array.sort_ops import top_k


def numeric_grad(f, x, eps=1e-6):
    """Central differences of the scalar NumPy function f at x (float64)."""
    return numeric_gradient(f, [np.array(x, np.float64)], 0, eps)


def check_gradient(build, expect, x, unknown_dims=False, seed=0):
    """tf.gradients of sum(w * build(x)) against finite differences of NumPy's expect."""
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.5, 1.5, np.shape(expect(x)))
    ph = tf.placeholder(tf.float64, [None] * x.ndim if unknown_dims else x.shape)
    y = build(ph)
    (g,) = tf.gradients(tf.reduce_sum(y * tf.constant(w)), ph)
    if isinstance(g, tf.IndexedSlices):  # gather along axis 0, as TF's
        g = tf.convert_to_tensor(g)
    got = run(g, {ph: x})
    want = numeric_grad(lambda v: float(np.sum(w * expect(v))), x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    return g


# -- gather: repeated indices accumulate --------------------------------------------------------
@pytest.mark.parametrize("fed", [False, True], ids=["constant indices", "fed indices"])
def test_gather_gradient_accumulates_repeated_indices(fed):
    params = tf.placeholder(tf.float64, [4, 2])
    idx = np.array([0, 2, 0, 0, 3], np.int32)
    indices = tf.placeholder(tf.int32, [None]) if fed else tf.constant(idx)
    y = tf.gather(params, indices)
    (g,) = tf.gradients(tf.reduce_sum(y * tf.constant(np.arange(10.0).reshape(5, 2))), params)
    assert isinstance(g, tf.IndexedSlices)  # TF's sparse gradient; densified it sums rows
    feeds = {params: np.ones((4, 2)), **({indices: idx} if fed else {})}
    want = np.zeros((4, 2))
    np.add.at(want, idx, np.arange(10.0).reshape(5, 2))  # rows 0, 2, 0, 0, 3
    np.testing.assert_array_equal(run(tf.convert_to_tensor(g), feeds), want)
    assert want[0].tolist() == [0 + 4 + 6, 1 + 5 + 7]


def test_gather_gradient_with_axis_and_batch_dims_accumulates():
    x = np.random.default_rng(1).uniform(-1, 1, (2, 3, 4))
    idx = np.array([[1, 1, 3], [0, 0, 0]], np.int32)

    def expect(v):  # batch_dims=1, axis=2: each batch row gathers its own indices
        return np.stack([v[b][:, idx[b]] for b in range(2)])
    check_gradient(lambda p: tf.gather(p, idx, axis=2, batch_dims=1), expect, x)
    check_gradient(lambda p: tf.gather(p, idx, axis=2, batch_dims=1), expect, x,
                   unknown_dims=True)
    check_gradient(lambda p: tf.gather(p, [2, 2, 0], axis=1),
                   lambda v: v[:, [2, 2, 0]], x, unknown_dims=True)


def test_gather_gradient_drops_out_of_range_fed_indices():
    params = tf.placeholder(tf.float64, [3])
    indices = tf.placeholder(tf.int32, [4])
    (g,) = tf.gradients(tf.reduce_sum(tf.gather(params, indices)), params)
    g = tf.convert_to_tensor(g)  # densifying drops the rows of out-of-range indices
    np.testing.assert_array_equal(run(g, {params: np.zeros(3), indices: [-1, 1, 3, 1]}),
                                  [0.0, 2.0, 0.0])


def test_gather_nd_and_scatter_nd_gradients_are_each_other():
    x = np.random.default_rng(2).uniform(-1, 1, (3, 4))
    idx = np.array([[0, 1], [2, 3], [0, 1]], np.int32)  # (0, 1) twice: accumulates
    g = check_gradient(lambda p: tf.gather_nd(p, idx), lambda v: v[idx[:, 0], idx[:, 1]], x)
    assert g.op.type == "ScatterNd"

    def np_scatter(u):
        out = np.zeros((3, 4))
        np.add.at(out, (idx[:, 0], idx[:, 1]), u)
        return out
    check_gradient(lambda u: tf.scatter_nd(idx, u, [3, 4]), np_scatter, np.array([1., 2., 3.]))


def test_unsorted_segment_sum_gradient_gathers_and_drops_negative_ids():
    ids = np.array([2, -1, 0, 2], np.int32)

    def expect(v):
        out = np.zeros((3, 2))
        np.add.at(out, ids[ids >= 0], v[ids >= 0])
        return out
    check_gradient(lambda d: unsorted_segment_sum(d, ids, 3), expect,
                   np.random.default_rng(3).uniform(-1, 1, (4, 2)), unknown_dims=True)


# -- strided slices: every mask, negative strides ------------------------------------------------
SPECS = [
    (np.s_[1:, ::-1], (4, 5)),
    (np.s_[::-2, 1:3], (5, 4)),
    (np.s_[3:0:-2], (6, 2)),
    (np.s_[..., 1], (2, 3, 4)),
    (np.s_[:, None, -1], (3, 4)),
    (np.s_[None, ..., None, 0], (2, 3)),
    (np.s_[1, ..., ::-2], (2, 3, 5)),
    (np.s_[-1, 2], (3, 4)),
    (np.s_[-100:100, ::3], (3, 7)),
    (np.s_[:, 4:1:-1, None], (2, 6)),
    (np.s_[...], (2, 2)),
]


@pytest.mark.parametrize("spec,shape", SPECS, ids=[str(s) for s, _ in SPECS])
@pytest.mark.parametrize("unknown_dims", [False, True], ids=["known", "unknown dims"])
def test_strided_slice_gradient_matches_finite_differences(spec, shape, unknown_dims):
    x = np.random.default_rng(4).uniform(-1, 1, shape)
    g = check_gradient(lambda t: t[spec], lambda v: v[spec], x, unknown_dims=unknown_dims)
    assert g.op.type == "StridedSliceGrad"


def test_strided_slice_gradient_with_explicit_masks():
    x = np.random.default_rng(5).uniform(-1, 1, (2, 4, 5))
    check_gradient(lambda t: tf.strided_slice(t, [1, 0, 0], [0, 3, 4], [1, 2, -1],
                                              begin_mask=0b101, end_mask=0b101),
                   lambda v: v[:, 0:3:2, ::-1], x)
    check_gradient(lambda t: tf.strided_slice(t, [0, 1], [0, 2], [1, 1], ellipsis_mask=0b01,
                                              shrink_axis_mask=0b10),
                   lambda v: v[..., 1], x, unknown_dims=True)


def test_gradient_of_reversed_slice_puts_weights_back_in_place():
    x = tf.placeholder(tf.float64, [3, 4])
    w = np.arange(8.0).reshape(2, 4)
    (g,) = tf.gradients(tf.reduce_sum(x[1:, ::-1] * w), x)
    want = np.zeros((3, 4))
    want[1:, ::-1] = w
    np.testing.assert_array_equal(run(g, {x: np.zeros((3, 4))}), want)


def test_gradient_of_run_time_index():
    x = tf.placeholder(tf.float64, [4, 3])
    i = tf.placeholder(tf.int32, [])
    (g,) = tf.gradients(tf.reduce_sum(x[i] * [1.0, 2.0, 3.0]), x)
    for index in (2, -1):
        want = np.zeros((4, 3))
        want[index] = [1.0, 2.0, 3.0]
        np.testing.assert_array_equal(run(g, {x: np.zeros((4, 3)), i: index}), want)


# -- unknown dimensions: gradients built from tf.shape -------------------------------------------
UNKNOWN_DIM_CASES = [
    ("reshape", lambda t: tf.reshape(t, [-1]), lambda v: v.reshape(-1), (2, 3)),
    ("transpose", lambda t: tf.transpose(t, [1, 2, 0]), lambda v: v.transpose(1, 2, 0),
     (2, 3, 4)),
    ("expand_dims+squeeze", lambda t: tf.squeeze(tf.expand_dims(t, 1) * 2.0),
     lambda v: v * 2.0, (3, 2)),
    ("concat", lambda t: tf.concat([t, t[:, :1] * 3.0], 1),
     lambda v: np.concatenate([v, v[:, :1] * 3.0], 1), (2, 3)),
    ("split", lambda t: tf.split(t, [1, 2], axis=1)[1], lambda v: v[:, 1:], (2, 3)),
    ("stack+unstack", lambda t: tf.stack(tf.unstack(t, num=2)[::-1], axis=1),
     lambda v: np.stack([v[1], v[0]], 1), (2, 3)),
    ("tile", lambda t: tf.tile(t, [2, 3]), lambda v: np.tile(v, [2, 3]), (2, 2)),
    ("pad", lambda t: tf.pad(t, [[1, 0], [2, 1]]), lambda v: np.pad(v, [[1, 0], [2, 1]]),
     (2, 3)),
    ("mirror pad", lambda t: tf.pad(t, [[2, 1], [0, 3]], mode="REFLECT"),
     lambda v: np.pad(v, [[2, 1], [0, 3]], mode="reflect"), (4, 5)),
    ("slice", lambda t: tf.slice(t, [1, 0], [-1, 2]), lambda v: v[1:, :2], (3, 3)),
    ("reverse", lambda t: tf.reverse(t, [1]), lambda v: v[:, ::-1], (2, 3)),
    ("broadcast_to", lambda t: tf.broadcast_to(t, tf.stack([3, tf.shape(t)[0], 2])),
     lambda v: np.broadcast_to(v, (3, 2, 2)), (2, 1)),
    ("diag_part(diag)", lambda t: tf.diag_part(tf.diag(t) * 2.0), lambda v: v * 2.0, (3,)),
    ("top_k", lambda t: top_k(t, 2).values,
     lambda v: -np.sort(-v, -1)[..., :2], (2, 4)),
    ("sort", lambda t: tf.sort(t, axis=0), lambda v: np.sort(v, 0), (4, 2)),
    ("fill", lambda t: tf.fill(tf.shape(t), tf.reduce_sum(t)),
     lambda v: np.full(v.shape, v.sum()), (2, 2)),
    ("where_v2", lambda t: tf.where_v2(t > 0, t, t[:1] * 2.0),
     lambda v: np.where(v > 0, v, v[:1] * 2.0), (3, 2)),
]


@pytest.mark.parametrize("build,expect,shape", [c[1:] for c in UNKNOWN_DIM_CASES],
                         ids=[c[0] for c in UNKNOWN_DIM_CASES])
def test_gradient_with_unknown_dims(build, expect, shape):
    x = np.random.default_rng(6).uniform(-1, 1, shape)
    check_gradient(build, expect, x, unknown_dims=True)


# -- second order -------------------------------------------------------------------------------
def test_second_order_through_reshape_and_transpose():
    rng = np.random.default_rng(7)
    x, v = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (2, 3))
    w = rng.uniform(0.5, 1.5, (6,))
    ph = tf.placeholder(tf.float64, [None, None])
    t = tf.reshape(tf.transpose(ph), [-1])  # t[k] = x.T.reshape(-1)[k]
    y = tf.reduce_sum(w * t * t * t)
    (g,) = tf.gradients(y, ph)
    (h,) = tf.gradients(tf.reduce_sum(g * v), ph)  # Hessian times v
    w_x = w.reshape(3, 2).T  # the weight each x element meets
    got_g, got_h = run([g, h], {ph: x})
    np.testing.assert_allclose(got_g, 3 * w_x * x ** 2, rtol=1e-12)
    np.testing.assert_allclose(got_h, 6 * w_x * x * v, rtol=1e-12)


SECOND_ORDER_CASES = [
    ("strided slice", lambda t: t[1:, ::-2], lambda v: v[1:, ::-2]),
    ("gather", lambda t: tf.gather(t, [2, 0, 2], axis=1), lambda v: v[:, [2, 0, 2]]),
    ("gather_nd", lambda t: tf.gather_nd(t, [[0, 1], [0, 1]]), lambda v: v[[0, 0], [1, 1]]),
    ("mirror pad", lambda t: tf.pad(t, [[1, 1], [2, 0]], mode="SYMMETRIC"),
     lambda v: np.pad(v, [[1, 1], [2, 0]], mode="symmetric")),
    ("tile", lambda t: tf.tile(t, [1, 2]), lambda v: np.tile(v, [1, 2])),
    ("concat", lambda t: tf.concat([t, t], 0), lambda v: np.concatenate([v, v], 0)),
    ("slice (fed begin)", None, lambda v: v[1:3, 0:2]),
]


@pytest.mark.parametrize("build,expect", [c[1:] for c in SECOND_ORDER_CASES],
                         ids=[c[0] for c in SECOND_ORDER_CASES])
def test_second_order_of_linear_ops(build, expect):
    """For a linear L, f = sum(w * L(x)^2) has Hessian-vector product 2 L^T(w * L(v));
    L^T(u) is the gradient of sum(u * L(x)), taken here by finite differences."""
    rng = np.random.default_rng(8)
    x, v = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (3, 4))
    w = rng.uniform(0.5, 1.5, np.shape(expect(x)))
    ph = tf.placeholder(tf.float64, [3, 4])
    feeds = {ph: x}
    if build is None:
        begin = tf.placeholder(tf.int32, [2])
        feeds[begin] = [1, 0]

        def build(t):
            return tf.slice(t, begin, [2, 2])
    y = build(ph)
    (g,) = tf.gradients(tf.reduce_sum(w * y * y), ph)
    (h,) = tf.gradients(tf.reduce_sum(g * v), ph)
    u = 2 * w * expect(v)
    want = numeric_grad(lambda z: float(np.sum(u * expect(z))), x)
    np.testing.assert_allclose(run(h, feeds), want, rtol=1e-6, atol=1e-6)


# -- ops without gradients --------------------------------------------------------------------
def test_shape_ops_are_not_differentiable_as_in_tf():
    x = tf.placeholder(tf.float64, [2, 3])
    for y in (tf.cast(tf.shape(x), tf.float64), tf.cast(tf.size(x), tf.float64),
              tf.one_hot(tf.cast(x[0], tf.int32), 3, dtype=tf.float64),
              tf.zeros_like(x, optimize=False) + tf.ones_like(x, optimize=False)):
        assert tf.gradients(tf.reduce_sum(y), x) == [None]


def test_invert_permutation():
    p = tf.placeholder(tf.int32, [4])
    np.testing.assert_array_equal(run(tf.invert_permutation(p), {p: [2, 0, 3, 1]}),
                                  [1, 3, 0, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="3 is duplicated"):
        run(tf.invert_permutation(tf.constant([3, 0, 3, 1])))
