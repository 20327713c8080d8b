"""The functions given to map, filter, flat_map, interleave, scan...: traced once, run
compiled.

`StructuredFunction` calls the user's function once, on placeholders shaped like the
dataset's elements, in a `FunctionGraph` of its own. Running it is a `Session.run` of
that graph: the run plan compiles its ops into XLA clusters (host ops such as
parse_example run on the host), cached after the first element, so each element costs
one compiled call. Tensors the function captured from the user's graph are evaluated
when the iterator is initialized and fed with every call.

A sparse component arrives as a SparseTensor over three placeholders, a ragged one as a
RaggedTensor over its flat values and row splits; a dataset component (the windows of
`window`, `group_by_window`) arrives as a `FedDataset`, a node whose elements each call
supplies. A function may return SparseTensors and RaggedTensors; one given to
flat_map/interleave returns a Dataset, whose tensors computed in the function are the
function's outputs.
"""

from __future__ import annotations

import threading

from tensorflux._src.data import structure as _structure
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.func_graph import FunctionGraph
from tensorflux._src.framework.operation import Operation, Tensor
from tensorflux._src.framework.composite_tensor import CompositeTensor
from tensorflux._src.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorflux._src.ops.control.tensor_array_ops import TensorArray
from tensorflux._src.ops.sparse.ragged_tensor import RaggedTensorValue
from tensorflux._src.framework.tensor_conversion import convert_to_tensor


class StructuredFunction:
    """A traced dataset function: element structure in, structure of components out."""

    def __init__(self, func, input_structure, transformation, returns_dataset=False,
                 unpack=True):
        from tensorflux._src.data.dataset_ops import Dataset
        self.transformation = transformation
        self.input_structure = input_structure
        outer = _graph.get_default_graph()
        self.graph = FunctionGraph(outer, f"the function given to {transformation}")
        self.inputs, self.fed_datasets = [], []
        with self.graph.as_default():
            args = input_structure.pack(self._arguments(input_structure))
            if self.fed_datasets and not returns_dataset:
                raise TypeError(f"the function given to {transformation} takes elements "
                                f"that are datasets (as `window` makes); here only "
                                f"functions returning a dataset (flat_map, interleave) "
                                f"can take them")
            if unpack and type(args) is tuple:  # as TF's wrapper, one level: (x, y) -> f(x, y)
                result = func(*args)
            else:
                result = func(args)
            if returns_dataset:
                if not isinstance(result, Dataset):
                    raise TypeError(f"the function given to {transformation} must return a "
                                    f"Dataset, got {type(result).__name__}")
                self._take_dataset(result)
            else:
                if isinstance(result, Dataset):
                    raise TypeError(f"the function given to {transformation} returned a "
                                    f"Dataset; datasets of datasets are made by window and "
                                    f"consumed by flat_map/interleave here")
                self.output_leaves, self.output_structure = _as_outputs(
                    result, transformation, self.graph)
                self.outputs = self.output_structure.graph_flat(self.output_leaves)
        self.captured = list(self.graph.captures)  # outer tensors, evaluated at init
        self._captured_inputs = [self.graph.captures[t] for t in self.captured]
        self.dense_io = input_structure.all_dense and (
            returns_dataset or self.output_structure.all_dense)

    def _arguments(self, structure):
        from tensorflux._src.data.sources import FedDataset
        from tensorflux._src.ops import constant
        leaves = []
        for index, spec in enumerate(structure.specs):
            kind = _structure.kind(spec)
            if kind is _structure._Nested:
                node = FedDataset(spec.element_spec)
                self.fed_datasets.append((index, node))
                leaves.append(node)
                continue
            flat = [constant.placeholder(dtype, shape, name=f"arg{index}")
                    for dtype, shape in kind.flat_specs(spec)]
            self.inputs.extend(flat)
            leaves.append(kind.graph_pack(spec, flat))
        return leaves

    def _take_dataset(self, dataset):
        """For flat_map/interleave: each call evaluates the returned dataset's arguments
        that were computed in the function; outer tensors it uses directly are inputs of
        the transformation itself (`outer_inputs`)."""
        self.dataset, self.output_structure = dataset, dataset._structure
        self.outputs = [t for t in dataset._inputs() if t.graph is self.graph]
        self.outer_inputs = tuple(t for t in dataset._inputs() if t.graph is not self.graph)

    def bind(self, captured_values):
        return BoundFunction(self, captured_values)


class BoundFunction:
    """A function with its captured values, callable from several threads.

    The first call compiles under a lock; later calls run concurrently (XLA releases
    the GIL while it computes), which is what `num_parallel_calls` buys.
    """

    def __init__(self, function, captured_values):
        from tensorflux._src.runtime.session import Session
        self.function = function
        self._session = Session(graph=function.graph)
        self._fixed = dict(zip(function._captured_inputs, captured_values))
        self._compiled = False
        self._lock = threading.Lock()

    def rebind(self, captured_values):
        """The same compiled function fed other captured values."""
        other = object.__new__(BoundFunction)
        other.__dict__.update(self.__dict__)
        other._fixed = dict(zip(self.function._captured_inputs, captured_values))
        return other

    def _feeds(self, leaves):
        feeds = dict(self._fixed)
        feeds.update(zip(self.function.inputs,
                         self.function.input_structure.to_arrays(leaves)))
        return feeds

    def run_flat(self, leaves):
        """The function's flat output tensors' values for one element."""
        if not self.function.outputs:
            return []
        feeds = self._feeds(leaves)
        if not self._compiled:
            with self._lock:
                values = self._session.run(self.function.outputs, feeds)
                self._compiled = True
            return values
        return self._session.run(self.function.outputs, feeds)

    def __call__(self, leaves):
        """The function's output components for one element (a flat tuple)."""
        values = [_structure.to_array(v) for v in self.run_flat(leaves)]
        return self.function.output_structure.from_arrays(values)

    def dataset_values(self, leaves):
        """For a function returning a dataset: the values its iteration needs (its
        tensors computed here, and the datasets the element supplies)."""
        values = dict(zip(self.function.outputs, self.run_flat(leaves)))
        for index, node in self.function.fed_datasets:
            values[node] = leaves[index]
        return values

    def call_batch(self, elements):
        """The function on each of `elements`, per output component either the values
        stacked on a new first axis or (shapes differing) their list.

        After the first call, a function whose compiled work follows its host ops (parse,
        decode) runs that work once for the whole group, vectorized (Session's
        `_run_batched`); the values are those of one call per element."""
        if self._compiled and self.function.dense_io:
            feed_sets = [self._feeds(leaves) for leaves in elements]
            values = self._session._run_batched(self.function.outputs, feed_sets)
            if values is not None:
                return tuple(v if isinstance(v, list) else _structure.to_array(v)
                             for v in values)
        outputs = [self(leaves) for leaves in elements]
        return tuple(list(component) for component in zip(*outputs))

    def close(self):
        self._session.close()


def _as_outputs(result, transformation, graph):
    """The function's return value as (graph components, Structure). A tensor of an
    outer graph returned as is (`lambda x: (key, x)`) is captured like any other."""
    if isinstance(result, list):
        result = tuple(result)  # TF1 treats a returned list as a tuple of components
    leaves = _structure.flatten(result)
    components = []
    for leaf in leaves:
        if isinstance(leaf, Operation):
            raise TypeError(f"the function given to {transformation} returned the op "
                            f"{leaf.name}; it must return tensors (or values)")
        if isinstance(leaf, SparseTensorValue):
            leaf = SparseTensor.from_value(leaf)
        elif isinstance(leaf, RaggedTensorValue):
            leaf = _structure.to_graph_ragged(leaf)
        if isinstance(leaf, CompositeTensor):
            if any(t.graph is not graph for t in leaf._flat_tensors()):
                leaf = leaf._from_components([
                    t if t.graph is graph else graph.capture_value(t)
                    for t in leaf._flat_tensors()])
        elif isinstance(leaf, TensorArray):
            pass  # a component of its own (TensorArraySpec); graph_flat stacks it
        elif not isinstance(leaf, Tensor):
            leaf = convert_to_tensor(leaf)
        elif isinstance(leaf, Tensor) and leaf.graph is not graph:
            leaf = graph.capture_value(leaf)
        components.append(leaf)
    structure = _structure.Structure(
        result, [_structure.spec_of_graph_value(c) for c in components])
    return components, structure
