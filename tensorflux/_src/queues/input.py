"""TF1's queue-based input pipeline builders (`tf.train.*`).

Producers fill a FIFOQueue with the elements of a tensor, epoch after epoch:
`input_producer`, `string_input_producer`, `range_input_producer`,
`slice_input_producer`. `num_epochs` is counted by a local variable (`limit_epochs`:
run `tf.local_variables_initializer()`); after the last epoch the producer's runner
closes its queue, and readers of it end with OutOfRangeError.

Batchers gather elements (or slices, `enqueue_many=True`) into batches through a queue
filled by QueueRunner threads: `batch`, `batch_join` (FIFO, or PaddingFIFO with
`dynamic_pad`), `shuffle_batch`, `shuffle_batch_join` (RandomShuffleQueue).
`allow_smaller_final_batch` dequeues with `dequeue_up_to`, so the last batch may be
short. Every builder adds its QueueRunner to the QUEUE_RUNNERS collection, as TF does.
"""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops, host_ops
from tensorflux._src.ops.control import control_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.shape_fns import static_value
from tensorflux._src.queues.data_flow_ops import FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue
from tensorflux._src.queues.queue_runner import QueueRunner, add_queue_runner
from tensorflux._src.train.variables import Variable

__all__ = ["limit_epochs", "input_producer", "string_input_producer",
           "range_input_producer", "slice_input_producer", "batch", "batch_join",
           "shuffle_batch", "shuffle_batch_join", "maybe_batch", "maybe_batch_join",
           "maybe_shuffle_batch", "maybe_shuffle_batch_join"]


def _summary_scalar(name, value):
    from tensorflux._src.summary import summary_ops
    summary_ops.scalar(name, value)


# -- producers ------------------------------------------------------------------------------
def limit_epochs(tensor, num_epochs=None, name=None):
    """`tensor`, but a run fails with OutOfRangeError after `num_epochs` runs (counted in
    the local variable `epochs`)."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    from tensorflux._src.ops.array import array_ops
    from tensorflux._src.ops.state import state_ops
    from tensorflux._src.ops.constant import constant
    with _graph.name_scope(name or "limit_epochs") as scope:
        zero64 = constant(0, dtype=_dtypes.int64)
        epochs = Variable(zero64, name="epochs", trainable=False,
                          collections=[GraphKeys.LOCAL_VARIABLES])
        counter = state_ops.count_up_to(epochs, num_epochs)
        with _graph.control_dependencies([counter]):
            return array_ops.identity(tensor, name=scope[:-1] if scope else None)


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True,
                   seed=None, capacity=32, shared_name=None, summary_name=None, name=None,
                   cancel_op=None):
    """A FIFOQueue of the rows of `input_tensor` (shuffled each epoch if `shuffle`)."""
    from tensorflux._src.ops.random import random_ops
    with _graph.name_scope(name or "input_producer") as scope:
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        element_shape = input_tensor.shape[1:].merge_with(
            tensor_shape.as_shape(element_shape) if element_shape is not None
            else tensor_shape.unknown_shape())
        if not element_shape.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or "
                             "`element_shape` must be specified")
        if shuffle:
            input_tensor = random_ops.random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        # The queue op takes the scope's own name ("input_producer"), as in TF.
        q = FIFOQueue(capacity=capacity, dtypes=[input_tensor.dtype.base_dtype],
                      shapes=[element_shape], shared_name=shared_name, name=scope)
        enq = q.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(q, [enq], cancel_op=cancel_op))
        if summary_name is not None:
            from tensorflux._src.ops.math import math_ops
            _summary_scalar(summary_name,
                            math_ops.cast(q.size(), _dtypes.float32) * (1.0 / capacity))
        return q


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None,
                          capacity=32, shared_name=None, name=None, cancel_op=None):
    """A queue of filenames (or any strings) for a reader, `num_epochs` times over."""
    from tensorflux._src.ops.array import array_ops
    from tensorflux._src.ops.math import math_ops
    from tensorflux._src.ops.debug import debug_ops
    not_null_err = "string_input_producer requires a non-null input tensor"
    if not isinstance(string_tensor, (Tensor, Variable)) and not len(string_tensor):
        raise ValueError(not_null_err)
    with _graph.name_scope(name or "input_producer") as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=_dtypes.string)
        check = debug_ops.Assert(math_ops.greater(array_ops.size(string_tensor), 0),
                                 [not_null_err])
        with _graph.control_dependencies([check]):
            string_tensor = array_ops.identity(string_tensor)
        return input_producer(string_tensor, [], num_epochs, shuffle, seed, capacity,
                              shared_name, f"fraction_of_{capacity}_full", scope, cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """A queue of the integers 0 .. limit-1, `num_epochs` times over."""
    from tensorflux._src.ops.math import math_ops
    with _graph.name_scope(name or "input_producer") as scope:
        range_tensor = math_ops.range(limit)
        return input_producer(range_tensor, [], num_epochs, shuffle, seed, capacity,
                              shared_name, f"fraction_of_{capacity}_full", scope)


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None,
                         capacity=32, shared_name=None, name=None):
    """One row (slice along dimension 0) of each tensor per dequeue, rows in step."""
    from tensorflux._src.ops.array import array_ops, gather_ops
    with _graph.name_scope(name or "input_producer"):
        tensor_list = [convert_to_tensor(t) for t in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        range_size = array_ops.shape(tensor_list[0])[0]
        queue = range_input_producer(range_size, num_epochs=num_epochs, shuffle=shuffle,
                                     seed=seed, capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        return [gather_ops.gather(t, index) for t in tensor_list]


# -- batching -------------------------------------------------------------------------------
def _as_tensor_list(tensors):
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors, key=str)]
    if isinstance(tensors, Tensor):
        return [tensors]
    return list(tensors)


def _as_original_type(original, dequeued):
    if isinstance(original, dict):
        if len(original) == 1:
            dequeued = [dequeued]  # a one-component queue dequeues a bare tensor
        return {k: dequeued[i] for i, k in enumerate(sorted(original, key=str))}
    return dequeued


def _validate(tensor_list, what):
    tensor_list = [convert_to_tensor(t) for t in tensor_list]
    if not tensor_list:
        raise ValueError(f"Expected at least one tensor in {what}().")
    return tensor_list


def _as_tensor_list_list(tensors_list):
    if not tensors_list:
        raise ValueError("Expected at least one set of tensors")
    if isinstance(tensors_list[0], dict):
        keys = set(tensors_list[0].keys())
        for d in tensors_list[1:]:
            if set(d.keys()) != keys:
                raise ValueError("Expected all dictionaries in tensors_list to have the "
                                 "same keys")
    return [_as_tensor_list(tensors) for tensors in tensors_list]


def _validate_join(tensor_list_list):
    tensor_list_list = [[convert_to_tensor(t) for t in tl] for tl in tensor_list_list]
    if not tensor_list_list:
        raise ValueError("Expected at least one input in batch_join().")
    return tensor_list_list


def _types_of(tensor_list_list):
    types = [t.dtype.base_dtype for t in tensor_list_list[0]]
    for other in tensor_list_list[1:]:
        other_types = [t.dtype.base_dtype for t in other]
        if other_types != types:
            raise TypeError(f"Expected types to be consistent: {', '.join(map(str, types))} "
                            f"vs. {', '.join(map(str, other_types))}.")
    return types


def _shapes(tensor_list_list, shapes, enqueue_many):
    if shapes is not None:
        return [tensor_shape.as_shape(s) for s in shapes]
    n = len(tensor_list_list[0])
    for tl in tensor_list_list:
        if len(tl) != n:
            raise ValueError("Expected the same number of tensors in each element of "
                             "tensors_list")
        for t in tl:
            if t.shape.ndims is None:
                raise ValueError(f"Cannot infer Tensor's rank: {t}")
    merged = []
    for i in range(n):
        shape = tensor_shape.unknown_shape()
        for tl in tensor_list_list:
            s = tl[i].shape
            if enqueue_many:
                s = s.with_rank_at_least(1)[1:]
            shape = shape.merge_with(s)
        merged.append(shape)
    return merged


def _queue(dynamic_pad, capacity, types, shapes, shared_name):
    if dynamic_pad:
        return PaddingFIFOQueue(capacity=capacity, dtypes=types, shapes=shapes,
                                shared_name=shared_name)
    return FIFOQueue(capacity=capacity, dtypes=types, shapes=shapes, shared_name=shared_name)


def _validate_keep_input(keep_input, enqueue_many):
    keep_input = convert_to_tensor(keep_input)
    if keep_input.shape.ndims is None:
        raise ValueError("`keep_input` dimensions must be known at graph construction.")
    if not enqueue_many and keep_input.shape.ndims == 1:
        raise ValueError("`keep_input` cannot be a vector when `enqueue_many=False`.")
    if keep_input.shape.ndims > 1:
        raise ValueError("`keep_input` must be 0 or 1 dimensions.")
    return keep_input


def _select_which_to_enqueue(tensor_list, keep_input):
    """The rows (dimension 0) of each tensor where keep_input is true (TF1's
    DynamicPartition into 2)."""
    select = math_ops.cast(keep_input, _dtypes.int32)
    return [host_ops.dynamic_partition(x, select, num_partitions=2)[1] for x in tensor_list]


def _keep_input_enqueue(queue, tensor_list, keep_input, enqueue_many):
    """The enqueue op of one list of tensors, honouring `keep_input`."""
    fn = queue.enqueue_many if enqueue_many else queue.enqueue
    if keep_input is None:
        return fn(tensor_list)
    if keep_input.shape.ndims == 1:
        return fn(_select_which_to_enqueue(tensor_list, keep_input))
    keep = static_value(keep_input)
    if keep is not None:  # TF1's smart_cond: a constant picks the branch now
        return fn(tensor_list) if bool(keep) else control_ops.no_op()
    # A scalar known only at run time: TF1 enqueues inside tf.cond. A queue op cannot
    # run in a compiled branch here, so the element(s) are enqueued as rows selected by
    # keep_input, which enqueues the same.
    if enqueue_many:
        rows = tensor_list
        keep_rows = array_ops.fill(array_ops.shape(tensor_list[0])[:1], keep_input)
    else:
        rows = [array_ops.expand_dims(t, 0) for t in tensor_list]
        keep_rows = array_ops.reshape(keep_input, [1])
    return queue.enqueue_many(_select_which_to_enqueue(rows, keep_rows))


def _enqueue_ops(queue, tensor_list_list, enqueue_many, threads=None, keep_input=None):
    if threads is not None:  # one op, run by `threads` threads
        return [_keep_input_enqueue(queue, tensor_list_list[0], keep_input, enqueue_many)] \
            * threads
    return [_keep_input_enqueue(queue, tl, keep_input, enqueue_many) for tl in tensor_list_list]


def _dequeue(queue, batch_size, allow_smaller_final_batch, scope):
    if allow_smaller_final_batch:
        return queue.dequeue_up_to(batch_size, name=scope)
    return queue.dequeue_many(batch_size, name=scope)


def _check_shapes_for_queue(shapes, dynamic_pad):
    if not dynamic_pad:
        for s in shapes:
            if not s.is_fully_defined():
                raise ValueError(f"All shapes must be fully defined: {shapes}; to batch "
                                 f"elements of different shapes use dynamic_pad=True")


def _fifo_batch(tensors_list, join, batch_size, num_threads, capacity, enqueue_many, shapes,
                dynamic_pad, allow_smaller_final_batch, shared_name, name, keep_input=None):
    default = "batch_join" if join else "batch"
    lists = _as_tensor_list_list(tensors_list) if join else [_as_tensor_list(tensors_list)]
    with _graph.name_scope(name or default) as scope:
        lists = _validate_join(lists) if join else [_validate(lists[0], "batch")]
        if keep_input is not None:
            keep_input = _validate_keep_input(keep_input, enqueue_many)
        types = _types_of(lists)
        shapes = _shapes(lists, shapes, enqueue_many)
        _check_shapes_for_queue(shapes, dynamic_pad)
        queue = _queue(dynamic_pad, capacity, types, shapes, shared_name)
        enqueue = _enqueue_ops(queue, lists, enqueue_many, None if join else num_threads,
                               keep_input)
        add_queue_runner(QueueRunner(queue, enqueue))
        _summary_scalar(f"fraction_of_{capacity}_full",
                        math_ops.cast(queue.size(), _dtypes.float32) * (1.0 / capacity))
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(tensors_list[0] if join else tensors_list, dequeued)


def _shuffle_batch(tensors_list, join, batch_size, capacity, min_after_dequeue, num_threads,
                   seed, enqueue_many, shapes, allow_smaller_final_batch, shared_name, name,
                   keep_input=None):
    default = "shuffle_batch_join" if join else "shuffle_batch"
    lists = _as_tensor_list_list(tensors_list) if join else [_as_tensor_list(tensors_list)]
    with _graph.name_scope(name or default) as scope:
        if capacity <= min_after_dequeue:
            raise ValueError(f"capacity {capacity} must be bigger than min_after_dequeue "
                             f"{min_after_dequeue}.")
        lists = _validate_join(lists) if join else [_validate(lists[0], "shuffle_batch")]
        if keep_input is not None:
            keep_input = _validate_keep_input(keep_input, enqueue_many)
        types = _types_of(lists)
        shapes = _shapes(lists, shapes, enqueue_many)
        _check_shapes_for_queue(shapes, False)
        queue = RandomShuffleQueue(capacity=capacity, min_after_dequeue=min_after_dequeue,
                                   seed=seed, dtypes=types, shapes=shapes,
                                   shared_name=shared_name)
        enqueue = _enqueue_ops(queue, lists, enqueue_many, None if join else num_threads,
                               keep_input)
        add_queue_runner(QueueRunner(queue, enqueue))
        full = math_ops.cast(math_ops.maximum(0, queue.size() - min_after_dequeue),
                             _dtypes.float32) * (1.0 / (capacity - min_after_dequeue))
        _summary_scalar(f"fraction_over_{min_after_dequeue}_of_"
                        f"{capacity - min_after_dequeue}_full", full)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(tensors_list[0] if join else tensors_list, dequeued)


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
          dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches of `batch_size` elements, in order; `num_threads` threads enqueue."""
    return _fifo_batch(tensors, False, batch_size, num_threads, capacity, enqueue_many,
                       shapes, dynamic_pad, allow_smaller_final_batch, shared_name, name)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None,
               dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None,
               name=None):
    """Batches mixing several inputs (one enqueueing thread per list of tensors)."""
    return _fifo_batch(tensors_list, True, batch_size, None, capacity, enqueue_many, shapes,
                       dynamic_pad, allow_smaller_final_batch, shared_name, name)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None,
                  enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                  shared_name=None, name=None):
    """Batches of elements drawn at random from a RandomShuffleQueue."""
    return _shuffle_batch(tensors, False, batch_size, capacity, min_after_dequeue,
                          num_threads, seed, enqueue_many, shapes, allow_smaller_final_batch,
                          shared_name, name)


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None,
                       enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                       shared_name=None, name=None):
    """shuffle_batch over several inputs (one enqueueing thread per list of tensors)."""
    return _shuffle_batch(tensors_list, True, batch_size, capacity, min_after_dequeue, None,
                          seed, enqueue_many, shapes, allow_smaller_final_batch, shared_name,
                          name)


# -- with keep_input: elements (or rows) whose keep_input is false are not enqueued --------
def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32,
                enqueue_many=False, shapes=None, dynamic_pad=False,
                allow_smaller_final_batch=False, shared_name=None, name=None):
    """`batch` that enqueues only where `keep_input` (a bool scalar, or with
    enqueue_many a vector over the rows) is true."""
    return _fifo_batch(tensors, False, batch_size, num_threads, capacity, enqueue_many,
                       shapes, dynamic_pad, allow_smaller_final_batch, shared_name, name,
                       keep_input)


def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32, enqueue_many=False,
                     shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
                     shared_name=None, name=None):
    """`batch_join` with `keep_input` (see maybe_batch)."""
    return _fifo_batch(tensors_list, True, batch_size, None, capacity, enqueue_many, shapes,
                       dynamic_pad, allow_smaller_final_batch, shared_name, name, keep_input)


def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input,
                        num_threads=1, seed=None, enqueue_many=False, shapes=None,
                        allow_smaller_final_batch=False, shared_name=None, name=None):
    """`shuffle_batch` with `keep_input` (see maybe_batch)."""
    return _shuffle_batch(tensors, False, batch_size, capacity, min_after_dequeue,
                          num_threads, seed, enqueue_many, shapes, allow_smaller_final_batch,
                          shared_name, name, keep_input)


def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue,
                             keep_input, seed=None, enqueue_many=False, shapes=None,
                             allow_smaller_final_batch=False, shared_name=None, name=None):
    """`shuffle_batch_join` with `keep_input` (see maybe_batch)."""
    return _shuffle_batch(tensors_list, True, batch_size, capacity, min_after_dequeue, None,
                          seed, enqueue_many, shapes, allow_smaller_final_batch, shared_name,
                          name, keep_input)
