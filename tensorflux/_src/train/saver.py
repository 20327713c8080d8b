"""`tf.train.Saver`: TF1 name-based checkpoints of a Session's variables.

TF1's Saver adds `save/SaveV2` and `save/restore_all` ops to the graph and runs them.
tensorflux keeps variable values in the Session (`SessionState.variables`, one device
buffer per VariableV2 op), so the Saver reads and writes that store directly: saving
copies the buffers to the host and writes them (no graph run, nothing compiled), and
restoring checks every value against its variable first, then puts them all on the
variables' devices. A restore that fails therefore changes no variable.

Files of one save to prefix `model.ckpt-100` (checkpoint_format.py, meta_graph.py,
checkpoint_management.py), written in this order, each one atomically:

    model.ckpt-100.data-00000-of-00001   tensor data (TF's V2 tensor bundle; with
                                         sharded=True one file per device)
    model.ckpt-100.index                 TF's table: dtype/shape/shard/offset/crc32c of
                                         each tensor; written last of the checkpoint
                                         itself, so it marks it complete
    model.ckpt-100.meta                  TF's MetaGraphDef (when write_meta_graph)
    checkpoint                           TF's state file, pointing at the new checkpoint

then old checkpoints beyond `max_to_keep` are deleted. A process killed at any point
leaves the previous checkpoint intact and the state file pointing at it.
"""

from __future__ import annotations

import logging
import os
import time

import jax
import numpy as np

from tensorflux._src.framework import errors
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import protos
from tensorflux._src.train import checkpoint_format, checkpoint_management, meta_graph
from tensorflux._src.train.variables import Variable, global_variables

__all__ = ["Saver", "SaverDef", "global_step"]

_log = logging.getLogger("tensorflux")


# TF's SaverDef message. tensorflux savers build no save/restore ops, so its tensor and
# op names stay empty; it carries the settings (max_to_keep, sharded, version...).
SaverDef = protos.SaverDef


class Saver:
    """Saves and restores variables (see the module docstring for the files written)."""

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False,
                 saver_def=None, builder=None, defer_build=False, allow_empty=False,
                 write_version=SaverDef.V2, pad_step_number=False, save_relative_paths=False,
                 filename=None):
        if defer_build and var_list:
            raise ValueError("If `var_list` is provided then build cannot be deferred. "
                             "Either set defer_build=False or var_list=None.")
        if builder is not None:
            raise NotImplementedError(
                "Saver(builder=...) is not supported: tensorflux savers build no save/restore "
                "ops; they read and write the Session's variables directly.")
        if saver_def is not None:
            if not isinstance(saver_def, SaverDef):
                raise ValueError(f"saver_def must be a saver_pb2.SaverDef: {saver_def}")
            # A SaverDef carries the settings; the variables still come from var_list.
            max_to_keep = saver_def.max_to_keep
            sharded = saver_def.sharded
            keep_checkpoint_every_n_hours = saver_def.keep_checkpoint_every_n_hours
            write_version = saver_def.version
        self._var_list = var_list
        self._reshape = reshape
        self._sharded = sharded
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._name = name
        self._restore_sequentially = restore_sequentially  # restores are one step anyway
        self._allow_empty = allow_empty
        self._write_version = write_version
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._filename = filename
        self._is_built = False
        self._is_empty = None
        self._variables = {}  # checkpoint name -> VariableV2 op
        self._saveables = []  # saveable objects other than variables (mutable tables)
        self._slices = {}  # checkpoint name of a partitioned variable -> [(op, SaveSliceInfo)]
        self._last_checkpoints = []  # (prefix, time saved), oldest first
        self._checkpoints_to_be_deleted = []
        self._next_checkpoint_time = None
        self.saver_def = None
        if not defer_build:
            self.build()

    # -- building ------------------------------------------------------------------------
    def build(self):
        """Resolves the variables to save (all saveables when var_list is None)."""
        if self._is_built:
            return
        self._is_built = True
        var_list = self._var_list if self._var_list is not None else _all_saveable_objects()
        self._variables, self._slices = _names_to_saveables(var_list)
        self._saveables = _saveable_objects(var_list, {**self._variables, **self._slices})
        self.saver_def = SaverDef(
            max_to_keep=self._max_to_keep or 0, sharded=bool(self._sharded),
            keep_checkpoint_every_n_hours=self._keep_checkpoint_every_n_hours,
            version=self._write_version)
        self._next_checkpoint_time = time.time() + self._keep_checkpoint_every_n_hours * 3600
        if not self._variables and not self._slices and not self._saveables:
            if not self._allow_empty:
                raise ValueError("No variables to save")
            self._is_empty = True
            return
        self._is_empty = False

    def as_saver_def(self):
        return self.saver_def

    def to_proto(self, export_scope=None):
        """The SaverDef (TF1: None when its tensor names are not under export_scope;
        tensorflux savers name no tensors, so any export_scope gives None)."""
        if export_scope is None:
            return self.saver_def
        names = (self.saver_def.filename_tensor_name, self.saver_def.save_tensor_name,
                 self.saver_def.restore_op_name)
        if not all(name.startswith(export_scope) for name in names):
            return None
        copy = SaverDef()
        copy.CopyFrom(self.saver_def)
        return copy

    def export_meta_graph(self, filename=None, collection_list=None, as_text=False,
                          export_scope=None, clear_devices=False,
                          clear_extraneous_savers=False, strip_default_attrs=False,
                          save_debug_info=False):
        """The default graph's MetaGraphDef (written to `filename` when given)."""
        return meta_graph.export_meta_graph(
            filename=filename, saver_def=self.saver_def, collection_list=collection_list,
            as_text=as_text, export_scope=export_scope, clear_devices=clear_devices,
            clear_extraneous_savers=clear_extraneous_savers,
            strip_default_attrs=strip_default_attrs, save_debug_info=save_debug_info)

    @staticmethod
    def from_proto(saver_def, import_scope=None):
        """A Saver with `saver_def`'s settings, over the graph's saveable variables."""
        return Saver(saver_def=saver_def, name=import_scope)

    # -- bookkeeping of recent checkpoints ---------------------------------------------
    @property
    def last_checkpoints(self):
        """Prefixes of the checkpoints not yet deleted, oldest first."""
        return [path for path, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints):
        """DEPRECATED: use set_last_checkpoints_with_time. These are never deleted."""
        assert isinstance(last_checkpoints, list)
        self._last_checkpoints = [(path, np.inf) for path in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time):
        """Sets the list of (prefix, timestamp) pairs, oldest first."""
        assert isinstance(last_checkpoints_with_time, list)
        self._last_checkpoints = last_checkpoints_with_time

    def recover_last_checkpoints(self, checkpoint_paths):
        """After a restart: tracks those of `checkpoint_paths` that still exist, with their
        modification times, so max_to_keep deletes them in turn."""
        recovered = []
        for path in checkpoint_paths:
            mtimes = checkpoint_management.get_checkpoint_mtimes([path])
            if mtimes:
                recovered.append((path, mtimes[0]))
        self.set_last_checkpoints_with_time(recovered)

    def _record_last_checkpoint(self, latest_save_path):
        if not self._max_to_keep:
            return
        # Saving to a prefix again moves it to the newest end.
        self._last_checkpoints = [p for p in self._last_checkpoints if p[0] != latest_save_path]
        self._last_checkpoints.append((latest_save_path, time.time()))
        if len(self._last_checkpoints) > self._max_to_keep:
            self._checkpoints_to_be_deleted.append(self._last_checkpoints.pop(0))

    def _maybe_delete_old_checkpoints(self, meta_graph_suffix="meta"):
        """Deletes the oldest checkpoint past max_to_keep, unless it is the first one
        saved after the next keep_checkpoint_every_n_hours mark (then it is kept)."""
        if not self._checkpoints_to_be_deleted:
            return
        path, saved_at = self._checkpoints_to_be_deleted.pop(0)
        if saved_at > self._next_checkpoint_time:
            self._next_checkpoint_time += self._keep_checkpoint_every_n_hours * 3600
            return
        try:
            checkpoint_management.remove_checkpoint(path, self._write_version,
                                                    meta_graph_suffix)
        except OSError as e:
            _log.warning("Ignoring: %s", e)

    # -- saving ----------------------------------------------------------------------------
    def save(self, sess, save_path, global_step=None, latest_filename=None,
             meta_graph_suffix="meta", write_meta_graph=True, write_state=True,
             strip_default_attrs=False, save_debug_info=False):
        """Writes the variables' values; returns the checkpoint prefix (None when empty).

        `save_debug_info` is accepted for TF's signature; tensorflux ops record no
        creation tracebacks, so there is no GraphDebugInfo to write.
        """
        if not self._is_built:
            raise RuntimeError("`build()` should be called before save if defer_build==True")
        latest_filename = "checkpoint" if latest_filename is None else latest_filename
        if self._write_version != SaverDef.V2:
            _log.warning("TensorFlow's V1 checkpoint format has been deprecated; tensorflux "
                         "writes its V2 layout whatever write_version says.")
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        _check_session(sess)
        save_path = os.fspath(save_path)
        checkpoint_file = self._checkpoint_file(sess, save_path, global_step, latest_filename)
        save_dir = os.path.dirname(save_path)
        model_checkpoint_path = None
        if not self._is_empty:
            if not os.path.isdir(save_dir or "."):
                raise ValueError(f"Parent directory of {save_path} doesn't exist, can't save.")
            self._write_checkpoint(sess, checkpoint_file)
            model_checkpoint_path = checkpoint_file
        if write_meta_graph:
            meta_graph.write(
                checkpoint_management.meta_graph_filename(checkpoint_file, meta_graph_suffix),
                sess.graph, self.saver_def, strip_default_attrs)
        if model_checkpoint_path is not None and write_state:
            # The state file goes last: until it is replaced it names only complete
            # checkpoints, and old ones are deleted only once it no longer names them.
            self._record_last_checkpoint(model_checkpoint_path)
            checkpoint_management.update_checkpoint_state_internal(
                save_dir=save_dir, model_checkpoint_path=model_checkpoint_path,
                all_model_checkpoint_paths=self.last_checkpoints,
                latest_filename=latest_filename,
                save_relative_paths=self._save_relative_paths)
            self._maybe_delete_old_checkpoints(meta_graph_suffix=meta_graph_suffix)
        return model_checkpoint_path

    def _checkpoint_file(self, sess, save_path, step, latest_filename):
        if step is None:
            if os.path.basename(save_path) == latest_filename and not self._sharded:
                raise ValueError(f"'latest_filename' collides with 'save_path': "
                                 f"'{latest_filename}' and '{save_path}'")
            return save_path
        if not isinstance(step, (int, np.integer)):
            step = global_step(sess, step)
        if self._pad_step_number:  # zero-padded so the files sort by step
            return f"{save_path}-{int(step):08d}"
        return f"{save_path}-{int(step)}"

    def _write_checkpoint(self, sess, prefix):
        names = sorted(self._variables)
        parts = [(name, op, info) for name, group in sorted(self._slices.items())
                 for op, info in group]
        values = _read_variables(sess, [self._variables[name] for name in names]
                                 + [op for _, op, _ in parts])
        # (device, name, value, part) per tensor. As TF1's SaveV2 of a partitioned
        # variable: each part is a slice of the full tensor, (full shape, offset).
        items = [(self._variables[name].device, name, value, None)
                 for name, value in zip(names, values)]
        items += [(op.device, name, value, (info.full_shape, info.var_offset))
                  for (name, op, info), value in zip(parts, values[len(names):])]
        for saveable in self._saveables:
            items += [(spec.device or "", spec.name, value, None) for spec, value
                      in zip(saveable.specs, saveable._saver_read(sess))]
        checkpoint_format.write_shards(prefix, _shards_by_device(items, self._sharded))

    # -- restoring -------------------------------------------------------------------------
    def restore(self, sess, save_path):
        """Loads the variables' values from the checkpoint `save_path`."""
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        prefix = os.fspath(save_path)
        if not checkpoint_management.checkpoint_exists(prefix):
            raise ValueError("The passed save_path is not a valid checkpoint: " + prefix)
        _log.info("Restoring parameters from %s", prefix)
        _check_session(sess)
        reader = checkpoint_format.CheckpointReader(prefix)
        try:
            values = self._checked_values(reader)
            imports = self._checked_saveables(sess, reader)
        except errors.NotFoundError as err:
            raise _wrap_restore_error(
                err, "a Variable name or other graph key that is missing") from None
        except errors.InvalidArgumentError as err:
            raise _wrap_restore_error(
                err, "a mismatch between the current graph and the graph") from None
        _assign_variables(sess, values)
        for restore in imports:
            restore()

    def _checked_saveables(self, sess, reader):
        """Per saveable (a mutable table), the function that restores it, after checking
        its tensors' names and dtypes and that the values fit it."""
        dtypes = reader.get_variable_to_dtype_map()
        imports = []
        for saveable in self._saveables:
            names = [spec.name for spec in saveable.specs]
            for spec in saveable.specs:
                if spec.name not in dtypes:
                    raise errors.NotFoundError(None, None,
                                               f"Key {spec.name} not found in checkpoint")
                if dtypes[spec.name] != spec.dtype.base_dtype:
                    raise errors.InvalidArgumentError(
                        None, None, f"tensor_name = {spec.name}; expected dtype "
                                    f"{spec.dtype.base_dtype._tf_name} does not equal original "
                                    f"dtype {dtypes[spec.name]._tf_name}")
            arrays = reader.get_tensors(names)
            imports.append(saveable._saver_restore(sess, [arrays[n] for n in names]))
        return imports

    def _checked_values(self, reader):
        """{VariableV2 op: value to assign}, after checking every name, dtype and shape."""
        shapes = reader.get_variable_to_shape_map()
        dtypes = reader.get_variable_to_dtype_map()
        for name, op in sorted(self._variables.items()):
            if name not in shapes:
                raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint")
            _check_dtype(name, op, dtypes[name])
            _check_shape(name, op, shapes[name], self._reshape)
        for name, parts in sorted(self._slices.items()):
            if name not in shapes:
                raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint")
            for op, info in parts:
                _check_dtype(name, op, dtypes[name])
                if list(shapes[name]) != list(info.full_shape):
                    raise errors.InvalidArgumentError(
                        None, op, f"tensor_name = {name}; shape in shape_and_slice spec "
                                  f"{_dims(info.full_shape)} does not match the shape stored "
                                  f"in checkpoint: {_dims(shapes[name])}")
        values = reader.get_tensors(sorted(self._variables) + sorted(self._slices))
        result = {op: _reshaped(values[name], op) for name, op in self._variables.items()}
        for name, parts in self._slices.items():
            for op, info in parts:
                result[op] = values[name][_slice_index(info)]
        return result


# -- which variables ---------------------------------------------------------------------------
def _all_saveable_objects():
    return global_variables() + _graph.get_collection(GraphKeys.SAVEABLE_OBJECTS)


def _is_saveable(value):
    """A saveable object other than a variable (a mutable lookup table or its saveable),
    which saves and restores itself through `_saver_read` / `_saver_restore`."""
    return hasattr(value, "_saveables_for_saver")


def _saveable_objects(var_list, variables):
    """The saveables of `var_list` that are not variables, with TF's check that no two
    tensors share a checkpoint name."""
    values = var_list.values() if isinstance(var_list, dict) else var_list
    saveables, names = [], set(variables)
    for value in values:
        if not _is_saveable(value):
            continue
        for saveable in value._saveables_for_saver():
            for spec in saveable.specs:
                if spec.name in names:
                    raise ValueError(f"At least two variables have the same name: "
                                     f"{spec.name}")
                names.add(spec.name)
            saveables.append(saveable)
    return saveables


def _slice_index(info):
    """The numpy index of a part (SaveSliceInfo) inside its full variable."""
    return checkpoint_format.slice_index(info.var_offset, info.var_shape)


def _names_to_saveables(var_list):
    """({checkpoint name: VariableV2 op}, {checkpoint name: [(part op, SaveSliceInfo)]}).

    As TF1's op_list_to_dict: a PartitionedVariable, or Variables carrying a
    SaveSliceInfo, are saved as one tensor under the full variable's name."""
    from tensorflux._src.train.variables import PartitionedVariable
    plain, sliced = [], {}
    items = sorted(var_list.items(), key=lambda item: str(item[0])) \
        if isinstance(var_list, dict) else None
    if items is None:
        if not isinstance(var_list, (list, tuple, set)):
            raise TypeError(f"Variables to save should be passed in a dict or a list: "
                            f"{var_list}")
        for value in var_list:
            if isinstance(value, PartitionedVariable):
                if value.name in sliced:
                    raise ValueError(f"At least two variables have the same name: "
                                     f"{value.name}")
                sliced[value.name] = list(value)
            elif isinstance(value, Variable) and value._get_save_slice_info() is not None:
                sliced.setdefault(value._get_save_slice_info().full_name, []).append(value)
            else:
                plain.append(value)
        variables = _names_to_variables(plain)
    else:
        plain_items = {}
        for name, value in items:
            if isinstance(value, PartitionedVariable):
                sliced[name] = list(value)
            elif isinstance(value, (list, tuple)) and value and all(
                    isinstance(v, Variable) and v._get_save_slice_info() is not None
                    for v in value):
                sliced[name] = list(value)
            else:
                plain_items[name] = value
        variables = _names_to_variables(plain_items)
    for name in sliced:
        if name in variables:
            raise ValueError(f"Mixing slices and non-slices with the same name: {name}")
    slices = {name: [(v.op, v._get_save_slice_info()) for v in parts]
              for name, parts in sliced.items()}
    return variables, slices


def _names_to_variables(var_list):
    """{checkpoint name: VariableV2 op} from a dict of names or a list (TF's checks);
    saveables that are not variables (`_is_saveable`) are left to `_saveable_objects`."""
    if isinstance(var_list, dict):
        named = {}
        for name, value in sorted(var_list.items(), key=lambda item: str(item[0])):
            if _is_saveable(value):
                continue
            if not isinstance(name, str):
                raise TypeError(f"names_to_saveables must be a dict mapping string names to "
                                f"trackable operations. Name is not a string: {name}")
            op = _variable_op(value, f"names_to_saveables must be a dict mapping string names "
                                     f"to Tensors/Variables. Not a variable: {value}")
            if op in named.values():
                raise ValueError(f"The same saveable will be restored with two names: {name}")
            named[name] = op
        return named
    if not isinstance(var_list, (list, tuple, set)):
        raise TypeError(f"Variables to save should be passed in a dict or a list: {var_list}")
    named = {}
    for value in var_list:
        if _is_saveable(value):
            continue
        op = _variable_op(value, f"Variable to save is not a Variable: {value}")
        if op.name in named:
            raise ValueError(f"At least two variables have the same name: {op.name}")
        named[op.name] = op  # saved under the op name: `dense/kernel`, not `dense/kernel:0`
    return named


def _variable_op(value, message):
    """The VariableV2 op of a Variable or of its ref tensor."""
    if isinstance(value, Variable):
        return value.op
    if isinstance(value, Tensor) and value.op.op_def.is_variable:
        return value.op
    raise TypeError(message)


def _shards_by_device(items, sharded):
    """The data files of a save: [[(name, value, part)]], one for everything, or with
    `sharded` one per device in sorted device order, as TF's sharded Saver groups its
    SaveV2 ops (_GroupByDevices) and MergeV2Checkpoints numbers their files. Within a
    file, tensors go by name, as TF sorts a SaveV2's tensor names."""
    devices = sorted({device for device, _, _, _ in items}) if sharded else [None]
    shards = [[] for _ in devices]
    for device, name, value, part in sorted(items, key=lambda item: item[1]):
        shards[devices.index(device) if sharded else 0].append((name, value, part))
    return shards


# -- the session's variable store -------------------------------------------------------------
def _check_session(sess):
    from tensorflux._src.runtime.session import BaseSession

    if not isinstance(sess, BaseSession):
        raise TypeError(f"'sess' must be a Session; {sess}")
    if sess._closed:
        raise RuntimeError("Attempted to use a closed Session.")


def _check_in_graph(sess, op):
    if op.graph is not sess.graph:
        raise ValueError(f"Variable {op.name} is not an element of the session's graph: build "
                         f"the Saver in the graph the session runs.")


def _read_variables(sess, ops):
    """Host copies (numpy) of the variables' values, fetched in one transfer."""
    store = sess._state.variables
    for op in ops:
        _check_in_graph(sess, op)
        if op not in store:
            raise errors.FailedPreconditionError(
                None, op, f"Attempting to use uninitialized value {op.name}")
    return [np.asarray(value) for value in jax.device_get([store[op] for op in ops])]


def _assign_variables(sess, values):
    from tensorflux._src.runtime import devices

    for op in values:
        _check_in_graph(sess, op)
    store = sess._state.variables
    for op, value in values.items():
        device = devices.jax_device(op.device) if op.device else jax.devices()[0]
        dtype = op.outputs[0].dtype.base_dtype.as_numpy_dtype
        if dtype == np.object_:  # string variables live on the host, as numpy arrays
            store[op] = np.array(value, dtype=object)
            continue
        # A private copy: the store's buffer may later be donated to a compiled run.
        store[op] = jax.device_put(np.array(value, dtype=dtype), device)


def _check_dtype(name, op, saved_dtype):
    dtype = op.outputs[0].dtype.base_dtype
    if saved_dtype != dtype:
        raise errors.InvalidArgumentError(
            None, op, f"tensor_name = {name}; expected dtype {dtype._tf_name} does not equal "
                      f"original dtype {saved_dtype._tf_name}")


def _check_shape(name, op, saved_shape, reshape):
    shape = op.outputs[0].shape
    if not shape.is_fully_defined():
        return  # TF's restore assigns without validate_shape then
    wanted = shape.as_list()
    if reshape:
        if int(np.prod(wanted)) != int(np.prod(saved_shape)):
            raise errors.InvalidArgumentError(
                None, op, f"Input to reshape is a tensor with {int(np.prod(saved_shape))} "
                          f"values, but the requested shape has {int(np.prod(wanted))} "
                          f"(variable {op.name}, checkpoint key {name})")
    elif wanted != list(saved_shape):
        raise errors.InvalidArgumentError(
            None, op, f"Assign requires shapes of both tensors to match. lhs shape= "
                      f"{_dims(wanted)} rhs shape= {_dims(saved_shape)} (variable {op.name}, "
                      f"checkpoint key {name})")


def _dims(shape):
    return "[" + ",".join(str(d) for d in shape) + "]"


def _reshaped(value, op):
    shape = op.outputs[0].shape
    return value.reshape(shape.as_list()) if shape.is_fully_defined() else value


def _wrap_restore_error(err, extra_verbiage):
    message = (f"Restoring from checkpoint failed. This is most likely due to {extra_verbiage} "
               f"from the checkpoint. Please ensure that you have not altered the graph "
               f"expected based on the checkpoint. Original error:\n\n{err.message}")
    return type(err)(err.node_def, err.op, message)


# -- the global step --------------------------------------------------------------------------
def global_step(sess, global_step_tensor):
    """The global step's value as an int (read from the session's store when it is a
    variable, so no graph run is needed)."""
    if isinstance(global_step_tensor, str):
        global_step_tensor = sess.graph.as_graph_element(global_step_tensor)
    op = _variable_behind(global_step_tensor)
    if op is not None and op.graph is sess.graph and op in sess._state.variables:
        return int(np.asarray(sess._state.variables[op]))
    return int(sess.run(global_step_tensor))


def _variable_behind(value):
    """The VariableV2 op whose value `value` is (the variable, its ref or `v/read`)."""
    if isinstance(value, Variable):
        return value.op
    if isinstance(value, Tensor):
        op = value.op
        if op.type == "Identity" and op.inputs and op.inputs[0].op.op_def.is_variable:
            op = op.inputs[0].op
        if op.op_def.is_variable:
            return op
    return None
