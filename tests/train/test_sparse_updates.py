"""Optimizers applying IndexedSlices gradients (embedding lookups) as sparse updates, against
NumPy implementations of TF1's formulas written here.

Problem: each optimizer trains its own float64 table W (6 x 3) on
loss = sum(gather(W, ids) * C) + 0.5 * sum(gather(W, ids)^2), so the gradient has rows
g_i = C_i + W[ids_i] at the repeated ids; over three steps with repeated and unique ids.
TF1's optimizers sum the rows of a repeated index, then update that row once (only
GradientDescent's scatter_sub skips the deduplication, with the same result); rows not
named keep their values and slots, except in Adam, whose m and v decay everywhere.
Python hyperparameters are float32 tensors cast to the variable's dtype in TF1, so the
references round them through float32 (`f32`); slots start from float64 constants.
"""

import numpy as np
import pytest

import tensorflux as tf

ROWS, DIM, N = 6, 3, 5
IDS = [np.array([1, 4, 1, 1, 5]), np.array([0, 2, 3, 5, 4]), np.array([2, 2, 2, 0, 0])]
RNG = np.random.default_rng(0)
W0 = RNG.normal(size=(ROWS, DIM))
CS = [RNG.normal(size=(N, DIM)) for _ in IDS]


def f32(value):
    return float(np.float32(value))


def summed_rows(w, ids, c):
    """(unique ids, summed gradient rows) of one step."""
    g = c + w[ids]
    unique = np.unique(ids)
    return unique, np.stack([g[ids == u].sum(axis=0) for u in unique])


def reference(update, slots, dense=False):
    """Runs `update(rows of w, rows of each slot, g, step) -> new rows` over the steps;
    dense=True applies it to every row with the densified gradient."""
    w, slots = W0.copy(), [s.copy() for s in slots]
    for step, (ids, c) in enumerate(zip(IDS, CS), start=1):
        u, g = summed_rows(w, ids, c)
        if dense:
            full = np.zeros_like(w)
            full[u] = g
            u, g = np.arange(ROWS), full
        new = update(w[u], *[s[u] for s in slots], g, step)
        w[u] = new[0]
        for s, v in zip(slots, new[1:]):
            s[u] = v
    return w


def proximal(prox, step, l1, l2):
    return np.sign(prox) * np.maximum(np.abs(prox) - step * l1, 0) / (1 + l2 * step)


def ftrl(w, accum, linear, g, lr, l1, l2, lr_power, shrinkage=0.0):
    new_accum = accum + g * g
    linear = linear + g + 2 * shrinkage * w - (new_accum ** -lr_power
                                                - accum ** -lr_power) / lr * w
    quadratic = new_accum ** -lr_power / lr + 2 * l2
    w = np.where(np.abs(linear) > l1, (np.sign(linear) * l1 - linear) / quadratic, 0.0)
    return w, new_accum, linear


ZEROS, ONES = np.zeros((ROWS, DIM)), np.ones((ROWS, DIM))
LR, M, RHO, EPS = f32(0.1), f32(0.9), f32(0.9), f32(1e-6)
L1, L2 = f32(0.05), f32(0.02)

# name -> (optimizer factory, NumPy update, initial slots)
CASES = {
    "sgd": (lambda gs: tf.train.GradientDescentOptimizer(0.1),
            lambda w, g, t: (w - LR * g,), []),
    "momentum": (lambda gs: tf.train.MomentumOptimizer(0.1, 0.9),
                 lambda w, a, g, t: (w - LR * (a * M + g), a * M + g), [ZEROS]),
    "nesterov": (lambda gs: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
                 lambda w, a, g, t: (w - g * LR - (a * M + g) * M * LR, a * M + g), [ZEROS]),
    "adagrad": (lambda gs: tf.train.AdagradOptimizer(0.1),
                lambda w, a, g, t: (w - LR * g / np.sqrt(a + g * g), a + g * g),
                [np.full((ROWS, DIM), 0.1)]),
    "proximal_adagrad": (
        lambda gs: tf.train.ProximalAdagradOptimizer(
            tf.constant(0.1, tf.float64), 0.1, tf.constant(0.05, tf.float64),
            tf.constant(0.02, tf.float64)),
        lambda w, a, g, t: (proximal(w - g * 0.1 / np.sqrt(a + g * g),
                                     0.1 / np.sqrt(a + g * g), 0.05, 0.02), a + g * g),
        [np.full((ROWS, DIM), 0.1)]),
    "adagrad_da": (
        lambda gs: tf.train.AdagradDAOptimizer(0.1, gs, l1_regularization_strength=0.05,
                                               l2_regularization_strength=0.02),
        lambda w, ga, gga, g, t: (
            -np.sign(ga + g) * LR * np.maximum(np.abs(ga + g) - L1 * t, 0)
            / (L2 * t * LR + np.sqrt(gga + g * g)), ga + g, gga + g * g),
        [ZEROS, np.full((ROWS, DIM), 0.1)]),
    "ftrl": (lambda gs: tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.05,
                                               l2_regularization_strength=0.02),
             lambda w, a, lin, g, t: ftrl(w, a, lin, g, LR, L1, L2, -0.5),
             [np.full((ROWS, DIM), 0.1), ZEROS]),
    "ftrl_shrinkage": (
        lambda gs: tf.train.FtrlOptimizer(0.1, learning_rate_power=-0.7,
                                          l1_regularization_strength=0.05,
                                          l2_shrinkage_regularization_strength=0.1),
        lambda w, a, lin, g, t: ftrl(w, a, lin, g, LR, L1, 0.0, f32(-0.7), f32(0.1)),
        [np.full((ROWS, DIM), 0.1), ZEROS]),
    "rmsprop": (
        lambda gs: tf.train.RMSPropOptimizer(0.1, momentum=0.5, epsilon=1e-6),
        lambda w, ms, mom, g, t: (
            w - (mom * 0.5 + LR * g / np.sqrt(ms * RHO + g * g * (1 - RHO) + EPS)),
            ms * RHO + g * g * (1 - RHO),
            mom * 0.5 + LR * g / np.sqrt(ms * RHO + g * g * (1 - RHO) + EPS)),
        [ONES, ZEROS]),
    "centered_rmsprop": (
        lambda gs: tf.train.RMSPropOptimizer(0.1, momentum=0.5, epsilon=1e-6, centered=True),
        lambda w, ms, mg, mom, g, t: _centered(w, ms, mg, mom, g),
        [ONES, ZEROS, ZEROS]),
    "adadelta": (lambda gs: tf.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-6),
                 lambda w, a, au, g, t: _adadelta(w, a, au, g), [ZEROS, ZEROS]),
    "proximal_sgd": (
        lambda gs: tf.train.ProximalGradientDescentOptimizer(0.1, 0.05, 0.02),
        lambda w, g, t: (proximal(w - LR * g, LR, L1, L2),), []),
}


def _centered(w, ms, mg, mom, g):
    ms = ms * RHO + g * g * (1 - RHO)
    mg = mg * RHO + g * (1 - RHO)
    mom = mom * 0.5 + LR * g / np.sqrt(ms + EPS - mg * mg)
    return w - mom, ms, mg, mom


def _adadelta(w, a, au, g):
    a = a * RHO + g * g * (1 - RHO)
    update = np.sqrt(au + EPS) / np.sqrt(a + EPS) * g
    return w - update, a, au * RHO + update * update * (1 - RHO)


def adam_reference(dense=False):
    lr, b1, b2, eps = f32(0.1), f32(0.9), f32(0.999), f32(1e-8)
    w, m, v = W0.copy(), np.zeros_like(W0), np.zeros_like(W0)
    b1p, b2p = b1, b2
    for ids, c in zip(IDS, CS):
        u, g = summed_rows(w, ids, c)
        m, v = m * b1, v * b2  # every row decays: TF1's Adam is not lazy
        m[u] += g * (1 - b1)
        v[u] += g * g * (1 - b2)
        w = w - lr * np.sqrt(1 - b2p) / (1 - b1p) * m / (np.sqrt(v) + eps)
        b1p, b2p = f32(b1p * b1), f32(b2p * b2)
    return w


def _build(dense):
    ids = tf.placeholder(tf.int32, [N], name="ids")
    c = tf.placeholder(tf.float64, [N, DIM], name="c")
    gs = tf.train.get_or_create_global_step()
    tables, train_ops = {}, []
    for name, (make, _, _) in list(CASES.items()) + [("adam", (None, None, None))]:
        w = tf.Variable(W0, name=name)
        rows = tf.nn.embedding_lookup(w, ids)
        loss = tf.reduce_sum(rows * c) + 0.5 * tf.reduce_sum(rows * rows)
        opt = tf.train.AdamOptimizer(0.1) if name == "adam" else make(gs)
        (g, v), = opt.compute_gradients(loss, [w])
        assert isinstance(g, tf.IndexedSlices)
        if dense:
            g = tf.convert_to_tensor(g)
        # Only AdagradDA reads the global step; its update increments it.
        train_ops.append(opt.apply_gradients([(g, v)],
                                              global_step=gs if name == "adagrad_da" else None))
        tables[name] = w
    return ids, c, tf.group(*train_ops), tables


@pytest.mark.parametrize("dense", [False, True], ids=["sparse", "dense"])
def test_each_optimizer_against_numpy_over_repeated_and_unique_indices(dense):
    ids, c, train, tables = _build(dense)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step_ids, step_c in zip(IDS, CS):
            sess.run(train, {ids: step_ids, c: step_c})
        got = sess.run(tables)
    for name, (_, update, slots) in CASES.items():
        np.testing.assert_allclose(got[name], reference(update, slots, dense), rtol=1e-6,
                                   atol=1e-9, err_msg=name)
    np.testing.assert_allclose(got["adam"], adam_reference(dense), rtol=1e-6, atol=1e-9)
    update_types = {op.type for op in tf.get_default_graph().get_operations()
                    if "/update_" in op.name}
    if dense:
        assert {"ApplyAdagradDA", "ApplyProximalAdagrad", "ApplyFtrl", "ApplyFtrlV2"} \
            <= update_types
    else:
        # TF1's sparse kernels by name; GradientDescent scatter-subtracts. Adam's sparse
        # update touches every row of var, m and v anyway, so it is ApplyAdam of the
        # gradient's segment sum (the values above are TF1's sparse formulas).
        assert {"ScatterSub", "SparseApplyMomentum", "SparseApplyAdagrad",
                "SparseApplyProximalAdagrad", "SparseApplyAdagradDA", "SparseApplyFtrl",
                "SparseApplyFtrlV2", "SparseApplyRMSProp", "SparseApplyCenteredRMSProp",
                "SparseApplyAdadelta", "SparseApplyProximalGradientDescent",
                "UnsortedSegmentSum", "ApplyAdam"} <= update_types
        assert not update_types & {"ApplyAdagrad", "ApplyMomentum", "ScatterAdd"}


def test_slot_names_of_the_new_optimizers():
    w = tf.Variable(np.zeros((4, 2), np.float32), name="w")
    gs = tf.train.get_or_create_global_step()
    loss = tf.reduce_sum(tf.gather(w, [0, 1]))
    da = tf.train.AdagradDAOptimizer(0.1, gs)
    da.minimize(loss)
    prox = tf.train.ProximalAdagradOptimizer(0.1)
    prox.minimize(loss)
    assert da.get_slot_names() == ["gradient_accumulator", "gradient_squared_accumulator"]
    assert da.get_slot(w, "gradient_accumulator").op.name == "w/AdagradDA"
    assert da.get_slot(w, "gradient_squared_accumulator").op.name == "w/AdagradDA_1"
    assert prox.get_slot(w, "accumulator").op.name == "w/ProximalAdagrad"
    with pytest.raises(ValueError, match="initial_gradient_squared_accumulator_value must "
                                         "be positive: 0.0"):
        tf.train.AdagradDAOptimizer(0.1, gs, initial_gradient_squared_accumulator_value=0.0)
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive: -1"):
        tf.train.ProximalAdagradOptimizer(0.1, initial_accumulator_value=-1)
    # As TF1, ProximalAdagrad does not cast its hyperparameters to the variable's dtype.
    w64 = tf.Variable(np.zeros((4, 2)), name="w64")
    with pytest.raises(TypeError, match="'lr' of 'ApplyProximalAdagrad' Op has type float32 "
                                        "that does not match type float64"):
        tf.train.ProximalAdagradOptimizer(0.1).minimize(tf.reduce_sum(w64))


def test_out_of_range_indices_fail_the_run_and_write_nothing():
    w = tf.Variable(W0, name="w")
    ids = tf.placeholder(tf.int32, [None])
    rows = tf.gather(w, ids)  # the gather fails first, as TF's CPU kernel does
    train = tf.train.AdagradOptimizer(0.1).minimize(tf.reduce_sum(rows))
    # The sparse update's own check, on fed slices no gather has read.
    fed_train = tf.train.AdagradOptimizer(0.1).apply_gradients(
        [(tf.IndexedSlices(tf.ones([3, DIM], tf.float64), ids), w)])
    const_train = tf.train.MomentumOptimizer(0.1, 0.9).apply_gradients(
        [(tf.IndexedSlices(tf.ones([2, DIM], tf.float64), tf.constant([1, -1])), w)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"indices\[2\] = 7 is not in \[0, 6\)"):
            sess.run(train, {ids: [0, 1, 7]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Index 7 at offset 2 in indices is out of range"):
            sess.run(fed_train, {ids: [0, 1, 7]})
        np.testing.assert_array_equal(sess.run(w), W0)
        sess.run(train, {ids: [0, 1]})  # the accumulator kept its value too
        expected = W0.copy()
        expected[[0, 1]] -= f32(0.1) / np.sqrt(0.1 + 1.0)
        np.testing.assert_allclose(sess.run(w), expected, rtol=1e-6)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Index -1 at offset 1 in indices is out of range"):
            sess.run(const_train)


def test_a_custom_apply_sparse_gets_deduplicated_slices():
    # TF1's Optimizer sums the rows of repeated indices before calling _apply_sparse.
    class ScatterUpdateSGD(tf.train.Optimizer):
        def __init__(self):
            super().__init__(False, "ScatterUpdateSGD")

        def _apply_sparse(self, grad, var):
            # scatter_update keeps only one row per index: right only without repeats
            rows = tf.gather(var, grad.indices)
            return tf.scatter_update(var, grad.indices, rows - 0.5 * grad.values)

    w = tf.Variable(W0, name="w")
    loss = tf.reduce_sum(tf.gather(w, [3, 1, 3, 3]))
    train = ScatterUpdateSGD().minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        expected = W0.copy()
        expected[1] -= 0.5
        expected[3] -= 1.5
        np.testing.assert_allclose(sess.run(w), expected)

    class NoSparse(tf.train.Optimizer):
        def __init__(self):
            super().__init__(False, "NoSparse")

        def _apply_dense(self, grad, var):
            return tf.no_op()

    with pytest.raises(NotImplementedError):
        NoSparse().minimize(loss)


def test_apply_gradients_checks_the_gradient():
    w = tf.Variable(W0, name="w", constraint=lambda v: v)
    opt = tf.train.GradientDescentOptimizer(0.1)
    with pytest.raises(TypeError, match="Gradient must be convertible to a Tensor or "
                                        "IndexedSlices, or None"):
        opt.apply_gradients([(object(), w)])
    with pytest.raises(RuntimeError, match="Cannot use a constraint function on a sparse "
                                           "variable."):
        opt.minimize(tf.reduce_sum(tf.gather(w, [0])))


def test_a_sparse_step_updates_the_table_in_place():
    """The compiled step scatters into the donated table: XLA's temporaries stay far below
    the table's size, also when the run has run-time checks (the label range of sparse
    softmax cross-entropy) that must keep the table on failure; the densified gradient
    needs a table-sized temporary."""
    rows, dim, batch = 50_000, 16, 32
    table_bytes = rows * dim * 4
    temps = {}
    for densify in (False, True):
        with tf.Graph().as_default():
            table = tf.Variable(tf.zeros([rows, dim]), name="table")
            w = tf.Variable(RNG.normal(size=(dim, 4)).astype(np.float32), name="w")
            ids = tf.placeholder(tf.int32, [batch])
            labels = tf.placeholder(tf.int32, [batch])
            logits = tf.matmul(tf.nn.embedding_lookup(table, ids), w)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=logits))
            opt = tf.train.AdagradOptimizer(0.1)
            gv = opt.compute_gradients(loss)
            if densify:
                gv = [(tf.convert_to_tensor(g), v) for g, v in gv]
            train = opt.apply_gradients(gv)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                feed = {ids: np.arange(batch) * 7, labels: np.arange(batch) % 4}
                sess.run(train, feed)
                cluster = [c for e in sess._executables.values() for c in e.clusters
                           if c.state.written_vars][-1]
                store = sess._state.variables
                starts = [store[v] for v in cluster.state.start_vars]
                args = [np.asarray(feed[t]) for t in cluster.inputs]
                jitted, args = cluster._select(args, cluster._all_initialized)
                compiled = jitted.lower(*args, *starts, *cluster._const_values).compile()
                temps[densify] = compiled.memory_analysis().temp_size_in_bytes
                # the step ran: the looked-up rows moved, the others did not
                values = sess.run(table)
                assert np.abs(values[np.arange(batch) * 7]).sum() > 0
                assert not values[1::7][:batch].any()
    assert temps[False] < table_bytes / 20, temps
    assert temps[True] >= table_bytes, temps


def test_consumers_of_sparse_gradients():
    """optimize_loss (multipliers keep the gradient sparse, summaries use its values),
    SyncReplicasOptimizer (the mean of R runs), the parameter-server model layout
    (workers push dense arrays)."""
    from tensorflux._src.distribute.ps.model_layout import ModelGraph
    from tensorflux.contrib.layers import optimize_loss
    ids = tf.placeholder(tf.int32, [3])
    w = tf.Variable(W0, name="w")
    loss = tf.reduce_sum(tf.gather(w, ids))
    step = tf.train.get_or_create_global_step()
    train = optimize_loss(loss, step, 0.1, "SGD", gradient_multipliers={w: 2.0},
                          summaries=["gradients", "gradient_norm"], clip_gradients=10.0)
    w2 = tf.Variable(W0, name="w2")
    sync = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                          replicas_to_aggregate=2, total_num_replicas=2)
    sync_train = sync.minimize(tf.reduce_sum(tf.gather(w2, ids)), global_step=step)
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        sess.run(train, {ids: [0, 5, 0]})
        summaries = sess.run(tf.summary.merge_all(), {ids: [0, 5, 0]})
        sess.run(sync.chief_init_op)
        sess.run(sync_train, {ids: [1, 1, 2]})
        unchanged = sess.run(w2)
        sess.run(sync_train, {ids: [2, 3, 4]})
        got, got2 = sess.run([w, w2])
    expected = W0.copy()
    expected[0] -= 0.1 * 2 * 2  # two lookups of row 0, gradient doubled (norm 6 < 10)
    expected[5] -= 0.1 * 2
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert summaries  # gradients/w histogram and gradient_norm/w scalar built from values
    np.testing.assert_array_equal(unchanged, W0)
    expected2 = W0.copy()
    expected2[[1, 2, 3, 4]] -= 0.1 * np.array([2, 2, 1, 1])[:, None] / 2
    np.testing.assert_allclose(got2, expected2, rtol=1e-6)

    def model_fn():
        table = tf.Variable(W0, name="table")
        return tf.reduce_sum(tf.nn.embedding_lookup(table, [1, 1]))

    model = ModelGraph(model_fn)
    assert isinstance(model.gradients["table"], tf.Tensor)


def test_partitioned_table_moves_only_the_rows_looked_up():
    # Momentum moves any row it is handed, even with a zero gradient: each partition's
    # IndexedSlices must name only rows its own ids read (TF's DynamicPartition).
    parts = [tf.Variable(W0[0::2], name="part0"), tf.Variable(W0[1::2], name="part1")]
    ids = tf.placeholder(tf.int32, [None])
    loss = tf.reduce_sum(tf.nn.embedding_lookup(parts, ids))  # "mod": id i -> i % 2
    train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step_ids in ([0, 3], [2, 5, 3]):  # then row 0 of part0 must stay put
            sess.run(train, {ids: step_ids})
        got = np.concatenate(sess.run(parts))
    lr, m = f32(0.1), f32(0.9)
    expected = np.concatenate([W0[0::2], W0[1::2]])  # part0 rows 0-2, part1 rows 3-5
    expected[0] -= lr  # id 0, step 1 only: its momentum must not move it in step 2
    expected[1] -= lr  # id 2, step 2
    expected[3 + 1] -= lr + lr * (m + 1.0)  # id 3, both steps
    expected[3 + 2] -= lr  # id 5, step 2
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_scatter_with_fed_indices_compiles_once():
    # GradientDescent's sparse path is a scatter_sub with the gradient's indices: they
    # must stay run-time values, not constants compiled in per distinct value.
    v = tf.Variable(np.zeros(10), name="v")
    i = tf.placeholder(tf.int32, [2])
    op = tf.scatter_sub(v, i, [1.0, 2.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        before = sess.compile_stats.traces
        for ids in ([0, 1], [2, 3], [4, 4]):
            sess.run(op, {i: ids})
        assert sess.compile_stats.traces == before + 1
        np.testing.assert_array_equal(sess.run(v), [-1, -2, -1, -2, -3, 0, 0, 0, 0, 0])


def test_adam_subclass_with_its_own_sparse_update_gets_deduplicated_rows():
    # A lazy Adam (only the gradient's rows move) overrides _apply_sparse; it still gets
    # TF1's deduplicated IndexedSlices, not the dense update.
    seen = []

    class LazyAdam(tf.train.AdamOptimizer):
        def _apply_sparse(self, grad, var):
            seen.append(grad)
            return tf.scatter_sub(var, grad.indices, 0.5 * grad.values)

    w = tf.Variable(np.zeros((5, 2), np.float32), name="w")
    loss = tf.reduce_sum(tf.gather(w, [3, 1, 3]))
    train = LazyAdam(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        got = sess.run(w)
    assert len(seen) == 1 and isinstance(seen[0], tf.IndexedSlices)
    want = np.zeros((5, 2), np.float32)
    want[3], want[1] = -1.0, -0.5  # row 3 was gathered twice: its rows were summed
    np.testing.assert_allclose(got, want)


def test_adam_sparse_index_out_of_range_fails_the_run_and_keeps_the_variable():
    w = tf.Variable(np.ones((3, 2), np.float32), name="w")
    idx = tf.placeholder(tf.int32, [2])
    grad = tf.IndexedSlices(tf.ones((2, 2)), idx, tf.constant([3, 2]))
    train = tf.train.AdamOptimizer(0.1).apply_gradients([(grad, w)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"= 5 is out of range \[0, 3\)"):
            sess.run(train, {idx: [0, 5]})
        np.testing.assert_array_equal(sess.run(w), np.ones((3, 2)))
        sess.run(train, {idx: [2, 2]})  # repeated rows add: row 2 moves, the others not
        got = sess.run(w)
    np.testing.assert_allclose(got[:2], 1.0)
    np.testing.assert_allclose(got[2], 1.0 - 0.1, rtol=1e-5)  # Adam's first step: lr * sign


def test_adam_on_a_tied_embedding_adds_the_dense_and_gathered_terms():
    """A table both looked up (sparse rows, repeated ids) and used densely (the tied
    output projection): tf.gradients concatenates the two terms, and Adam's update is
    that of their sum, formed as the dense term plus the rows scattered onto it."""
    rng = np.random.default_rng(3)
    w0, ids = rng.normal(size=(7, 4)), np.array([1, 4, 1, 6, 1])
    c = rng.normal(size=(5, 7))
    w = tf.Variable(w0, name="table")
    h = tf.gather(w, ids)                                  # (5, 4)
    logits = tf.matmul(h, w, transpose_b=True)             # (5, 7), tied weights
    loss = tf.reduce_sum(logits * c)
    (grad,) = tf.gradients(loss, [w])
    assert isinstance(grad, tf.IndexedSlices) and grad.values.shape.as_list() == [12, 4]
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
    train = tf.train.AdamOptimizer(lr, b1, b2, eps).apply_gradients([(grad, w)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        got = sess.run(w)
    # d loss / d w: c^T h from the projection, plus (c w) on the looked-up rows.
    g = c.T @ w0[ids]
    np.add.at(g, ids, c @ w0)
    m, v = (1 - b1) * g, (1 - b2) * g * g
    lr_t = f32(lr) * np.sqrt(1 - f32(b2)) / (1 - f32(b1))
    np.testing.assert_allclose(got, w0 - lr_t * m / (np.sqrt(v) + f32(eps)), rtol=1e-5,
                               atol=1e-8)
