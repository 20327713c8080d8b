"""NumPy-checked case for GatherTree (tf.contrib.seq2seq.gather_tree): beams followed
back through their parents with plain loops, as TF's CPU kernel describes it."""

import numpy as np

import tensorflux as tf
from tests.ops.harness import Case, ints

LENGTHS = np.array([4, 2, 0], np.int32)
END = 9


def np_gather_tree(step_ids, parent_ids, lengths=LENGTHS, end=END):
    max_time, batch, beams = step_ids.shape
    out = np.full_like(step_ids, end)
    for b in range(batch):
        length = min(max_time, int(lengths[b]))
        for w in range(beams):
            if length <= 0:
                continue
            out[length - 1, b, w] = step_ids[length - 1, b, w]
            parent = parent_ids[length - 1, b, w]
            for t in range(length - 2, -1, -1):
                out[t, b, w] = step_ids[t, b, parent]
                parent = parent_ids[t, b, parent]
            finished = False
            for t in range(length):  # after the first end token, only end tokens
                if finished:
                    out[t, b, w] = end
                elif out[t, b, w] == end:
                    finished = True
    return out


CASES = [
    Case("GatherTree",
         lambda s, p: tf.contrib.seq2seq.gather_tree(s, p, LENGTHS, END),
         np_gather_tree, [((5, 3, 3), (5, 3, 3))], ((np.int32, np.int32),),
         gen=[ints(0, 9), ints(0, 2)], grad=False),
]
