"""Reading checkpoints outside a Saver: `tf.train.list_variables`, `load_variable`,
`load_checkpoint`, `NewCheckpointReader` and `init_from_checkpoint`.

`init_from_checkpoint` keeps TF1's semantics: it changes the variables' initializers,
so nothing is loaded until `global_variables_initializer()` (or `v.initializer`) runs.
The new initializer assigns a Const named `checkpoint_initializer` holding the
checkpoint's value, read when init_from_checkpoint is called (TF reads the file when
the initializer runs; the values are the same unless the file changes in between).
"""

from __future__ import annotations

import logging
import os
import time

import numpy as np

from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.train import checkpoint_format, checkpoint_management
from tensorflux._src.train import variable_scope as _vs
from tensorflux._src.train.variables import PartitionedVariable, Variable

__all__ = ["NewCheckpointReader", "load_checkpoint", "load_variable", "list_variables",
           "init_from_checkpoint", "checkpoints_iterator"]

_log = logging.getLogger("tensorflux")


def NewCheckpointReader(filepattern):  # noqa: N802 - TF's name
    """A reader for the checkpoint with this prefix (NotFoundError when there is none)."""
    return checkpoint_format.CheckpointReader(os.fspath(filepattern))


def _get_checkpoint_filename(ckpt_dir_or_file):
    """A directory means its latest checkpoint; anything else is a checkpoint prefix."""
    ckpt_dir_or_file = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(ckpt_dir_or_file):
        return checkpoint_management.latest_checkpoint(ckpt_dir_or_file)
    return ckpt_dir_or_file


def load_checkpoint(ckpt_dir_or_file):
    """A CheckpointReader for `ckpt_dir_or_file` (a directory: its latest checkpoint)."""
    filename = _get_checkpoint_filename(ckpt_dir_or_file)
    if filename is None:
        raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given directory "
                         f"{ckpt_dir_or_file}")
    return NewCheckpointReader(filename)


def load_variable(ckpt_dir_or_file, name):
    """The value of `name` in the checkpoint, as a numpy array (`v:0` means `v`)."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


def list_variables(ckpt_dir_or_file):
    """Sorted `(name, shape)` pairs of every tensor in the checkpoint."""
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return [(name, shapes[name]) for name in sorted(shapes)]


# -- init_from_checkpoint ---------------------------------------------------------------------
def init_from_checkpoint(ckpt_dir_or_file, assignment_map):
    """Makes variables' initializers load their values from a checkpoint.

    `assignment_map` maps checkpoint names to the current graph's variables:
    `'ckpt_scope/': 'scope/'` (every get_variable variable under `scope/` from the
    matching name under `ckpt_scope/`), `'ckpt_scope/v': 'scope/v'` (one variable by its
    get_variable name), `'ckpt_scope/v': variable` (a Variable object), and `'/': 'scope/'`
    (from the checkpoint's root).
    """
    ckpt_file = _get_checkpoint_filename(ckpt_dir_or_file)
    reader = load_checkpoint(ckpt_dir_or_file)
    variable_map = reader.get_variable_to_shape_map()
    store_vars = _vs._store().variables
    for tensor_name_in_ckpt, current in sorted(assignment_map.items()):
        var = _resolve_variable(current, store_vars)
        if var is not None:
            _init_one(reader, ckpt_dir_or_file, variable_map, tensor_name_in_ckpt, var)
        else:
            _init_scope(reader, ckpt_dir_or_file, variable_map, tensor_name_in_ckpt, current,
                        store_vars)
    _log.debug("Initialized variables from checkpoint %s", ckpt_file)


def _resolve_variable(current, store_vars):
    """The Variable `current` names (or the list of parts of a partitioned one), or None
    for a scope name."""
    if isinstance(current, Variable):
        return current
    if isinstance(current, PartitionedVariable):
        return list(current)
    if isinstance(current, (list, tuple)):
        if not all(isinstance(v, Variable) for v in current):
            raise TypeError(f"assignment_map values must be variables or variable/scope "
                            f"names, got {current!r}")
        return list(current)
    if not isinstance(current, str):
        raise TypeError(f"assignment_map values must be variables or variable/scope names, "
                        f"got {current!r}")
    var = store_vars.get(current)
    return var if var is not None else _collect_partitioned_variable(current, store_vars)


def _collect_partitioned_variable(name, store_vars):
    """The parts `name/part_0`, `name/part_1`, ... in the store, or None."""
    if f"{name}/part_0" not in store_vars:
        return None
    parts, i = [], 0
    while f"{name}/part_{i}" in store_vars:
        parts.append(store_vars[f"{name}/part_{i}"])
        i += 1
    return parts


def _init_one(reader, ckpt_dir_or_file, variable_map, tensor_name_in_ckpt, var):
    if tensor_name_in_ckpt not in variable_map:
        raise ValueError(f"Tensor {tensor_name_in_ckpt} is not found in {ckpt_dir_or_file} "
                         f"checkpoint {variable_map}")
    _set_checkpoint_initializer(var, reader, tensor_name_in_ckpt, variable_map)


def _init_scope(reader, ckpt_dir_or_file, variable_map, tensor_name_in_ckpt, current,
                store_vars):
    """`'ckpt_scope/': 'scope/'`: every store variable under `scope` (TF's rules)."""
    scopes = current[:current.rindex("/")] if "/" in current else ""
    if not tensor_name_in_ckpt.endswith("/"):
        raise ValueError(f"Assignment map with scope only name {scopes} should map to scope "
                         f"only {tensor_name_in_ckpt}. Should be 'scope/': 'other_scope/'.")
    # A partitioned variable's parts count once, under the variable's own name.
    names = sorted({n[:n.index("/part_")] if "/part_" in n else n for n in store_vars})
    for var_name in (n for n in names if not scopes or n.startswith(scopes + "/")):
        full_tensor_name = var_name[len(scopes):]
        if current != "/":
            full_tensor_name = full_tensor_name[1:]
        if tensor_name_in_ckpt != "/":
            full_tensor_name = tensor_name_in_ckpt + full_tensor_name
        full_tensor_name = full_tensor_name.rstrip("/")
        if full_tensor_name not in variable_map:
            raise ValueError(f"Tensor {full_tensor_name} ({var_name[len(scopes) + 1:]} in "
                             f"{tensor_name_in_ckpt}) is not found in {ckpt_dir_or_file} "
                             f"checkpoint")
        _set_checkpoint_initializer(_resolve_variable(var_name, store_vars), reader,
                                    full_tensor_name, variable_map)


def _set_checkpoint_initializer(variable, reader, tensor_name, variable_map):
    """Replaces `variable`'s initializer by an assign of the checkpoint's value (for
    the parts of a partitioned variable, each part's slice of it)."""
    if isinstance(variable, list):
        for part in variable:
            _set_checkpoint_initializer(part, reader, tensor_name, variable_map)
        return
    from tensorflux._src.ops.state import state_ops
    from tensorflux._src.ops.constant import constant

    saved_shape = variable_map[tensor_name]
    info = variable._get_save_slice_info()
    if info is not None:
        if list(info.full_shape) != list(saved_shape):
            raise ValueError(f"Shape of variable {info.full_name} ({info.full_shape}) doesn't "
                             f"match with shape of tensor {tensor_name} ({saved_shape}) from "
                             f"checkpoint reader.")
    elif not variable.shape.is_compatible_with(saved_shape):
        raise ValueError(f"Shape of variable {variable.name} ({variable.shape}) doesn't match "
                         f"with shape of tensor {tensor_name} ({saved_shape}) from checkpoint "
                         f"reader.")
    dtype = variable.dtype.base_dtype
    saved_dtype = reader.get_variable_to_dtype_map()[tensor_name]
    if saved_dtype != dtype:
        raise errors.InvalidArgumentError(
            None, variable.op, f"tensor_name = {tensor_name}; expected dtype {dtype._tf_name} "
                               f"does not equal original dtype {saved_dtype._tf_name}")
    value = np.asarray(reader.get_tensor(tensor_name))
    if info is not None:
        value = value[tuple(slice(o, o + n) for o, n in zip(info.var_offset, info.var_shape))]
    graph = variable.graph
    # Both ops on the variable's device: the initializer's run is placed by its ops, and
    # the restored value must land where the variable lives.
    with graph.as_default(), _graph.device(variable.device or None):
        initial_value = constant(value, dtype=dtype, name="checkpoint_initializer")
        init_op = state_ops.assign(variable._ref(), initial_value,
                                   validate_shape=variable.shape.is_fully_defined()).op
    variable._initializer_op = init_op
    variable._initial_value = initial_value


# -- waiting for checkpoints (an evaluation job following a training job) -------------------
def wait_for_new_checkpoint(checkpoint_dir, last_checkpoint=None, seconds_to_sleep=1,
                            timeout=None):
    """The latest checkpoint of `checkpoint_dir` once it differs from `last_checkpoint`,
    or None after `timeout` seconds."""
    _log.info("Waiting for new checkpoint at %s", checkpoint_dir)
    stop_time = time.time() + timeout if timeout is not None else None
    while True:
        path = checkpoint_management.latest_checkpoint(checkpoint_dir)
        if path is None or path == last_checkpoint:
            if stop_time is not None and time.time() + seconds_to_sleep > stop_time:
                return None
            time.sleep(seconds_to_sleep)
        else:
            _log.info("Found new checkpoint at %s", path)
            return path


def checkpoints_iterator(checkpoint_dir, min_interval_secs=0, timeout=None, timeout_fn=None):
    """Yields each new checkpoint of `checkpoint_dir` as it appears, at most one per
    `min_interval_secs`. After `timeout` seconds without a new one it ends, unless
    `timeout_fn()` returns False (then it keeps waiting)."""
    checkpoint_path = None
    while True:
        new_path = wait_for_new_checkpoint(checkpoint_dir, checkpoint_path, timeout=timeout)
        if new_path is None:
            if not timeout_fn:
                _log.info("Timed-out waiting for a checkpoint.")
                return
            if timeout_fn():
                return
            continue
        start = time.time()
        checkpoint_path = new_path
        yield checkpoint_path
        time_to_next = start + min_interval_secs - time.time()
        if time_to_next > 0:
            time.sleep(time_to_next)
