"""tf.random.Generator (state in a variable, RngReadAndSkip + the key/counter records),
create_rng_state, the global generator, and tf.get_seed's TF1 seed rules."""

import numpy as np
import pytest
from scipy import stats

import tensorflux as tf

R = tf.random
N = 10000


def test_create_rng_state_chops_seeds_as_tf():
    np.testing.assert_array_equal(R.create_rng_state(1234, "philox"), [1234, 0, 0])
    np.testing.assert_array_equal(R.create_rng_state([12, 34], "threefry"), [12, 34])
    np.testing.assert_array_equal(R.create_rng_state(2 ** 64 + 5, R.Algorithm.PHILOX),
                                  [5, 1, 0])
    np.testing.assert_array_equal(R.create_rng_state([7], 1), [0, 0, 7])  # left padding
    np.testing.assert_array_equal(R.create_rng_state(2 ** 64 - 1, 2), [-1, 0])
    assert R.create_rng_state(3, "philox").dtype == np.int64
    with pytest.raises(ValueError, match="Argument `alg` got unsupported string value"):
        R.create_rng_state(1, "mt")
    with pytest.raises(ValueError, match="Unsupported algorithm id: 7"):
        R.create_rng_state(1, 7)
    assert R.experimental.create_rng_state is R.create_rng_state
    assert R.experimental.Generator is R.Generator
    assert R.experimental.Algorithm is R.Algorithm
    assert [a.value for a in R.Algorithm] == [1, 2, 3]


def _state_after(gen, fetches, sess):
    sess.run(fetches)
    return sess.run(gen.state)


def test_seeded_generator_repeats_in_every_session_and_advances_per_run():
    def program():
        g = R.Generator.from_seed(1234)
        return g, [g.normal([2, 3]), g.uniform([3])]

    with tf.Graph().as_default():
        g, draws = program()
        assert g.state.dtype.base_dtype == tf.int64 and g.algorithm == 1
        assert g.state.op.name == "StateVar"
        with tf.Session() as sess:
            sess.run(g.state.initializer)
            np.testing.assert_array_equal(sess.run(g.state), [1234, 0, 0])
            first = sess.run(draws)
            # TF's counter step: 256 per element drawn (6 + 3 here).
            np.testing.assert_array_equal(sess.run(g.state), [1234 + 9 * 256, 0, 0])
            second = sess.run(draws)
            only_normal = sess.run(draws[0])
    with tf.Graph().as_default():
        g2, draws2 = program()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            repeat = sess.run(draws2)
    for a, b in zip(first, repeat):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], second[0])
    assert not np.array_equal(second[0], only_normal)
    # Two draws in one run read successive states, so they differ.
    assert not np.array_equal(first[0][0], first[1])


def test_generator_distributions():
    with tf.Graph().as_default():
        g = R.Generator.from_seed([5, 6, 7])
        draws = [g.normal([N], 1.0, 2.0), g.uniform([N], -2.0, 2.0, dtype=tf.float64),
                 g.truncated_normal([N]), g.uniform([N], 0, 5, dtype=tf.int64),
                 g.uniform_full_int([N], dtype=tf.int32), g.uniform_full_int([4]),
                 g.binomial([N, 2], [10.0, 30.0], 0.4), g.make_seeds(3)]
        with tf.Session() as sess:
            sess.run(g.state.initializer)
            nor, uni, tn, ints, full, full64, binom, seeds = sess.run(draws)
    p = 1e-3
    assert stats.kstest(nor, stats.norm(1.0, 2.0).cdf).pvalue > p
    assert uni.dtype == np.float64 and stats.kstest(uni, stats.uniform(-2, 4).cdf).pvalue > p
    assert stats.kstest(tn, stats.truncnorm(-2, 2).cdf).pvalue > p
    assert ints.dtype == np.int64 and stats.chisquare(np.bincount(ints, minlength=5)).pvalue > p
    assert full.dtype == np.int32 and full.min() < -2 ** 30 and full.max() > 2 ** 30
    assert full64.dtype == np.uint64
    assert binom.dtype == np.int32 and binom.shape == (N, 2)
    for j, trials in enumerate([10, 30]):
        assert abs(binom[:, j].mean() - 0.4 * trials) < 4 * np.sqrt(0.24 * trials / N)
        assert abs(binom[:, j].var() / (0.24 * trials) - 1) < 0.06
    assert seeds.shape == (2, 3) and seeds.dtype == np.int64
    assert (seeds[1] == 0).all() and len(set(seeds[0])) == 3


def test_threefry_reset_skip_split_and_key_counter():
    with tf.Graph().as_default():
        g = R.Generator.from_seed(9, alg="threefry")
        assert g.algorithm == 2 and g.state.shape.as_list() == [2]
        x = g.normal([4])
        skip = g.skip(10)
        reset = g.reset_from_seed(9)
        children = g.split(2)
        y = [c.normal([4]) for c in children]
        h = R.Generator.from_key_counter(key=0, counter=[9], alg="threefry")
        same = h.normal([4])
        copy = R.Generator(copy_from=g)
        with tf.Session() as sess:
            sess.run([g.state.initializer, h.state.initializer])
            a = sess.run(x)
            # A generator's skips run in creation order: fetching `skip` runs x's skip
            # first (4 more elements), then its own 10.
            before = sess.run(skip)
            np.testing.assert_array_equal(before, [9 + 8 * 256, 0, 0])  # padded to [3]
            np.testing.assert_array_equal(sess.run(g.state), [9 + 18 * 256, 0])
            sess.run(reset)
            np.testing.assert_array_equal(sess.run(g.state), [9, 0])  # counter 9, key 0
            b = sess.run(x)
            np.testing.assert_array_equal(a, sess.run(same))
            sess.run([c.state.initializer for c in children])
            c0, c1 = sess.run(y)
            sess.run(copy.state.initializer)
            np.testing.assert_array_equal(sess.run(copy.state), sess.run(g.state))
    np.testing.assert_array_equal(a, b)  # reset_from_seed restarts the stream
    assert not np.array_equal(c0, c1) and not np.array_equal(c0, a)
    assert g.key.dtype == tf.int64
    with pytest.raises(ValueError):
        R.Generator(state=[1, 2, 3], alg="threefry")


def test_global_generator():
    with tf.Graph().as_default():
        g = R.get_global_generator()
        assert R.get_global_generator() is g
        assert R.experimental.get_global_generator is R.get_global_generator
        x = g.normal([3])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(x).shape == (3,)
        mine = R.Generator.from_seed(1)
        R.set_global_generator(mine)
        assert R.get_global_generator() is mine
    with tf.Graph().as_default():  # a new graph gets its own global generator
        assert R.get_global_generator() is not mine
        a = R.Generator.from_non_deterministic_state()
        b = R.Generator.from_non_deterministic_state()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert not np.array_equal(*sess.run([a.state, b.state]))


def test_get_seed_follows_tf1_rules():
    with tf.Graph().as_default() as graph:
        assert tf.get_seed(None) == (None, None)
        assert tf.get_seed(5) == (87654321, 5)  # TF's DEFAULT_GRAPH_SEED
        tf.set_random_seed(3)
        tf.constant(1.0)
        tf.constant(2.0)
        assert tf.get_seed(None) == (3, len(graph.get_operations()))
        assert tf.get_seed(2 ** 31 + 6) == (3, 7)  # seeds are kept in int32 range
        graph.seed = 0
        assert tf.get_seed(0) == (0, 2 ** 31 - 1)  # (0, 0) would mean "unseeded"
    assert R.get_seed is tf.get_seed
