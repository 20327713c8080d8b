"""tf.train.sdca_optimizer / sdca_shrink_l1 / sdca_fprint against independent expectations:
closed-form single dual updates, the optimum of the regularized primal from
scipy.optimize after several SDCA epochs, the duality gap from NumPy's primal and dual,
the shrink formula, TF's recorded fingerprints, and TF's errors."""

import numpy as np
import pytest
import scipy.optimize

import tensorflux as tf

# -- a small synthetic problem: 3 dense features, a sparse group with values (feature ids
# 0, 2, 5, 7, 9) and one without (ids 0..3, one per example). -----------------------------
N = 16
_rng = np.random.RandomState(0)
DENSE = _rng.randn(N, 3).astype(np.float32)
SPARSE_IDS = np.array([0, 2, 5, 7, 9])
_pairs = [sorted(_rng.choice(5, 2, replace=False)) for _ in range(N)]
SV_EX = np.repeat(np.arange(N), 2).astype(np.int64)
SV_FEAT = np.array([SPARSE_IDS[k] for p in _pairs for k in p], np.int64)
SV_VAL = _rng.uniform(0.5, 1.5, 2 * N).astype(np.float32)
S1_EX = np.arange(N, dtype=np.int64)
S1_FEAT = _rng.randint(0, 4, N).astype(np.int64)
WEIGHTS = _rng.uniform(0.5, 1.5, N).astype(np.float32)
TRUE_W = _rng.randn(12)


def design():
    """The full [N, 12] design matrix: dense | sparse with values | sparse of ones."""
    x = np.zeros((N, 12))
    x[:, :3] = DENSE
    for e, f, v in zip(SV_EX, SV_FEAT, SV_VAL):
        x[e, 3 + list(SPARSE_IDS).index(f)] = v
    x[np.arange(N), 8 + S1_FEAT] = 1.0
    return x


X = design()
# Each loss: (primal f(z, y) with y in {-1, 1} for the classifiers, its derivative in z,
# the conjugate at the dual f*(-a)).
LOSSES = {
    "squared_loss": (lambda z, y: 0.5 * (z - y) ** 2, lambda z, y: z - y,
                     lambda a, y: a * (0.5 * a - y)),
    "logistic_loss": (lambda z, y: np.logaddexp(0, -y * z),
                      lambda z, y: -y / (1 + np.exp(y * z)),
                      lambda a, y: (a * y) * np.log(np.clip(a * y, 1e-300, None))
                      + (1 - a * y) * np.log(np.clip(1 - a * y, 1e-300, None))),
    "poisson_loss": (lambda z, y: np.exp(z) - y * z, lambda z, y: np.exp(z) - y,
                     lambda a, y: (y - a) * (np.log(np.clip(y - a, 1e-300, None)) - 1)),
    "smooth_hinge_loss": (
        lambda z, y: np.where(y * z >= 1, 0, np.where(y * z <= 0, 0.5 - y * z,
                                                      0.5 * (1 - y * z) ** 2)),
        lambda z, y: np.where(y * z >= 1, 0, np.where(y * z <= 0, -y, z - y)),
        lambda a, y: -a * y + 0.5 * a * a),
}


def labels_for(loss):
    z = X @ TRUE_W
    if loss == "squared_loss":
        return (z + 0.1 * _rng.randn(N)).astype(np.float32)
    if loss == "poisson_loss":
        return np.random.RandomState(1).poisson(np.exp(0.3 * z)).astype(np.float32)
    return (z > 0).astype(np.float32)  # classifiers: {0, 1}


def primal(loss, w, labels, l2, l1=0.0):
    f = LOSSES[loss][0]
    y = labels if loss in ("squared_loss", "poisson_loss") else 2 * labels - 1
    return float(np.sum(WEIGHTS * f(X @ w, y)) + 0.5 * l2 * w @ w + l1 * np.abs(w).sum())


def optimum(loss, labels, l2):
    f, df, _ = LOSSES[loss]
    y = labels if loss in ("squared_loss", "poisson_loss") else 2 * labels - 1

    def fun(w):
        z = X @ w
        return (np.sum(WEIGHTS * f(z, y)) + 0.5 * l2 * w @ w,
                X.T @ (WEIGHTS * df(z, y)) + l2 * w)

    res = scipy.optimize.minimize(fun, np.zeros(12), jac=True, method="L-BFGS-B",
                                  options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 5000})
    return res.x


def build(loss, l1, l2, adaptive=False, v2=False, partitions=1):
    """Variables for the three weight groups and the example state, and a train op that
    runs one SDCA pass and applies its deltas (as TF's contrib SdcaModel does)."""
    w_dense = tf.Variable(tf.zeros([3]))
    w_sv = tf.Variable(tf.zeros([5]))
    w_s1 = tf.Variable(tf.zeros([4]))
    state = tf.Variable(tf.zeros([N, 4]))
    labels = labels_for(loss)
    fn = tf.train.sdca_optimizer
    kwargs = {"adaptative": adaptive}
    if v2:
        from tensorflux._src.ops.state.sdca_ops import sdca_optimizer_v2 as fn
        kwargs = {"adaptive": adaptive}
    out = fn([SV_EX, S1_EX], [SV_FEAT, S1_FEAT], [SV_VAL], [DENSE], WEIGHTS, labels,
             [SPARSE_IDS, np.arange(4, dtype=np.int64)], [w_sv, w_s1], [w_dense], state,
             loss_type=loss, l1=l1, l2=l2, num_loss_partitions=partitions,
             num_inner_iterations=1, **kwargs)
    d_sv, d_s1 = out.out_delta_sparse_weights
    (d_dense,) = out.out_delta_dense_weights
    train = tf.group(tf.assign_add(w_dense, d_dense), tf.assign_add(w_sv, d_sv),
                     tf.assign_add(w_s1, d_s1), tf.assign(state, out.out_example_state_data))
    weights = tf.concat([w_dense, w_sv, w_s1], 0)
    return train, weights, state, labels, out


def run_epochs(loss, l1, l2, epochs, **kwargs):
    """Weights before each pass and the state each pass returned."""
    with tf.Graph().as_default():
        train, weights, state, labels, _ = build(loss, l1, l2, **kwargs)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            history = []
            for _ in range(epochs):
                w = sess.run(weights)
                sess.run(train)
                history.append((w, sess.run(state)))
            return history, sess.run(weights), labels


def shrink(w, l1, l2):
    return np.sign(w) * np.maximum(np.abs(w) - l1 / l2, 0)


@pytest.mark.parametrize("loss,l2,epochs", [("squared_loss", 2.0, 40),
                                             ("logistic_loss", 1.0, 40),
                                             ("poisson_loss", 4.0, 40),
                                             ("smooth_hinge_loss", 1.0, 60)])
def test_epochs_reach_the_regularized_optimum(loss, l2, epochs):
    history, w, labels = run_epochs(loss, 0.0, l2, epochs)
    best = optimum(loss, labels, l2)
    np.testing.assert_allclose(w, best, atol=2e-3)
    # The state columns: primal loss at the pass's starting weights, conjugate loss of the
    # starting duals, example weight. Their sum plus l2 |w|^2 is the duality gap
    # P(w) - D(alpha) (w = w(alpha) as the pass starts), which shrinks towards 0.
    f, _, conj = LOSSES[loss]
    y = labels if loss in ("squared_loss", "poisson_loss") else 2 * labels - 1
    gaps = []
    for k, (w_start, st) in enumerate(history):
        np.testing.assert_allclose(st[:, 3], WEIGHTS)
        np.testing.assert_allclose(st[:, 1], WEIGHTS * f(X @ w_start, y), rtol=1e-4,
                                   atol=1e-5)
        alpha_before = history[k - 1][1][:, 0] if k else np.zeros(N)
        if loss != "poisson_loss" or k:  # Poisson's conjugate: a < y (0 at a = y)
            np.testing.assert_allclose(st[:, 2], WEIGHTS * conj(alpha_before, y), rtol=1e-4,
                                       atol=1e-5)
        gaps.append(st[:, 1].sum() + st[:, 2].sum() + l2 * w_start @ w_start)
    assert min(gaps) >= -1e-4
    assert gaps[-1] < 1e-3 * max(gaps[0], 1.0) and gaps[-1] < gaps[len(gaps) // 4]
    # The primal weights are w(alpha) = sum_i c_i alpha_i x_i / l2.
    alpha = history[-1][1][:, 0]
    np.testing.assert_allclose(w, X.T @ (WEIGHTS * alpha) / l2, atol=1e-4)


def test_l1_weights_satisfy_the_optimality_conditions():
    # Squared loss with l1 = 2, l2 = 1: the model's weights are shrink(w, l1 / l2), and
    # they minimize sum c f + l2/2 |v|^2 + l1 |v|_1: gradient g of the smooth part is
    # -l1 * sign(v) where v != 0 and |g| <= l1 where v = 0.
    l1, l2 = 2.0, 1.0
    _, w, labels = run_epochs("squared_loss", l1, l2, 60)
    v = shrink(w, l1, l2)
    g = X.T @ (WEIGHTS * (X @ v - labels)) + l2 * v
    nonzero = v != 0
    assert nonzero.sum() >= 3 and (~nonzero).sum() >= 1
    np.testing.assert_allclose(g[nonzero], -l1 * np.sign(v[nonzero]), atol=3e-3)
    assert np.all(np.abs(g[~nonzero]) <= l1 + 3e-3)


def test_adaptive_and_v2_reach_the_same_optimum():
    labels = labels_for("logistic_loss")
    best = optimum("logistic_loss", labels, 1.0)
    for kwargs in ({"adaptive": True}, {"adaptive": True, "v2": True}):
        _, w, _ = run_epochs("logistic_loss", 0.0, 1.0, 40, **kwargs)
        np.testing.assert_allclose(w, best, atol=5e-3)


def _one_example(loss, label, c, dual, x, w, l1, l2, partitions, sparse=None):
    """Runs one pass over a single example with a dense group (x, w) and optionally a sparse
    group (feature ids, values, weight ids, weights)."""
    sp = ([], [], [], [], [])
    if sparse is not None:
        ids, vals, wids, ws = sparse
        sp = ([np.zeros(len(ids), np.int64)], [np.array(ids, np.int64)],
              [np.array(vals, np.float32)], [np.array(wids, np.int64)],
              [np.array(ws, np.float32)])
    state = np.array([[dual, 0, 0, 0]], np.float32)
    return tf.train.sdca_optimizer(
        sp[0], sp[1], sp[2], [np.array([x], np.float32)], [c], [label], sp[3], sp[4],
        [np.array(w, np.float32)], state, loss_type=loss, l1=l1, l2=l2,
        num_loss_partitions=partitions, num_inner_iterations=1)


def test_single_example_closed_form_updates():
    with tf.Graph().as_default():
        # Squared loss, dense x = [1, 2] with w = [0.5, -0.5], a sparse feature 3 of value
        # 2 (weights of ids [1, 3, 5]: [0.1, 0.4, -0.3]); c = 2, y = 3, dual 0.5, l2 = 2,
        # 2 loss partitions: wx = 0.3, |x|^2 / l2 = 9 / 2,
        # new dual = 0.5 + (3 - 0.5 - 0.3) / (1 + 2 * 4.5 * 2).
        sq = _one_example("squared_loss", 3.0, 2.0, 0.5, [1, 2], [0.5, -0.5], 0.0, 2.0, 2,
                          sparse=([3], [2.0], [1, 3, 5], [0.1, 0.4, -0.3]))
        # Hinge (k = P c |x|^2 / l2 = 1 * 1 * 5 / 1): label 1 with wx = 0.5 - 1 = -0.5:
        # candidate 0 + 1.5 / 5 = 0.3; label 1 from dual 0.9: 0.9 + 0.3 > 1 -> 1;
        # label 0 (y = -1) with wx = -0.5: -0.5 / 5 < 0 has y * a > 0 -> -0.1; with
        # wx = -3 (w = [-1, -1]): (-1 + 3) / 5 > 0, y * a < 0 -> 0.
        hinge = [_one_example("hinge_loss", lab, 1.0, a, [1, 2], w, 0.0, 1.0, 1)
                 for lab, a, w in ((1.0, 0.0, [0.5, -0.5]), (1.0, 0.9, [0.5, -0.5]),
                                   (0.0, 0.0, [0.5, -0.5]), (0.0, 0.0, [-1, -1]))]
        # Smooth hinge (gamma = 1): a + (y - wx - a) / (k + 1) = 0 + 1.5 / 6.
        smooth = _one_example("smooth_hinge_loss", 1.0, 1.0, 0.0, [1, 2], [0.5, -0.5], 0.0,
                              1.0, 1)
        # L1: predictions use shrink(w, l1 / l2): l1 = 0.2, l2 = 1 -> w = [0.3, -0.3],
        # wx = -0.3; squared: a = (1 + 0.3) / (1 + 5) with c = 1, y = 1.
        l1 = _one_example("squared_loss", 1.0, 1.0, 0.0, [1, 2], [0.5, -0.5], 0.2, 1.0, 1)
        # Two examples in order, 2 loss partitions: the second sees w + 2 * delta.
        # x1 = [1, 0], y1 = 1: a1 = 1 / (1 + 2 * 1) = 1/3, delta = [1/3, 0];
        # x2 = [1, 1], y2 = 2: wx = 2/3, a2 = (2 - 2/3) / (1 + 2 * 2) = 4/15,
        # delta = [1/3 + 4/15, 4/15]; its primal loss is at the nominal weights: 2.
        two = tf.train.sdca_optimizer(
            [], [], [], [np.array([[1, 0], [1, 1]], np.float32)], [1.0, 1.0], [1.0, 2.0],
            [], [], [np.zeros(2, np.float32)], np.zeros((2, 4), np.float32),
            loss_type="squared_loss", l1=0.0, l2=1.0, num_loss_partitions=2,
            num_inner_iterations=1, adaptative=False)
        with tf.Session() as sess:
            sq_v, hinge_v, smooth_v, l1_v, two_v = sess.run([sq, hinge, smooth, l1, two])
    new = 0.5 + 2.2 / 19
    step = (new - 0.5) * 2 / 2
    np.testing.assert_allclose(sq_v.out_example_state_data,
                               [[new, 2 * (0.3 - 3) ** 2 / 2, 0.5 * (0.25 - 3) * 2, 2]],
                               rtol=1e-5)
    np.testing.assert_allclose(sq_v.out_delta_dense_weights[0], [step, 2 * step], rtol=1e-5)
    np.testing.assert_allclose(sq_v.out_delta_sparse_weights[0], [0, 2 * step, 0],
                               rtol=1e-5)
    # Delta weights: (new - old dual) * c / l2 * x with c = l2 = 1.
    for got, old, want, primal_loss in zip(hinge_v, [0.0, 0.9, 0.0, 0.0],
                                           [0.3, 1.0, -0.1, 0.0], [1.5, 1.5, 0.5, 0.0]):
        np.testing.assert_allclose(got.out_example_state_data[0, :2], [want, primal_loss],
                                   rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(got.out_delta_dense_weights[0],
                                   np.array([1, 2]) * (want - old), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(smooth_v.out_example_state_data[0, 0], 0.25, rtol=1e-5)
    np.testing.assert_allclose(l1_v.out_example_state_data[0, :2], [1.3 / 6, 0.5 * 1.3 ** 2],
                               rtol=1e-5)
    np.testing.assert_allclose(two_v.out_example_state_data,
                               [[1 / 3, 0.5, 0, 1], [4 / 15, 2, 0, 1]], rtol=1e-5)
    np.testing.assert_allclose(two_v.out_delta_dense_weights[0], [1 / 3 + 4 / 15, 4 / 15],
                               rtol=1e-5)


def test_static_shapes_and_v2():
    with tf.Graph().as_default():
        from tensorflux._src.ops.state.sdca_ops import sdca_optimizer_v2
        ph = tf.placeholder(tf.float32, [None, None])
        out = sdca_optimizer_v2([SV_EX], [SV_FEAT], [], [ph], WEIGHTS, WEIGHTS,
                                [SPARSE_IDS], [tf.zeros([5])], [tf.zeros([3, 1])],
                                tf.zeros([N, 4]), loss_type="squared_loss", l1=0.0, l2=1.0,
                                num_loss_partitions=1, num_inner_iterations=1)
        assert out.out_example_state_data.shape.as_list() == [None, 4]
        assert out.out_delta_sparse_weights[0].shape.as_list() == [5]
        assert out.out_delta_dense_weights[0].shape.as_list() == [3, 1]
        assert out.out_example_state_data.op.type == "SdcaOptimizerV2"
        assert out.out_example_state_data.op.get_attr("adaptive") is True  # TF's default
        with tf.Session() as sess:
            st, (dw,) = sess.run([out.out_example_state_data, out.out_delta_dense_weights],
                                 {ph: DENSE})
    assert dw.shape == (3, 1) and st.shape == (N, 4)


def test_shrink_l1_updates_the_variables_in_place():
    w1_0 = np.array([1.0, -0.2, 0.5, -3.0], np.float32)
    w2_0 = np.array([[0.1, -2.0], [0.3, 0.0]], np.float32)
    with tf.Graph().as_default():
        w1, w2 = tf.Variable(w1_0), tf.Variable(w2_0)
        op = tf.train.sdca_shrink_l1([w1, w2], l1=0.5, l2=2.0)
        assert op.type == "SdcaShrinkL1" and op.get_attr("num_features") == 2
        assert op.outputs == [] or len(op.outputs) == 0
        with pytest.raises(TypeError, match=r"'SdcaShrinkL1' Op requires that input "
                                            r"'weights' be a mutable tensor \(e.g.: a "
                                            r"tf.Variable\)"):
            tf.train.sdca_shrink_l1([tf.constant([1.0])], l1=0.5, l2=2.0)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(op) is None
            got1 = sess.run([w1, w2])
            sess.run(op)
            got2 = sess.run([w1, w2])
    np.testing.assert_allclose(got1[0], shrink(w1_0, 0.5, 2.0))
    np.testing.assert_allclose(got1[1], shrink(w2_0, 0.5, 2.0), atol=1e-7)
    np.testing.assert_allclose(got2[0], shrink(shrink(w1_0, 0.5, 2.0), 0.5, 2.0))


def test_fprint_matches_tf_recorded_values():
    with tf.Graph().as_default():
        ph = tf.placeholder(tf.string, [None])
        out = tf.train.sdca_fprint(ph)
        assert out.dtype == tf.int64 and out.shape.as_list() == [None, 2]
        assert tf.train.sdca_fprint(tf.constant(["a", "b"])).shape.as_list() == [2, 2]
        with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
            tf.train.sdca_fprint(tf.constant([["a"]]))
        with tf.Session() as sess:
            got = sess.run(out, {ph: ["abc", "very looooooong string", "def"]})
            empty = sess.run(out, {ph: []})
    # TF's sdca_ops_test.py (SdcaFprintTest.testFprint).
    np.testing.assert_array_equal(got, [[4143508125394299908, -6879828354153669051],
                                        [5849691694103072671, -4874542629849009556],
                                        [603227410218889250, 8762207001949257490]])
    assert empty.shape == (0, 2) and empty.dtype == np.int64


def _run_error(loss="squared_loss", labels=None, state=None, sparse_feat=None,
               dense=None, sparse_ex=None, dense_w=None):
    with tf.Graph().as_default():
        out = tf.train.sdca_optimizer(
            [SV_EX if sparse_ex is None else sparse_ex],
            [SV_FEAT if sparse_feat is None else sparse_feat], [SV_VAL],
            [DENSE if dense is None else dense], WEIGHTS,
            labels_for("squared_loss") if labels is None else labels, [SPARSE_IDS],
            [np.zeros(5, np.float32)],
            [np.zeros(3, np.float32) if dense_w is None else dense_w],
            np.zeros((N, 4), np.float32) if state is None else state, loss_type=loss,
            l1=0.0, l2=1.0, num_loss_partitions=1, num_inner_iterations=1)
        with tf.Session() as sess:
            sess.run(out)


@pytest.mark.parametrize("kwargs,message", [
    ({"loss": "logistic_loss", "labels": np.full(N, 2.0, np.float32)},
     "Only labels of 0.0 or 1.0 are supported right now. Found example with label: 2"),
    ({"loss": "hinge_loss", "labels": np.full(N, 0.5, np.float32)},
     "Found example with label: 0.5"),
    ({"loss": "poisson_loss", "labels": np.full(N, -1.0, np.float32)},
     "Only non-negative labels can be used with the Poisson log loss. Found example with "
     "label: -1"),
    ({"labels": np.zeros(N - 1, np.float32)}, f"Expected {N} example labels but got {N - 1}"),
    ({"state": np.zeros((N, 3), np.float32)},
     rf"Expected shape \[{N},4\] for example_state_data, got \[{N},3\]"),
    ({"state": np.zeros(N, np.float32)},
     rf"Expected shape \[{N},4\] for example_state_data, got \[{N}\]"),
    ({"sparse_feat": np.where(SV_FEAT == 9, 4, SV_FEAT)},
     "Found sparse feature indices out of valid range: 4"),
    ({"sparse_feat": np.where(np.arange(2 * N) % 2, SV_FEAT[::2].repeat(2), SV_FEAT)},
     "Duplicate index in sparse vector."),
    ({"sparse_ex": SV_EX[:-1]}, "Found mismatched example_indices and feature_indices"),
    ({"dense": DENSE[:, None, :]}, "Dense features at index 0 must be rank 2 but is rank 3"),
    ({"dense_w": np.zeros(2, np.float32)},
     "More dense features than we have parameters for: 3"),
])
def test_run_time_errors(kwargs, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match=message) as info:
        _run_error(**kwargs)
    assert "SdcaOptimizer" in str(info.value)


def test_graph_construction_errors():
    def call(**kw):
        args = dict(sparse_example_indices=[SV_EX], sparse_feature_indices=[SV_FEAT],
                    sparse_feature_values=[], dense_features=[], example_weights=WEIGHTS,
                    example_labels=WEIGHTS, sparse_indices=[SPARSE_IDS],
                    sparse_weights=[np.zeros(5, np.float32)], dense_weights=[],
                    example_state_data=np.zeros((N, 4), np.float32),
                    loss_type="squared_loss", l1=0.0, l2=1.0, num_loss_partitions=1,
                    num_inner_iterations=1)
        args.update(kw)
        return tf.train.sdca_optimizer(**args)

    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Attr 'loss_type' of 'SdcaOptimizer' Op passed "
                                             "string 'l2_loss' not in: \"logistic_loss\", "
                                             "\"squared_loss\", \"hinge_loss\""):
            call(loss_type="l2_loss")
        with pytest.raises(ValueError, match="List argument 'sparse_feature_indices' to "
                                             "'SdcaOptimizer' Op with length 2 must match "
                                             "length 1 of argument 'sparse_example_indices'"):
            call(sparse_feature_indices=[SV_FEAT, SV_FEAT])
        with pytest.raises(ValueError, match="Attr 'num_loss_partitions' of 'SdcaOptimizer' "
                                             "Op passed 0 less than minimum 1."):
            call(num_loss_partitions=0)
        with pytest.raises(TypeError, match="Input 'example_weights' of 'SdcaOptimizer' Op "
                                            "has type int64"):
            call(example_weights=tf.ones([N], tf.int64))
        assert call().out_example_state_data.op.get_attr("adaptative") is True
        # No feature group: TF's kernel refuses it when it runs.
        out = call(sparse_example_indices=[], sparse_feature_indices=[], sparse_indices=[],
                   sparse_weights=[])
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Requires at least one feature to train."):
                sess.run(out.out_example_state_data)
