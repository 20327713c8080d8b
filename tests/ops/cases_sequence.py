"""NumPy-checked cases for sequence ops (ReverseSequence)."""

import numpy as np

import tensorflux as tf
from tests.ops.harness import Case


def np_reverse_sequence(x, lengths, seq_axis, batch_axis):
    out = np.array(x, copy=True)
    for b, n in enumerate(lengths):
        src = [slice(None)] * x.ndim
        src[batch_axis], src[seq_axis] = b, slice(0, int(n))
        dst = list(src)
        dst[seq_axis] = slice(int(n) - 1, None, -1) if n > 0 else slice(0, 0)
        out[tuple(src)] = x[tuple(dst)]
    return out


_LENGTHS = np.array([3, 0, 5, 1], np.int32)

CASES = [
    Case("ReverseSequence",
         lambda x: tf.reverse_sequence(x, _LENGTHS, seq_axis=1, batch_axis=0),
         lambda x: np_reverse_sequence(x, _LENGTHS, 1, 0), [((4, 5, 2),)],
         (np.float32, np.float64, np.int32)),
    Case("ReverseSequence",
         lambda x: tf.reverse_sequence(x, tf.constant(_LENGTHS, tf.int64), seq_axis=0,
                                       batch_axis=2),
         lambda x: np_reverse_sequence(x, _LENGTHS, 0, 2), [((5, 3, 4),)],
         name="ReverseSequence_time_major"),
]
