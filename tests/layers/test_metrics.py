"""tf.metrics: streaming over several batches, against NumPy over all the data."""

import numpy as np
import pytest

import tensorflux as tf

RNG = np.random.default_rng(0)
BATCHES, N = 3, 6


def _stream(pairs, feeds):
    """Runs every update op on each feed, then returns (values, last update results)."""
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        for feed in feeds:
            updates = sess.run([u for _, u in pairs], feed)
        return sess.run([v for v, _ in pairs]), updates


def test_accuracy_and_mean_variables_and_values():
    labels = tf.placeholder(tf.int64, [N])
    preds = tf.placeholder(tf.int64, [N])
    weights = tf.placeholder(tf.float32, [N])
    acc = tf.metrics.accuracy(labels, preds)
    wacc = tf.metrics.accuracy(labels, preds, weights=weights)
    mean = tf.metrics.mean(tf.cast(preds, tf.float32), weights=weights)
    assert [v.name for v in tf.local_variables()] == [
        "accuracy/total:0", "accuracy/count:0", "accuracy_1/total:0", "accuracy_1/count:0",
        "mean/total:0", "mean/count:0"]
    assert tf.get_collection(tf.GraphKeys.METRIC_VARIABLES) == tf.local_variables()
    assert tf.global_variables() == [] and tf.trainable_variables() == []
    assert acc[0].name == "accuracy/value:0" and acc[1].name == "accuracy/update_op:0"
    data = [(RNG.integers(0, 3, N), RNG.integers(0, 3, N),
             RNG.choice([0.0, 0.5, 2.0], N).astype(np.float32)) for _ in range(BATCHES)]
    feeds = [{labels: l, preds: p, weights: w} for l, p, w in data]
    values, updates = _stream([acc, wacc, mean], feeds)
    l, p, w = (np.concatenate(parts) for parts in zip(*data))
    want = [np.mean(l == p), np.sum((l == p) * w) / w.sum(), np.sum(p * w) / w.sum()]
    np.testing.assert_allclose(values, want, rtol=1e-6)
    np.testing.assert_allclose(updates, want, rtol=1e-6)  # the update returns the new value


def test_mean_of_nothing_is_zero_and_weights_rank_is_checked():
    value, update = tf.metrics.mean(tf.zeros([3]), weights=tf.zeros([3]))
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(update) == 0.0 and sess.run(value) == 0.0
    with pytest.raises(ValueError, match="weights can not be broadcast to values"):
        tf.metrics.mean(tf.zeros([3, 2]), weights=tf.ones([2, 3]))


def test_regression_metrics():
    labels = tf.placeholder(tf.float32, [N, 2])
    preds = tf.placeholder(tf.float32, [N, 2])
    weights = tf.placeholder(tf.float32, [N, 1])
    pairs = [tf.metrics.mean_absolute_error(labels, preds),
             tf.metrics.mean_squared_error(labels, preds, weights=weights),
             tf.metrics.root_mean_squared_error(labels, preds)]
    assert "root_mean_squared_error/total:0" in [v.name for v in tf.local_variables()]
    data = [(RNG.normal(size=(N, 2)), RNG.normal(size=(N, 2)), RNG.uniform(size=(N, 1)))
            for _ in range(BATCHES)]
    values, _ = _stream(pairs, [{labels: a, preds: b, weights: c} for a, b, c in data])
    l, p, w = (np.concatenate(parts).astype(np.float32) for parts in zip(*data))
    w = np.broadcast_to(w, l.shape)
    want = [np.abs(l - p).mean(), np.sum((l - p) ** 2 * w) / w.sum(),
            np.sqrt(((l - p) ** 2).mean())]
    np.testing.assert_allclose(values, want, rtol=1e-5)


def test_precision_recall_and_confusion_counts():
    labels = tf.placeholder(tf.int32, [N])
    preds = tf.placeholder(tf.float32, [N])  # non-zero counts as a positive prediction
    weights = tf.placeholder(tf.float32, [N])
    pairs = [tf.metrics.precision(labels, preds), tf.metrics.recall(labels, preds),
             tf.metrics.precision(labels, preds, weights=weights),
             tf.metrics.true_positives(labels, preds, weights=weights),
             tf.metrics.false_positives(labels, preds),
             tf.metrics.true_negatives(labels, preds),
             tf.metrics.false_negatives(labels, preds, weights=weights)]
    names = [v.name for v in tf.local_variables()]
    assert names[:4] == ["precision/true_positives/count:0",
                         "precision/false_positives/count:0",
                         "recall/true_positives/count:0", "recall/false_negatives/count:0"]
    assert "true_positives/count:0" in names and "false_negatives/count:0" in names
    data = [(RNG.integers(0, 2, N), RNG.choice([0.0, 0.3, 1.0], N),
             RNG.uniform(size=N)) for _ in range(BATCHES)]
    values, _ = _stream(pairs, [{labels: a, preds: b, weights: c} for a, b, c in data])
    l, p, w = (np.concatenate(parts) for parts in zip(*data))
    lb, pb = l.astype(bool), p != 0
    tp, fp, tn, fn = lb & pb, ~lb & pb, ~lb & ~pb, lb & ~pb
    want = [tp.sum() / (tp.sum() + fp.sum()), tp.sum() / (tp.sum() + fn.sum()),
            (tp * w).sum() / ((tp + fp) * w).sum(), (tp * w).sum(), fp.sum(), tn.sum(),
            (fn * w).sum()]
    np.testing.assert_allclose(values, want, rtol=1e-5)


def test_precision_without_positive_predictions_is_zero():
    value, update = tf.metrics.precision([1, 0], [0, 0])
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(update) == 0.0 and sess.run(value) == 0.0


def np_confusion_at_thresholds(labels, preds, thresholds, weights):
    """TF1's thresholding: predicted positive when prediction > threshold."""
    pos = preds.astype(np.float32)[None, :] > np.asarray(thresholds, np.float32)[:, None]
    lab = labels.astype(bool)[None, :]
    count = lambda m: (m * weights[None, :]).sum(1)  # noqa: E731
    return count(lab & pos), count(lab & ~pos), count(~lab & ~pos), count(~lab & pos)


def np_auc(labels, preds, weights, curve="ROC", method="trapezoidal", num_thresholds=200):
    eps = 1e-7
    inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    thresholds = [-eps] + inner + [1 + eps]
    tp, fn, tn, fp = np_confusion_at_thresholds(labels, preds, thresholds, weights)
    if curve == "PR" and method == "careful_interpolation":
        dtp = tp[:-1] - tp[1:]
        p = tp + fp
        dp = p[:-1] - p[1:]
        slope = np.divide(dtp, dp, out=np.zeros_like(dtp), where=dp > 0)
        intercept = tp[1:] - slope * p[1:]
        both = (p[:-1] > 0) & (p[1:] > 0)
        ratio = np.divide(p[:-1], p[1:], out=np.ones_like(p[1:]), where=both)
        ratio = np.where(both, ratio, 1.0)
        denom = tp[1:] + fn[1:]
        inc = slope * (dtp + intercept * np.log(ratio))
        return np.sum(np.divide(inc, denom, out=np.zeros_like(inc), where=denom > 0))
    e = 1e-6
    rec = (tp + e) / (tp + fn + e)
    x, y = (fp / (fp + tn + e), rec) if curve == "ROC" else (rec, (tp + e) / (tp + fp + e))
    heights = {"trapezoidal": (y[:-1] + y[1:]) / 2, "minoring": np.minimum(y[:-1], y[1:]),
               "majoring": np.maximum(y[:-1], y[1:])}[method]
    return np.sum((x[:-1] - x[1:]) * heights)


def test_auc_roc_and_pr_over_batches():
    labels = tf.placeholder(tf.bool, [N])
    preds = tf.placeholder(tf.float32, [N])
    weights = tf.placeholder(tf.float32, [N])
    configs = [("ROC", "trapezoidal", None), ("ROC", "minoring", None),
               ("ROC", "majoring", "w"), ("PR", "trapezoidal", None),
               ("PR", "careful_interpolation", "w")]
    pairs = [tf.metrics.auc(labels, preds, weights=weights if w else None, curve=c,
                            summation_method=m) for c, m, w in configs]
    pairs.append(tf.metrics.auc(labels, preds, num_thresholds=5))
    assert [v.name for v in tf.local_variables()][:4] == [
        "auc/true_positives:0", "auc/false_negatives:0", "auc/true_negatives:0",
        "auc/false_positives:0"]
    assert tf.local_variables()[0].shape.as_list() == [200]
    data = [(RNG.integers(0, 2, N).astype(bool), RNG.uniform(size=N).astype(np.float32),
             RNG.uniform(0.5, 2.0, N).astype(np.float32)) for _ in range(BATCHES)]
    values, updates = _stream(pairs, [{labels: a, preds: b, weights: c} for a, b, c in data])
    l, p, w = (np.concatenate(parts) for parts in zip(*data))
    ones = np.ones_like(w)
    want = [np_auc(l, p, w if wt else ones, c, m) for c, m, wt in configs]
    want.append(np_auc(l, p, ones, num_thresholds=5))
    np.testing.assert_allclose(values, want, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(updates, want, rtol=1e-4, atol=1e-6)


def test_auc_of_a_perfect_ranking_and_bad_curve():
    value, update = tf.metrics.auc([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9])
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        sess.run(update)
        assert sess.run(value) == pytest.approx(1.0, abs=1e-5)
    with pytest.raises(ValueError, match="curve must be either ROC or PR, XY unknown"):
        tf.metrics.auc([0], [0.5], curve="XY")


def test_metrics_at_thresholds():
    labels = np.array([1, 0, 1, 1, 0], bool)
    preds = np.array([0.9, 0.6, 0.4, 0.2, 0.1], np.float32)
    thresholds = [0.15, 0.5, 0.95]
    pairs = [tf.metrics.true_positives_at_thresholds(labels, preds, thresholds),
             tf.metrics.false_positives_at_thresholds(labels, preds, thresholds),
             tf.metrics.true_negatives_at_thresholds(labels, preds, thresholds),
             tf.metrics.false_negatives_at_thresholds(labels, preds, thresholds),
             tf.metrics.precision_at_thresholds(labels, preds, thresholds),
             tf.metrics.recall_at_thresholds(labels, preds, thresholds)]
    values, _ = _stream(pairs, [None, None])  # the same batch twice
    tp, fn, tn, fp = (2 * c for c in np_confusion_at_thresholds(labels, preds, thresholds,
                                                                np.ones(5)))
    for got, want in zip(values, [tp, fp, tn, fn, tp / (tp + fp + 1e-7),
                                  tp / (tp + fn + 1e-7)]):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_mean_iou_streams_a_confusion_matrix():
    labels = tf.placeholder(tf.int32, [N])
    preds = tf.placeholder(tf.int32, [N])
    weights = tf.placeholder(tf.float32, [N])
    miou, update = tf.metrics.mean_iou(labels, preds, 4, weights=weights)
    assert [v.name for v in tf.local_variables()] == ["mean_iou/total_confusion_matrix:0"]
    data = [(RNG.integers(0, 3, N), RNG.integers(0, 3, N), RNG.choice([0.0, 1.0, 2.0], N))
            for _ in range(BATCHES)]  # class 3 never occurs: it is left out of the mean
    values, updates = _stream([(miou, update)], [{labels: a, preds: b, weights: c}
                                                 for a, b, c in data])
    l, p, w = (np.concatenate(parts) for parts in zip(*data))
    cm = np.zeros((4, 4))
    np.add.at(cm, (l, p), w)
    np.testing.assert_allclose(updates[0], cm)  # the update op returns the matrix
    inter = np.diag(cm)
    union = cm.sum(0) + cm.sum(1) - inter
    present = union > 0
    np.testing.assert_allclose(values[0], np.mean(inter[present] / union[present]), rtol=1e-5)


def np_at_k(labels, scores, k, class_id=None):
    """Per-row tp, fp, fn of the top-k ids against the row's label set."""
    tp = fp = fn = 0
    for row_labels, row in zip(labels, scores):
        top = set(np.argsort(-row, kind="stable")[:k].tolist())
        wanted = set(np.atleast_1d(row_labels).tolist())
        if class_id is not None:
            top, wanted = top & {class_id}, wanted & {class_id}
        tp += len(top & wanted)
        fp += len(top - wanted)
        fn += len(wanted - top)
    return tp, fp, fn


def test_recall_and_precision_at_k():
    labels = tf.placeholder(tf.int64, [N, 2])  # two labels per row (repeats count once)
    single = tf.placeholder(tf.int64, [N])
    scores = tf.placeholder(tf.float32, [N, 5])
    pairs = [tf.metrics.recall_at_k(labels, scores, 2),
             tf.metrics.precision_at_k(labels, scores, 2),
             tf.metrics.recall_at_k(single, scores, 3),
             tf.metrics.precision_at_k(single, scores, 1, class_id=2),
             tf.metrics.recall_at_k(labels, scores, 2, class_id=1)]
    assert [v.name for v in tf.local_variables()][:4] == [
        "recall_at_2/true_positive_at_2:0", "recall_at_2/false_negative_at_2:0",
        "precision_at_2/true_positive_at_2:0", "precision_at_2/false_positive_at_2:0"]
    assert pairs[0][0].name == "recall_at_2:0" and pairs[0][1].name == "recall_at_2/update:0"
    assert pairs[3][0].name == "precision_at_1_class2:0"
    data = [(RNG.integers(0, 5, (N, 2)), RNG.integers(0, 5, N),
             RNG.permutation(np.arange(N * 5, dtype=np.float32)).reshape(N, 5))
            for _ in range(BATCHES)]
    values, _ = _stream(pairs, [{labels: a, single: b, scores: c} for a, b, c in data])
    l2, l1, s = (np.concatenate(parts) for parts in zip(*data))
    tp, fp, fn = np_at_k(l2, s, 2)
    want = [tp / (tp + fn), tp / (tp + fp)]
    tp, fp, fn = np_at_k(l1, s, 3)
    want.append(tp / (tp + fn))
    tp, fp, fn = np_at_k(l1, s, 1, class_id=2)
    want.append(tp / (tp + fp))
    tp, fp, fn = np_at_k(l2, s, 2, class_id=1)
    want.append(tp / (tp + fn))
    np.testing.assert_allclose(values, want, rtol=1e-12)


def test_metrics_and_updates_collections():
    value, update = tf.metrics.accuracy([1, 2], [1, 1], metrics_collections=["my_metrics"],
                                        updates_collections=["my_updates"])
    r_value, r_update = tf.metrics.recall_at_k(tf.constant([[0]], tf.int64), [[0.9, 0.1]], 1,
                                               metrics_collections=["my_metrics"],
                                               updates_collections=[tf.GraphKeys.UPDATE_OPS])
    assert tf.get_collection("my_metrics") == [value, r_value]
    assert tf.get_collection("my_updates") == [update]
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == [r_update]
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(update) == 0.5 and sess.run(r_update) == 1.0


def test_mean_tensor_relative_error_cosine_distance_and_percentage_below():
    values = tf.placeholder(tf.float32, [N, 2])
    labels = tf.placeholder(tf.float32, [N, 2])
    normalizer = tf.placeholder(tf.float32, [N, 2])
    pairs = [tf.metrics.mean_tensor(values),
             tf.metrics.mean_relative_error(labels, values, normalizer),
             tf.metrics.mean_cosine_distance(labels, values, dim=1),
             tf.metrics.percentage_below(values, 0.25)]
    assert [v.name for v in tf.local_variables()][:2] == ["mean/total_tensor:0",
                                                         "mean/count_tensor:0"]
    data = [(RNG.normal(size=(N, 2)), RNG.normal(size=(N, 2)),
             RNG.choice([0.0, 0.5, 2.0], (N, 2))) for _ in range(BATCHES)]
    got, _ = _stream(pairs, [{values: a, labels: b, normalizer: c} for a, b, c in data])
    v, l, z = (np.concatenate(parts).astype(np.float32) for parts in zip(*data))
    rel = np.where(z == 0, 0.0, np.abs(l - v) / np.where(z == 0, 1, z))
    np.testing.assert_allclose(got[0], v.reshape(BATCHES, N, 2).mean(0), rtol=1e-5)
    np.testing.assert_allclose(got[1:], [rel.mean(), 1 - np.sum(l * v, 1).mean(),
                                         np.mean(v < 0.25)], rtol=1e-5)


def test_mean_per_class_accuracy():
    labels = tf.placeholder(tf.int32, [N])
    preds = tf.placeholder(tf.int32, [N])
    value, update = tf.metrics.mean_per_class_accuracy(labels, preds, 3)
    assert [v.name for v in tf.local_variables()] == ["mean_accuracy/total:0",
                                                      "mean_accuracy/count:0"]
    data = [(RNG.integers(0, 3, N), RNG.integers(0, 3, N)) for _ in range(BATCHES)]
    got, updates = _stream([(value, update)], [{labels: a, preds: b} for a, b in data])
    l, p = (np.concatenate(parts) for parts in zip(*data))
    per_class = np.array([np.mean(p[l == c] == c) if np.any(l == c) else 0.0
                          for c in range(3)])
    np.testing.assert_allclose(updates[0], per_class, rtol=1e-6)  # per-class accuracies
    np.testing.assert_allclose(got[0], per_class.mean(), rtol=1e-6)
