"""all_candidate_sampler, fixed_unigram_candidate_sampler and
learned_unigram_candidate_sampler: samples and expected counts against the samplers'
distributions written out here."""

import numpy as np
import pytest
from scipy import stats

import tensorflux as tf

R = tf.random


def test_samplers_are_shared_with_tf_nn():
    for name in ("uniform_candidate_sampler", "log_uniform_candidate_sampler",
                 "all_candidate_sampler", "fixed_unigram_candidate_sampler",
                 "learned_unigram_candidate_sampler"):
        assert getattr(R, name) is getattr(tf.nn, name)


def test_all_candidate_sampler():
    true = tf.constant([[3, 1], [0, 2]], tf.int64)
    s = R.all_candidate_sampler(true, 2, 5, True, name="all")
    assert s.sampled_candidates.op.type == "AllCandidateSampler"
    assert s.sampled_candidates.op.name == "all"
    assert [t.shape.as_list() for t in s] == [[5], [2, 2], [5]]
    with tf.Session() as sess:
        sampled, true_count, sampled_count = sess.run(s)
    np.testing.assert_array_equal(sampled, np.arange(5))
    assert sampled.dtype == np.int64 and true_count.dtype == np.float32
    np.testing.assert_array_equal(true_count, np.ones([2, 2]))
    np.testing.assert_array_equal(sampled_count, np.ones(5))
    with pytest.raises(ValueError, match="true_classes must have num_true columns"):
        R.all_candidate_sampler(true, 3, 5, True)


def _expected_unique(p, num_sampled, num_tries):
    return -np.expm1(num_tries * np.log1p(-p))


def test_fixed_unigram_from_unigrams(tmp_path):
    unigrams = [1.0, 2.0, 3.0, 4.0, 10.0]
    p = np.array(unigrams) ** 0.5 / np.sum(np.array(unigrams) ** 0.5)
    true = tf.constant([[0], [4]], tf.int64)
    many = R.fixed_unigram_candidate_sampler(true, 1, 20000, False, 5, unigrams=unigrams,
                                             distortion=0.5, seed=1)
    unique = R.fixed_unigram_candidate_sampler(true, 1, 4, True, 5, unigrams=unigrams,
                                               distortion=0.5, seed=2)
    vocab = tmp_path / "vocab.csv"
    vocab.write_text("the,40\nof,30\nand,20\nto,10\n")
    # Shard 1 of 2 keeps the odd ids: reserved id 1 (weight 0). TF's kernel then numbers
    # the file's words from the shard's weight count (1), not from num_reserved_ids, so it
    # keeps "the" (id 1, 40) and "and" (id 3, 20).
    sharded = R.fixed_unigram_candidate_sampler(
        tf.constant([[1], [2]], tf.int64), 1, 20000, False, 3, vocab_file=str(vocab),
        num_reserved_ids=2, num_shards=2, shard=1, seed=3)
    assert many.sampled_candidates.op.type == "FixedUnigramCandidateSampler"
    with tf.Session() as sess:
        m, u, sh = sess.run([many, unique, sharded])
    counts = np.bincount(m.sampled_candidates, minlength=5)
    assert stats.chisquare(counts, p * 20000).pvalue > 1e-3
    np.testing.assert_allclose(m.true_expected_count[:, 0], p[[0, 4]] * 20000, rtol=1e-5)
    np.testing.assert_allclose(m.sampled_expected_count, p[m.sampled_candidates] * 20000,
                               rtol=1e-5)
    assert len(set(u.sampled_candidates)) == 4
    # With unique=True the expected count is 1 - (1 - p) ** tries for the number of draws
    # the batch took (TF's formula); when no draw was rejected it is p * num_sampled.
    ps = p[u.sampled_candidates]
    least = np.argmin(ps)
    tries = np.log1p(-np.float64(u.sampled_expected_count[least])) / np.log1p(-ps[least])
    if np.allclose(u.sampled_expected_count, 4 * ps, rtol=1e-5):
        np.testing.assert_allclose(u.true_expected_count[:, 0], 4 * p[[0, 4]], rtol=1e-5)
    else:
        assert tries > 4
        np.testing.assert_allclose(u.sampled_expected_count,
                                   _expected_unique(ps, 4, tries), rtol=1e-4)
        np.testing.assert_allclose(u.true_expected_count[:, 0],
                                   _expected_unique(p[[0, 4]], 4, tries), rtol=1e-4)
    q = np.array([0.0, 40.0, 20.0]) / 60.0
    sampled = sh.sampled_candidates
    assert sampled.min() >= 1 and sampled.max() <= 2  # shard-local ids; 0 is reserved
    assert stats.chisquare(np.bincount(sampled, minlength=3)[1:], q[1:] * 20000).pvalue > 1e-3
    np.testing.assert_allclose(sh.true_expected_count[:, 0], q[[1, 2]] * 20000, rtol=1e-5)


def test_fixed_unigram_errors(tmp_path):
    true = tf.constant([[0]], tf.int64)
    bad_range = R.fixed_unigram_candidate_sampler(true, 1, 2, False, 4, unigrams=[1.0, 2.0])
    neither = R.fixed_unigram_candidate_sampler(true, 1, 2, False, 4)
    both = R.fixed_unigram_candidate_sampler(true, 1, 2, False, 1, unigrams=[1.0],
                                             vocab_file="x")
    missing = R.fixed_unigram_candidate_sampler(true, 1, 2, False, 1,
                                                vocab_file=str(tmp_path / "none.txt"))
    out_of_range = R.fixed_unigram_candidate_sampler(tf.constant([[7]], tf.int64), 1, 2,
                                                     False, 2, unigrams=[1.0, 1.0])
    with tf.Session() as sess:
        for t, error, message in [
                (bad_range, tf.errors.InvalidArgumentError,
                 "range is 4 must be equal to weights size  2"),
                (neither, tf.errors.InvalidArgumentError,
                 "Must provide either vocab_file or unigrams"),
                (both, tf.errors.InvalidArgumentError,
                 "Must only provide one of vocab_file and unigrams"),
                (missing, tf.errors.NotFoundError, "none.txt"),
                (out_of_range, tf.errors.InvalidArgumentError,
                 r"`true_candidate` out of range \[0, 2\), received 7")]:
            with pytest.raises(error, match=message):
                sess.run(t.sampled_candidates)
    with pytest.raises(ValueError, match="Sampler's range is too small"):
        R.fixed_unigram_candidate_sampler(true, 1, 3, True, 2, unigrams=[1.0, 1.0])


def test_learned_unigram_learns_from_true_classes():
    true = tf.placeholder(tf.int64, [None, 2])
    s = R.learned_unigram_candidate_sampler(true, 2, 3000, False, 4, seed=5)
    u = R.learned_unigram_candidate_sampler(true, 2, 3, True, 4, seed=5, name="unique")
    assert s.sampled_candidates.op.type == "LearnedUnigramCandidateSampler"
    assert s.true_expected_count.shape.as_list() == [None, 2]
    batch = np.array([[1, 1], [1, 3]])
    with tf.Session() as sess:
        first = sess.run(s, {true: batch})
        second = sess.run(s, {true: batch})
        uniq = sess.run(u, {true: batch})
        with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
            sess.run(s, {true: [[0, 4]]})
    with tf.Session() as sess:  # a new Session starts from weight 1 for every class
        again = sess.run(s, {true: batch})
    # Every class starts with weight 1; each true class seen adds 1 after the draw.
    p1 = np.full(4, 0.25)
    p2 = np.array([1.0, 4.0, 1.0, 2.0]) / 8.0
    np.testing.assert_allclose(first.true_expected_count, p1[batch] * 3000, rtol=1e-5)
    np.testing.assert_allclose(second.true_expected_count, p2[batch] * 3000, rtol=1e-5)
    assert stats.chisquare(np.bincount(first.sampled_candidates, minlength=4),
                           p1 * 3000).pvalue > 1e-3
    assert stats.chisquare(np.bincount(second.sampled_candidates, minlength=4),
                           p2 * 3000).pvalue > 1e-3
    np.testing.assert_array_equal(first.sampled_candidates, again.sampled_candidates)
    assert len(set(uniq.sampled_candidates)) == 3 and uniq.sampled_candidates.max() < 4
    with pytest.raises(ValueError, match="range_max:4294967296 is too large"):
        R.learned_unigram_candidate_sampler(true, 2, 3, True, 2 ** 32)
