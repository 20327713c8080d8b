"""`tf.train.Checkpoint` and `CheckpointManager` (object-based checkpoints) in TF1 graph
mode, `tf.train.CheckpointOptions` and `tf.train.experimental.PythonState`.

Objects are found through their attributes, breadth first from the Checkpoint (the first
path to an object names it): Variables, tf.Module and tf.layers objects (a layer's
weights by their add_weight names, then its other tracked attributes), optimizers (their
non-slot variables such as `beta1_power`), loss scales, other Checkpoints, PythonState,
and lists, tuples and dicts of those (children "0", "1", ... or the keys). Each variable
is saved under TF's key `<path>/.ATTRIBUTES/VARIABLE_VALUE` (path parts joined by "/",
"." escaped as ".." and "/" as ".S"), an optimizer slot under
`<variable path>/.OPTIMIZER_SLOT/<optimizer path>/<slot name>/.ATTRIBUTES/VARIABLE_VALUE`,
the save counter under `save_counter/...`, in TF's V2 tensor-bundle format, as Saver
writes (checkpoint_format.py; read it with `tf.train.list_variables`). As TF, the object
graph itself is stored too, as a serialized `TrackableObjectGraph` string scalar under
`_CHECKPOINTABLE_OBJECT_GRAPH` (nodes breadth first from the root, every child edge by
name, each variable's attribute with its checkpoint key, slot variables as nodes after
all others, referenced from their optimizer's node), so TensorFlow's
`tf.train.Checkpoint` restores these files. Restoring here matches objects by their key
paths, which are the same for the same object structure. A PythonState's string is
stored as a string scalar under `<path>/.ATTRIBUTES/py_state`, as TF's (older tensorflux
checkpoints hold uint8 bytes there; both are read).

As in TF1 graph mode, `save`/`write` read the values from a Session (the default one,
or `session=`), and `restore(path)` returns a status whose `run_restore_ops(session)`
or `initialize_or_restore(session)` puts the values into the Session's variables
(objects added after `restore` are restored then too). With eager execution no Session
is involved: `save`/`write` read the variables' buffers, `restore` assigns the values at
once, and variables created later (optimizer slots, weights of layers built later) get
theirs when they are created (`deferred_restore.py`); `run_restore_ops` is a no-op.
"""

from __future__ import annotations

import abc
import collections
import inspect
import logging
import os
import time

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import protos
from tensorflux._src.framework.default_session import get_default_session
from tensorflux._src.framework.device import DeviceSpec
from tensorflux._src.ops.constant import placeholder_with_default
from tensorflux._src.ops.lookup.mutable_tables import SaveSpec
from tensorflux._src.train import (
    checkpoint_format,
    checkpoint_management,
    deferred_restore,
    sharding,
)
from tensorflux._src.train import saver as _saver
from tensorflux._src.train.loss_scale import LossScale, MixedPrecisionLossScaleOptimizer
from tensorflux._src.train.optimizer import Optimizer
from tensorflux._src.train.saver import global_step as _global_step_value
from tensorflux._src.train.variables import Variable

__all__ = ["Checkpoint", "CheckpointManager", "CheckpointOptions", "PythonState"]

_log = logging.getLogger("tensorflux")
_VALUE = ".ATTRIBUTES/VARIABLE_VALUE"
_PY_STATE = ".ATTRIBUTES/py_state"
_SLOTS = ".OPTIMIZER_SLOT"
OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"


class PythonState(abc.ABC):
    """A Python object saved in object-based checkpoints: `serialize()` returns a
    string, `deserialize(string_value)` restores it."""

    @abc.abstractmethod
    def serialize(self):
        """The object's state as a string."""

    @abc.abstractmethod
    def deserialize(self, string_value):
        """Restores the state from `serialize()`'s string."""


class CheckpointOptions:
    """Options of Checkpoint.save/write/restore (TF 2.15's). I/O always happens here on
    the local host and synchronously (`experimental_io_device` and `enable_async` are
    accepted); `experimental_write_callbacks` run after each save/write,
    `experimental_skip_slot_variables` leaves optimizer slots out of a restore, and
    `experimental_sharding_callback` (a `tf.train.experimental.ShardingCallback`) decides
    the data files a save/write writes."""

    __slots__ = ("experimental_io_device", "experimental_enable_async_checkpoint",
                 "experimental_write_callbacks", "enable_async",
                 "experimental_sharding_callback", "experimental_skip_slot_variables")

    def __init__(self, experimental_io_device=None, experimental_enable_async_checkpoint=False,
                 experimental_write_callbacks=None, enable_async=False,
                 experimental_skip_slot_variables=False, experimental_sharding_callback=None):
        self.experimental_io_device = experimental_io_device
        self.enable_async = experimental_enable_async_checkpoint or enable_async
        self.experimental_enable_async_checkpoint = self.enable_async
        for callback in experimental_write_callbacks or ():
            # TF asserts this too: a callback takes the save path or nothing.
            assert len(inspect.signature(callback).parameters) <= 1
        self.experimental_write_callbacks = experimental_write_callbacks
        if experimental_sharding_callback is not None and not isinstance(
                experimental_sharding_callback, sharding.ShardingCallback):
            raise ValueError(f"The experimental_sharding_callback checkpoint optionmust be of "
                             f"type ShardingCallback. The option providedwas of type "
                             f"{type(experimental_sharding_callback)}.")
        self.experimental_sharding_callback = experimental_sharding_callback
        self.experimental_skip_slot_variables = experimental_skip_slot_variables


def _run_write_callbacks(options, save_path):
    for callback in (options.experimental_write_callbacks or ()) if options else ():
        if inspect.signature(callback).parameters:
            callback(save_path)
        else:
            callback()


# -- the object graph -----------------------------------------------------------------------
def _is_trackable(value):
    return isinstance(value, (Variable, Checkpoint, Optimizer, LossScale, PythonState)) \
        or getattr(type(value), "_TF_MODULE", False)


def _escape(name):
    return str(name).replace(".", "..").replace("/", ".S")


def _children(obj):
    """(name, child) pairs of a trackable or container, in TF's tracking order."""
    if isinstance(obj, Checkpoint):
        items = list(obj._attrs.items())
        if obj._save_counter is not None:
            items.append(("save_counter", obj._save_counter))
        return items
    if isinstance(obj, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(obj)]
    if isinstance(obj, dict):
        return [(str(k), v) for k, v in obj.items()]
    if isinstance(obj, MixedPrecisionLossScaleOptimizer):
        return [("base_optimizer", obj._optimizer), ("loss_scale", obj._loss_scale)]
    if isinstance(obj, Optimizer):
        graph = _graph.get_default_graph()
        return [(name, v) for (name, g), v in obj._non_slot.items() if g is graph]
    if isinstance(obj, LossScale):
        graph = _graph.get_default_graph()
        return [(name, v) for (name, g), v in obj._weights.items() if g is graph]
    items = []
    if hasattr(obj, "_trainable_weights") and hasattr(obj, "_non_trainable_weights"):
        # A layer tracks its weights under their add_weight names.
        items = [(w.op.name.split("/")[-1], w)
                 for w in list(obj._trainable_weights) + list(obj._non_trainable_weights)]
        skip = {"_trainable_weights", "_non_trainable_weights", "_updates", "_losses"}
    else:
        skip = set()
    if getattr(type(obj), "_TF_MODULE", False):
        items += [(k, v) for k, v in vars(obj).items() if k not in skip]
    return items


def _tracked(value):
    """Whether a value takes part in the object graph."""
    if _is_trackable(value):
        return True
    if isinstance(value, (list, tuple)):
        return any(_tracked(v) for v in value)
    if isinstance(value, dict):
        return any(_tracked(v) for v in value.values())
    return False


def _object_paths(root):
    """[(path, object)] breadth first from root; each object once, at its first path."""
    seen = {id(root)}
    order = []
    queue = collections.deque([((), root)])
    while queue:
        path, obj = queue.popleft()
        for name, child in _children(obj):
            if not _tracked(child) or id(child) in seen:
                continue
            seen.add(id(child))
            child_path = path + (_escape(name),)
            order.append((child_path, child))
            queue.append((child_path, child))
    return order


def _saveables(root):
    """({checkpoint key: Variable}, {checkpoint key: PythonState})."""
    variables, states = {}, {}
    paths = _object_paths(root)
    path_of = {id(obj): path for path, obj in paths}
    for path, obj in paths:
        key = "/".join(path)
        if isinstance(obj, Variable):
            variables[f"{key}/{_VALUE}"] = obj
        elif isinstance(obj, PythonState):
            states[f"{key}/{_PY_STATE}"] = obj
    for path, obj in paths:
        if isinstance(obj, Optimizer) and not isinstance(obj, MixedPrecisionLossScaleOptimizer):
            for slot_name, by_var in sorted(obj._slots.items()):
                for var, slot in by_var.items():
                    var_path = path_of.get(id(var))
                    if var_path is not None:
                        key = (f"{'/'.join(var_path)}/{_SLOTS}/{'/'.join(path)}/"
                               f"{_escape(slot_name)}/{_VALUE}")
                        variables[key] = slot
    return variables, states


def _object_graph(root):
    """TF's TrackableObjectGraph of `root` (see the module docstring)."""
    nodes = [root]
    ids = {id(root): 0}
    queue = collections.deque([root])
    edges = {}
    while queue:
        obj = queue.popleft()
        out = edges[id(obj)] = []
        for name, child in _children(obj):
            if not _tracked(child):
                continue
            if id(child) not in ids:
                ids[id(child)] = len(nodes)
                nodes.append(child)
                queue.append(child)
            out.append((str(name), ids[id(child)]))
    paths = {id(obj): "/".join(path) for path, obj in _object_paths(root)}
    proto = protos.TrackableObjectGraph()
    for obj in nodes:
        node = proto.nodes.add()
        for name, node_id in edges[id(obj)]:
            node.children.add(node_id=node_id, local_name=name)
        _add_attribute(node, obj, paths.get(id(obj)))
    for obj in list(nodes):
        if not isinstance(obj, Optimizer) or isinstance(obj, MixedPrecisionLossScaleOptimizer):
            continue
        for slot_name, by_var in sorted(obj._slots.items()):
            for var_node, var in enumerate(list(nodes)):
                slot = by_var.get(var) if isinstance(var, Variable) else None
                if slot is None or id(var) not in paths:
                    continue
                key = (f"{paths[id(var)]}/{_SLOTS}/{paths[id(obj)]}/{_escape(slot_name)}")
                slot_node = proto.nodes.add()
                slot_node.attributes.add(name="VARIABLE_VALUE", full_name=slot.op.name,
                                         checkpoint_key=f"{key}/{_VALUE}")
                slot_node.has_checkpoint_values.value = True
                proto.nodes[ids[id(obj)]].slot_variables.add(
                    original_variable_node_id=var_node, slot_name=slot_name,
                    slot_variable_node_id=len(proto.nodes) - 1)
                nodes.append(slot)
    _mark_checkpoint_values(proto)
    return proto


def _add_attribute(node, obj, path):
    if path is None:
        return
    if isinstance(obj, Variable):
        node.attributes.add(name="VARIABLE_VALUE", full_name=obj.op.name,
                            checkpoint_key=f"{path}/{_VALUE}")
    elif isinstance(obj, PythonState):
        node.attributes.add(name="py_state", checkpoint_key=f"{path}/{_PY_STATE}")


def _mark_checkpoint_values(proto):
    """has_checkpoint_values, as TF fills it: a node with values, or with a child or
    slot variable that has some."""
    has = [bool(n.attributes) for n in proto.nodes]
    changed = True
    while changed:
        changed = False
        for i, node in enumerate(proto.nodes):
            if has[i]:
                continue
            if any(has[c.node_id] for c in node.children) or \
                    any(has[s.slot_variable_node_id] for s in node.slot_variables):
                has[i] = changed = True
    for node, value in zip(proto.nodes, has):
        node.has_checkpoint_values.value = value


def _eager():
    return bool(getattr(_graph.get_default_graph(), "_is_eager_graph", False))


def _read_values(session, variables):
    """Host values of `variables`: from the Session, or (eager) their buffers."""
    if session is None:
        return [np.asarray(v.numpy()) for v in variables]
    return _saver._read_variables(session, [v.op for v in variables])


def _session(session):
    if _eager():
        return None
    session = session or get_default_session()
    if session is None:
        raise ValueError("In graph mode a Checkpoint needs a Session to read or write "
                         "variables: pass `session=` or make one the default session.")
    return session


# -- Checkpoint -----------------------------------------------------------------------------
class Checkpoint:
    """Groups trackable objects; `save`/`restore` write and read their variables."""

    def __init__(self, **kwargs):
        object.__setattr__(self, "_attrs", {})
        object.__setattr__(self, "_save_counter", None)
        object.__setattr__(self, "_save_assign_op", None)
        for k, v in sorted(kwargs.items(), key=lambda item: item[0]):
            if not _is_trackable(v):
                raise ValueError(f"`Checkpoint` was expecting a trackable object (an object "
                                 f"derived from `TrackableBase`), got {v}. If you believe "
                                 f"this object should be trackable (i.e. it is part of the "
                                 f"TensorFlow Python API and manages state), please open an "
                                 f"issue.")
            setattr(self, k, v)

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if not name.startswith("_"):
            if _tracked(value):
                self._attrs[name] = value
            else:
                self._attrs.pop(name, None)

    def __delattr__(self, name):
        object.__delattr__(self, name)
        self._attrs.pop(name, None)

    @property
    def save_counter(self):
        """The int64 variable `save_counter` counting save() calls (created on first use)."""
        self._maybe_create_save_counter()
        return self._save_counter

    def _maybe_create_save_counter(self):
        if self._save_counter is None:
            with _graph.control_dependencies(None), _graph.name_scope(None), \
                    _graph.device("/cpu:0"):
                counter = Variable(np.int64(0), name="save_counter", trainable=False,
                                   dtype=_dtypes.int64)
            object.__setattr__(self, "_save_counter", counter)

    def write(self, file_prefix, session=None, options=None):
        """Writes the objects' values to `file_prefix` (no counter, no state file);
        returns the prefix."""
        file_prefix = self._write(file_prefix, _session(session), options)
        _run_write_callbacks(options, file_prefix)
        return file_prefix

    def _write(self, file_prefix, session, options):
        variables, states = _saveables(self)
        file_prefix = os.fspath(file_prefix)
        callback = options.experimental_sharding_callback if options else None
        if callback is not None:
            shards = self._sharded_values(session, variables, states, callback)
        else:
            names = sorted(variables)
            values = _read_values(session, [variables[n] for n in names])
            tensors = dict(zip(names, values))
            for key, state in states.items():
                tensors[key] = np.array(_state_bytes(state), dtype=object)  # TF: a string
            tensors[OBJECT_GRAPH_KEY] = np.array(
                _object_graph(self).SerializeToString(), dtype=object)
        directory = os.path.dirname(file_prefix)
        if directory and not os.path.isdir(directory):
            os.makedirs(directory, exist_ok=True)
        if callback is not None:
            checkpoint_format.write_shards(file_prefix, shards)
        else:
            checkpoint_format.write(file_prefix, tensors)
        return file_prefix

    def _sharding_plan(self, session, variables, states, callback):
        """The validated shards [[(key, slice spec, tensor)]] of `callback` and the
        placeholders fed with the PythonStates' strings. Built once per object graph and
        callback (callbacks with equal hashes, as TF), so repeated saves add no ops."""
        graph = session.graph
        try:
            callback_key = (type(callback), hash(callback))
        except TypeError:  # a subclass that defines __eq__ without __hash__
            callback_key = id(callback)
        key = (id(graph), tuple((k, id(v.op)) for k, v in variables.items()), tuple(states),
               callback_key)
        cached = getattr(self, "_sharding_cache", None)
        if cached is not None and cached[0] == key:
            return cached[1]
        shardable, feeds = [], {}
        with graph.as_default(), _graph.control_dependencies(None), \
                _graph.name_scope(None):
            for name, var in variables.items():
                tensor = var.value()
                shardable.append(_shardable(name, tensor, var.dtype.base_dtype, var))
            for name, state in states.items():
                # As TF1's PythonState saveable: a string fed at each save (the default,
                # the value now, lets a size-based policy measure it).
                with _graph.device("/cpu:0"):
                    tensor = placeholder_with_default(
                        np.array(_state_bytes(state), dtype=object), shape=[])
                feeds[name] = tensor
                shardable.append(_shardable(name, tensor, _dtypes.string, state))
            with session.as_default():
                shards = sharding.shard(callback, shardable)
        plan = (shards, feeds)
        object.__setattr__(self, "_sharding_cache", (key, plan))
        return plan

    def _sharded_values(self, session, variables, states, callback):
        """[[(key, value, part)]] per data file, `part` None or (full shape, offset)."""
        shards, feeds = self._sharding_plan(session, variables, states, callback)
        reads = {id(var.value()): var.op for var in variables.values()}
        tensors = {id(t): t for items in shards for _, _, t in items}
        direct = [i for i in tensors if i in reads]
        fetched = [i for i in tensors if i not in reads]
        values = dict(zip(direct, _saver._read_variables(session, [reads[i] for i in direct])))
        if fetched:
            feed_dict = {feeds[k]: _state_bytes(s) for k, s in states.items()}
            values.update(zip(fetched, session.run([tensors[i] for i in fetched], feed_dict)))
        out = []
        for items in shards:
            shard = []
            for name, spec, tensor in items:
                value = values[id(tensor)]
                if name in states:
                    value = np.array(bytes(value), dtype=object)
                part = None
                if spec:
                    info = Variable.SaveSliceInfo.from_spec(spec)
                    part = (info.full_shape, info.var_offset)
                shard.append((name, np.asarray(value), part))
            out.append(shard)
        return out

    def save(self, file_prefix, session=None, options=None):
        """Increments save_counter, writes `<file_prefix>-<save_counter>` and points the
        directory's `checkpoint` state file at it; returns that path."""
        session = _session(session)
        if session is None:  # eager: the counter's variable exists once created
            self._maybe_create_save_counter()
            number = self._save_counter.assign_add(1, read_value=True).numpy()
        else:
            if self._save_counter is None:
                self._maybe_create_save_counter()
                session.run(self._save_counter.initializer)
            if self._save_assign_op is None:
                object.__setattr__(self, "_save_assign_op",
                                   self._save_counter.assign_add(1, read_value=True))
            number = session.run(self._save_assign_op)
        file_path = self._write(f"{os.fspath(file_prefix)}-{int(number)}", session, options)
        checkpoint_management.update_checkpoint_state_internal(
            save_dir=os.path.dirname(file_path), model_checkpoint_path=file_path,
            all_model_checkpoint_paths=[file_path], save_relative_paths=True)
        _run_write_callbacks(options, file_path)
        return file_path

    def restore(self, save_path, options=None):
        """A status restoring `save_path` (None: a status that only initializes)."""
        self._maybe_create_save_counter()
        if save_path is None:
            return InitializationOnlyStatus(self)
        return CheckpointLoadStatus(self, os.fspath(save_path), options)


def _state_string(value):
    """A PythonState's string from its checkpoint tensor: a string scalar, as TF saves it,
    or the uint8 bytes older tensorflux checkpoints stored."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return np.asarray(value).tobytes().decode("utf-8")


def _state_bytes(state):
    data = state.serialize()
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


def _shardable(key, tensor, dtype, trackable):
    return sharding.ShardableTensor(
        _tensor_save_spec=SaveSpec(tensor, "", key, dtype=dtype, device=tensor.device),
        tensor=tensor, dtype=dtype, device=DeviceSpec.from_string(tensor.device), name=key,
        shape=tensor.shape, slice_spec="", checkpoint_key=key, trackable=trackable)


class _Status:
    def __init__(self, root):
        self._root = root

    def expect_partial(self):
        """Silences warnings about unrestored values (there are none here)."""
        return self

    def _initialize(self, session, variables):
        if session is None:  # eager variables are initialized when created
            return
        ops = [v.initializer for v in variables]
        if ops:
            session.run(ops)


class InitializationOnlyStatus(_Status):
    """restore(None): initializes the objects' variables; nothing is restored."""

    def _no_checkpoint(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being "
                             "restored.")

    def assert_consumed(self):
        self._no_checkpoint()

    def assert_existing_objects_matched(self):
        self._no_checkpoint()

    def assert_nontrivial_match(self):
        self._no_checkpoint()

    def run_restore_ops(self, session=None):
        pass

    def initialize_or_restore(self, session=None):
        """Runs the initializers of the variables in the object graph."""
        self._initialize(_session(session), _saveables(self._root)[0].values())


class CheckpointLoadStatus(_Status):
    """What `Checkpoint.restore(path)` returns (TF1 graph mode)."""

    def __init__(self, root, save_path, options=None):
        super().__init__(root)
        self._save_path = save_path
        self._skip_slots = bool(options and options.experimental_skip_slot_variables)
        self._reader = checkpoint_format.CheckpointReader(save_path)
        self._keys = set(self._reader.get_variable_to_shape_map()) - {OBJECT_GRAPH_KEY}
        self._restored = set()  # keys put into eager variables so far
        if _eager():  # restore now; what is created later is restored when it appears
            self._restore_eager()
            if self._keys - self._restored:
                deferred_restore.register(self)

    def _restore_new_objects(self):
        """deferred_restore's callback: restores variables created since; True once
        every checkpoint value has found its variable."""
        self._restore_eager()
        return not (self._keys - self._restored)

    def _restore_eager(self):
        variables, states = self._matched()
        keys = sorted(k for k in variables if k in self._keys and k not in self._restored)
        values = self._checked_values(variables, keys)
        for key in keys:
            variables[key].assign(values[key])
        self._restored.update(keys)
        for key, state in states.items():
            if key in self._keys and key not in self._restored:
                state.deserialize(_state_string(self._reader.get_tensor(key)))
                self._restored.add(key)

    def _checked_values(self, variables, keys):
        dtypes = self._reader.get_variable_to_dtype_map()
        shapes = self._reader.get_variable_to_shape_map()
        for key in keys:
            op = variables[key].op
            _saver._check_dtype(key, op, dtypes[key])
            _saver._check_shape(key, op, shapes[key], False)
        values = self._reader.get_tensors(keys) if keys else {}
        return {k: _saver._reshaped(values[k], variables[k].op) for k in keys}

    def _matched(self):
        variables, states = _saveables(self._root)
        if self._skip_slots:
            variables = {k: v for k, v in variables.items() if f"/{_SLOTS}/" not in k}
        return variables, states

    def assert_consumed(self):
        """AssertionError unless every checkpoint value and every object's variable
        match one another."""
        variables, states = self._matched()
        unused = sorted(self._keys - set(variables) - set(states))
        if unused:
            raise AssertionError(f"Unresolved object in checkpoint {self._save_path}: "
                                 f"{unused}")
        self.assert_existing_objects_matched()
        return self

    def assert_existing_objects_matched(self):
        """AssertionError if an object's variable has no value in the checkpoint."""
        variables, states = self._matched()
        missing = sorted(k for k in list(variables) + list(states) if k not in self._keys)
        if missing:
            raise AssertionError(f"Some Python objects were not bound to checkpointed values, "
                                 f"likely due to changes in the Python program: {missing}")
        return self

    def assert_nontrivial_match(self):
        """AssertionError if nothing but the save counter matched."""
        variables, states = self._matched()
        matched = [k for k in list(variables) + list(states)
                   if k in self._keys and not k.startswith("save_counter/")]
        if not matched:
            raise AssertionError(f"Nothing except the root object matched a checkpointed "
                                 f"value. Typically this means that the checkpoint does not "
                                 f"match the Python program. The following objects have "
                                 f"checkpointed values: {sorted(self._keys)}")
        return self

    def run_restore_ops(self, session=None):
        """Puts the checkpoint's values into the matching variables of the Session
        (checking every dtype and shape first; a failed restore changes nothing)."""
        session = _session(session)
        if session is None:  # eager: restored by `restore` and on creation
            return
        variables, states = self._matched()
        keys = sorted(k for k in variables if k in self._keys)
        values = self._checked_values(variables, keys)
        _saver._assign_variables(session, {variables[k].op: values[k] for k in keys})
        for key, state in states.items():
            if key in self._keys:
                state.deserialize(_state_string(self._reader.get_tensor(key)))

    def initialize_or_restore(self, session=None):
        """Initializes the objects' variables the checkpoint lacks, restores the rest."""
        session = _session(session)
        variables, _ = self._matched()
        self._initialize(session, [v for k, v in variables.items() if k not in self._keys])
        self.run_restore_ops(session)


# -- CheckpointManager ----------------------------------------------------------------------
class CheckpointManager:
    """Numbered saves of a Checkpoint in `directory`, keeping the last `max_to_keep` (and
    one every `keep_checkpoint_every_n_hours`), with TF's `checkpoint` state file."""

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt"):
        self._checkpoint = checkpoint
        self._save_counter_assign = None
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"Expected a positive integer or `None` for `max_to_max_to_keep`, "
                             f"got {max_to_keep}.")
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._directory = os.fspath(directory)
        self._checkpoint_prefix = os.path.join(self._directory, checkpoint_name)
        state = checkpoint_management.get_checkpoint_state(self._directory)
        now = time.time()
        self._maybe_delete = collections.OrderedDict()
        if state is None:
            self._latest_checkpoint = None
            # A little in the past, so a manager re-created at once keeps its checkpoints.
            self._last_preserved_timestamp = now - 1.0
            return
        self._latest_checkpoint = state.model_checkpoint_path
        self._last_preserved_timestamp = state.last_preserved_timestamp
        if now < self._last_preserved_timestamp:
            _log.warning("time.time() returned a value %f seconds behind the last preserved "
                         "checkpoint timestamp.", self._last_preserved_timestamp - now)
            self._last_preserved_timestamp = now
        timestamps = state.all_model_checkpoint_timestamps or \
            [self._last_preserved_timestamp] * len(state.all_model_checkpoint_paths)
        for filename, timestamp in zip(state.all_model_checkpoint_paths, timestamps):
            timestamp = min(timestamp, now)
            if timestamp > self._last_preserved_timestamp:
                self._maybe_delete[filename] = timestamp

    @property
    def directory(self):
        return self._directory

    @property
    def latest_checkpoint(self):
        return self._latest_checkpoint

    @property
    def checkpoints(self):
        """The checkpoints being managed, oldest first."""
        return list(self._maybe_delete)

    def _sweep(self):
        if not self._max_to_keep:
            return
        while len(self._maybe_delete) > self._max_to_keep:
            filename, timestamp = self._maybe_delete.popitem(last=False)
            if (self._keep_checkpoint_every_n_hours and timestamp
                    - self._keep_checkpoint_every_n_hours * 3600.0
                    >= self._last_preserved_timestamp):
                self._last_preserved_timestamp = timestamp
                continue
            checkpoint_format.remove(filename)

    def _record_state(self):
        filenames, timestamps = zip(*self._maybe_delete.items())
        checkpoint_management.update_checkpoint_state_internal(
            self._directory, model_checkpoint_path=self.latest_checkpoint,
            all_model_checkpoint_paths=filenames, all_model_checkpoint_timestamps=timestamps,
            last_preserved_timestamp=self._last_preserved_timestamp, save_relative_paths=True)

    def save(self, checkpoint_number=None, session=None, options=None):
        """Saves `<directory>/<checkpoint_name>-<n>` (n: checkpoint_number, an int or an
        integer variable, else the incremented save counter); returns its path."""
        session = _session(session)
        if session is None:  # eager
            self._checkpoint._maybe_create_save_counter()
            save_counter = self._checkpoint._save_counter
            save_counter.assign_add(1)
            if checkpoint_number is None:
                checkpoint_number = save_counter
            if not isinstance(checkpoint_number, (int, np.integer)):
                checkpoint_number = int(np.asarray(checkpoint_number.numpy()))
        else:
            if self._checkpoint._save_counter is None:
                self._checkpoint._maybe_create_save_counter()
                session.run(self._checkpoint._save_counter.initializer)
            save_counter = self._checkpoint._save_counter
            if self._save_counter_assign is None:
                self._save_counter_assign = save_counter.assign_add(1, read_value=False)
            session.run(self._save_counter_assign)
            if checkpoint_number is None:
                checkpoint_number = save_counter
            if not isinstance(checkpoint_number, (int, np.integer)):
                checkpoint_number = _global_step_value(session, checkpoint_number)
        save_path = self._checkpoint.write(f"{self._checkpoint_prefix}-{int(checkpoint_number)}",
                                           session=session, options=options)
        timestamp = time.time()
        self._maybe_delete.pop(save_path, None)  # a re-saved path goes to the end
        self._maybe_delete[save_path] = timestamp
        self._latest_checkpoint = save_path
        # The state file names the new checkpoint before old ones are deleted.
        self._record_state()
        self._sweep()
        self._record_state()
        return save_path
