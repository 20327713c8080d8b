"""`tf.train.warm_start` and `tf.train.VocabInfo`: start a model from another model's
checkpoint (TF1's warm_starting_util).

`warm_start(ckpt, vars_to_warm_start, var_name_to_vocab_info, var_name_to_prev_var_name)`
replaces the initializers of the chosen variables (a regex over TRAINABLE_VARIABLES, a
list of regexes over GLOBAL_VARIABLES, or a list of Variables), as init_from_checkpoint
does; a variable may be read from another checkpoint name (`var_name_to_prev_var_name`).

A variable with a VocabInfo is an embedding (or output layer) whose rows (axis 0) or
columns (axis 1) follow a vocabulary file, one token per line: each row of the new
vocabulary (its first `new_vocab_size` tokens) takes the checkpoint's row of the same
token in the old vocabulary (its first `old_vocab_size` tokens, -1 for all). Rows of
tokens the old vocabulary lacks and the `num_oov_buckets` rows after the vocabulary get
`backup_initializer` (zeros by default), as TF's load_and_remap_matrix. Partitioned
variables are remapped part by part. As init_from_checkpoint, the checkpoint is read
when warm_start is called.
"""

from __future__ import annotations

import collections
import logging

import numpy as np

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.ops.array.gather_ops import where
from tensorflux._src.ops.constant import constant
from tensorflux._src.ops.state import init_ops, state_ops
from tensorflux._src.platform import gfile
from tensorflux._src.train import checkpoint_utils
from tensorflux._src.train.variable_scope import _PartitionInfo
from tensorflux._src.train.variables import PartitionedVariable, Variable

__all__ = ["VocabInfo", "warm_start"]

_log = logging.getLogger("tensorflux")


class VocabInfo(collections.namedtuple("VocabInfo", [
        "new_vocab", "new_vocab_size", "num_oov_buckets", "old_vocab", "old_vocab_size",
        "backup_initializer", "axis"])):
    """How to remap a variable's vocabulary axis (see the module docstring)."""

    def __new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab,
                old_vocab_size=-1, backup_initializer=None, axis=0):
        if axis not in (0, 1):
            raise ValueError(f"The only supported values for the axis argument are 0 and 1.  "
                             f"Provided axis: {axis}")
        return super().__new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab,
                               old_vocab_size, backup_initializer, axis)


def warm_start(ckpt_to_initialize_from, vars_to_warm_start=".*", var_name_to_vocab_info=None,
               var_name_to_prev_var_name=None):
    """Warm-starts the chosen variables from `ckpt_to_initialize_from` (see the module
    docstring). With `vars_to_warm_start=None` only variables with a VocabInfo are."""
    _log.info("Warm-starting from: %s", ckpt_to_initialize_from)
    grouped = _get_grouped_variables(vars_to_warm_start)
    var_name_to_vocab_info = var_name_to_vocab_info or {}
    var_name_to_prev_var_name = var_name_to_prev_var_name or {}
    prev_used, vocab_used = set(), set()
    vocabless = {}
    count = 0
    for var_name, variable in grouped.items():
        prev_name = var_name_to_prev_var_name.get(var_name)
        if prev_name:
            prev_used.add(var_name)
        vocab_info = var_name_to_vocab_info.get(var_name)
        if vocab_info:
            vocab_used.add(var_name)
            count += 1
            _warm_start_var_with_vocab(
                variable, current_vocab_path=vocab_info.new_vocab,
                current_vocab_size=vocab_info.new_vocab_size,
                prev_ckpt=ckpt_to_initialize_from, prev_vocab_path=vocab_info.old_vocab,
                previous_vocab_size=vocab_info.old_vocab_size,
                current_oov_buckets=vocab_info.num_oov_buckets, prev_tensor_name=prev_name,
                initializer=vocab_info.backup_initializer, axis=vocab_info.axis)
        elif vars_to_warm_start:
            count += 1
            if len(variable) == 1:
                variable = variable[0]
            prev_tensor_name, var = _get_var_info(variable, prev_name)
            vocabless[prev_tensor_name] = var
    checkpoint_utils.init_from_checkpoint(ckpt_to_initialize_from, vocabless)
    _log.info("Warm-started %d variables.", count)
    prev_not_used = set(var_name_to_prev_var_name) - prev_used
    vocab_not_used = set(var_name_to_vocab_info) - vocab_used
    if prev_not_used:
        raise ValueError(f"You provided the following variables in var_name_to_prev_var_name "
                         f"that were not used: {prev_not_used}.  Perhaps you misspelled them?  "
                         f"Here is the list of viable variable names: {grouped.keys()}")
    if vocab_not_used:
        raise ValueError(f"You provided the following variables in var_name_to_vocab_info "
                         f"that were not used: {vocab_not_used}.  Perhaps you misspelled "
                         f"them?  Here is the list of viable variable names: "
                         f"{grouped.keys()}")


def _get_grouped_variables(vars_to_warm_start):
    """{name: [Variable or parts]}: the parts of a partitioned variable under its name."""
    if isinstance(vars_to_warm_start, str) or vars_to_warm_start is None:
        _log.info("Warm-starting variables only in TRAINABLE_VARIABLES.")
        found = _graph.get_collection(GraphKeys.TRAINABLE_VARIABLES, vars_to_warm_start)
    elif isinstance(vars_to_warm_start, list):
        if all(isinstance(v, str) for v in vars_to_warm_start):
            found = []
            for v in vars_to_warm_start:
                found += _graph.get_collection(GraphKeys.GLOBAL_VARIABLES, v)
        elif all(isinstance(v, Variable) for v in vars_to_warm_start):
            found = vars_to_warm_start
        else:
            raise ValueError(f"If `vars_to_warm_start` is a list, it must be all `Variable` or "
                             f"all `str`.  Given types are "
                             f"{[type(v) for v in vars_to_warm_start]}")
    else:
        raise ValueError(f"`vars_to_warm_start must be a `list` or `str`.  Given type is "
                         f"{type(vars_to_warm_start)}")
    grouped = {}
    for v in found:
        grouped.setdefault(_infer_var_name(v), []).append(v)
    return grouped


def _infer_var_name(var):
    """The checkpoint name of a variable: a part's full variable name, else its op name."""
    if isinstance(var, PartitionedVariable):
        return var.name
    if isinstance(var, list):
        names = {_infer_var_name(v) for v in var}
        if len(names) > 1:
            raise TypeError(f"`var` = {var} passed as arg violates the constraints.  "
                            f"name_to_var_dict = {sorted(names)}")
        return names.pop()
    info = var._get_save_slice_info()
    return info.full_name if info is not None else var.op.name


def _get_var_info(var, prev_tensor_name=None):
    if isinstance(var, Variable) or (isinstance(var, list)
                                     and all(isinstance(v, Variable) for v in var)):
        name = _infer_var_name(var)
    elif isinstance(var, PartitionedVariable):
        name = var.name
        var = var._get_variable_list()
    else:
        raise TypeError(f"var MUST be one of the following: a Variable, list of Variable or "
                        f"PartitionedVariable, but is {type(var)}")
    return prev_tensor_name or name, var


def _read_vocab(path, size):
    """The first `size` tokens of a vocabulary file (all for size -1): {token: line}."""
    with gfile.GFile(path, "rb") as f:
        lines = f.read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if size is not None and size >= 0:
        if size > len(lines):
            raise ValueError(f"Invalid vocab_size {size} for the vocabulary file {path}, "
                             f"which has {len(lines)} elements.")
        lines = lines[:size]
    table = {}
    for i, token in enumerate(lines):
        table.setdefault(token.rstrip(b"\r"), i)
    return table, len(lines)


def _remapping(new_vocab, new_size, old_vocab, old_size):
    """For each of the first new_size new tokens: its row in the old vocabulary, or -1."""
    new_table, n = _read_vocab(new_vocab, new_size)
    old_table, _ = _read_vocab(old_vocab, old_size)
    ids = np.full(n, -1, np.int64)
    for token, i in new_table.items():
        ids[i] = old_table.get(token, -1)
    return ids


def _warm_start_var_with_vocab(var, current_vocab_path, current_vocab_size, prev_ckpt,
                               prev_vocab_path, previous_vocab_size=-1, current_oov_buckets=0,
                               prev_tensor_name=None, initializer=None, axis=0):
    if not (current_vocab_path and current_vocab_size and prev_ckpt and prev_vocab_path):
        raise ValueError("Invalid args: Must provide all of [current_vocab_path, "
                         "current_vocab_size, prev_ckpt, prev_vocab_path}.")
    if isinstance(var, Variable):
        var = [var]
    elif isinstance(var, PartitionedVariable):
        var = var._get_variable_list()
    elif not (isinstance(var, list) and all(isinstance(v, Variable) for v in var)):
        raise TypeError(f"var MUST be one of the following: a Variable, list of Variable or "
                        f"PartitionedVariable, but is {type(var)}")
    prev_tensor_name = prev_tensor_name or _infer_var_name(var)
    old = np.asarray(checkpoint_utils.load_variable(prev_ckpt, prev_tensor_name))
    if old.ndim != 2:
        raise ValueError(f"Vocabulary remapping needs a matrix; {prev_tensor_name} in the "
                         f"checkpoint has shape {list(old.shape)}")
    ids = _remapping(current_vocab_path, current_vocab_size, prev_vocab_path,
                     previous_vocab_size)
    initializer = initializer if initializer is not None else init_ops.zeros_initializer()
    for v in var:
        shape = v.shape.as_list()
        info = v._get_save_slice_info()
        full = info.full_shape if info is not None else shape
        offset = info.var_offset if info is not None else [0, 0]
        # The whole remapped matrix's entries for this part; missing ones are -1.
        rows = np.arange(offset[0], offset[0] + shape[0])
        cols = np.arange(offset[1], offset[1] + shape[1])
        if axis == 0:
            old_rows = np.where(rows < len(ids), ids[np.minimum(rows, len(ids) - 1)], -1)
            old_cols = np.where(cols < old.shape[1], cols, -1)
        else:
            old_rows = np.where(rows < old.shape[0], rows, -1)
            old_cols = np.where(cols < len(ids), ids[np.minimum(cols, len(ids) - 1)], -1)
        present = (old_rows[:, None] >= 0) & (old_cols[None, :] >= 0)
        loaded = np.zeros(shape, v.dtype.base_dtype.as_numpy_dtype)
        loaded[present] = old[np.maximum(old_rows, 0)[:, None],
                              np.maximum(old_cols, 0)[None, :]][present]
        partition_info = _PartitionInfo(full_shape=full, var_offset=offset) \
            if info is not None else None
        with v.graph.as_default(), _graph.name_scope(v.op.name + "/warm_start/"):
            backup = initializer(shape, dtype=v.dtype.base_dtype,
                                 partition_info=partition_info)
            value = where(constant(present), constant(loaded, dtype=v.dtype.base_dtype),
                          backup)
            v._initializer_op = state_ops.assign(v._ref(), value).op
            v._initial_value = value
