"""NumPy-checked cases for space/depth/batch moves and patch extraction (array family).

Expectations are explicit index loops following TF's documented layouts, not the
reshape/transpose recipes the lowerings use.
"""

import itertools

import numpy as np

import tensorflux as tf
from tests.ops.harness import Case

F = (np.float32,)
FI = (np.float32, np.int32)


def np_space_to_depth(x, bs, nchw=False):
    x = x.transpose(0, 2, 3, 1) if nchw else x
    n, h, w, c = x.shape
    out = np.zeros((n, h // bs, w // bs, bs * bs * c), x.dtype)
    for b, i, j, di, dj, k in itertools.product(range(n), range(h // bs), range(w // bs),
                                                range(bs), range(bs), range(c)):
        out[b, i, j, (di * bs + dj) * c + k] = x[b, i * bs + di, j * bs + dj, k]
    return out.transpose(0, 3, 1, 2) if nchw else out


def np_depth_to_space(x, bs, nchw=False):
    x = x.transpose(0, 2, 3, 1) if nchw else x
    n, h, w, c = x.shape
    oc = c // (bs * bs)
    out = np.zeros((n, h * bs, w * bs, oc), x.dtype)
    for b, i, j, di, dj, k in itertools.product(range(n), range(h), range(w), range(bs),
                                                range(bs), range(oc)):
        out[b, i * bs + di, j * bs + dj, k] = x[b, i, j, (di * bs + dj) * oc + k]
    return out.transpose(0, 3, 1, 2) if nchw else out


def np_space_to_batch(x, block, pads):
    """output[(offsets) * n + b, pos...] = padded[b, pos * block + offsets, ...], offsets
    row-major over the block (TF's documented order)."""
    m = len(block)
    padded = np.pad(x, [(0, 0)] + list(pads) + [(0, 0)] * (x.ndim - m - 1))
    n = x.shape[0]
    grid = [padded.shape[i + 1] // block[i] for i in range(m)]
    out = np.zeros((n * int(np.prod(block)), *grid, *x.shape[m + 1:]), x.dtype)
    for k, offsets in enumerate(itertools.product(*[range(b) for b in block])):
        for b in range(n):
            for pos in itertools.product(*[range(g) for g in grid]):
                src = tuple(p * bl + o for p, bl, o in zip(pos, block, offsets))
                out[(k * n + b,) + pos] = padded[(b,) + src]
    return out


def np_batch_to_space(x, block, crops):
    m = len(block)
    n = x.shape[0] // int(np.prod(block))
    grid = x.shape[1:m + 1]
    full = np.zeros((n, *[g * b for g, b in zip(grid, block)], *x.shape[m + 1:]), x.dtype)
    for k, offsets in enumerate(itertools.product(*[range(b) for b in block])):
        for b in range(n):
            for pos in itertools.product(*[range(g) for g in grid]):
                dst = tuple(p * bl + o for p, bl, o in zip(pos, block, offsets))
                full[(b,) + dst] = x[(k * n + b,) + pos]
    index = (slice(None),) + tuple(slice(lo, full.shape[i + 1] - hi)
                                   for i, (lo, hi) in enumerate(crops))
    return full[index]


def np_patches(x, ks, strides, rates, padding):
    """Windows of x ([b, spatial..., c]) flattened as (window position..., channel)."""
    spatial = x.shape[1:-1]
    eff = [(k - 1) * r + 1 for k, r in zip(ks, rates)]
    if padding == "VALID":
        outs = [(s - e) // st + 1 for s, e, st in zip(spatial, eff, strides)]
        before = [0] * len(spatial)
    else:
        outs = [-(-s // st) for s, st in zip(spatial, strides)]
        before = [max((o - 1) * st + e - s, 0) // 2
                  for o, st, e, s in zip(outs, strides, eff, spatial)]
    out = np.zeros((x.shape[0], *outs, int(np.prod(ks)) * x.shape[-1]), x.dtype)
    c = x.shape[-1]
    for pos in itertools.product(*[range(o) for o in outs]):
        for w, offs in enumerate(itertools.product(*[range(k) for k in ks])):
            src = [p * st + o * r - bf for p, st, o, r, bf in zip(pos, strides, offs, rates,
                                                                  before)]
            if all(0 <= s < n for s, n in zip(src, spatial)):
                out[(slice(None),) + pos + (slice(w * c, (w + 1) * c),)] = \
                    x[(slice(None),) + tuple(src) + (slice(None),)]
    return out


CASES = [
    Case("SpaceToDepth", lambda x: tf.space_to_depth(x, 2), lambda x: np_space_to_depth(x, 2),
         [((2, 4, 6, 3),)], FI),
    Case("SpaceToDepth", lambda x: tf.space_to_depth(x, 2, data_format="NCHW"),
         lambda x: np_space_to_depth(x, 2, nchw=True), [((1, 2, 4, 2),)], F,
         name="SpaceToDepth(NCHW)"),
    Case("DepthToSpace", lambda x: tf.nn.depth_to_space(x, 2),
         lambda x: np_depth_to_space(x, 2), [((2, 2, 3, 8),)], FI),
    Case("DepthToSpace", lambda x: tf.depth_to_space(x, 2, data_format="NCHW"),
         lambda x: np_depth_to_space(x, 2, nchw=True), [((1, 8, 2, 3),)], F,
         name="DepthToSpace(NCHW)"),
    Case("SpaceToBatchND", lambda x: tf.space_to_batch_nd(x, [2, 3], [[1, 1], [0, 3]]),
         lambda x: np_space_to_batch(x, [2, 3], [(1, 1), (0, 3)]), [((2, 4, 3, 2),)], FI),
    Case("SpaceToBatchND", lambda x: tf.space_to_batch(x, [[0, 1], [1, 0]], block_size=2),
         lambda x: np_space_to_batch(x, [2, 2], [(0, 1), (1, 0)]), [((1, 3, 3, 1),)], F,
         name="SpaceToBatchND(tf.space_to_batch)"),
    Case("SpaceToBatchND", lambda x: tf.manip.space_to_batch_nd(x, [2], [[1, 0]]),
         lambda x: np_space_to_batch(x, [2], [(1, 0)]), [((3, 5, 2),)], F,
         name="SpaceToBatchND(1 block dim, tf.manip)"),
    Case("BatchToSpaceND", lambda x: tf.batch_to_space_nd(x, [2, 3], [[1, 1], [0, 2]]),
         lambda x: np_batch_to_space(x, [2, 3], [(1, 1), (0, 2)]), [((12, 2, 2, 3),)], FI),
    Case("BatchToSpaceND", lambda x: tf.batch_to_space(x, [[0, 1], [1, 0]], 2),
         lambda x: np_batch_to_space(x, [2, 2], [(0, 1), (1, 0)]), [((4, 2, 2, 1),)], F,
         name="BatchToSpaceND(tf.batch_to_space)"),
    Case("ExtractImagePatches",
         lambda x: tf.extract_image_patches(x, [1, 2, 3, 1], [1, 2, 1, 1], [1, 1, 2, 1],
                                            "SAME"),
         lambda x: np_patches(x, [2, 3], [2, 1], [1, 2], "SAME"), [((1, 4, 5, 2),)], FI),
    Case("ExtractImagePatches",
         lambda x: tf.image.extract_patches(x, [1, 3, 2, 1], [1, 2, 3, 1], [1, 1, 1, 1],
                                            "VALID"),
         lambda x: np_patches(x, [3, 2], [2, 3], [1, 1], "VALID"), [((1, 5, 7, 2),)], F,
         name="ExtractImagePatches(VALID, tf.image.extract_patches)"),
    Case("ExtractVolumePatches",
         lambda x: tf.extract_volume_patches(x, [1, 2, 2, 3, 1], [1, 2, 1, 2, 1], "SAME"),
         lambda x: np_patches(x, [2, 2, 3], [2, 1, 2], [1, 1, 1], "SAME"),
         [((1, 3, 3, 4, 1),)], F),
]
