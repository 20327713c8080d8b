"""NumPy-checked cases for Slice, StridedSlice and Tensor.__getitem__."""

import numpy as np

import tensorflux as tf
from tensorflux._src.ops.op_builder import apply_op
from tests.ops.harness import Case, ints, uniform

F = (np.float32,)
FI = (np.float32, np.int32)


def getitem(spec, shapes, dtypes=F, name=None):
    """A case for `x[spec]`, checked against NumPy's `x[spec]`."""
    return Case("StridedSlice", lambda x: x[spec], lambda x: x[spec], shapes, dtypes,
                name=name or f"getitem{spec!r}")


def strided_slice_grad(shape, begin, end, strides, **masks):
    """StridedSliceGrad (the gradient op of x[spec]) of an x of `shape`, fed dy."""
    return lambda dy: apply_op("StridedSliceGrad", shape=shape, begin=begin, end=end,
                               strides=strides, dy=dy, **masks)


def np_strided_slice_grad(shape, spec):
    def expect(dy):
        out = np.zeros(shape, dy.dtype)
        out[spec] = dy  # numpy writes through new axes and single indices alike
        return out
    return expect


CASES = [
    getitem((slice(1, None), slice(None, None, -1)), [((4, 5),)], FI, "x[1:, ::-1]"),
    getitem((Ellipsis, 1), [((2, 3, 4),), ((4,),)], F, "x[..., 1]"),
    getitem((slice(None), None, -1), [((3, 4),)], FI, "x[:, None, -1]"),
    getitem((slice(None, None, 2), slice(1, 3)), [((5, 4),)], F, "x[::2, 1:3]"),
    getitem(-1, [((3, 2),)], F, "x[-1]"),
    getitem((0, 1), [((3, 2),)], F, "x[0, 1]"),
    getitem(slice(3, 0, -2), [((5,),)], F, "x[3:0:-2]"),
    getitem(slice(-100, 100), [((5, 2),)], F, "x[-100:100]"),
    getitem((None, Ellipsis, None, 0), [((2, 3),)], F, "x[None, ..., None, 0]"),
    getitem((1, Ellipsis, slice(None, None, -2)), [((2, 3, 5),)], F, "x[1, ..., ::-2]"),
    getitem(Ellipsis, [((2, 3),)], F, "x[...]"),
    getitem((), [((2, 3),)], F, "x[()]"),
    Case("StridedSlice", lambda x, i: x[i], lambda x, i: x[i], [((4, 3), ())],
         [(np.float32, np.int32)], gen=[uniform(), ints(-4, 3)], name="x[i] (i fed)"),
    Case("StridedSlice", lambda x, i: x[:, i], lambda x, i: x[:, i], [((4, 3), ())],
         [(np.float32, np.int64)], gen=[uniform(), ints(-3, 2)], name="x[:, i] (i fed)"),
    Case("StridedSlice",
         lambda x: tf.strided_slice(x, [1, 0, 0], [0, 3, 4], [1, 2, -1], begin_mask=0b101,
                                    end_mask=0b101, shrink_axis_mask=0b000),
         lambda x: x[:, 0:3:2, ::-1], [((2, 4, 5),)], F, name="strided_slice(masks)"),
    Case("StridedSlice",
         lambda x: tf.strided_slice(x, [0, 1], [0, 2], [1, 1], ellipsis_mask=0b01,
                                    shrink_axis_mask=0b10),
         lambda x: x[..., 1], [((2, 3, 4),)], F, name="strided_slice(ellipsis, shrink)"),
    Case("StridedSlice",
         lambda x: tf.strided_slice(x, [0, 0], [2, 1], new_axis_mask=0b01),
         lambda x: x[None, 0:1], [((3, 2),)], F, name="strided_slice(new axis)"),
    Case("StridedSliceGrad",
         strided_slice_grad([4, 5], [1, 0], [0, 0], [1, -1], begin_mask=0b10, end_mask=0b11),
         np_strided_slice_grad((4, 5), np.s_[1:, ::-1]), [((3, 5),)], FI),
    Case("StridedSliceGrad",
         strided_slice_grad([2, 3, 4], [0, 0, 1], [0, 0, 2], [1, 1, 1], new_axis_mask=0b001,
                            ellipsis_mask=0b010, shrink_axis_mask=0b100),
         np_strided_slice_grad((2, 3, 4), np.s_[None, ..., 1]), [((1, 2, 3),)], F,
         name="StridedSliceGrad(new axis, ellipsis, shrink)"),
    Case("StridedSliceGrad",
         strided_slice_grad([6, 2], [-1, 0], [0, 0], [-2, 1], end_mask=0b11),
         np_strided_slice_grad((6, 2), np.s_[::-2]), [((3, 2),)], F,
         name="StridedSliceGrad(negative stride)"),
    Case("Slice", lambda x: tf.slice(x, [1, 0], [2, -1]), lambda x: x[1:3, :],
         [((4, 3),)], FI),
    Case("Slice", lambda x: tf.slice(x, [0, 1, 2], [-1, 1, 2]), lambda x: x[:, 1:2, 2:4],
         [((2, 3, 4),)], F, name="Slice(rank 3)"),
    Case("Slice", lambda x, b: tf.slice(x, b, [2, 2]),
         lambda x, b: x[b[0]:b[0] + 2, b[1]:b[1] + 2], [((4, 5), (2,))],
         [(np.float32, np.int32)], gen=[uniform(), ints(0, 2)], name="Slice(begin fed)"),
]
