"""The six data sets against the original playground's formulas, re-derived here."""

import numpy as np
import pytest

from tensorflux._src.playground import datasets


@pytest.mark.parametrize("name,n", [("circle", 500), ("xor", 500), ("gauss", 500),
                                    ("spiral", 500), ("plane", 1200), ("multigauss", 1200)])
def test_sizes_and_dtypes(name, n):
    points, labels = datasets.generate(name, 0.0, seed=3)
    assert points.shape == (n, 2) and labels.shape == (n,)
    assert points.dtype == labels.dtype == np.float32


def test_seed_reproduces_and_differs():
    a = datasets.generate("spiral", 0.2, seed=1)
    b = datasets.generate("spiral", 0.2, seed=1)
    c = datasets.generate("spiral", 0.2, seed=2)
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(a[0], c[0])


def test_circle_without_noise_labels_by_radius():
    points, labels = datasets.generate("circle", 0.0, seed=0)
    r = np.hypot(points[:, 0], points[:, 1])
    np.testing.assert_array_equal(labels, np.where(r < 2.5, 1.0, -1.0))
    assert (r <= 5 + 1e-5).all() and ((r < 2.5) | (r >= 3.5 - 1e-5)).all()
    assert (labels == 1).sum() == 250


def test_xor_without_noise_is_the_sign_of_the_product_with_padding():
    points, labels = datasets.generate("xor", 0.0, seed=0)
    np.testing.assert_array_equal(labels, np.where(points[:, 0] * points[:, 1] >= 0, 1, -1))
    assert (np.abs(points) >= 0.3 - 1e-6).all() and (np.abs(points) <= 5.3 + 1e-5).all()


def test_gauss_centres_and_variance():
    points, labels = datasets.generate("gauss", 0.0, seed=0)
    pos = points[labels == 1]
    np.testing.assert_allclose(pos.mean(0), [2, 2], atol=0.2)
    np.testing.assert_allclose(points[labels == -1].mean(0), [-2, -2], atol=0.2)
    np.testing.assert_allclose(pos.var(0), [0.5, 0.5], rtol=0.25)  # noise 0: variance 0.5
    noisy, noisy_labels = datasets.generate("gauss", 0.5, seed=0)
    np.testing.assert_allclose(noisy[noisy_labels == 1].var(0), [4, 4], rtol=0.25)


def test_spiral_without_noise_is_the_two_arms():
    points, labels = datasets.generate("spiral", 0.0, seed=0)
    i = np.arange(250)
    r = i / 250 * 5
    t = 1.75 * i / 250 * 2 * np.pi
    arm = np.stack([r * np.sin(t), r * np.cos(t)], 1)
    got = points[labels == 1]
    got = got[np.argsort(np.hypot(got[:, 0], got[:, 1]))]
    np.testing.assert_allclose(got, arm, atol=1e-5)
    np.testing.assert_allclose(np.sort(np.hypot(*points[labels == -1].T)), r, atol=1e-5)


def test_plane_and_multigauss_labels():
    points, labels = datasets.generate("plane", 0.0, seed=0)
    np.testing.assert_allclose(labels, (points[:, 0] + points[:, 1]) / 10, atol=1e-6)
    points, labels = datasets.generate("multigauss", 0.0, seed=0)
    # at a centre the label is the centre's sign; far from all it is 0
    centres = np.array([[-4, 2.5], [0, 2.5], [4, 2.5], [-4, -2.5], [0, -2.5], [4, -2.5]])
    signs = np.array([1, -1, 1, -1, 1, -1])
    d = np.hypot(points[:, None, 0] - centres[:, 0], points[:, None, 1] - centres[:, 1])
    values = signs * np.clip(1 - d / 2, 0, 1)
    expected = values[np.arange(len(points)), np.argmax(np.abs(values), 1)]
    np.testing.assert_allclose(labels, expected, atol=1e-6)
    assert np.abs(labels).max() <= 1


def test_noise_flips_some_circle_labels_and_split():
    points, labels = datasets.generate("circle", 0.5, seed=0)
    r = np.hypot(points[:, 0], points[:, 1])
    assert (labels != np.where(r < 2.5, 1.0, -1.0)).mean() > 0.05
    tx, ty, sx, sy = datasets.split(points, labels, 30)
    assert len(ty) == 150 and len(sy) == 350
    np.testing.assert_array_equal(np.concatenate([tx, sx]), points)


def test_unknown_dataset():
    with pytest.raises(ValueError, match="dataset must be one of .* got 'moons'"):
        datasets.generate("moons", 0, 0)
