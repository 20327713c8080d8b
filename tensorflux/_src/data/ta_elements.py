"""TensorArray components of dataset elements (`tf.TensorArraySpec`).

TF 1.15 turns a TensorArray returned by a dataset function (or given to `from_tensors`)
into a TensorList of its stacked elements, and hands consumers a TensorArray over that
list. Here the component travels as its stacked elements (one dense array, shape
[size] + element_shape) and becomes a TensorArray again where graph code sees it: a
function's argument or an iterator's output, of the size of the stacked array.
As in TF 1.15 (TensorArraySpec has no batching rules), such elements do not batch.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import errors, tensor_shape
from tensorflux._src.ops.array.array_ops import shape as _shape
from tensorflux._src.ops.control.tensor_array_ops import TensorArray, TensorArraySpec


class TensorArrayComponent:
    """The `structure.kind` of a TensorArraySpec component."""

    output_class = TensorArray

    @staticmethod
    def flat_specs(spec):
        return [(spec._dtype, tensor_shape.TensorShape([None]).concatenate(
            spec._element_shape))]

    @staticmethod
    def to_arrays(value):
        return [value]

    @staticmethod
    def from_arrays(spec, arrays):
        return arrays[0]

    @staticmethod
    def graph_flat(value):
        # TF's TensorArraySpec._to_components: the stacked elements (as a TensorList).
        return [value.stack()] if isinstance(value, TensorArray) else [value]

    @staticmethod
    def graph_pack(spec, tensors):
        # TF's _from_components: an array over the stacked elements, of their count.
        stacked = tensors[0]
        rows = stacked.shape[0].value if stacked.shape.ndims else None
        array = TensorArray(spec._dtype, size=rows if rows is not None else _shape(stacked)[0],
                            dynamic_size=spec._dynamic_size, infer_shape=spec._infer_shape,
                            element_shape=spec._element_shape)
        return array.unstack(stacked)

    @staticmethod
    def batch(values, component, spec):
        raise errors.InvalidArgumentError(
            None, None, f"Cannot batch component {component}: it is a TensorArray "
                        f"({spec!r}); stack it in the dataset function instead")

    @staticmethod
    def batch_size(value):
        return len(np.asarray(value))

    @staticmethod
    def unbatch(value):
        raise errors.InvalidArgumentError(None, None, "Cannot unbatch a TensorArray component")

    @staticmethod
    def batched_spec(spec, dim=None):
        # TF 1.15's TensorArraySpec has no _batch/_unbatch: batching fails when traced.
        raise NotImplementedError(f"{spec!r} does not support batching or unbatching; "
                                  f"stack the TensorArray in the dataset function instead")

    @staticmethod
    def unbatched_spec(spec):
        TensorArrayComponent.batched_spec(spec)
