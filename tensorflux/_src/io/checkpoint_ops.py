"""The save and restore ops of TF's Saver graphs: SaveV2, RestoreV2, MergeV2Checkpoints,
ShardedFilename and ShardedFilespec.

tensorflux's own `tf.train.Saver` reads and writes the Session's variable store without
ops (train/saver.py). These records are for graphs TensorFlow wrote: a MetaGraph or
SavedModel holds its Saver as ops (`save/SaveV2`, `save/RestoreV2`, `save/restore_all`),
and its SaverDef names them, so a restoring script can run `sess.run(restore_op_name,
{filename_tensor_name: path})`. They are host records over io/tensor_bundle.py (TF's
save_restore_v2_ops.cc):

    SaveV2(prefix, tensor_names, shape_and_slices, tensors)   one bundle at `prefix`
    RestoreV2(prefix, tensor_names, shape_and_slices) -> tensors (attr dtypes)
    MergeV2Checkpoints(checkpoint_prefixes, destination_prefix)
        the sharded Saver's last step: the shards' bundles become one bundle at the
        destination (their data files renamed to its shards), the shards' index files
        are removed, and with delete_old_dirs their directory too
    ShardedFilename(basename, shard, num_shards) -> "basename-00000-of-00002"
    ShardedFilespec(basename, num_shards) -> "basename-?????-of-00002"

A shape_and_slices entry is "" for a whole tensor, or TF's slice spec of a partitioned
variable's part: the full shape, then `start,length` (or `-`, the whole dimension) for
each dimension, e.g. "64 3 0,32:-".
"""

from __future__ import annotations

import os
import shutil

import numpy as np

from tensorflux._src.framework import errors
from tensorflux._src.framework.protos import BundleEntryProto, BundleHeaderProto
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.io import tensor_bundle
from tensorflux._src.ops.op_helpers import kernel_error
from tensorflux._src.ops.registry import OpDef, REQUIRED, register
from tensorflux._src.train.variables import Variable


def _text(value) -> str:
    value = value.item() if isinstance(value, np.ndarray) else value
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def parse_slice_spec(spec: str, name: str):
    """(full shape, starts, sizes) of a shape_and_slices entry; None for ""."""
    if not spec:
        return None
    try:
        info = Variable.SaveSliceInfo.from_spec(spec)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, None, f"Could not parse shape_and_slices \"{spec}\" of tensor {name}: "
                        f"expected the full shape, then start,length or - per dimension, "
                        f"as \"64 3 0,32:-\"") from None
    return info.full_shape, info.var_offset, info.var_shape


def _check_lengths(tensor_names, shape_and_slices, count, op):
    if tensor_names.size != shape_and_slices.size or (count is not None and
                                                      tensor_names.size != count):
        raise kernel_error(f"{op}: tensor_names, shape_and_slices and the tensors must have "
                           f"the same length, got {tensor_names.size}, "
                           f"{shape_and_slices.size} and {count}")


# -- SaveV2 ---------------------------------------------------------------------------------
def _save_v2_kernel(prefix, tensor_names, shape_and_slices, *tensors):
    _check_lengths(tensor_names, shape_and_slices, len(tensors), "SaveV2")
    items = []
    for name, spec, value in zip(tensor_names.reshape(-1), shape_and_slices.reshape(-1),
                                 tensors):
        name = _text(name)
        part = parse_slice_spec(_text(spec), name)
        if part is not None:
            full, starts, sizes = part
            if list(np.shape(value)) != sizes:
                raise kernel_error(f"Shape {list(np.shape(value))} of tensor {name} does not "
                                   f"match its slice spec \"{_text(spec)}\"")
            part = (full, starts)
        items.append((name, value, part))
    path = _text(prefix)
    if os.path.dirname(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
    tensor_bundle.write_bundle(path, [items])
    return ()


register(OpDef(
    "SaveV2", inputs=("prefix: string", "tensor_names: string", "shape_and_slices: string",
                      "tensors: list(dtypes)"), outputs=(),
    host=_save_v2_kernel, stateful=True, not_differentiable=True))


# -- RestoreV2 ------------------------------------------------------------------------------
def _restore_v2_kernel(prefix, tensor_names, shape_and_slices, *, dtypes):
    _check_lengths(tensor_names, shape_and_slices, len(dtypes), "RestoreV2")
    reader = tensor_bundle.BundleReader(_text(prefix))
    out = []
    for name, spec, dtype in zip(tensor_names.reshape(-1), shape_and_slices.reshape(-1),
                                 dtypes):
        name = _text(name)
        value = reader.read(name)
        if reader.dtype(name) != dtype:
            raise errors.InvalidArgumentError(
                None, None, f"tensor_name = {name}; expected dtype {dtype.name} does not "
                            f"equal restored dtype {reader.dtype(name).name}.")
        part = parse_slice_spec(_text(spec), name)
        if part is not None:
            full, starts, sizes = part
            if list(value.shape) != full:
                raise errors.InvalidArgumentError(
                    None, None, f"tensor_name = {name}; shape in shape_and_slice spec "
                                f"{full} does not match the shape stored in checkpoint: "
                                f"{list(value.shape)}")
            value = value[tuple(slice(s, s + n) for s, n in zip(starts, sizes))]
        out.append(value)
    return out


register(OpDef(
    "RestoreV2", inputs=("prefix: string", "tensor_names: string",
                         "shape_and_slices: string"), outputs=("tensors: list(dtypes)",),
    attrs={"dtypes": REQUIRED},
    shape=lambda op: [TensorShape(None)] * len(op.get_attr("dtypes")),
    host=_restore_v2_kernel, stateful=True, not_differentiable=True))


# -- MergeV2Checkpoints ---------------------------------------------------------------------
def merge_bundles(prefixes, destination, delete_old_dirs=True, allow_missing_files=False):
    """One bundle at `destination` from the bundles at `prefixes` (each a Saver shard)."""
    present = [p for p in prefixes if os.path.isfile(tensor_bundle.index_file(p))]
    if len(present) != len(prefixes) and not allow_missing_files:
        missing = sorted(set(prefixes) - set(present))
        raise errors.NotFoundError(None, None, f"MergeV2Checkpoints: no checkpoint at "
                                               f"{missing[0]}")
    entries, moves = {}, []
    for shard_id, prefix in enumerate(present):
        index = tensor_bundle.index_file(prefix)
        with open(index, "rb") as f:
            items = tensor_bundle.read_table(f.read(), index)
        header = BundleHeaderProto.FromString(items[0][1])
        if header.num_shards != 1:
            raise errors.InvalidArgumentError(None, None, f"MergeV2Checkpoints: {prefix} has "
                                                          f"{header.num_shards} shards, not 1")
        shard_entries = {}
        for key, value in items[1:]:
            entry = BundleEntryProto.FromString(value)
            if not entry.slices:  # a full entry of a sliced tensor holds no bytes
                entry.shard_id = shard_id
            shard_entries[key] = entry
        try:
            tensor_bundle.merge_entries(entries, shard_entries)
        except ValueError as exc:
            raise errors.InvalidArgumentError(None, None, f"MergeV2Checkpoints: {exc}") from None
        moves.append((tensor_bundle.data_file(prefix, 0, 1),
                      tensor_bundle.data_file(destination, shard_id, len(present))))
    if os.path.dirname(destination):
        os.makedirs(os.path.dirname(destination), exist_ok=True)
    for source, target in moves:
        os.replace(source, target)
    tensor_bundle.write_index(destination, len(present), entries)
    for prefix in present:
        os.remove(tensor_bundle.index_file(prefix))
    if delete_old_dirs:  # the shards' directories (<prefix>_temp), never the destination's
        keep = os.path.abspath(os.path.dirname(destination) or ".")
        for directory in {os.path.abspath(os.path.dirname(p) or ".") for p in present}:
            if directory != keep:
                shutil.rmtree(directory, ignore_errors=True)


def _merge_kernel(checkpoint_prefixes, destination_prefix, *, delete_old_dirs,
                  allow_missing_files):
    merge_bundles([_text(p) for p in checkpoint_prefixes.reshape(-1)],
                  _text(destination_prefix), delete_old_dirs, allow_missing_files)
    return ()


register(OpDef(
    "MergeV2Checkpoints", inputs=("checkpoint_prefixes: string", "destination_prefix: string"),
    outputs=(), attrs={"delete_old_dirs": True, "allow_missing_files": False},
    host=_merge_kernel, stateful=True, not_differentiable=True))


# -- file names of shards -------------------------------------------------------------------
def _sharded_filename_kernel(basename, shard, num_shards):
    return np.array(f"{_text(basename)}-{int(shard):05d}-of-{int(num_shards):05d}"
                    .encode("utf-8"), dtype=object)


def _sharded_filespec_kernel(basename, num_shards):
    return np.array(f"{_text(basename)}-?????-of-{int(num_shards):05d}".encode("utf-8"),
                    dtype=object)


register(OpDef(
    "ShardedFilename", inputs=("basename: string", "shard: int32", "num_shards: int32"),
    outputs=("filename: string",), shape=lambda op: TensorShape([]),
    host=_sharded_filename_kernel, not_differentiable=True))
register(OpDef(
    "ShardedFilespec", inputs=("basename: string", "num_shards: int32"),
    outputs=("filename: string",), shape=lambda op: TensorShape([]),
    host=_sharded_filespec_kernel, not_differentiable=True))

__all__ = ["merge_bundles", "parse_slice_spec"]
