"""Ops that consume a whole dataset when run: reduce, get_single_element,
cardinality, fingerprint and TFRecordWriter.write (TF's ReduceDataset,
DatasetToSingleElement, DatasetCardinality, DatasetFingerprint, DatasetToTFRecord).

Each is a host op over a registered pseudo-dataset (`_Consumer`) whose inputs are the
graph tensors the pass needs; its kernel starts a fresh iteration with their values,
as an iterator's initializer does, and closes it when done.
"""

from __future__ import annotations

import contextlib
import hashlib
import os

import numpy as np

from tensorflux._src.data import structure as _structure
from tensorflux._src.data.dataset_ops import (
    INPUT_TYPES, Dataset, ElementError, IterationContext,
)
from tensorflux._src.data.element_ops import State, trace_state_function
from tensorflux._src.data.iterator_ops import _DATASETS, _register_dataset
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.io import tfrecord
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import REQUIRED, OpDef, register
from tensorflux._src.train import atomic_write


class _Consumer(Dataset):
    """What a consuming op needs: the dataset, and any state and functions of its own."""

    def __init__(self, dataset, tensors=(), functions=()):
        self._children = (dataset,)
        self._tensor_args = tuple(tensors)
        self._functions = tuple(functions)
        self._structure = dataset._structure


@contextlib.contextmanager
def _pass(token, inputs):
    """(consumer, context) for one run of a consuming op; closed afterwards."""
    node = _DATASETS[token]
    ctx = IterationContext(dict(zip(node._inputs(), inputs)))
    try:
        yield node, ctx
    finally:
        ctx.close()


def _elements(node, ctx):
    """The dataset's elements; a failed one raises (these ops stop at an error)."""
    elements = node._children[0]._iterate(ctx)
    try:
        for element in elements:
            if type(element) is ElementError:
                raise element.error
            yield element
    finally:
        elements.close()


def _components_op(op_type, node, structure, name):
    """Applies a consuming op whose outputs are `structure`'s components."""
    flat = structure.flat_tensor_specs()
    outputs = apply_op(op_type, name=name or op_type, inputs=node._inputs(),
                       dataset=_register_dataset(node), output_types=tuple(d for d, _ in flat),
                       output_shapes=tuple(s for _, s in flat))
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    for tensor, (_, shape) in zip(outputs, flat):
        tensor.set_shape(shape)
    return structure.graph_pack(outputs)


# -- reduce ---------------------------------------------------------------------------
def _reduce_kernel(*inputs, dataset, output_types, output_shapes):
    with _pass(dataset, inputs) as (node, ctx):
        function = ctx.function(node._functions[0])
        state = node.state.values(ctx)
        for element in _elements(node, ctx):
            state = tuple(function(state + tuple(element)))
        return tuple(node.state_structure.to_arrays(state))


def reduce_dataset(dataset, initial_state, reduce_func, name=None):
    """`Dataset.reduce`: reduce_func(state, element) folded over the dataset; the final
    state's tensors (computed when run)."""
    state = State(initial_state)
    function, structure = trace_state_function(reduce_func, state.structure,
                                               dataset._structure, "reduce")
    node = _Consumer(dataset, state.tensors, (function,))
    node.state, node.state_structure = state, structure
    return _components_op("ReduceDataset", node, structure, name)


# -- get_single_element -----------------------------------------------------------------
def _single_element_kernel(*inputs, dataset, output_types, output_shapes):
    with _pass(dataset, inputs) as (node, ctx):
        elements = _elements(node, ctx)
        first = next(elements, None)
        if first is None:
            raise errors.InvalidArgumentError(None, None, "Dataset was empty.")
        if next(elements, None) is not None:
            raise errors.InvalidArgumentError(None, None, "Dataset had more than one element.")
        elements.close()
        return tuple(node._structure.to_arrays(first))


def get_single_element(dataset, name=None):
    """The only element of `dataset`, as tensors (InvalidArgumentError when run if the
    dataset is empty or has more)."""
    if not isinstance(dataset, Dataset):
        raise TypeError("`dataset` must be a `tf.data.Dataset` object.")
    node = _Consumer(dataset)
    return _components_op("DatasetToSingleElement", node, dataset._structure, name)


# -- cardinality and fingerprint ------------------------------------------------------
def _cardinality_kernel(*inputs, dataset):
    with _pass(dataset, inputs) as (node, ctx):
        return np.int64(node._children[0]._cardinality(ctx))


def cardinality(dataset):
    """A scalar int64 tensor: the dataset's number of elements, INFINITE_CARDINALITY
    (-1) or UNKNOWN_CARDINALITY (-2), as TF's kernels compute it."""
    if not isinstance(dataset, Dataset):
        raise TypeError("`dataset` must be a `tf.data.Dataset` object.")
    node = _Consumer(dataset)
    return apply_op("DatasetCardinality", name="DatasetCardinality", inputs=node._inputs(),
                    dataset=_register_dataset(node))


def fingerprint_of(dataset, ctx) -> int:
    """A 64-bit fingerprint of what the pipeline computes: node types, element specs,
    argument values and the graphs of its functions."""
    digest = hashlib.sha256()

    def visit(node):
        for part in node._describe(ctx):
            digest.update(str(part).encode())
            digest.update(b"\0")
        for function in node._functions:
            digest.update(function.graph.as_graph_def().SerializeToString())
            for t in function.captured:
                digest.update(repr(np.asarray(ctx.value(t)).tolist()).encode())
            if hasattr(function, "dataset"):
                visit(function.dataset)
        for child in node._children:
            visit(child)

    visit(dataset)
    return int.from_bytes(digest.digest()[:8], "little")


def _fingerprint_kernel(*inputs, dataset):
    with _pass(dataset, inputs) as (node, ctx):
        return np.uint64(fingerprint_of(node._children[0], ctx))


def fingerprint(dataset):
    """A scalar uint64 tensor identifying the dataset's computation (equal for
    pipelines built the same way from the same values)."""
    node = _Consumer(dataset)
    return apply_op("DatasetFingerprint", name="DatasetFingerprint", inputs=node._inputs(),
                    dataset=_register_dataset(node))


# -- TFRecordWriter ---------------------------------------------------------------------
def _to_tfrecord_kernel(*inputs, dataset):
    with _pass(dataset, inputs) as (node, ctx):
        filename = _text(ctx.value(node.filename))
        compression = _text(ctx.value(node.compression_type))
        if compression not in ("", "GZIP", "ZLIB"):
            raise errors.InvalidArgumentError(
                None, None, f"Unsupported compression_type: {compression}.")
        options = tfrecord.TFRecordOptions(compression or None)

        def write(tmp):
            with tfrecord.TFRecordWriter(tmp, options) as writer:
                for element in _elements(node, ctx):
                    writer.write(bytes(np.asarray(element[0]).item()))

        atomic_write.write_with(os.fspath(filename), write)
        return ()


def _text(value):
    value = np.asarray(value).item() if not isinstance(value, str) else value
    return value.decode() if isinstance(value, bytes) else str(value)


class TFRecordWriter:
    """`tf.data.experimental.TFRecordWriter(filename, compression_type=None)`:
    `write(dataset)` is an op that writes the dataset's scalar strings as a TFRecord
    file (here: atomically, the file appears once complete)."""

    def __init__(self, filename, compression_type=None):
        self._filename = convert_to_tensor(filename, _dtypes.string, name="filename")
        self._compression_type = convert_to_tensor(
            "" if compression_type is None else compression_type, _dtypes.string,
            name="compression_type")

    def write(self, dataset):
        if not isinstance(dataset, Dataset):
            raise TypeError("`dataset` must be a `tf.data.Dataset` object.")
        specs = dataset._structure.specs
        if _structure.is_structure(dataset._structure.template) or len(specs) != 1 or \
                not isinstance(specs[0], _structure.TensorSpec) or \
                specs[0].dtype != _dtypes.string or not specs[0].shape.is_compatible_with([]):
            raise TypeError(f"`dataset` must produce scalar `DT_STRING` tensors whereas it "
                            f"produces shape {dataset.output_shapes} and types "
                            f"{dataset.output_types}")
        node = _Consumer(dataset, (self._filename, self._compression_type))
        node.filename, node.compression_type = self._filename, self._compression_type
        return apply_op("DatasetToTFRecord", name="DatasetToTFRecord",
                        inputs=node._inputs(), dataset=_register_dataset(node))


# -- the op records ------------------------------------------------------------------
def _consumer_record(name, kernel, outputs, **attrs):
    register(OpDef(name, inputs=("inputs: list(Tin)",), outputs=outputs,
                   attrs={"Tin": INPUT_TYPES, "dataset": REQUIRED, **attrs},
                   host=kernel, stateful=True, not_differentiable=True))


_components = ("components: list(output_types)",)
_consumer_record("ReduceDataset", _reduce_kernel, _components,
                 output_types=REQUIRED, output_shapes=REQUIRED)
_consumer_record("DatasetToSingleElement", _single_element_kernel, _components,
                 output_types=REQUIRED, output_shapes=REQUIRED)
_consumer_record("DatasetCardinality", _cardinality_kernel, ("cardinality: int64",))
_consumer_record("DatasetFingerprint", _fingerprint_kernel, ("fingerprint: uint64",))
_consumer_record("DatasetToTFRecord", _to_tfrecord_kernel, ())
