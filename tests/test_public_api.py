import subprocess
import sys

import numpy as np

import tensorflux as tf
import tensorflux.compat.v1 as tf1


def test_compat_v1_is_the_same_surface():
    assert tf1.constant is tf.constant and tf1.Session is tf.Session
    assert set(tf.__all__) <= set(dir(tf1))
    assert tf.compat.v1.placeholder is tf.placeholder


def test_x64_is_enabled():
    with tf.Session() as sess:
        got = sess.run(tf.constant(np.array([2 ** 40], np.int64)) + 1)
    assert got.dtype == np.int64 and got[0] == 2 ** 40 + 1


def test_example_prints_tf1_output():
    out = subprocess.run([sys.executable, "examples/classic.py"], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert out[0] == 'Tensor("add:0", shape=(2,), dtype=int32)'
    assert out[1] == "[2 4 6 8]"


def test_math_and_random_namespaces():
    assert tf.math.add is tf.add and tf.math.reduce_sum is tf.reduce_sum
    assert tf.math.log_sigmoid is not None and tf.math.top_k is tf.nn.top_k
    tf.random.set_random_seed(3)
    draws = tf.random.normal([1000], mean=1.0)
    labels = tf.random.categorical(tf.constant([[0.0, 10.0]]), 5)
    with tf.Session() as sess:
        values, picked = sess.run([draws, labels])
    assert abs(values.mean() - 1.0) < 0.15
    assert picked.shape == (1, 5) and (picked == 1).all()  # class 1 has ~all the mass
