"""A run on an accelerator starts the host copies it will wait for (check flags, fetched
values) together, right after the run is enqueued (Cluster.host_copies).

CI has no GPU, so the cluster's device is replaced by a stand-in that says "gpu" after
the first run (the executable is built by then, and running reads the platform only to
decide this) and ArrayImpl.copy_to_host_async records what it was asked to copy."""

from types import SimpleNamespace

import numpy as np
import pytest
from jax._src import array as jax_array

import tensorflux as tf


def _training_step():
    """Sparse cross-entropy (a run-time label check) + SGD; fetches the loss."""
    logits_init = np.array([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0]], np.float32)
    graph = tf.Graph()
    with graph.as_default():
        logits = tf.Variable(logits_init, name="logits")
        labels = tf.placeholder(tf.int64, [2], name="labels")
        per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                     logits=logits)
        loss = tf.reduce_mean(per_example)
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        init = tf.global_variables_initializer()
    return graph, logits_init, labels, loss, train, init


def _expected_loss(logits, labels):
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -log_softmax[np.arange(len(labels)), labels].mean()


@pytest.fixture
def recorded(monkeypatch):
    """Shapes and dtypes of the arrays whose host copy was started, in order."""
    started = []
    original = jax_array.ArrayImpl.copy_to_host_async

    def record(self):
        started.append((self.shape, np.dtype(self.dtype)))
        return original(self)

    monkeypatch.setattr(jax_array.ArrayImpl, "copy_to_host_async", record)
    return started


def _clusters(sess):
    return [c for e in sess._executables.values() for c in e.clusters]


def test_accelerator_run_starts_the_flag_and_fetch_copies(recorded):
    graph, logits_init, labels, loss, train, init = _training_step()
    feed = {labels: np.array([1, 2])}
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        first, _ = sess.run([loss, train], feed)
        assert recorded == []  # on a CPU nothing is copied ahead
        (cluster,) = [c for c in _clusters(sess) if c.fetched]
        cluster.device = SimpleNamespace(platform="gpu")
        second, _ = sess.run([loss, train], feed)
    np.testing.assert_allclose(first, _expected_loss(logits_init, [1, 2]), rtol=1e-6)
    assert second < first  # the step trained as before
    # The label check's flag, then the one fetched value (the loss); not the variable's
    # new value, which stays on the device.
    assert recorded == [((), np.dtype(bool)), ((), np.dtype(np.float32))]


def test_a_failed_check_still_fails_the_run(recorded):
    graph, _, labels, loss, train, init = _training_step()
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        sess.run([loss, train], {labels: np.array([0, 0])})
        for cluster in _clusters(sess):
            cluster.device = SimpleNamespace(platform="gpu")
        before = sess.run(graph.get_tensor_by_name("logits:0"))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Received a label value of 7 which is outside the valid "
                                 r"range of \[0, 3\)"):
            sess.run([loss, train], {labels: np.array([1, 7])})
        after = sess.run(graph.get_tensor_by_name("logits:0"))
    np.testing.assert_array_equal(after, before)  # the failed step wrote nothing
    assert ((), np.dtype(bool)) in recorded


def test_without_fetches_only_the_flags_are_copied(recorded):
    graph, _, labels, _, train, init = _training_step()
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        sess.run(train, {labels: np.array([0, 1])})
        for cluster in _clusters(sess):
            cluster.device = SimpleNamespace(platform="gpu")
        sess.run(train, {labels: np.array([0, 1])})
    assert recorded == [((), np.dtype(bool))]
