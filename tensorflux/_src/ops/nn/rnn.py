"""RNN drivers: `tf.nn.dynamic_rnn`, `static_rnn` and their bidirectional forms.

`dynamic_rnn` compiles to ONE XLA loop: the cell is recorded once as a loop body
(ops/control/bodies.py) and a `Scan` op in "loop" mode (ops/control/functional_ops.py) carries the
state and stacks the per-step outputs; it lowers to `lax.scan` and is differentiated
as `lax.scan` is (its FunctionalGrad is the VJP, nothing is unrolled). TF1 builds the
same computation from a while_loop over TensorArrays; values are the same.

With `sequence_length`, step t of sequence b past its length gives a zero output and
leaves the state as it was, so the final state is the state after the last valid step
(TF1's documented behaviour; TF1 also stops the loop at max(sequence_length), which
changes no value). `static_rnn` unrolls the cell over a Python list of inputs, with the
same masking.
"""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import nest
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import array_ops, generator_ops
from tensorflux._src.ops.array.gather_ops import where_v2
from tensorflux._src.ops.array.sequence_ops import reverse_sequence
from tensorflux._src.ops.control.bodies import Body
from tensorflux._src.ops.control.control_flow_ops import flatten, make_functional, pack
from tensorflux._src.ops.math import math_ops
from tensorflux._src.train import variable_scope as vs

__all__ = ["dynamic_rnn", "bidirectional_dynamic_rnn", "static_rnn",
           "static_bidirectional_rnn", "static_state_saving_rnn"]


# -- helpers -------------------------------------------------------------------------------

def _check_cell(name, cell):
    missing = [what for what, ok in (
        ("'output_size' property is missing", hasattr(cell, "output_size")),
        ("'state_size' property is missing", hasattr(cell, "state_size")),
        ("either 'zero_state' or 'get_initial_state' method is required",
         hasattr(cell, "zero_state") or hasattr(cell, "get_initial_state")),
        ("is not callable", callable(cell))) if not ok]
    if missing:
        raise TypeError(f"The argument {name!r} ({cell}) is not an RNNCell: "
                        f"{', '.join(missing)}.")


def _batch_size(flat_inputs, batch_axis):
    """The static batch size when some input knows it, else a tensor."""
    for x in flat_inputs:
        if x.shape.ndims is not None and x.shape[batch_axis].value is not None:
            return x.shape[batch_axis].value
    return array_ops.shape(flat_inputs[0])[batch_axis]


def _initial_state(cell, initial_state, dtype, batch_size):
    if initial_state is not None:
        return initial_state
    if not dtype:
        raise ValueError("If there is no initial_state, you must give a dtype.")
    return cell.zero_state(batch_size, dtype)


def _sequence_length(sequence_length):
    if sequence_length is None:
        return None
    sequence_length = math_ops.cast(convert_to_tensor(sequence_length), _dtypes.int32)
    if sequence_length.shape.ndims not in (None, 1):
        raise ValueError(f"sequence_length must be a vector of length batch_size, but saw "
                         f"shape: {sequence_length.shape}")
    return array_ops.identity(sequence_length, name="sequence_length")


def _rows(done, like):
    """done ([batch] bool) shaped to broadcast over `like` ([batch, ...])."""
    rank = like.shape.ndims
    return done if rank == 1 else array_ops.reshape(done, [-1] + [1] * (rank - 1))


def _mask_step(done, output, old_state, new_state):
    """TF1's _rnn_step: past a sequence's end the output is zero and the state is kept."""
    out_leaves, out_def = flatten(output)
    output = pack(out_def, [where_v2(_rows(done, o), generator_ops.zeros_like(o), o)
                            for o in out_leaves])
    old_leaves, _ = flatten(old_state)
    new_leaves, state_def = flatten(new_state)
    state = pack(state_def, [where_v2(_rows(done, n), o, n)
                             for o, n in zip(old_leaves, new_leaves)])
    return output, state


def _swap_batch_time(x):
    """[batch, time, ...] <-> [time, batch, ...], keeping static shapes."""
    if x.shape.ndims is not None and x.shape.ndims < 2:
        raise ValueError(f"Expected input tensor {x} to have rank at least 2")
    rank = x.shape.ndims if x.shape.ndims is not None else array_ops.rank(x)
    perm = [1, 0] + list(range(2, rank)) if isinstance(rank, int) else array_ops.concat(
        [[1, 0], math_ops.range(2, rank)], 0)
    return array_ops.transpose(x, perm)


# -- the loop ------------------------------------------------------------------------------

def _time_loop(step, state, flat_elems):
    """Runs `step(state, slices) -> (new_state, output)` over axis 0 of flat_elems as one
    Scan op; returns (final state, outputs stacked along axis 0)."""
    graph = _graph.get_default_graph()
    init_leaves, state_def = flatten(state)
    inits = [convert_to_tensor(s) for s in init_leaves]
    body = Body(graph, "while")
    with _graph.name_scope("while"):
        state_params = [body.add_param(s.dtype.base_dtype, s.shape, "Identity") for s in inits]
        elem_params = [body.add_param(e.dtype.base_dtype, e.shape[1:], "TensorArrayReadV3")
                       for e in flat_elems]
        with body:
            new_state, output = step(pack(state_def, state_params), elem_params)
            new_leaves, new_def = flatten(new_state)
            new_leaves = [convert_to_tensor(s) for s in new_leaves]
            out_leaves, out_def = flatten(output)
            out_leaves = [convert_to_tensor(o) for o in out_leaves]
        if new_def != state_def:
            raise ValueError(f"The cell returned a state of structure {new_def}, but its "
                             f"state has structure {state_def}.")
        for init, new in zip(inits, new_leaves):
            if init.dtype.base_dtype != new.dtype.base_dtype:
                raise TypeError(f"The cell returned a state of type "
                                f"{new.dtype.base_dtype.name} for a state of type "
                                f"{init.dtype.base_dtype.name}.")
            if not init.shape.is_compatible_with(new.shape):
                raise ValueError(f"The cell returned a state of shape {new.shape} for a state "
                                 f"of shape {init.shape}; the shape must not change.")
        body.finish(new_leaves + out_leaves)
        length = flat_elems[0].shape[0].value if flat_elems[0].shape.ndims else None
        shapes = [s.shape for s in inits] + [TensorShape([length]).concatenate(o.shape)
                                             for o in out_leaves]
        op = make_functional(
            "Scan", inits + list(flat_elems) + body.captures, [body],
            [t.dtype.base_dtype for t in inits + out_leaves], shapes,
            {"body": body, "n_acc": len(inits), "n_elems": len(flat_elems), "mode": "loop",
             "reverse": False, "back_prop": True}, "Loop")
    outs = op.outputs
    return pack(state_def, outs[:len(inits)]), pack(out_def, outs[len(inits):])


# -- dynamic_rnn -----------------------------------------------------------------------------

def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                parallel_iterations=None, swap_memory=False, time_major=False, scope=None):
    """Runs `cell` over the time axis of `inputs` in one compiled loop.

    Returns `(outputs, state)`: outputs `[batch, time, output_size]` (`[time, batch, ...]`
    when time_major), state the final state (per sequence, at its sequence_length).
    """
    _check_cell("cell", cell)
    with vs.variable_scope(scope or "rnn"):
        flat_inputs = [convert_to_tensor(x, name="input") for x in flatten(inputs)[0]]
        if not flat_inputs:
            raise ValueError("inputs must not be empty")
        if not time_major:
            flat_inputs = [_swap_batch_time(x) for x in flat_inputs]
        for x in flat_inputs:
            if x.shape.ndims is not None and (x.shape.ndims < 3 or x.shape[-1].value is None):
                raise ValueError(f"Input size (depth of inputs) must be accessible via shape "
                                 f"inference, but saw value None (input shape {x.shape}).")
        input_def = flatten(inputs)[1]
        sequence_length = _sequence_length(sequence_length)
        batch_size = _batch_size(flat_inputs, 1)
        state = _initial_state(cell, initial_state, dtype, batch_size)
        n_inputs = len(flat_inputs)
        elems = list(flat_inputs)
        if sequence_length is not None:
            steps = array_ops.shape(flat_inputs[0])[0]
            elems.append(math_ops.range(steps, name="time"))

        def step(state, slices):
            output, new_state = cell(pack(input_def, slices[:n_inputs]), state)
            if sequence_length is not None:
                done = math_ops.greater_equal(slices[n_inputs], sequence_length)
                output, new_state = _mask_step(done, output, state, new_state)
            return new_state, output

        final_state, outputs = _time_loop(step, state, elems)
        if not time_major:
            out_leaves, out_def = flatten(outputs)
            outputs = pack(out_def, [_swap_batch_time(o) for o in out_leaves])
        return outputs, final_state


def _reverse_time(x, lengths, time_axis, batch_axis):
    if lengths is None:
        return array_ops.reverse(x, [time_axis])
    return reverse_sequence(x, lengths, seq_axis=time_axis, batch_axis=batch_axis)


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None,
                              initial_state_fw=None, initial_state_bw=None, dtype=None,
                              parallel_iterations=None, swap_memory=False, time_major=False,
                              scope=None):
    """Forward and backward dynamic_rnn in scopes `fw`/`bw`; returns
    `((output_fw, output_bw), (state_fw, state_bw))`, output_bw in input time order."""
    _check_cell("cell_fw", cell_fw)
    _check_cell("cell_bw", cell_bw)
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(
                cell_fw, inputs, sequence_length=sequence_length,
                initial_state=initial_state_fw, dtype=dtype, time_major=time_major,
                scope=fw_scope)
        with vs.variable_scope("bw") as bw_scope:
            lengths = _sequence_length(sequence_length)
            leaves, treedef = flatten(inputs)
            reversed_inputs = pack(treedef, [_reverse_time(convert_to_tensor(x), lengths,
                                                           time_axis, batch_axis)
                                             for x in leaves])
            reversed_out, state_bw = dynamic_rnn(
                cell_bw, reversed_inputs, sequence_length=lengths,
                initial_state=initial_state_bw, dtype=dtype, time_major=time_major,
                scope=bw_scope)
    out_leaves, out_def = flatten(reversed_out)
    output_bw = pack(out_def, [_reverse_time(o, lengths, time_axis, batch_axis)
                               for o in out_leaves])
    return (output_fw, output_bw), (state_fw, state_bw)


# -- static_rnn ------------------------------------------------------------------------------

def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None,
               scope=None):
    """The cell unrolled over a Python list of inputs; returns (outputs list, state)."""
    _check_cell("cell", cell)
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    outputs = []
    with vs.variable_scope(scope or "rnn") as varscope:
        first = [convert_to_tensor(x) for x in flatten(inputs[0])[0]]
        for x in first:
            if x.shape.ndims is not None and (x.shape.ndims < 2 or x.shape[-1].value is None):
                raise ValueError(f"Input size (dimension 1 of inputs) must be accessible via "
                                 f"shape inference, but saw value None (shape {x.shape}).")
        state = _initial_state(cell, initial_state, dtype, _batch_size(first, 0))
        sequence_length = _sequence_length(sequence_length)
        for time, step_input in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()
            output, new_state = cell(step_input, state)
            if sequence_length is not None:
                done = math_ops.greater_equal(time, sequence_length)
                output, new_state = _mask_step(done, output, state, new_state)
            outputs.append(output)
            state = new_state
    return outputs, state


def static_state_saving_rnn(cell, inputs, state_saver, state_name, sequence_length=None,
                            scope=None):
    """static_rnn whose initial state is `state_saver.state(name)` and whose final state is
    handed to `state_saver.save_state(name, state)`; the last output and the returned
    state depend on those saves, so fetching either saves the state (TF1's contract with a
    state saver such as contrib's SequenceQueueingStateSaver)."""
    state_size = cell.state_size
    state_is_tuple = nest.is_nested(state_size)
    if state_is_tuple != nest.is_nested(state_name):
        raise ValueError(f"state_name should be the same type as cell.state_size.  "
                         f"state_name: {state_name}, cell.state_size: {state_size}")
    if state_is_tuple:
        names, sizes = nest.flatten(state_name), nest.flatten(state_size)
        if len(names) != len(sizes):
            raise ValueError(f"#elems(state_name) != #elems(state_size): "
                             f"{len(names)} vs. {len(sizes)}")
        initial_state = nest.pack_sequence_as(state_size,
                                              [state_saver.state(n) for n in names])
    else:
        names, initial_state = [state_name], state_saver.state(state_name)
    outputs, state = static_rnn(cell, inputs, initial_state=initial_state,
                                sequence_length=sequence_length, scope=scope)
    flat_state = nest.flatten(state)
    saves = [state_saver.save_state(n, s) for n, s in zip(names, flat_state)]
    with _graph.control_dependencies(saves):
        last = outputs[-1]
        outputs[-1] = nest.pack_sequence_as(
            last, [array_ops.identity(x) for x in nest.flatten(last)])
        state = nest.pack_sequence_as(state, [array_ops.identity(s) for s in flat_state])
    return outputs, state


def _reverse_list(sequence, lengths):
    """A list of time steps reversed (per sequence, within its length when given)."""
    if lengths is None:
        return list(reversed(sequence))
    columns = list(zip(*[flatten(step)[0] for step in sequence]))
    treedef = flatten(sequence[0])[1]
    reversed_columns = []
    for column in columns:
        stacked = array_ops.stack([convert_to_tensor(x) for x in column])
        flipped = reverse_sequence(stacked, lengths, seq_axis=0, batch_axis=1)
        reversed_columns.append(array_ops.unstack(flipped, num=len(sequence)))
    return [pack(treedef, [col[t] for col in reversed_columns])
            for t in range(len(sequence))]


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None,
                             initial_state_bw=None, dtype=None, sequence_length=None,
                             scope=None):
    """static_rnn forward and backward; returns (outputs, state_fw, state_bw), each output
    the concatenation [fw, bw] along the last axis."""
    _check_cell("cell_fw", cell_fw)
    _check_cell("cell_bw", cell_bw)
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype,
                                             sequence_length, scope=fw_scope)
        with vs.variable_scope("bw") as bw_scope:
            lengths = _sequence_length(sequence_length)
            reversed_out, state_bw = static_rnn(cell_bw, _reverse_list(inputs, lengths),
                                                initial_state_bw, dtype, lengths,
                                                scope=bw_scope)
    output_bw = _reverse_list(reversed_out, lengths)
    outputs = []
    for fw, bw in zip(output_fw, output_bw):
        fw_leaves, treedef = flatten(fw)
        outputs.append(pack(treedef, [array_ops.concat([f, b], -1)
                                      for f, b in zip(fw_leaves, flatten(bw)[0])]))
    return tuple(outputs), state_fw, state_bw

