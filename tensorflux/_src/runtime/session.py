"""`tf.Session`: runs fetches of a graph, compiling each distinct run once.

The hot path of `run` is a dict lookup: the key is (graph version, fetch structure,
fed tensors and their shapes). A miss builds an `Executable` (prune, CSE, fold, lower,
jit); executables are also shared by the pruned subgraph they compute, so adding
unrelated ops to the graph does not re-trace anything.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
import weakref

import jax
import numpy as np

from tensorflux._src.compiler import compile_cache, persistent
from tensorflux._src.compiler.executable import CompileStats, Executable
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.composite_tensor import CompositeTensor
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework import default_session
from tensorflux._src.runtime import devices, fetches as _fetches
from tensorflux._src.runtime import config as _config
from tensorflux._src.runtime.session_ops import TensorHandle
from tensorflux._src.framework.tensor_conversion import make_ndarray


class SessionState:
    """What persists across runs of one Session: variable buffers, PRNG positions, and
    resources such as tf.data iterators (closed with the Session)."""

    def __init__(self):
        self.variables = {}  # VariableV2 op -> its current value (a device buffer)
        self._random = {}  # random op -> [seed, seed2, times run]
        self.resources = {}  # name -> object with close(), e.g. an iterator's state
        # Dataset functions run one Session from several threads: drawing keys is the
        # one read-modify-write they share.
        self._random_lock = threading.Lock()
        # Set first thing in close(): a run still going in another thread must not
        # create resources (queues) that nothing would ever close.
        self.closed = False
        # Runs may come from several threads (queue runners): a compiled call that
        # reads or writes variables holds this, so no thread reads a buffer another
        # one is donating.
        self.variables_lock = threading.RLock()
        # The stored executables this session's graph used (compiler/persistent.py),
        # opened at the first run; None with the cache off.
        self.manifest = None

    def draw_keys(self, random_ops, times=None):
        """(seed, seed2, count) rows for this run's random ops; advances their counts.
        With `times`, that many consecutive runs' rows at once, stacked (a group of
        dataset elements), drawn under one lock so no other thread's run interleaves."""
        with self._random_lock:
            if times is None:
                return self._draw_keys(random_ops)
            return np.stack([self._draw_keys(random_ops) for _ in range(times)])

    def close(self):
        self.closed = True
        resources, self.resources = self.resources, {}
        for resource in resources.values():
            resource.close()

    def _draw_keys(self, random_ops):
        rows = []
        for op in random_ops:
            row = self._random.get(op)
            if row is None:
                seed, seed2 = op.get_attr("seed"), op.get_attr("seed2")
                if seed == 0 and seed2 == 0:  # unseeded: differs in every session
                    seed, seed2 = secrets.randbits(31), secrets.randbits(31)
                row = self._random[op] = [seed, seed2, 0]
            rows.append(tuple(row))
            row[2] += 1
        return np.array(rows, dtype=np.uint32)


class _Run:
    """A cached run signature: the executable plus how to rebuild the fetch structure."""

    __slots__ = ("executable", "rebuild")

    def __init__(self, executable, rebuild):
        self.executable = executable
        self.rebuild = rebuild


class BaseSession:
    _live = weakref.WeakSet()  # open sessions, for `Session.reset`
    _created = 0  # sessions made so far: tf.enable_eager_execution refuses after one

    def __init__(self, target="", graph=None, config=None):
        self._graph = graph if graph is not None else _graph.get_default_graph()
        if not isinstance(self._graph, _graph.Graph):
            raise TypeError(f"graph must be a tf.Graph, but got {type(self._graph)}")
        self._target = target
        self._config = _config.check_config(config)
        # Before anything compiles (constant folding may): executables go to disk.
        compile_cache.enable()
        self._closed = False
        self._runs = {}  # (graph version, fetch key, feed key) -> _Run
        self._runs_version = self._graph.version
        self._executables = {}  # pruned-subgraph signature -> Executable
        self._state = SessionState()
        self.compile_stats = CompileStats()
        self._context_stack = None
        self._partial_runs = {}  # handle -> PartialRun (partial_run_setup)
        BaseSession._live.add(self)
        BaseSession._created += 1

    # -- properties -------------------------------------------------------------------
    @property
    def graph(self):
        return self._graph

    @property
    def graph_def(self):
        return self._graph

    @property
    def sess_str(self):
        return self._target

    def list_devices(self):
        return devices.list_devices()

    # -- running ----------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Computes `fetches` (any nesting of tensors/ops/names) given `feed_dict`."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if getattr(self._graph, "_is_eager_graph", False):  # TF's words under eager mode
            raise RuntimeError("The Session graph is empty.  Add operations to the graph "
                               "before calling run().")
        feed_key, feed_values = self._convert_feeds(feed_dict)
        run = self._run_for(fetches, feed_key)
        if run_metadata is not None:
            values = run.executable.run_traced(feed_values, self._state, run_metadata)
            return run.rebuild(values)
        return run.rebuild(run.executable.run(feed_values, self._state))

    def _run_for(self, fetches, feed_key):
        """The cached run for this fetch structure and these feeds (names and shapes)."""
        version = self._graph._version
        if version != self._runs_version:
            self._runs.clear()  # keys of older versions can never match again
            self._runs_version = version
        try:
            key = (_fetches.structure_key(fetches), feed_key)
            run = self._runs.get(key)
        except TypeError:  # an unhashable leaf: let _prepare report it
            key, run = None, None
        if run is None:
            run = self._prepare(fetches, feed_key)
            if key is not None:
                self._runs[key] = run
        return run

    def _run_batched(self, fetches, feed_sets):
        """For tf.data's map before batch: `run(fetches, feeds)` for each feed dict of
        `feed_sets` at once (see `Executable.run_batched`); per fetch, the values stacked
        (or listed, where shapes differ). `fetches` is a flat list of tensors, already run
        once with feeds of these shapes. None when the sets cannot share one plan."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        converted = [self._convert_feeds(feeds) for feeds in feed_sets]
        feed_key = converted[0][0]
        if any(key != feed_key for key, _ in converted):
            return None
        executable = self._run_for(fetches, feed_key).executable
        if executable.run == executable._first_run:
            return None
        return executable.run_batched([values for _, values in converted], self._state)

    def partial_run_setup(self, fetches, feeds=None):
        """Declares a run made of several `partial_run` steps; returns its handle."""
        from tensorflux._src.runtime.partial_run import PartialRun, check_setup_arguments
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        check_setup_arguments(fetches, feeds)
        run = PartialRun(self, fetches, feeds)
        self._partial_runs[run.handle] = run
        return run.handle

    def partial_run(self, handle, fetches, feed_dict=None):
        """One step of the partial run `handle`: feeds some of its declared feeds and
        returns some of its declared fetches."""
        run = self._partial_runs.get(handle)
        if run is None:
            raise errors.InvalidArgumentError(
                None, None, f"Must run 'setup' before performing partial runs! (handle "
                            f"{handle!r} is unknown)")
        return run.step(self, fetches, feed_dict)

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        """A function running `fetches` with positional values for `feed_list`."""
        feed_list = list(feed_list or [])

        def call(*feed_args, **kwargs):
            if len(feed_args) != len(feed_list):
                raise TypeError(f"Callable expected {len(feed_list)} feed values, got "
                                f"{len(feed_args)}.")
            return self.run(fetches, dict(zip(feed_list, feed_args)))

        return call

    def _feed_tensor(self, key):
        if isinstance(key, Tensor):
            tensor = key
        else:
            try:
                tensor = self._graph.as_graph_element(key, allow_tensor=True,
                                                      allow_operation=False)
            except Exception as e:
                raise TypeError(f"Cannot interpret feed_dict key as Tensor: {e}") from None
        if tensor.graph is not self._graph:
            raise ValueError(f"Cannot interpret feed_dict key as Tensor: Tensor {tensor} is "
                             f"not an element of this graph.")
        return tensor

    def _convert_feeds(self, feed_dict):
        if not feed_dict:
            return (), ()
        keys, values = [], []
        for key, value in _expand_composite_feeds(feed_dict):
            tensor = key if type(key) is Tensor else self._feed_tensor(key)
            if type(value) is not np.ndarray or value.dtype != tensor._dtype._np_dtype:
                if isinstance(value, TensorHandle):  # its string, or the value it holds
                    value = value.handle if tensor._dtype.base_dtype == _dtypes.string \
                        else value._value(self)
                value = _feed_array(tensor, key, value)
            keys.append((tensor, value.shape))
            values.append(value)
        return tuple(keys), values

    def _prepare(self, fetches, feed_key):
        graph = self._graph
        fetch_tensors, target_ops, rebuild = _fetches.flatten(graph, fetches, self)
        feed_tensors = [t for t, _ in feed_key]
        for tensor, shape in feed_key:
            if not tensor.shape.is_compatible_with(shape):
                raise ValueError(f"Cannot feed value of shape {shape!r} for Tensor "
                                 f"{tensor.name!r}, which has shape {str(tensor.shape)!r}")
            if not graph.is_feedable(tensor):
                raise ValueError(f"Tensor {tensor} may not be fed.")
        from tensorflux._src.compiler.passes import prune
        needed = prune(fetch_tensors, target_ops, set(feed_tensors))
        if not self._config.allow_soft_placement:
            devices.check_placement(needed)
        signature = (tuple((op._id, len(op._control_inputs)) for op in needed),
                     tuple(fetch_tensors), tuple(target_ops), feed_key)
        executable = self._executables.get(signature)
        if executable is None:
            if self._state.manifest is None and compile_cache.directory() is not None:
                # Before planning: the executables this graph used before start loading.
                self._state.manifest = persistent.open_manifest(graph, jax.devices()[0])
            executable = Executable(fetch_tensors, target_ops, feed_tensors,
                                    self.compile_stats,
                                    _config.compiler_options(self._config))
            self._executables[signature] = executable
            if self._config.log_device_placement or devices.get_log_device_placement():
                devices.log_placement(executable.placements())
        return _Run(executable, rebuild)

    # -- lifecycle ----------------------------------------------------------------------
    @staticmethod
    def reset(target, containers=None, config=None):
        """Clears the resource containers of every Session connected to `target` and
        closes them all, as TF's in-process session factory does: their variables,
        queues and iterators are gone, and using them raises RuntimeError. (Each
        Session's state is its own, so clearing `containers` and closing leave the same
        nothing behind.)"""
        for session in list(BaseSession._live):
            if session._target == target and not session._closed:
                session.close()

    def close(self):
        self._closed = True
        self._runs.clear()
        self._executables.clear()
        self._state.close()
        self._state = SessionState()

    def as_default(self):
        """Makes this the session `Tensor.eval()` and `Operation.run()` use."""
        return default_session.as_default(self)

    def __enter__(self):
        self._context_stack = contextlib.ExitStack()
        self._context_stack.enter_context(self._graph.as_default())
        self._context_stack.enter_context(self.as_default())
        return self

    def __exit__(self, exc_type, exc, tb):
        self._context_stack.close()
        self.close()

    def __del__(self):
        self._closed = True


def _expand_composite_feeds(feed_dict):
    """(key, value) pairs with composite keys (a SparseTensor fed a SparseTensorValue or
    a tuple, a RaggedTensor fed a RaggedTensorValue, an IndexedSlices fed an
    IndexedSlicesValue) opened into their components."""
    for key, value in feed_dict.items():
        if isinstance(key, CompositeTensor):
            pending = list(key._feed_components(value))
            while pending:
                k, v = pending.pop(0)
                if isinstance(k, CompositeTensor):
                    pending[:0] = k._feed_components(v)
                else:
                    yield k, v
        else:
            yield key, value


def _feed_array(tensor, key, value):
    """A feed value as a numpy array of the tensor's dtype, with TF1's checks."""
    if isinstance(value, Tensor):
        raise TypeError(f"The value of a feed cannot be a tf.Tensor object. Acceptable feed "
                        f"values include Python scalars, strings, lists, numpy ndarrays, or "
                        f"TensorHandles. For reference, the tensor object was {value} which "
                        f"was passed to the feed with key {key}.")
    dtype = tensor.dtype.base_dtype
    if isinstance(value, int) and not isinstance(value, bool) and dtype.is_integer:
        if not dtype.min <= value <= dtype.max:
            raise TypeError(f"Type of feed value {value} with type {type(value)} is not "
                            f"compatible with Tensor type {dtype}. Try explicitly setting the "
                            f"type of the feed tensor to a larger type (e.g. int64).")
    if dtype == _dtypes.string:
        return make_ndarray(value, dtype=_dtypes.string)
    try:
        return np.asarray(value, dtype=dtype.as_numpy_dtype)
    except (TypeError, ValueError) as e:
        raise ValueError(f"Cannot feed value {value!r} for Tensor {tensor.name!r} of dtype "
                         f"{dtype.name}: {e}") from None


class Session(BaseSession):
    """`tf.Session(target='', graph=None, config=None)`."""


class InteractiveSession(BaseSession):
    """A Session that installs itself (and its graph) as the default on creation."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        self._default_stack = contextlib.ExitStack()
        self._default_stack.enter_context(self._graph.as_default())
        self._default_stack.enter_context(self.as_default())

    def close(self):
        super().close()
        stack, self._default_stack = getattr(self, "_default_stack", None), None
        if stack is not None:
            stack.close()
