"""`tf.nn.raw_rnn`: TF1's loop_fn-driven RNN, a `tf.while_loop` writing TensorArrays.

TF1's protocol: `loop_fn(time, cell_output, cell_state, loop_state)` returns
`(finished, next_input, next_cell_state, emit_output, next_loop_state)`; its first call
(time 0, everything else None) gives the initial input and state and the structure of
what is emitted. The loop runs until every batch entry has finished; finished entries
emit zeros and keep their state. Emitted values are written into dynamic-size
TensorArrays (`emit_ta`).

The loop's trip count is only known when it runs, so it compiles with a cap on its
iterations that doubles when a run needs more (compiler/ta_buffer.run_loop), which also
makes it differentiable.
"""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import nest
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.array.gather_ops import where
from tensorflux._src.ops.array.generator_ops import zeros
from tensorflux._src.ops.constant import constant
from tensorflux._src.ops.control.control_flow_ops import while_loop
from tensorflux._src.ops.control.tensor_array_ops import TensorArray
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.math.reduce_ops import reduce_all
from tensorflux._src.ops.nn.rnn import _check_cell
from tensorflux._src.ops.shape_fns import static_value
from tensorflux._src.train import variable_scope as vs

__all__ = ["raw_rnn"]


def _size_shape(size):
    """A size (int, TensorShape or shape tensor) as a static TensorShape."""
    if isinstance(size, tensor_shape.TensorShape):
        return size
    if isinstance(size, int):
        return tensor_shape.TensorShape([size])
    known = static_value(size)
    if known is not None:
        return tensor_shape.TensorShape([int(d) for d in known])
    return tensor_shape.unknown_shape(size.shape[0].value if size.shape.ndims else None)


def _zeros_shape(batch_size, size):
    """[batch_size] + size, as a list (static) or a tensor."""
    if isinstance(size, int):
        size = [size]
    elif isinstance(size, tensor_shape.TensorShape):
        size = size.as_list()
    elif static_value(size) is not None:
        size = [int(d) for d in static_value(size)]
    if isinstance(size, list) and isinstance(batch_size, int):
        return [batch_size] + size
    return array_ops.concat([array_ops.reshape(batch_size, [1]),
                             math_ops.cast(size, _dtypes.int32)], 0)


def raw_rnn(cell, loop_fn, parallel_iterations=None, swap_memory=False, scope=None):
    """Runs `cell` in a loop driven by `loop_fn` (see the module docstring).

    Returns `(emit_ta, final_state, final_loop_state)`.
    """
    _check_cell("cell", cell)
    if not callable(loop_fn):
        raise TypeError("loop_fn must be a callable")
    parallel_iterations = parallel_iterations or 32
    with vs.variable_scope(scope or "rnn"):
        time = constant(0, dtype=_dtypes.int32)
        (elements_finished, next_input, initial_state, emit_structure,
         init_loop_state) = loop_fn(time, None, None, None)
        flat_input = nest.flatten(next_input)
        loop_state = init_loop_state if init_loop_state is not None \
            else constant(0, dtype=_dtypes.int32)
        static_batch = tensor_shape.Dimension(None)
        for x in flat_input:
            shape = convert_to_tensor(x).shape
            static_batch = static_batch.merge_with(
                shape[0] if shape.ndims else tensor_shape.Dimension(None))
        const_batch_size = static_batch.value
        batch_size = const_batch_size if const_batch_size is not None \
            else array_ops.shape(flat_input[0])[0]

        nest.assert_same_structure(initial_state, cell.state_size)
        flat_state = [convert_to_tensor(s) for s in nest.flatten(initial_state)]
        state = nest.pack_sequence_as(initial_state, flat_state)

        if emit_structure is not None:
            flat_emit = [convert_to_tensor(e) for e in nest.flatten(emit_structure)]
            flat_emit_size = [e.shape if e.shape.is_fully_defined() else array_ops.shape(e)
                              for e in flat_emit]
            flat_emit_dtypes = [e.dtype.base_dtype for e in flat_emit]
        else:
            emit_structure = cell.output_size
            flat_emit_size = nest.flatten(emit_structure)
            flat_emit_dtypes = [flat_state[0].dtype.base_dtype] * len(flat_emit_size)

        flat_emit_ta = [
            TensorArray(dtype=dtype_i, dynamic_size=True, size=0, name=f"rnn_output_{i}",
                        element_shape=tensor_shape.TensorShape([const_batch_size])
                        .concatenate(_size_shape(size_i)))
            for i, (dtype_i, size_i) in enumerate(zip(flat_emit_dtypes, flat_emit_size))]
        emit_ta = nest.pack_sequence_as(emit_structure, flat_emit_ta)
        flat_zero_emit = [zeros(_zeros_shape(batch_size, size_i), dtype_i)
                          for size_i, dtype_i in zip(flat_emit_size, flat_emit_dtypes)]
        zero_emit = nest.pack_sequence_as(emit_structure, flat_zero_emit)

        def condition(unused_time, elements_finished, *_):
            return math_ops.logical_not(reduce_all(elements_finished))

        def body(time, elements_finished, current_input, emit_ta, state, loop_state):
            next_output, cell_state = cell(current_input, state)
            nest.assert_same_structure(state, cell_state)
            nest.assert_same_structure(cell.output_size, next_output)
            next_time = time + 1
            (next_finished, next_input, next_state, emit_output,
             next_loop_state) = loop_fn(next_time, next_output, cell_state, loop_state)
            nest.assert_same_structure(state, next_state)
            nest.assert_same_structure(current_input, next_input)
            nest.assert_same_structure(emit_ta, emit_output)
            loop_state = loop_state if next_loop_state is None else next_loop_state

            def copy_some_through(current, candidate):
                def copy_fn(cur_i, cand_i):
                    # TensorArrays and scalars pass through; finished rows keep `current`.
                    if isinstance(cur_i, TensorArray):
                        return cand_i
                    if cur_i.shape.ndims == 0:
                        return cand_i
                    return where(elements_finished, cur_i, cand_i)
                return nest.map_structure(copy_fn, current, candidate)

            emit_output = copy_some_through(zero_emit, emit_output)
            next_state = copy_some_through(state, next_state)
            emit_ta = nest.map_structure(lambda ta, emit: ta.write(time, emit), emit_ta,
                                         emit_output)
            elements_finished = math_ops.logical_or(elements_finished, next_finished)
            return (next_time, elements_finished, next_input, emit_ta, next_state,
                    loop_state)

        returned = while_loop(
            condition, body,
            loop_vars=[time, elements_finished, next_input, emit_ta, state, loop_state],
            parallel_iterations=parallel_iterations, swap_memory=swap_memory)
        emit_ta, final_state, final_loop_state = returned[-3:]
        if init_loop_state is None:
            final_loop_state = None
        return emit_ta, final_state, final_loop_state
