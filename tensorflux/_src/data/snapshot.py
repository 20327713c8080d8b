"""Dataset.save / Dataset.load and snapshot: a dataset's elements on disk.

The on-disk form is tensorflux's own (TF's snapshot protos are not written): a run
directory of shard files, each a stream of .npy records (cache.write_array: no
pickles), optionally gzip-compressed, and `dataset_spec.json` naming the run, the
element spec, the compression and the shards. Saving is atomic: shards are written
into a temporary directory renamed into place once complete, and the JSON file, the
commit point, is replaced atomically last; a reader sees the old run or the new one.

`snapshot(path)` keys its run by the fingerprint of the input pipeline: the first full
pass writes `path/<fingerprint>/`, later passes (and later iterators, in any process)
read it instead of computing the input.
"""

from __future__ import annotations

import collections
import contextlib
import gzip
import json
import os
import shutil
import time
import uuid

import numpy as np

from tensorflux._src.data import structure as _structure
from tensorflux._src.data.cache import read_array, write_array
from tensorflux._src.data.consumers import _Consumer, _elements, _pass, _text, fingerprint_of
from tensorflux._src.data.dataset_ops import INPUT_TYPES, Dataset, ElementError
from tensorflux._src.data.functions import StructuredFunction
from tensorflux._src.data.iterator_ops import _register_dataset
from tensorflux._src.data.type_specs import DatasetSpec, SparseTensorSpec
from tensorflux._src.ops.sparse.ragged_tensor import RaggedTensorSpec
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors, tensor_shape
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.type_spec import TensorSpec
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import REQUIRED, OpDef, register
from tensorflux._src.train import atomic_write

_METADATA = "dataset_spec.json"


# -- element specs as JSON ---------------------------------------------------------------
def encode_spec(spec):
    if isinstance(spec, dict):
        return {"dict": [[k, encode_spec(v)] for k, v in spec.items()]}
    if isinstance(spec, tuple) and hasattr(spec, "_fields"):
        return {"namedtuple": type(spec).__name__, "fields": list(spec._fields),
                "items": [encode_spec(v) for v in spec]}
    if isinstance(spec, tuple):
        return {"tuple": [encode_spec(v) for v in spec]}
    shape = None if spec.shape.ndims is None else spec.shape.as_list()
    if isinstance(spec, TensorSpec):
        return {"tensor": [spec.dtype.name, shape]}
    if isinstance(spec, SparseTensorSpec):
        return {"sparse": [spec.dtype.name, shape]}
    if isinstance(spec, RaggedTensorSpec):
        return {"ragged": [spec.dtype.name, shape, spec.ragged_rank,
                           spec.row_splits_dtype.name]}
    raise TypeError(f"Cannot save a dataset whose elements have components of type {spec!r}")


def decode_spec(data):
    if "dict" in data:
        return {k: decode_spec(v) for k, v in data["dict"]}
    if "namedtuple" in data:
        kind = collections.namedtuple(data["namedtuple"], data["fields"])
        return kind(*(decode_spec(v) for v in data["items"]))
    if "tuple" in data:
        return tuple(decode_spec(v) for v in data["tuple"])
    if "ragged" in data:
        dtype, shape, ragged_rank, splits_dtype = data["ragged"]
        return RaggedTensorSpec(tensor_shape.TensorShape(shape), _dtypes.as_dtype(dtype),
                                ragged_rank, _dtypes.as_dtype(splits_dtype))
    kind, (dtype, shape) = ("tensor", data["tensor"]) if "tensor" in data else \
        ("sparse", data["sparse"])
    cls = TensorSpec if kind == "tensor" else SparseTensorSpec
    return cls(tensor_shape.TensorShape(shape), _dtypes.as_dtype(dtype))


# -- runs on disk -------------------------------------------------------------------------
def _compression(value):
    value = "" if value is None else _text(value).upper()
    if value in ("", "NONE", "AUTO"):
        return ""
    if value == "GZIP":
        return "GZIP"
    raise errors.InvalidArgumentError(
        None, None, f"Unsupported compression {value!r}: tensorflux writes None or GZIP")


def _open(path, mode, compression):
    return gzip.open(path, mode) if compression == "GZIP" else open(path, mode)


class _RunWriter:
    """Shard files in a temporary directory, published under `final` by `commit`."""

    def __init__(self, final, compression):
        self.final, self.compression = final, compression
        self.tmp = f"{final}.tmp{uuid.uuid4().hex}"
        os.makedirs(self.tmp)
        self.files = {}

    def write(self, shard, arrays):
        f = self.files.get(shard)
        if f is None:
            f = self.files[shard] = _open(os.path.join(self.tmp, f"shard_{shard:08d}.npyrec"),
                                          "wb", self.compression)
        for array in arrays:
            write_array(f, array)

    def commit(self):
        """Closes the shards and renames the run into place; False when another writer
        published it first (then this copy is dropped)."""
        for f in self.files.values():
            f.close()
        shards = sorted(self.files)
        for shard in shards:
            with open(os.path.join(self.tmp, f"shard_{shard:08d}.npyrec"), "rb+") as f:
                os.fsync(f.fileno())
        try:
            os.rename(self.tmp, self.final)
        except OSError:
            self.abort()
            return None
        return shards

    def abort(self):
        for f in self.files.values():
            f.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


def _write_metadata(path, run, element_spec, compression, shards, count):
    data = {"version": 1, "run": run, "element_spec": encode_spec(element_spec),
            "compression": compression, "shards": shards, "num_elements": count}
    atomic_write.write_with(os.path.join(path, _METADATA),
                            lambda tmp: _write_json(tmp, data))


def _write_json(tmp, data):
    with open(tmp, "w") as f:
        json.dump(data, f)


def read_metadata(path):
    try:
        with open(os.path.join(path, _METADATA)) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def _shard_elements(path, compression, n_arrays, structure):
    def elements():
        with _open(path, "rb", compression) as f:
            while True:
                try:
                    first = read_array(f) if n_arrays else None
                except EOFError:
                    return
                arrays = [first] + [read_array(f) for _ in range(n_arrays - 1)]
                yield structure.from_arrays(arrays)
    return elements


# -- save ---------------------------------------------------------------------------------
def _save_kernel(*inputs, dataset):
    with _pass(dataset, inputs) as (node, ctx):
        path = _text(ctx.value(node.path))
        compression = _compression(ctx.value(node.compression))
        os.makedirs(path, exist_ok=True)
        run = f"run_{uuid.uuid4().hex}"
        writer = _RunWriter(os.path.join(path, run), compression)
        shard_of = ctx.function(node._functions[0]) if node._functions else None
        count = 0
        try:
            for element in _elements(node, ctx):
                shard = 0 if shard_of is None else int(np.asarray(shard_of(element)[0]))
                if shard < 0:
                    raise errors.InvalidArgumentError(
                        None, None, f"`shard_func` returned {shard}; shard indices must be "
                        f"non-negative")
                writer.write(shard, node._structure.to_arrays(element))
                count += 1
        except BaseException:
            writer.abort()
            raise
        shards = writer.commit()
        old = read_metadata(path)
        _write_metadata(path, run, node._structure.element_spec, compression, shards, count)
        if old and old.get("run") != run:
            shutil.rmtree(os.path.join(path, old["run"]), ignore_errors=True)
        return ()


register(OpDef("SaveDataset", inputs=("inputs: list(Tin)",), outputs=(),
               attrs={"Tin": INPUT_TYPES, "dataset": REQUIRED}, host=_save_kernel,
               stateful=True, not_differentiable=True))


def _shard_function(dataset, shard_func, transformation):
    if shard_func is None:
        return ()
    function = StructuredFunction(shard_func, dataset._structure, transformation)
    specs = function.output_structure.specs
    if len(specs) != 1 or not isinstance(specs[0], TensorSpec) or \
            not specs[0].dtype.is_integer or not specs[0].shape.is_compatible_with([]):
        raise ValueError("`shard_func` must return a scalar int64.")
    return (function,)


def save(dataset, path, compression=None, shard_func=None, checkpoint_args=None):
    """An op that writes `dataset` under `path` (see the module docstring)."""
    for spec in dataset._structure.specs:
        encode_spec(spec)  # unsupported components fail here, at graph construction
    path_t = convert_to_tensor(os.fspath(path) if not hasattr(path, "dtype") else path,
                               _dtypes.string, name="path")
    compression_t = convert_to_tensor(compression or "", _dtypes.string, name="compression")
    node = _Consumer(dataset, (path_t, compression_t),
                     _shard_function(dataset, shard_func, "save"))
    node.path, node.compression = path_t, compression_t
    return apply_op("SaveDataset", name="SaveDataset", inputs=node._inputs(),
                    dataset=_register_dataset(node))


# -- load ---------------------------------------------------------------------------------
class ShardsDataset(Dataset):
    """The shards of a saved run, each a dataset element (what a `reader_func` gets)."""

    def __init__(self, element_spec, locate):
        self._structure = _structure.Structure(None, [DatasetSpec(element_spec)])
        self._element_structure = _structure.Structure.from_element_spec(element_spec)
        self._locate = locate

    def _iterate(self, ctx):
        run_dir, compression, shards = self._locate(ctx)
        n = len(self._element_structure.flat_tensor_specs())
        for shard in shards:
            file = os.path.join(run_dir, f"shard_{shard:08d}.npyrec")
            yield (_structure.DatasetValue(factory=_shard_elements(
                file, compression, n, self._element_structure)),)


def _reader(shards, reader_func):
    """The dataset that reads the shards: `reader_func(shards)`, or all shards in order."""
    if reader_func is None:
        return shards.flat_map(lambda shard: shard)
    dataset = reader_func(shards)
    if not isinstance(dataset, Dataset):
        raise TypeError("`reader_func` must return a `tf.data.Dataset` object.")
    return dataset


def _wait_for_metadata(path):
    """The metadata once a save in progress (distributed_save) has committed it."""
    while True:
        metadata = read_metadata(path)
        if metadata is not None:
            return metadata
        time.sleep(0.02)


class LoadDataset(Dataset):
    def __init__(self, path, element_spec=None, compression=None, reader_func=None,
                 wait=False):
        self._path = os.fspath(path)
        self._wait = wait
        if element_spec is None:
            metadata = _wait_for_metadata(self._path) if wait else \
                read_metadata(self._path)
            if metadata is None:
                raise errors.NotFoundError(
                    None, None, f"Could not find the saved dataset's element_spec in "
                    f"{os.path.join(self._path, _METADATA)}; pass `element_spec` to load() "
                    f"or save a dataset there first.")
            element_spec = decode_spec(metadata["element_spec"])
        self._spec = element_spec
        reader = _reader(ShardsDataset(element_spec, self._locate), reader_func)
        self._children = (reader,)
        self._structure = reader._structure

    def _locate(self, ctx):
        metadata = _wait_for_metadata(self._path) if self._wait else \
            read_metadata(self._path)
        if metadata is None:
            raise errors.NotFoundError(None, None, f"No saved dataset in {self._path}")
        saved = decode_spec(metadata["element_spec"])
        if not _structure.specs_compatible(saved, self._spec):
            raise errors.InvalidArgumentError(
                None, None, f"The dataset saved in {self._path} has element_spec {saved}, "
                f"incompatible with the given {self._spec}")
        return (os.path.join(self._path, metadata["run"]), metadata["compression"],
                metadata["shards"])

    def _iterate(self, ctx):
        return self._children[0]._iterate(ctx)

    def _cardinality(self, ctx):
        metadata = read_metadata(self._path)
        return metadata["num_elements"] if metadata else super()._cardinality(ctx)


def load(path, element_spec=None, compression=None, reader_func=None, wait=False):
    """The saved dataset; with `wait`, once the save (a distributed_save still running)
    has completed: TF's wait=True also reads a snapshot as it is written."""
    return LoadDataset(path, element_spec, compression, reader_func, wait)


# -- snapshot -----------------------------------------------------------------------------
class SnapshotDataset(Dataset):
    def __init__(self, input_dataset, path, compression="AUTO", reader_func=None,
                 shard_func=None):
        self._children = (input_dataset,)
        self._structure = input_dataset._structure
        for spec in self._structure.specs:
            encode_spec(spec)
        self._path = os.fspath(path)
        self._compression = _compression(compression)
        self._functions = _shard_function(input_dataset, shard_func, "snapshot")
        self._reader = _reader(ShardsDataset(self._structure.element_spec, self._locate),
                               reader_func)

    def _locate(self, ctx):
        return ctx.memory(self)["located"]

    def _inputs(self):
        found = dict.fromkeys(super()._inputs())
        found.update(dict.fromkeys(self._reader._inputs()))
        return list(found)

    def _iterate(self, ctx):
        input_dataset = self._children[0]
        run_dir = os.path.join(self._path, f"{fingerprint_of(input_dataset, ctx):016x}")
        metadata = read_metadata(run_dir)
        if metadata is not None:
            ctx.memory(self)["located"] = (os.path.join(run_dir, metadata["run"]),
                                           metadata["compression"], metadata["shards"])
            yield from self._reader._iterate(ctx)
            return
        os.makedirs(run_dir, exist_ok=True)
        run = f"run_{uuid.uuid4().hex}"
        writer = _RunWriter(os.path.join(run_dir, run), self._compression)
        shard_of = ctx.function(self._functions[0]) if self._functions else None
        count, complete = 0, False
        try:
            for element in input_dataset._iterate(ctx):
                if type(element) is not ElementError:
                    shard = 0 if shard_of is None else int(np.asarray(shard_of(element)[0]))
                    writer.write(max(shard, 0), self._structure.to_arrays(element))
                    count += 1
                yield element
            complete = True
        finally:
            if not complete:
                writer.abort()
                with contextlib.suppress(OSError):
                    os.rmdir(run_dir)  # only when no other writer's run is in it
        shards = writer.commit()
        if shards is not None and read_metadata(run_dir) is None:
            _write_metadata(run_dir, run, self._structure.element_spec, self._compression,
                            shards, count)

    def _cardinality(self, ctx):
        return self._children[0]._cardinality(ctx)
