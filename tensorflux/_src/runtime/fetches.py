"""Fetch structures: any nesting of lists, tuples, namedtuples and dicts of graph elements.

A composite leaf is fetched as its component tensors: a `tf.SparseTensor` comes back as a
`tf.SparseTensorValue(indices, values, dense_shape)`, a `tf.RaggedTensor` as a
`tf.ragged.RaggedTensorValue`, a `tf.IndexedSlices` as a `tf.IndexedSlicesValue`, as in
TF1.

`flatten(graph, fetches)` resolves every leaf to a Tensor or Operation and returns the
unique tensors to compute, the ops to run, and a function rebuilding the user's
structure from the computed values. `structure_key(fetches)` is the cheap hashable key
a Session caches on.
"""

from __future__ import annotations

from tensorflux._src.framework.operation import Operation, Tensor
from tensorflux._src.framework.composite_tensor import CompositeTensor


def structure_key(fetches):
    kind = type(fetches)
    if kind is Tensor or kind is Operation or kind is str:
        return fetches
    if kind is list or kind is tuple or isinstance(fetches, tuple):
        return (kind, tuple(structure_key(f) for f in fetches))
    if isinstance(fetches, dict):
        return (kind, tuple((k, structure_key(v)) for k, v in fetches.items()))
    return fetches  # other leaves (Variables, ...) hash by themselves


def _resolve_leaf(graph, fetch):
    if fetch is None:
        raise TypeError(f"Fetch argument None has invalid type {type(None)}")
    try:
        return graph.as_graph_element(fetch, allow_tensor=True, allow_operation=True)
    except TypeError as e:
        raise TypeError(f"Fetch argument {fetch!r} has invalid type {type(fetch)}, must be a "
                        f"string or Tensor. ({e})") from None
    except (ValueError, KeyError) as e:
        message = e.args[0] if e.args else str(e)
        raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. "
                         f"({message})") from None


def flatten(graph, fetches, session=None):
    """Returns (tensors, target_ops, rebuild) for a fetch structure. A session handle
    (`tf.get_session_handle`) comes back as a TensorHandle of `session`."""
    tensors, tensor_index, targets = [], {}, []

    def build(fetch):
        if isinstance(fetch, (list, tuple)) or isinstance(fetch, dict):
            if isinstance(fetch, dict):
                keys = list(fetch.keys())
                parts = [build(fetch[k]) for k in keys]
                kind = type(fetch)
                return lambda values: kind(zip(keys, (p(values) for p in parts)))
            parts = [build(f) for f in fetch]
            if isinstance(fetch, tuple) and hasattr(fetch, "_fields"):  # namedtuple
                kind = type(fetch)
                return lambda values: kind(*(p(values) for p in parts))
            kind = type(fetch)
            return lambda values: kind(p(values) for p in parts)
        if isinstance(fetch, CompositeTensor):
            parts = [build(t) for t in fetch._components()]
            return lambda values: fetch._value_from_components([p(values) for p in parts])
        element = _resolve_leaf(graph, fetch)
        if isinstance(element, Operation):
            if element not in targets:
                targets.append(element)
            return lambda values: None
        if not graph.is_fetchable(element):
            raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. "
                             f"(Operation {element.op.name!r} has been marked as not "
                             f"fetchable.)")
        if element not in tensor_index:
            tensor_index[element] = len(tensors)
            tensors.append(element)
        i = tensor_index[element]
        if element.op.type == "GetSessionHandle":
            from tensorflux._src.runtime.session_ops import TensorHandle
            dtype = element.op.inputs[0].dtype
            return lambda values: TensorHandle(values[i], dtype, session)
        return lambda values: values[i]

    rebuild = build(fetches)
    if not isinstance(fetches, (list, tuple, dict, CompositeTensor)) and not (
            tensors and tensors[0].op.type == "GetSessionHandle"):
        # A single fetch: skip the closure on the hot path.
        rebuild = (lambda values: values[0]) if tensors else (lambda values: None)
    return tensors, targets, rebuild

