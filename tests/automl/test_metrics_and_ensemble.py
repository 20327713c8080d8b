import math

import numpy as np
import pytest

from tensorflux._src.automl import ensemble, metrics


def _binary(p1):
    p1 = np.asarray(p1, float)
    return np.stack([1 - p1, p1], axis=1)


def test_roc_auc_counts_ordered_pairs():
    # positives score 0.35, 0.8; negatives 0.1, 0.4: 3 of the 4 pairs are ordered
    y = np.array([0, 0, 1, 1])
    assert metrics.roc_auc(y, _binary([0.1, 0.4, 0.35, 0.8])) == pytest.approx(0.75)
    # a tie counts half: pairs (0.5 vs 0.5) -> 0.5, (0.5 vs 0.2) -> 1
    assert metrics.roc_auc(np.array([1, 0, 0]), _binary([0.5, 0.5, 0.2])) == \
        pytest.approx(0.75)


def test_classification_metrics_closed_form():
    y = np.array([0, 1, 1, 0, 1])
    p = _binary([0.2, 0.9, 0.4, 0.6, 0.7])   # predicted: 0 1 0 1 1
    assert metrics.accuracy(y, p) == pytest.approx(3 / 5)
    # recall of class 0: 1/2, of class 1: 2/3
    assert metrics.balanced_accuracy(y, p) == pytest.approx((1 / 2 + 2 / 3) / 2)
    # f1 of class 1: tp=2, fp=1, fn=1 -> 4/6
    assert metrics.f1(y, p) == pytest.approx(2 / 3)
    expected = -np.mean(np.log([0.8, 0.9, 0.4, 0.4, 0.7]))
    assert metrics.log_loss(y, p) == pytest.approx(expected)


def test_multiclass_macro_f1_and_log_loss():
    y = np.array([0, 1, 2, 2])
    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.5, 0.1, 0.4], [0.1, 0.1, 0.8]])
    # predicted 0 1 0 2: f1 class 0 = 2/3, class 1 = 1, class 2 = 2/3
    assert metrics.f1(y, p) == pytest.approx((2 / 3 + 1 + 2 / 3) / 3)
    assert metrics.log_loss(y, p) == pytest.approx(-np.mean(np.log([0.7, 0.8, 0.4, 0.8])))


def test_regression_metrics():
    y = np.array([1.0, 2.0, 3.0, 4.0])
    pred = np.array([1.5, 2.0, 2.0, 5.0])
    assert metrics.rmse(y, pred) == pytest.approx(math.sqrt((0.25 + 0 + 1 + 1) / 4))
    assert metrics.mae(y, pred) == pytest.approx(2.5 / 4)
    assert metrics.r2(y, pred) == pytest.approx(1 - 2.25 / 5.0)
    assert metrics.score("rmse", y, pred) == -metrics.rmse(y, pred)


def test_ensemble_selection_hand_computed():
    # y = 0; models predict 1, -1 and 2 everywhere. Step 1: A and B tie at rmse 1, the
    # first listed (A) wins. Step 2: (A+B)/2 = 0 is exact -> B. Step 3: A and B tie at
    # |1/3| -> A. Weights: A 2/3, B 1/3, C 0.
    y = np.zeros(2)
    a, b, c = np.ones(2), -np.ones(2), 2 * np.ones(2)
    weights = ensemble.select([a, b, c], y, "rmse", iterations=3)
    np.testing.assert_allclose(weights, [2 / 3, 1 / 3, 0])
    np.testing.assert_allclose(ensemble.combine([a, b, c], weights), [1 / 3, 1 / 3])


def test_ensemble_beats_its_members_on_complementary_errors():
    y = np.array([0, 1, 0, 1])
    first = _binary([0.4, 0.9, 0.6, 0.6])      # wrong on row 2
    second = _binary([0.1, 0.45, 0.2, 0.7])    # wrong on row 1
    weights = ensemble.select([first, second], y, "accuracy", iterations=10)
    assert weights[0] > 0 and weights[1] > 0
    assert metrics.accuracy(y, ensemble.combine([first, second], weights)) == 1.0
