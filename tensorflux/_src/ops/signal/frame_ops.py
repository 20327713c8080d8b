"""`tf.signal.frame` and `tf.signal.overlap_and_add`, composed from registry ops.

frame gathers `[num_frames, frame_length]` sample indices along `axis`; overlap_and_add
is the adjoint: a segment sum of every frame sample into its output position. Their
gradients are each other's (gather's gradient is a segment sum and vice versa).
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops, gather_ops, generator_ops
from tensorflux._src.ops.math import math_ops, segment_ops
from tensorflux._src.ops.shape_fns import static_value

__all__ = []


def _static_int(t):
    value = static_value(t)
    return None if value is None else int(value)


def _frame_shape(signal, frame_length, frame_step, pad_end, axis):
    """The static result shape, as TF's _infer_frame_shape: outer + [frames, length] +
    inner, with the frame count known when the framed dimension and the step are."""
    if signal.shape.ndims is None:
        return None
    if axis is None:
        return [None] * (signal.shape.ndims + 1)
    dims = signal.shape.as_list()
    axis = range(len(dims))[axis]
    n = dims[axis]
    frames = None
    if n is not None and frame_step is not None:
        if pad_end:
            frames = max(0, -(-n // frame_step))
        elif frame_length is not None:
            frames = max(0, (n - frame_length + frame_step) // frame_step)
    return dims[:axis] + [frames, frame_length] + dims[axis + 1:]


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1,
          name=None):
    """Replaces `signal`'s `axis` dimension by `[frames, frame_length]`: windows of
    `frame_length` samples every `frame_step`. With `pad_end`, windows running past the
    end are kept, filled with `pad_value`; otherwise only whole windows are."""
    with _graph.name_scope(name, "frame", [signal, frame_length, frame_step, pad_value]):
        signal = convert_to_tensor(signal, name="signal")
        frame_length = convert_to_tensor(frame_length, name="frame_length")
        frame_step = convert_to_tensor(frame_step, name="frame_step")
        axis = convert_to_tensor(axis, name="axis")
        signal.shape.with_rank_at_least(1)
        frame_length.shape.assert_has_rank(0)
        frame_step.shape.assert_has_rank(0)
        axis.shape.assert_has_rank(0)
        length_static, step_static, axis_static = (_static_int(t) for t in
                                                    (frame_length, frame_step, axis))
        result_shape = _frame_shape(signal, length_static, step_static, pad_end, axis_static)
        if pad_end:
            pad_value = convert_to_tensor(pad_value, signal.dtype)
            pad_value.shape.assert_has_rank(0)
        static_axis = None
        if result_shape is not None and None not in (axis_static, length_static):
            static_axis = range(signal.shape.ndims)[axis_static]
        if static_axis is not None and result_shape[static_axis] is not None:
            # The framed size is static: the sample indices are one constant.
            frames = _static_frames(signal, length_static, step_static, pad_end, pad_value,
                                    static_axis, result_shape[static_axis])
        else:
            frames = _dynamic_frames(signal, frame_length, frame_step, pad_end, pad_value,
                                     axis)
        if result_shape is not None:
            frames.set_shape(result_shape)
        return frames


def _static_frames(signal, frame_length, frame_step, pad_end, pad_value, axis, count):
    if pad_end:
        missing = max(0, frame_length + frame_step * (count - 1) - signal.shape[axis].value)
        if missing:
            paddings = [[0, 0]] * signal.shape.ndims
            paddings[axis] = [0, missing]
            signal = array_ops.pad(signal, paddings, constant_values=pad_value)
    index = (np.arange(count)[:, None] * frame_step + np.arange(frame_length)[None, :])
    return gather_ops.gather(signal, index.astype(np.int32), axis=axis)


def _dynamic_frames(signal, frame_length, frame_step, pad_end, pad_value, axis):
    rank = array_ops.rank(signal)
    axis = math_ops.floormod(axis, rank)  # negative axes count from the end
    length = array_ops.shape(signal)[axis]
    frame_length = math_ops.cast(frame_length, _dtypes.int32)
    frame_step = math_ops.cast(frame_step, _dtypes.int32)
    if pad_end:
        num_frames = -(-length // frame_step)
        missing = math_ops.maximum(0, frame_length + frame_step * (num_frames - 1) - length)
        # paddings: zeros except [0, missing] at row `axis`
        rows = math_ops.range(rank)
        after = math_ops.cast(math_ops.equal(rows, axis), _dtypes.int32) * missing
        paddings = array_ops.stack([generator_ops.zeros_like(after), after], axis=1)
        signal = array_ops.pad(signal, paddings, constant_values=pad_value)
    else:
        num_frames = math_ops.maximum(0, 1 + (length - frame_length) // frame_step)
    starts = array_ops.expand_dims(math_ops.range(num_frames) * frame_step, 1)
    offsets = array_ops.expand_dims(math_ops.range(frame_length), 0)
    return gather_ops.gather(signal, starts + offsets, axis=axis)


def overlap_and_add(signal, frame_step, name=None):
    """Adds the frames of a `[..., frames, frame_length]` signal, each `frame_step`
    samples after the previous: `[..., (frames - 1) * frame_step + frame_length]`."""
    with _graph.name_scope(name, "overlap_and_add", [signal, frame_step]):
        signal = convert_to_tensor(signal, name="signal")
        signal.shape.with_rank_at_least(2)
        frame_step = convert_to_tensor(frame_step, name="frame_step")
        frame_step.shape.assert_has_rank(0)
        if not frame_step.dtype.is_integer:
            raise ValueError(f"frame_step must be an integer. Got {frame_step.dtype}")
        shape = array_ops.shape(signal)
        outer = shape[:-2]
        frames, frame_length = shape[-2], shape[-1]
        frame_step = math_ops.cast(frame_step, _dtypes.int32)
        output_length = frame_length + frame_step * (frames - 1)
        step_static = _static_int(frame_step)
        if step_static is not None and signal.shape.ndims is not None and \
                signal.shape[-1].value == step_static:
            # Frames that do not overlap are just laid end to end.
            return array_ops.reshape(
                signal, array_ops.concat([outer, array_ops.reshape(output_length, [1])], 0),
                name="fast_path")
        rank = array_ops.rank(signal)
        # [..., frames, frame_length] -> [frames, frame_length, ...]: segment_sum sums
        # leading dims into the output position of each sample.
        to_front = array_ops.concat([array_ops.stack([rank - 2, rank - 1]),
                                     math_ops.range(rank - 2)], 0)
        moved = array_ops.transpose(signal, to_front)
        positions = (array_ops.expand_dims(math_ops.range(frames) * frame_step, 1)
                     + array_ops.expand_dims(math_ops.range(frame_length), 0))
        summed = segment_ops.unsorted_segment_sum(moved, positions, output_length)
        to_back = array_ops.concat([math_ops.range(1, rank - 1), [0]], 0)
        result = array_ops.transpose(summed, to_back)
        if signal.shape.ndims is not None:
            dims = signal.shape.as_list()
            n = None if None in (dims[-1], dims[-2], step_static) else \
                dims[-1] + step_static * (dims[-2] - 1)
            result.set_shape(dims[:-2] + [n])
        return result
