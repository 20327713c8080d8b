"""NumPy-checked cases for structural array ops (reshape, transpose, concat, pad...)."""

import numpy as np

import tensorflux as tf
from tensorflux._src.ops.array.sharding import sharding_constraint
from tensorflux._src.ops.op_builder import apply_op
from tests.ops.harness import Case

F = (np.float32,)
FI = (np.float32, np.int32)
BOOL_FLOAT = [(np.bool_, np.float32, np.float32)]


def _split_sizes(x):
    return np.split(x, [1, 3], axis=0)  # sizes [1, -1, 2] of a length-5 axis


def permutation(rng, shape, dtype):
    return rng.permutation(shape[0]).astype(dtype)


def np_mirror_pad_grad(g, paddings, mode):
    """The adjoint of np.pad(x, paddings, mode): each padded element adds to its source."""
    out = g
    for axis, (lo, hi) in enumerate(paddings):
        n = out.shape[axis] - lo - hi
        source = np.pad(np.arange(n), (lo, hi), mode=mode)  # padded position -> x index
        folded = np.zeros(out.shape[:axis] + (n,) + out.shape[axis + 1:], out.dtype)
        for j, src in enumerate(source):
            folded[(slice(None),) * axis + (src,)] += out[(slice(None),) * axis + (j,)]
        out = folded
    return out


def mirror_pad_grad(paddings, mode):
    return lambda g: apply_op("MirrorPadGrad", input=g, paddings=paddings, mode=mode)


CASES = [
    # -- existing structural ops ----------------------------------------------------------
    Case("Identity", tf.identity, lambda x: x, [((2, 3),)], FI + (np.bool_,)),
    Case("Shape", tf.shape, lambda x: np.array(x.shape, np.int32), [((2, 3),), ((4,),)], F),
    Case("Shape", lambda x: tf.shape(x, out_type=tf.int64),
         lambda x: np.array(x.shape, np.int64), [((2, 3, 1),)], F, name="Shape(int64)"),
    Case("Size", tf.size, lambda x: np.array(x.size, np.int32), [((2, 3),)], F),
    Case("Rank", tf.rank, lambda x: np.array(x.ndim, np.int32), [((2, 3),), ((),)], F),
    Case("Pack", lambda x, y: tf.stack([x, y], axis=1), lambda x, y: np.stack([x, y], 1),
         [((2, 3), (2, 3))], FI),
    Case("Pack", lambda x, y, z: tf.stack([x, y, z], axis=-1),
         lambda x, y, z: np.stack([x, y, z], -1), [((2,), (2,), (2,))], F, name="Pack(axis=-1)"),
    Case("Unpack", lambda x: tf.unstack(x, num=3, axis=1),
         lambda x: [x[:, i] for i in range(3)], [((2, 3, 4),)], FI),
    # Only some outputs used: the others' gradients are zeros.
    Case("Unpack", lambda x: tf.unstack(x, num=3, axis=-1)[::2], lambda x: [x[..., 0], x[..., 2]],
         [((2, 3),)], F, name="Unpack(axis=-1, some outputs)"),
    # -- reshaping --------------------------------------------------------------------------
    Case("Reshape", lambda x: tf.reshape(x, [-1, 2]), lambda x: x.reshape(-1, 2),
         [((2, 3),), ((4, 1, 2),)], FI + (np.bool_,)),
    Case("Reshape", lambda x: tf.reshape(x, tf.stack([tf.shape(x)[0], -1])),
         lambda x: x.reshape(x.shape[0], -1), [((2, 3, 4),)], F, name="Reshape(shape of x)"),
    Case("Reshape", lambda x: tf.reshape(x, []), lambda x: x.reshape(()), [((1, 1),)], F,
         name="Reshape(scalar)"),
    Case("Transpose", tf.transpose, lambda x: x.T, [((2, 3),), ((2, 3, 4),)], FI),
    Case("Transpose", lambda x: tf.transpose(x, [1, 2, 0]), lambda x: x.transpose(1, 2, 0),
         [((2, 3, 4),)], F, name="Transpose(perm)"),
    Case("Transpose", tf.matrix_transpose, lambda x: np.swapaxes(x, -1, -2),
         [((2, 3, 4),)], F, name="matrix_transpose"),
    Case("Transpose", lambda x: tf.transpose(x, [2, 0, 3, 1]),
         lambda x: x.transpose(2, 0, 3, 1), [((2, 3, 4, 1),)], F, name="Transpose(rank 4)"),
    Case("InvertPermutation", tf.invert_permutation, lambda x: np.argsort(x).astype(x.dtype),
         [((5,),), ((1,),)], (np.int32, np.int64), gen=permutation),
    Case("ConjugateTranspose", lambda x: tf.transpose(x, conjugate=True),
         lambda x: np.conj(x.T), [((2, 3),)], (np.complex64,)),
    Case("ExpandDims", lambda x: tf.expand_dims(x, -1), lambda x: x[..., None],
         [((2, 3),), ((),)], FI),
    Case("ExpandDims", lambda x: tf.expand_dims(x, axis=1), lambda x: x[:, None],
         [((2, 3),)], F, name="ExpandDims(1)"),
    Case("Squeeze", lambda x: tf.squeeze(x, axis=[1, -1]), lambda x: x.reshape(2, 3),
         [((2, 1, 3, 1),)], FI),
    Case("Squeeze", tf.squeeze, np.squeeze, [((1, 2, 1, 3),)], F, name="Squeeze(all)"),
    # -- joining and splitting ----------------------------------------------------------
    Case("ConcatV2", lambda x, y: tf.concat([x, y], 1), lambda x, y: np.concatenate([x, y], 1),
         [((2, 3), (2, 4))], FI),
    Case("ConcatV2", lambda x, y, z: tf.concat([x, y, z], -2),
         lambda x, y, z: np.concatenate([x, y, z], -2), [((1, 2), (3, 2), (2, 2))], F,
         name="ConcatV2(3 inputs)"),
    Case("ConcatV2", lambda x, y: tf.concat([x, y], tf.constant(-1, tf.int64)),
         lambda x, y: np.concatenate([x, y], -1), [((2, 1, 3), (2, 1, 2))], F,
         name="ConcatV2(int64 axis)"),
    Case("Split", lambda x: tf.split(x, 3, axis=1), lambda x: np.split(x, 3, 1),
         [((2, 6),)], FI),
    Case("Split", lambda x: tf.split(x, 2, axis=-1)[1], lambda x: np.split(x, 2, -1)[1],
         [((3, 4),)], F, name="Split(one output used)"),
    Case("SplitV", lambda x: tf.split(x, [1, -1, 2], axis=0), _split_sizes, [((5, 2),)], F),
    Case("SplitV", lambda x: tf.split(x, [2, 1], axis=1)[0], lambda x: x[:, :2], [((3, 3),)], F,
         name="SplitV(one output used)"),
    Case("Tile", lambda x: tf.tile(x, [2, 1, 3]), lambda x: np.tile(x, [2, 1, 3]),
         [((2, 1, 3),)], FI),
    Case("Tile", lambda x: tf.tile(x, tf.constant([3, 2], tf.int64)),
         lambda x: np.tile(x, [3, 2]), [((2, 2),)], F, name="Tile(int64 multiples)"),
    Case("Pad", lambda x: tf.pad(x, [[1, 0], [2, 3]]), lambda x: np.pad(x, [[1, 0], [2, 3]]),
         [((2, 3),)], FI),
    Case("PadV2", lambda x: tf.pad(x, [[0, 1], [1, 1]], constant_values=7),
         lambda x: np.pad(x, [[0, 1], [1, 1]], constant_values=7), [((2, 3),)], FI),
    Case("MirrorPad", lambda x: tf.pad(x, [[1, 2], [2, 0]], mode="REFLECT"),
         lambda x: np.pad(x, [[1, 2], [2, 0]], mode="reflect"), [((3, 4),)], F),
    Case("MirrorPad", lambda x: tf.pad(x, [[3, 1], [0, 2]], mode="symmetric"),
         lambda x: np.pad(x, [[3, 1], [0, 2]], mode="symmetric"), [((3, 4),)], F,
         name="MirrorPad(SYMMETRIC)"),
    Case("MirrorPadGrad", mirror_pad_grad([[1, 2], [2, 0]], "REFLECT"),
         lambda g: np_mirror_pad_grad(g, [[1, 2], [2, 0]], "reflect"), [((6, 6),)], FI),
    Case("MirrorPadGrad", mirror_pad_grad([[3, 1], [0, 2], [0, 0]], "SYMMETRIC"),
         lambda g: np_mirror_pad_grad(g, [[3, 1], [0, 2], [0, 0]], "symmetric"),
         [((7, 6, 2),)], F, name="MirrorPadGrad(SYMMETRIC)"),
    Case("ReverseV2", lambda x: tf.reverse(x, [0, -1]), lambda x: x[::-1, :, ::-1],
         [((2, 3, 4),)], FI + (np.bool_,)),
    Case("BroadcastTo", lambda x: tf.broadcast_to(x, [2, 3, 4]),
         lambda x: np.broadcast_to(x, (2, 3, 4)), [((3, 1),), ((4,),)], FI),
    Case("BroadcastTo", lambda x: tf.broadcast_to(x, [2, 3]), lambda x: np.broadcast_to(x, (2, 3)),
         [((),)], F, name="BroadcastTo(scalar)"),
    # -- selection ------------------------------------------------------------------------
    Case("Select", tf.where, np.where, [((2, 3), (2, 3), (2, 3))], BOOL_FLOAT),
    Case("Select", tf.where, lambda c, x, y: np.where(c[:, None, None], x, y),
         [((2,), (2, 3, 4), (2, 3, 4))], BOOL_FLOAT, name="Select(vector condition)"),
    Case("Select", tf.where, np.where, [((), (2, 3), (2, 3))], BOOL_FLOAT,
         name="Select(scalar condition)"),
    Case("SelectV2", tf.where_v2, np.where, [((2, 1), (1, 3), ())], BOOL_FLOAT),
    Case("SelectV2", tf.where_v2, np.where, [((3,), (2, 3), (2, 1))], BOOL_FLOAT,
         name="SelectV2(condition broadcast)"),
    # -- diagonals --------------------------------------------------------------------------
    Case("Diag", tf.diag, np.diag, [((4,),)], FI),
    Case("Diag", tf.diag,
         lambda x: np.einsum("ij,ik,jl->ijkl", x, np.eye(2, dtype=x.dtype),
                             np.eye(3, dtype=x.dtype)), [((2, 3),)], F, name="Diag(rank 2)"),
    Case("DiagPart", tf.diag_part, np.diag, [((3, 3),)], FI),
    Case("DiagPart", tf.diag_part, lambda x: np.einsum("ijij->ij", x), [((2, 3, 2, 3),)], F,
         name="DiagPart(rank 4)"),
    # Outside a distribution strategy the sharding constraint is the identity (its layout
    # on a device mesh is checked in tests/distribute/test_moe_sharding.py).
    Case("_ShardingConstraint", lambda x: sharding_constraint(x, [0, -1]), lambda x: x,
         [((4, 3),)], FI),
]
