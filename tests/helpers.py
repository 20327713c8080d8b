"""Small helpers shared by test modules."""

import re

import pytest

import tensorflux as tf


def run(fetches, feeds=None):
    """Runs `fetches` in a new Session on the default graph."""
    with tf.Session() as sess:
        return sess.run(fetches, feeds)


def raises_at_run(fetch, feeds, message):
    """Running `fetch` raises InvalidArgumentError with `message` (a TF kernel's error)."""
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(message)):
        run(fetch, feeds)
