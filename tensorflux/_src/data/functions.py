"""The functions given to map, filter, flat_map, interleave: traced once, run compiled.

`StructuredFunction` calls the user's function once, on placeholders shaped like the
dataset's elements, in a `FunctionGraph` of its own. Running it is a `Session.run` of
that graph: the run plan compiles its ops into XLA clusters (host ops such as
parse_example run on the host), cached after the first element, so each element costs
one compiled call. Tensors the function captured from the user's graph are evaluated
when the iterator is initialized and fed with every call.
"""

from __future__ import annotations

import threading

from tensorflux._src.data import structure as _structure
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.func_graph import FunctionGraph
from tensorflux._src.framework.operation import Operation, Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor


class StructuredFunction:
    """A traced dataset function: element structure in, structure of tensors out."""

    def __init__(self, func, input_structure, transformation, returns_dataset=False):
        self.transformation = transformation
        outer = _graph.get_default_graph()
        self.graph = FunctionGraph(outer, f"the function given to {transformation}")
        with self.graph.as_default():
            self.inputs = [_placeholder(spec, i) for i, spec in enumerate(input_structure.specs)]
            args = input_structure.pack(self.inputs)
            result = func(*args) if isinstance(args, tuple) and not hasattr(args, "_fields") \
                else func(args)
            if returns_dataset:
                self._take_dataset(result, transformation)
            else:
                self.outputs, self.output_structure = _as_outputs(result, transformation)
        self.captured = list(self.graph.captures)  # outer tensors, evaluated at init
        self._captured_inputs = [self.graph.captures[t] for t in self.captured]

    def _take_dataset(self, dataset, transformation):
        """For flat_map/interleave: each call evaluates the returned dataset's arguments
        that were computed in the function; outer tensors it uses directly are inputs of
        the transformation itself (`outer_inputs`)."""
        from tensorflux._src.data.dataset_ops import Dataset
        if not isinstance(dataset, Dataset):
            raise TypeError(f"the function given to {transformation} must return a Dataset, "
                            f"got {type(dataset).__name__}")
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

    def __call__(self, leaves):
        feeds = dict(self._fixed)
        feeds.update(zip(self.function.inputs, leaves))
        if not self._compiled:
            with self._lock:
                values = self._session.run(self.function.outputs, feeds)
                self._compiled = True
        else:
            values = self._session.run(self.function.outputs, feeds)
        return tuple(_structure.to_array(v) for v in values)

    def call_batch(self, elements):
        """The function on each of `elements`, per output component either the values
        stacked on a new first axis or (shapes differing) their list.

        After the first call, a function whose compiled work follows its host ops (parse,
        decode) runs that work once for the whole group, vectorized (Session's
        `_run_batched`); the values are those of one call per element."""
        if self._compiled:
            feed_sets = []
            for leaves in elements:
                feeds = dict(self._fixed)
                feeds.update(zip(self.function.inputs, leaves))
                feed_sets.append(feeds)
            values = self._session._run_batched(self.function.outputs, feed_sets)
            if values is not None:
                return tuple(v if isinstance(v, list) else _structure.to_array(v)
                             for v in values)
        outputs = [self(leaves) for leaves in elements]
        return tuple(list(component) for component in zip(*outputs))

    def close(self):
        self._session.close()


def _placeholder(spec, index):
    from tensorflux._src.ops import constant
    return constant.placeholder(spec.dtype, spec.shape, name=f"arg{index}")


def _as_outputs(result, transformation):
    """The function's return value as (flat tensors, Structure)."""
    if isinstance(result, list):
        result = tuple(result)  # TF1 treats a returned list as a tuple of components
    leaves = _structure.flatten(result)
    tensors = []
    for leaf in leaves:
        if isinstance(leaf, Operation):
            raise TypeError(f"the function given to {transformation} returned the op "
                            f"{leaf.name}; it must return tensors (or values)")
        tensor = leaf if isinstance(leaf, Tensor) else convert_to_tensor(leaf)
        tensors.append(tensor)
    structure = _structure.Structure(
        result, [_structure.ComponentSpec(t.dtype.base_dtype, t.shape) for t in tensors])
    return tensors, structure
