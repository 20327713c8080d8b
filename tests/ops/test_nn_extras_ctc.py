"""CTC: tf.nn.ctc_loss / ctc_loss_v2 against brute-force enumeration of every alignment
(small T), their gradients against finite differences of that enumeration, TF's kernel
errors with its messages, and the decoders against TF's published test values,
hand-worked cases and exhaustive enumeration of labelings."""

import itertools
import re

import numpy as np
import pytest

import tensorflux as tf
from tests.ops.harness import numeric_gradient


def np_log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def collapse(path, blank, merge=True):
    out, prev = [], None
    for c in path:
        if c != blank and not (merge and c == prev):
            out.append(c)
        prev = c
    return out


def labelings(logits, blank, merge=True):
    """{labeling: log p(labeling | logits [T, C])} over all C**T alignments."""
    lp = np_log_softmax(logits.astype(np.float64))
    out = {}
    for path in itertools.product(range(lp.shape[1]), repeat=lp.shape[0]):
        key = tuple(collapse(path, blank, merge))
        out[key] = np.logaddexp(out.get(key, -np.inf), lp[np.arange(len(path)), path].sum())
    return out


def brute_nll(logits, label, blank, merge=True):
    return -labelings(logits, blank, merge).get(tuple(label), -np.inf)


def sparse(labels):
    idx = [[b, t] for b, row in enumerate(labels) for t in range(len(row))]
    vals = [v for row in labels for v in row]
    return tf.SparseTensor(np.array(idx, np.int64).reshape(-1, 2), np.array(vals, np.int32),
                           [len(labels), max(map(len, labels))])


def raises(exc, text):
    return pytest.raises(exc, match=re.escape(text))


RNG = np.random.default_rng(7)
X = RNG.normal(size=(4, 3, 3))  # [T, B, C]; blank = 2


def test_ctc_loss_matches_enumeration_in_every_mode():
    x = tf.placeholder(tf.float64, [4, 3, 3])
    ix = tf.placeholder(tf.int64, [None, 2])
    vals = tf.placeholder(tf.int32, [None])
    labels = [[0, 1], [1, 1], [0]]
    fed = tf.SparseTensor(ix, vals, [3, 2])
    seq = [4, 4, 2]
    losses = {
        "default": tf.nn.ctc_loss(sparse(labels), x, seq),
        "no_merge": tf.nn.ctc_loss(sparse(labels), x, seq, ctc_merge_repeated=False),
        "collapse": tf.nn.ctc_loss(sparse([[0, 0, 1], [1, 1], [0]]), x, seq,
                                   preprocess_collapse_repeated=True),
        "ignore": tf.nn.ctc_loss(sparse(labels), x, [4, 1, 2],
                                 ignore_longer_outputs_than_inputs=True),
        "batch_major": tf.nn.ctc_loss(sparse(labels), tf.transpose(x, [1, 0, 2]), seq,
                                      time_major=False),
        "fed": tf.nn.ctc_loss(fed, x, seq),
        # a value >= num_classes - 1 ends the sequence: [0, 2] is [0]
        "null_end": tf.nn.ctc_loss(sparse([[0, 2], [1], [0]]), x, seq),
    }
    assert losses["default"].shape.as_list() == [3] and losses["default"].dtype == tf.float64
    feeds = {x: X, ix: [[0, 0], [0, 1], [1, 0], [1, 1], [2, 0]], vals: [0, 1, 1, 1, 0]}
    got = tf.Session().run(losses, feeds)

    def expect(rows, merge=True):
        return [brute_nll(X[:n, b], lab, 2, merge) for b, (lab, n) in enumerate(rows)]

    rows = list(zip(labels, seq))
    np.testing.assert_allclose(got["default"], expect(rows), rtol=1e-10)
    np.testing.assert_allclose(got["no_merge"], expect(rows, merge=False), rtol=1e-10)
    np.testing.assert_allclose(got["collapse"], expect(list(zip([[0, 1], [1], [0]], seq))),
                               rtol=1e-10)
    np.testing.assert_allclose(got["ignore"], [expect(rows)[0], 0.0, expect(rows)[2]],
                               rtol=1e-10)
    np.testing.assert_allclose(got["batch_major"], got["default"], rtol=1e-12)
    np.testing.assert_allclose(got["fed"], got["default"], rtol=1e-12)
    np.testing.assert_allclose(got["null_end"], expect(list(zip([[0], [1], [0]], seq))),
                               rtol=1e-10)
    # [1, 1] with merging needs a blank between the repeats: 3 frames at least
    assert np.isinf(brute_nll(X[:2, 1], [1, 1], 2)) and np.isfinite(got["default"][1])


def test_ctc_loss_gradients_match_finite_differences():
    x = tf.placeholder(tf.float64, [4, 3, 3])
    labels, seq = [[0, 1], [1], [1]], [4, 3, 1]
    weights = np.array([0.7, 1.3, 0.9])
    no_merge = tf.nn.ctc_loss(sparse(labels), x, seq, ctc_merge_repeated=False)
    ignored = tf.nn.ctc_loss(sparse([[0, 1], [1, 0], [1]]), x, [4, 1, 1],
                             ignore_longer_outputs_than_inputs=True)
    grads = tf.gradients([tf.reduce_sum(no_merge * weights), tf.reduce_sum(ignored)], x)[0]
    g_ignored = tf.gradients(tf.reduce_sum(ignored), x)[0]
    g, gi = tf.Session().run([grads, g_ignored], {x: X})

    def objective(v):
        a = sum(w * brute_nll(v[:n, b], lab, 2, merge=False)
                for b, (lab, n, w) in enumerate(zip(labels, seq, weights)))
        return a + brute_nll(v[:4, 0], [0, 1], 2) + brute_nll(v[:1, 2], [1], 2)

    np.testing.assert_allclose(g, numeric_gradient(objective, [X.copy()], 0), atol=1e-7)
    # frames at or past sequence_length, and ignored examples, get no gradient
    assert np.all(g[1:, 2] == 0) and np.all(gi[:, 1] == 0)


def test_ctc_loss_v2_dense_and_sparse_labels():
    x = tf.placeholder(tf.float64, [4, 3, 3])
    dense = np.array([[1, 2], [2, 0], [1, 1]], np.int32)
    lengths, logit_len = [2, 1, 2], [4, 3, 4]
    out = {
        "blank0": tf.nn.ctc_loss_v2(dense, x, lengths, logit_len),
        "blank_last": tf.nn.ctc_loss_v2(dense - 1, x, lengths, logit_len, blank_index=-1),
        "blank_mid": tf.nn.ctc_loss_v2(np.array([[0, 2], [2, 0], [0, 0]], np.int32), x,
                                       lengths, logit_len, blank_index=1),
        "batch_major": tf.nn.ctc_loss_v2(dense, tf.transpose(x, [1, 0, 2]), lengths,
                                         logit_len, logits_time_major=False),
        "sparse_mid": tf.nn.ctc_loss_v2(sparse([[0, 2], [2], [0, 0]]), x, None, logit_len,
                                        blank_index=1),
    }
    grad = tf.gradients(out["blank0"], x)[0]
    got, g = tf.Session().run([out, grad], {x: X})
    expect0 = [brute_nll(X[:n, b], dense[b, :k], 0)
               for b, (k, n) in enumerate(zip(lengths, logit_len))]
    np.testing.assert_allclose(got["blank0"], expect0, rtol=1e-10)
    np.testing.assert_allclose(got["batch_major"], expect0, rtol=1e-10)
    expect_last = [brute_nll(X[:n, b], dense[b, :k] - 1, 2)
                   for b, (k, n) in enumerate(zip(lengths, logit_len))]
    np.testing.assert_allclose(got["blank_last"], expect_last, rtol=1e-10)
    expect_mid = [brute_nll(X[:n, b], lab, 1)
                  for b, (lab, n) in enumerate(zip([[0, 2], [2], [0, 0]], logit_len))]
    np.testing.assert_allclose(got["blank_mid"], expect_mid, rtol=1e-10)
    np.testing.assert_allclose(got["sparse_mid"], expect_mid, rtol=1e-10)

    def objective(v):
        return sum(brute_nll(v[:n, b], dense[b, :k], 0)
                   for b, (k, n) in enumerate(zip(lengths, logit_len)))

    np.testing.assert_allclose(g, numeric_gradient(objective, [X.copy()], 0), atol=1e-7)
    assert np.all(g[3, 1] == 0)  # past logit_length


def test_ctc_loss_construction_errors():
    x = tf.placeholder(tf.float32, [4, 2, 3])
    with raises(TypeError, "Expected labels (first argument) to be a SparseTensor"):
        tf.nn.ctc_loss([[0, 1]], x, [4, 4])
    with raises(ValueError, "Shape must be rank 3 but is rank 2"):
        tf.nn.ctc_loss(sparse([[0], [1]]), tf.zeros([4, 3]), [4, 4])
    with raises(ValueError, "Dimensions must be equal, but are 2 and 3"):
        tf.nn.ctc_loss(sparse([[0], [1]]), x, [4, 4, 4])
    with raises(ValueError, "blank_index must be given when using SparseTensor labels."):
        tf.nn.ctc_loss_v2(sparse([[0], [1]]), x, None, [4, 4])
    with raises(TypeError, "labels_values"):
        tf.nn.ctc_loss(tf.SparseTensor([[0, 0]], np.array([1], np.int64), [1, 1]),
                       tf.zeros([4, 1, 3]), [4])


def test_ctc_loss_run_time_errors_use_tf_kernel_messages():
    x = tf.placeholder(tf.float32, [4, 2, 3])
    ix = tf.placeholder(tf.int64, [3, 2])
    vals = tf.placeholder(tf.int32, [3])
    seq = tf.placeholder(tf.int32, [2])
    loss = tf.nn.ctc_loss(tf.SparseTensor(ix, vals, [2, 3]), x, seq)
    ok_ix = [[0, 0], [0, 1], [1, 0]]
    cases = [
        (ok_ix, [0, -1, 1], [4, 4], "All labels must be nonnegative integers, batch: 0 "
                                    "labels: 0,-1"),
        (ok_ix, [2, 0, 1], [4, 4], "Saw a non-null label (index >= num_classes - 1) "
                                   "following a null label, batch: 0 num_classes: 3 labels: "),
        (ok_ix, [0, 1, 1], [5, 2], "sequence_length(0) <= 4"),
        (ok_ix, [0, 1, 1], [4, -1], "seq_len(1) < 0"),
        (ok_ix, [0, 1, 1], [1, 2], "Not enough time for target transition sequence "
                                   "(required: 2, available: 1)0You can turn this error"),
        ([[0, 0], [0, 1], [0, 2]], [0, 1, 1], [4, 4], "Labels length is zero in batch 1"),
        ([[0, 1], [0, 0], [1, 0]], [0, 1, 1], [4, 4],
         "label SparseTensor is not valid: indices[1] = [0,0] is out of order"),
        ([[0, 0], [0, 0], [1, 0]], [0, 1, 1], [4, 4],
         "label SparseTensor is not valid: indices[1] = [0,0] is repeated"),
        ([[0, 0], [0, 1], [2, 0]], [0, 1, 1], [4, 4], "label SparseTensor is not valid: "
         "indices[2] = [2,0] is out of bounds: need 0 <= index < [2,2]"),
    ]
    xv = np.zeros([4, 2, 3], np.float32)
    with tf.Session() as sess:
        for indices, values, lengths, message in cases:
            with raises(tf.errors.InvalidArgumentError, message):
                sess.run(loss, {x: xv, ix: indices, vals: values, seq: lengths})
        # constant labels are checked too (while the run is compiled)
        const = tf.nn.ctc_loss(sparse([[5, 0], [1]]), x, [4, 4])
        with raises(tf.errors.InvalidArgumentError, "Saw a non-null label (index >= "
                                                    "num_classes - 1) following a null"):
            sess.run(const, {x: xv})
        # the same graph accepts valid labels afterwards
        assert np.all(np.isfinite(sess.run(loss, {x: xv, ix: ok_ix, vals: [0, 1, 1],
                                                  seq: [4, 4]})))


def test_ctc_loss_has_no_second_derivative():
    x = tf.placeholder(tf.float64, [4, 1, 3])
    loss = tf.nn.ctc_loss(sparse([[0]]), x, [4])
    g = tf.gradients(loss, x)[0]
    assert g.shape.as_list() == [4, 1, 3]
    with raises(LookupError, "Gradient explicitly disabled. Reason: Currently there is no "
                             "way to take the second  derivative of ctc_loss"):
        tf.gradients(tf.reduce_sum(g * g), x)


# -- decoders ----------------------------------------------------------------------------------
PROB0 = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.4, 0.6], [0.0, 0.0, 0.4, 0.6],
                  [0.0, 0.9, 0.1, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
PROB1 = np.array([[0.1, 0.9, 0.0, 0.0], [0.0, 0.9, 0.1, 0.0], [0.0, 0.0, 0.1, 0.9],
                  [0.0, 0.9, 0.1, 0.1], [0.9, 0.1, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
BEAM = np.array(
    [[0.30999, 0.309938, 0.0679938, 0.0673362, 0.0708352, 0.173908],
     [0.215136, 0.439699, 0.0370931, 0.0393967, 0.0381581, 0.230517],
     [0.199959, 0.489485, 0.0233221, 0.0251417, 0.0233289, 0.238763],
     [0.279611, 0.452966, 0.0204795, 0.0209126, 0.0194803, 0.20655],
     [0.51286, 0.288951, 0.0243026, 0.0220788, 0.0219297, 0.129878]], np.float32)


def test_greedy_decoder_tf_example():
    with np.errstate(divide="ignore"):
        logits = np.log(np.stack([PROB0, PROB1], axis=1)).astype(np.float32)
    (merged,), neg_sum = tf.nn.ctc_greedy_decoder(logits, [4, 5])
    (unmerged,), _ = tf.nn.ctc_greedy_decoder(logits, [4, 5], merge_repeated=False)
    assert merged.indices.shape.as_list() == [None, 2] and neg_sum.shape.as_list() == [2, 1]
    assert merged.op.type == "CTCGreedyDecoder" and merged.values.dtype == tf.int64
    m, u, s = tf.Session().run([merged, unmerged, neg_sum])
    # TF's kernel test: batch 0 best path 0 - - 1 -> [0, 1]; batch 1: 1 1 - 1 0 -> [1, 1, 0]
    np.testing.assert_array_equal(m.indices, [[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]])
    np.testing.assert_array_equal(m.values, [0, 1, 1, 1, 0])
    np.testing.assert_array_equal(m.dense_shape, [2, 3])
    np.testing.assert_array_equal(u.values, [0, 1, 1, 1, 1, 0])
    np.testing.assert_allclose(s[:, 0], [-np.log([1.0, 0.6, 0.6, 0.9]).sum(),
                                         -np.log([0.9] * 5).sum()], rtol=1e-6)


def test_beam_search_tf_examples_and_exhaustive_search():
    def padded(x):
        return np.concatenate([x, np.zeros((2, 6), np.float32)])[:, None, :]

    # TF's kernel tests (TF >= 1.11 normalizes logits with log-softmax per frame)
    dec_a, lp_a = tf.nn.ctc_beam_search_decoder(padded(BEAM + 2.0), [5], beam_width=2,
                                                top_paths=2)
    dec_b, lp_b = tf.nn.ctc_beam_search_decoder(padded(np.log(BEAM) + 2.0), [5],
                                                beam_width=2, top_paths=2)
    # a beam wide enough to hold every prefix is exact: compare with enumeration
    x = RNG.normal(size=(4, 2, 3)).astype(np.float64)
    dec_c, lp_c = tf.nn.ctc_beam_search_decoder_v2(tf.constant(x), [4, 3], beam_width=64,
                                                   top_paths=3)
    assert lp_c.shape.as_list() == [2, 3] and len(dec_c) == 3
    assert dec_c[0].values.shape.as_list() == [None]
    a, la, b, lb, c, lc = tf.Session().run([dec_a, lp_a, dec_b, lp_b, dec_c, lp_c])
    assert [list(v.values) for v in a] == [[1, 0], [1]]
    np.testing.assert_allclose(la, [[-5.811451, -6.63339]], rtol=1e-6)
    assert [list(v.values) for v in b] == [[1, 0], [0, 1, 0]]
    np.testing.assert_array_equal(b[1].dense_shape, [1, 3])
    # the pre-1.11 test values were log-probabilities less sum_t log max_t p
    shift = np.log(BEAM.max(axis=1)).sum()
    np.testing.assert_allclose(lb - shift, [[0.584855, 0.389139]], atol=2e-5)
    for batch, n in enumerate([4, 3]):
        best = sorted(labelings(x[:n, batch], 2).items(), key=lambda kv: -kv[1])[:3]
        got = [list(c[p].values[c[p].indices[:, 0] == batch]) for p in range(3)]
        assert got == [list(k) for k, _ in best]
        np.testing.assert_allclose(lc[batch], [v for _, v in best], rtol=1e-9)


def test_decoder_errors():
    x = np.zeros((3, 2, 4), np.float32)
    with raises(ValueError, "Attr 'beam_width' of 'CTCBeamSearchDecoder' Op passed 0 less "
                            "than minimum 1."):
        tf.nn.ctc_beam_search_decoder(x, [3, 3], beam_width=0)
    with raises(ValueError, "Shape must be rank 3 but is rank 2"):
        tf.nn.ctc_greedy_decoder(x[0], [3, 3])
    (greedy,), _ = tf.nn.ctc_greedy_decoder(x, [4, 3])
    beams, _ = tf.nn.ctc_beam_search_decoder(x, [3, 3], beam_width=2, top_paths=3)
    empty, lp = tf.nn.ctc_beam_search_decoder(x, [0, 0], beam_width=2, top_paths=1)
    with tf.Session() as sess:
        with raises(tf.errors.FailedPreconditionError, "sequence_length(0) <= 3"):
            sess.run(greedy)
        with raises(tf.errors.InvalidArgumentError, "requested more paths than the beam "
                                                    "width."):
            sess.run(beams[0])
        e, p = sess.run([empty[0], lp])
    assert e.values.size == 0 and list(e.dense_shape) == [2, 0] and np.all(p == 0)


# -- label helpers -----------------------------------------------------------------------------
def test_collapse_repeated_and_unique_labels():
    labels = np.array([[1, 1, 2, 2, 1], [1, 2, 3, 4, 5], [3, 3, 3, 4, 4]], np.int32)
    collapsed, new_len = tf.nn.collapse_repeated(labels, [5, 5, 2])
    assert collapsed.shape.as_list() == [3, None] and new_len.dtype == tf.int32
    unique, idx = tf.nn.ctc_unique_labels([[3, 4, 4, 3]])
    c, n, u, i = tf.Session().run([collapsed, new_len, unique, idx])
    np.testing.assert_array_equal(c, [[1, 2, 1, 0, 0], [1, 2, 3, 4, 5], [3, 0, 0, 0, 0]])
    np.testing.assert_array_equal(n, [3, 5, 1])
    np.testing.assert_array_equal(u, [[3, 4, 0, 0]])  # TF's docstring example
    np.testing.assert_array_equal(i, [[0, 1, 1, 0]])
    assert u.dtype == np.int64 and i.dtype == np.int32
