"""Small helpers shared by test modules."""

import tensorflux as tf


def run(fetches, feeds=None):
    """Runs `fetches` in a new Session on the default graph."""
    with tf.Session() as sess:
        return sess.run(fetches, feeds)
