"""tf.random.stateless_*, fold_in/split, stateless_shuffle and index_shuffle: the same
seed gives the same numbers everywhere, and the numbers follow their distributions
(checked against scipy.stats with fixed seeds, so the checks are deterministic)."""

import numpy as np
import pytest
from scipy import stats

import tensorflux as tf

R = tf.random


def _run(build, feed=None):
    with tf.Graph().as_default():
        fetches = build()
        with tf.Session() as sess:
            return sess.run(fetches, feed)


N = 10000


def _draws(seed, alpha, beta):
    """One draw of every distribution (all from one seed: each is checked on its own)."""
    n = N
    return [
        R.stateless_uniform([n], seed, -1.0, 3.0),
        R.stateless_normal([n], seed, mean=2.0, stddev=0.5, dtype=tf.float64),
        R.stateless_truncated_normal([n], seed, 1.0, 2.0),
        R.stateless_uniform([n], seed, 3, 9, dtype=tf.int32),
        R.stateless_uniform([n], seed, None, None, dtype=tf.int32),
        R.stateless_categorical(np.log([[0.2, 0.5, 0.3]]), n, seed, dtype=tf.int32),
        R.stateless_binomial([n, 2], seed, [5.0, 40.0], 0.25, output_dtype=tf.float32),
        R.stateless_gamma([n, 2], seed, alpha, beta=beta, dtype=tf.float64),
        R.stateless_poisson([n, 2], seed, [0.7, 12.0], dtype=tf.int64),
        R.stateless_parameterized_truncated_normal(
            [n, 2], seed, means=[0.0, 1.0], stddevs=2.0, minvals=[-1.0, 0.5],
            maxvals=[3.0, 8.0]),
        R.stateless_uniform([n], seed, -1.0, 3.0, alg="threefry"),
        R.stateless_truncated_normal([n], seed, dtype=tf.float16),
    ]


def test_distributions_match_scipy_and_repeat_in_every_run():
    with tf.Graph().as_default():
        seed = tf.placeholder(tf.int64, [2])
        alpha = tf.constant([0.5, 3.0], tf.float64)
        beta = tf.constant(2.0, tf.float64)
        draws = _draws(seed, alpha, beta)  # one compiled cluster
        # E[x] = alpha / beta: reparameterized gradients of the sample mean of the gammas.
        grads = tf.gradients(tf.reduce_sum(tf.reduce_mean(draws[7], 0)), [alpha, beta])
        with tf.Session() as sess:
            first, (ga, gb) = sess.run([draws, grads], {seed: [1, 2]})
            again = sess.run(draws, {seed: [1, 2]})
    np.testing.assert_allclose(ga, [0.5, 0.5], rtol=0.03)
    np.testing.assert_allclose(gb, -(0.5 + 3.0) / 4.0, rtol=0.03)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    (uni, nor, tn, ints, full, cat, binom, gam, poi, ptn, uni3, tn16) = first
    n, p = N, 1e-3  # fixed seeds: these either always pass or always fail
    assert uni.dtype == np.float32 and uni.min() >= -1 and uni.max() < 3
    assert stats.kstest(uni, stats.uniform(-1, 4).cdf).pvalue > p
    assert stats.kstest(uni3, stats.uniform(-1, 4).cdf).pvalue > p
    assert not np.array_equal(uni, uni3)  # ThreeFry: another stream for the same seed
    assert nor.dtype == np.float64
    assert stats.kstest(nor, stats.norm(2.0, 0.5).cdf).pvalue > p
    assert stats.kstest(tn, stats.truncnorm(-2, 2, loc=1.0, scale=2.0).cdf).pvalue > p
    assert tn16.dtype == np.float16 and np.abs(tn16).max() <= 2
    assert stats.kstest(tn16.astype(np.float64), stats.truncnorm(-2, 2).cdf).pvalue > p
    counts = np.bincount(ints - 3, minlength=6)
    assert ints.min() >= 3 and ints.max() < 9 and counts.size == 6
    assert stats.chisquare(counts).pvalue > p
    assert full.dtype == np.int32 and full.min() < -2 ** 30 and full.max() > 2 ** 30
    assert stats.chisquare(np.bincount(cat[0], minlength=3),
                           n * np.array([.2, .5, .3])).pvalue > p
    for j, (trials, prob) in enumerate([(5, 0.25), (40, 0.25)]):
        expected = stats.binom(trials, prob).pmf(np.arange(trials + 1)) * n
        observed = np.bincount(binom[:, j].astype(int), minlength=trials + 1)
        keep = expected > 5
        assert stats.chisquare(observed[keep], expected[keep] * observed[keep].sum()
                               / expected[keep].sum()).pvalue > p
    for j, a in enumerate([0.5, 3.0]):
        assert stats.kstest(gam[:, j], stats.gamma(a, scale=0.5).cdf).pvalue > p
    for j, lam in enumerate([0.7, 12.0]):
        observed = np.bincount(poi[:, j])
        expected = stats.poisson(lam).pmf(np.arange(observed.size)) * n
        keep = expected > 5
        assert stats.chisquare(observed[keep], expected[keep] * observed[keep].sum()
                               / expected[keep].sum()).pvalue > p
    for j, (mean, lo, hi) in enumerate([(0.0, -1.0, 3.0), (1.0, 0.5, 8.0)]):
        col = ptn[:, j]
        assert col.min() >= lo and col.max() <= hi
        dist = stats.truncnorm((lo - mean) / 2.0, (hi - mean) / 2.0, loc=mean, scale=2.0)
        assert stats.kstest(col, dist.cdf).pvalue > p


def test_fed_seeds_and_seed_dtypes_give_the_same_numbers():
    with tf.Graph().as_default():
        seed = tf.placeholder(tf.int32, [2])
        x = R.stateless_uniform([N], seed, -1.0, 3.0)  # compiled, not folded
        y = R.stateless_uniform([N], tf.constant([1, 2], tf.int32), -1.0, 3.0)  # folded
        z = R.stateless_uniform([N], [1, 2], -1.0, 3.0, alg=R.Algorithm.PHILOX)
        with tf.Session() as sess:
            run1 = sess.run([x, y, z], {seed: [1, 2]})
            run2 = sess.run(x, {seed: [1, 2]})
            other = sess.run(x, {seed: [1, 3]})
    reference = _run(lambda: R.stateless_uniform([N], [1, 2], -1.0, 3.0))  # int64 seed
    for got in run1 + [run2]:
        np.testing.assert_array_equal(got, reference)  # auto_select is Philox, as TF's CPU
    assert not np.array_equal(other, reference)


def test_op_types_dtypes_and_static_shapes():
    n = tf.placeholder(tf.int32, [])
    u = R.stateless_uniform(tf.stack([n, 3]), [1, 2], name="u")
    assert u.op.type == "Add" and u.op.name == "u" and u.shape.as_list() == [None, 3]
    assert u.op.inputs[0].op.inputs[0].op.type == "StatelessRandomUniform"
    assert u.op.inputs[0].op.inputs[0].op.inputs[1].dtype == tf.int64  # Tseed's default
    ops = {
        "StatelessRandomUniformInt": R.stateless_uniform([2], [1, 2], 0, 5, tf.int64),
        "StatelessRandomUniformFullInt": R.stateless_uniform([2], [1, 2], None, None, tf.int64),
        "StatelessRandomNormal": R.stateless_normal([2], [1, 2]).op.inputs[0].op.inputs[0],
        "StatelessTruncatedNormal":
            R.stateless_truncated_normal([2], [1, 2]).op.inputs[0].op.inputs[0],
        "StatelessRandomNormalV2":
            R.stateless_normal([2], [1, 2], alg="threefry").op.inputs[0].op.inputs[0],
        "StatelessMultinomial": R.stateless_multinomial([[0.0, 0.0]], 3, [1, 2]),
        "StatelessRandomBinomial": R.stateless_binomial([2], [1, 2], 3.0, 0.5),
        "StatelessRandomPoisson": R.stateless_poisson([2], [1, 2], 3.0),
        "StatelessParameterizedTruncatedNormal":
            R.stateless_parameterized_truncated_normal([2], [1, 2]),
        "StatelessShuffle": R.experimental.stateless_shuffle([1, 2], [1, 2]),
        "RandomIndexShuffle": tf.random_index_shuffle(3, [1, 2, 3], 9),
    }
    for op_type, t in ops.items():
        assert t.op.type == op_type, (op_type, t.op.type)
    g = R.stateless_gamma([4, 2], [1, 2], [1.0, 2.0])
    assert g.op.type == "Maximum" and g.shape.as_list() == [4, 2]
    assert g.op.inputs[1].op.inputs[0].op.type == "StatelessRandomGammaV2"
    assert ops["StatelessMultinomial"].dtype == tf.int64
    assert R.stateless_categorical([[0.0]], 3, [1, 2], dtype=tf.int32).dtype == tf.int32
    assert ops["StatelessRandomBinomial"].dtype == tf.int32
    assert R.stateless_poisson([2], [1, 2], 3.0, dtype=tf.float32).dtype == tf.float32
    assert R.stateless_uniform([2], [1, 2], dtype=tf.float16).dtype == tf.float16
    assert R.stateless_uniform([2], [1, 2], dtype=tf.bfloat16).dtype == tf.bfloat16
    assert R.split([1, 2], 4).shape.as_list() == [4, 2] and R.split([1, 2]).dtype == tf.int32
    f = R.fold_in(tf.constant([1, 2], tf.int64), tf.constant(3, tf.int64))
    assert f.shape.as_list() == [2] and f.dtype == tf.int64
    assert R.experimental.stateless_fold_in is R.fold_in
    assert R.experimental.stateless_split is R.split
    assert tf.get_seed is R.get_seed


def test_errors():
    with pytest.raises(ValueError, match="Dimension must be 2 but is 3"):
        R.stateless_normal([2], [1, 2, 3])
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        R.stateless_uniform([2], [[1, 2]])
    with pytest.raises(ValueError, match="minval` and `maxval` must be both None or not None"):
        R.stateless_uniform([2], [1, 2], maxval=3, minval=None, dtype=tf.int32)
    with pytest.raises(ValueError, match="Please don't use unsigned integers"):
        R.stateless_uniform([2], [1, 2], 0, 5, dtype=tf.uint32)
    with pytest.raises(ValueError, match="Argument `dtype` got invalid value"):
        R.stateless_uniform([2], [1, 2], dtype=tf.string)
    with pytest.raises(ValueError, match="Argument `alg` got unsupported string value"):
        R.stateless_normal([2], [1, 2], alg="mt19937")
    with pytest.raises(TypeError, match="Expected int32, got 0.0 of type 'float' instead"):
        R.stateless_normal([2], [1, 2], dtype=tf.int32)
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        R.stateless_uniform([2], [1, 2], [0], [3], dtype=tf.int32)
    with pytest.raises(ValueError, match="must end with broadcasted shape"):
        R.stateless_poisson([3, 2], [1, 2], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="Dimension must be 3 but is 2"):
        tf.random_index_shuffle(0, [1, 2], 5)
    seed = tf.placeholder(tf.int64, [None])
    lo = tf.placeholder(tf.int32, [])
    bad_seed = R.stateless_normal([2], seed)
    bad_range = R.stateless_uniform([2], [1, 2], lo, 3, dtype=tf.int32)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"seed must have shape "
                                                                 r"\[2\], not \[3\]"):
            sess.run(bad_seed, {seed: [1, 2, 3]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Need minval < maxval: 5 >= 3"):
            sess.run(bad_range, {lo: 5})
        assert set(sess.run(bad_range, {lo: 2}).tolist()) <= {2}


def test_shuffle_split_and_fold_in():
    x = np.arange(24).reshape(12, 2)

    def build():
        return [R.experimental.stateless_shuffle(x, [1, 2]),
                R.experimental.stateless_shuffle(x, [1, 3]),
                R.split([4, 5], 5), R.fold_in([4, 5], 9), R.fold_in([4, 5], 10)]
    a, b, split, f9, f10 = _run(build)
    assert sorted(map(tuple, a)) == sorted(map(tuple, x)) and not np.array_equal(a, b)
    assert len({tuple(r) for r in split}) == 5
    assert f9[1] == 9 and f10[1] == 10 and f9[0] == f10[0] == split[0, 0]


def test_index_shuffle_is_a_uniform_permutation():
    def build():
        outs = [R.experimental.index_shuffle(tf.range(n, dtype=tf.int64), [3, n], n - 1)
                for n in (1, 2, 10, 1000)]
        # One index under 4000 seeds: every position equally likely.
        seeds = np.stack([np.arange(4000), np.full(4000, 7)], 1)
        outs.append(R.experimental.index_shuffle(0, seeds, 6))
        outs.append(tf.random_index_shuffle(tf.constant([0, 1, 2], tf.uint32),
                                            tf.constant([5, 6, 7], tf.uint64),
                                            tf.constant(2, tf.uint32)))
        return outs
    *perms, positions, raw = _run(build)
    for n, perm in zip((1, 2, 10, 1000), perms):
        assert perm.dtype == np.int64 and sorted(perm) == list(range(n))
    assert not np.array_equal(perms[3], np.arange(1000))
    assert positions.shape == (4000,) and positions.min() >= 0 and positions.max() <= 6
    assert stats.chisquare(np.bincount(positions, minlength=7)).pvalue > 1e-3
    assert raw.dtype == np.uint32 and sorted(raw) == [0, 1, 2]
