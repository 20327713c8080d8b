"""Helpers shared by the feature-column tests."""

import numpy as np

import tensorflux as tf


def sparse(rows, dtype=None, width=None):
    """Row b of the SparseTensor holds rows[b] (TF's test idiom); `width` columns, or as
    many as the longest row."""
    indices = [[b, c] for b, row in enumerate(rows) for c in range(len(row))]
    values = [v for row in rows for v in row]
    width = width or max(len(r) for r in rows)
    return tf.SparseTensor(np.array(indices, np.int64).reshape(-1, 2),
                           tf.constant(values, dtype), [len(rows), width])


def run_init(fetches):
    """Runs `fetches` after initializing the graph's variables and tables."""
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        return sess.run(fetches)
