"""The on-disk checkpoint format: TF's V2 file names, safetensors inside.

A checkpoint with prefix `model.ckpt-100` is

    model.ckpt-100.data-00000-of-00001   the tensors: a safetensors file (one per shard)
    model.ckpt-100.index                 JSON: each tensor's dtype, shape and shard

The names are TF's, so code that tests for `<prefix>.index` (TF's own test for "a V2
checkpoint exists") or deletes `<prefix>.data-?????-of-?????` keeps working. Each data
file is a plain safetensors file that `safetensors.numpy.load_file` reads directly,
keyed by checkpoint name (`dense/kernel`); bfloat16 is stored natively (BF16).
complex128, which safetensors lacks, is stored as a flat float64 array of (real, imag)
pairs, and strings (a lookup table's keys) as one uint8 array: each string's length as
a little-endian uint64, then the strings' bytes; the index records the real dtype and
shape. The index looks like:

    {"format": "tensorflux.checkpoint", "version": 1, "save_id": "3f2a...",
     "num_shards": 1,
     "tensors": {"dense/kernel": {"dtype": "float32", "shape": [3, 4], "shard": 0}}}

Writing order: every data shard, then the index, each atomically (atomic_write.py).
The index is the commit point: a prefix whose index exists is complete. Each save
stamps a random `save_id` into the index and into every shard's safetensors metadata,
and a reader checks that they agree, so a shard left by another save to the same prefix
is reported as DataLossError rather than read as this checkpoint's data.

A tensor may also be stored in slices (a checkpoint sharding callback splits large
tensors over several data files, as TF's bundles hold tensor slices): its index entry
keeps the full dtype and shape and lists the slices instead of one shard,

    "big": {"dtype": "float32", "shape": [6, 4], "slices": [
        {"offset": [0, 0], "shape": [3, 4], "shard": 0, "key": "big:6 4 0,3:0,4"}, ...]}

each slice stored in its data file under `key` (the name, ":" and TF's slice spec).
Readers get the full tensor, reassembled on the host the way Saver assembles a
partitioned variable from its parts.

`CheckpointReader` also reads checkpoints written by TensorFlow (TF's tensor bundle,
io/tensor_bundle.py): their index is a table ending with TF's magic number rather than
JSON. An index that does not start like JSON is read as TF's (so a damaged one is
reported by the table reader). Saver still writes the format above.
"""

from __future__ import annotations

import glob
import json
import os
import uuid

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.io import tensor_bundle
from tensorflux._src.train import atomic_write

FORMAT = "tensorflux.checkpoint"
VERSION = 1

# dtype name -> how it is stored when safetensors has no such dtype.
_ENCODINGS = {"complex128": "float64_pairs", "string": "length_prefixed_bytes"}


def index_file(prefix):
    return prefix + ".index"


def data_file(prefix, shard, num_shards):
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


def exists(prefix) -> bool:
    """Whether a complete checkpoint exists at `prefix` (its index is written last)."""
    return os.path.isfile(index_file(prefix))


# -- writing ---------------------------------------------------------------------------------
def write(prefix, tensors, shards=None):
    """Writes `tensors` ({checkpoint name: numpy array}) as the checkpoint `prefix`.

    `shards` maps each name to a shard number (default: everything in shard 0).
    """
    shards = shards or {}
    num_shards = max(shards.values(), default=0) + 1
    save_id = uuid.uuid4().hex
    by_shard = [dict() for _ in range(num_shards)]
    for name, value in tensors.items():
        by_shard[shards.get(name, 0)][name] = value
    entries = {}
    for shard, shard_tensors in enumerate(by_shard):
        entries.update(write_data_shard(prefix, shard, num_shards, shard_tensors, save_id))
    write_index(prefix, entries, num_shards, save_id)


def write_shards(prefix, shards):
    """Writes checkpoint `prefix` from `shards`, one list per data file of
    (name, value, part) triples: `part` None for a whole tensor, else
    (full_shape, offset) of the slice `value` (slices of one name together tile it).
    """
    num_shards = max(len(shards), 1)
    save_id = uuid.uuid4().hex
    entries = {}
    for shard, items in enumerate(shards or [[]]):
        arrays = {}
        for name, value, part in items:
            value = np.asarray(value, order="C")
            if part is None:
                key = name
                entries[name] = {"dtype": _dtype_name(name, value),
                                 "shape": list(value.shape), "shard": shard}
            else:
                full_shape, offset = (list(map(int, p)) for p in part)
                key = f"{name}:{_spec(full_shape, offset, value.shape)}"
                entry = entries.setdefault(name, {"dtype": _dtype_name(name, value),
                                                  "shape": full_shape, "slices": []})
                entry["slices"].append({"offset": offset, "shape": list(value.shape),
                                        "shard": shard, "key": key})
            if key in arrays:
                raise ValueError(f"Two tensors stored under {key!r} in one data file")
            arrays[key] = _encode(value)
        _write_shard(data_file(prefix, shard, num_shards), arrays, save_id)
    write_index(prefix, entries, num_shards, save_id)


def _spec(full_shape, offset, shape):
    """TF's slice spec string ("<full shape> <offset>,<size>:...")."""
    return (" ".join(map(str, full_shape)) + " "
            + ":".join(f"{o},{n}" for o, n in zip(offset, shape))).strip()


def slice_index(offset, shape):
    """The numpy index of the slice at `offset` with `shape` inside its full tensor."""
    return tuple(slice(o, o + n) for o, n in zip(offset, shape))


def write_data_shard(prefix, shard, num_shards, tensors, save_id):
    """Writes `tensors` ({name: numpy array}) atomically as data file `shard` of
    `num_shards` of checkpoint `prefix`; returns their index entries. A checkpoint is
    complete once `write_index` has written its index (parameter-server tasks each
    write their own shard: distribute/ps/checkpoints.py)."""
    entries, arrays = {}, {}
    for name, value in tensors.items():
        entries[name] = {"dtype": _dtype_name(name, value), "shape": list(value.shape),
                         "shard": shard}
        arrays[name] = _encode(value)
    _write_shard(data_file(prefix, shard, num_shards), arrays, save_id)
    return entries


def write_index(prefix, entries, num_shards, save_id):
    """Writes the index of `prefix` (the commit point: written after every data file)."""
    index = {"format": FORMAT, "version": VERSION, "save_id": save_id,
             "num_shards": num_shards, "tensors": entries}
    atomic_write.write_text(index_file(prefix), json.dumps(index, sort_keys=True))


def _dtype_name(name, value):
    return _dtypes.as_dtype(value.dtype).name


def _encode(value):
    value = np.asarray(value, order="C")  # not ascontiguousarray: it makes 0-d arrays 1-d
    if value.dtype == np.complex128:
        return value.reshape(-1).view(np.float64)
    if value.dtype == np.object_:
        strings = [s.encode("utf-8") if isinstance(s, str) else bytes(s)
                   for s in value.reshape(-1)]
        lengths = np.array([len(s) for s in strings], dtype="<u8")
        return np.frombuffer(lengths.tobytes() + b"".join(strings), dtype=np.uint8)
    return value


def _decode_strings(stored, shape):
    count = int(np.prod(shape, dtype=np.int64))
    raw = stored.tobytes()
    lengths = np.frombuffer(raw[:8 * count], dtype="<u8")
    out = np.empty(count, dtype=object)
    pos = 8 * count
    for i, length in enumerate(lengths.tolist()):
        out[i] = raw[pos:pos + length]
        pos += length
    if pos != len(raw):
        raise ValueError(f"{len(raw) - pos} bytes left after {count} strings")
    return out.reshape(shape)


def _write_shard(path, arrays, save_id):
    from safetensors.numpy import save_file  # imported when checkpoints are used

    atomic_write.write_with(
        path, lambda tmp_path: save_file(arrays, tmp_path, metadata={"save_id": save_id}))


def remove(prefix):
    """Deletes a checkpoint's index and data files; the index first, so a crash midway
    leaves no prefix that looks complete but lacks data."""
    for pattern in (glob.escape(index_file(prefix)),
                    glob.escape(prefix) + ".data-?????-of-?????"):
        for path in glob.glob(pattern):
            os.remove(path)


# -- reading ---------------------------------------------------------------------------------
class CheckpointReader:
    """Reads one checkpoint (TF's `pywrap_tensorflow.CheckpointReader` interface)."""

    def __init__(self, prefix):
        self._prefix = os.fspath(prefix)
        self._bundle = None
        if _is_tensorflow_index(index_file(self._prefix)):
            self._bundle = tensor_bundle.BundleReader(self._prefix)
            self._entries = {name: {"dtype": self._bundle.dtype(name).name,
                                    "shape": self._bundle.shape(name)}
                             for name in self._bundle.names()}
            return
        index = _read_index(self._prefix)
        self._save_id = index["save_id"]
        self._num_shards = index["num_shards"]
        self._entries = index["tensors"]

    def get_variable_to_shape_map(self):
        return {name: list(e["shape"]) for name, e in self._entries.items()}

    def get_variable_to_dtype_map(self):
        return {name: _dtypes.as_dtype(e["dtype"]) for name, e in self._entries.items()}

    def has_tensor(self, tensor_str):
        return tensor_str in self._entries

    def get_tensor(self, tensor_str):
        """The tensor's value: a numpy array (a numpy scalar for 0-d tensors, as TF)."""
        value = self.get_tensors([tensor_str])[tensor_str]
        return value[()] if value.ndim == 0 else value

    def get_tensors(self, names):
        """{name: numpy array} for `names`, opening each data file once."""
        for name in names:
            if name not in self._entries:
                raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint")
        if self._bundle is not None:
            return {name: self._bundle.read(name) for name in names}
        by_shard = {}  # shard -> [(stored key, index entry)]
        for name in names:
            entry = self._entries[name]
            if "slices" in entry:
                for part in entry["slices"]:
                    stored = dict(part, dtype=entry["dtype"])
                    by_shard.setdefault(part["shard"], []).append((part["key"], stored))
            else:
                by_shard.setdefault(entry["shard"], []).append((name, entry))
        stored = {}
        for shard, keys in sorted(by_shard.items()):
            stored.update(self._read_shard(shard, keys))
        values = {}
        for name in names:
            entry = self._entries[name]
            if "slices" not in entry:
                values[name] = stored[name]
                continue
            full = np.empty(entry["shape"], dtype=_dtypes.as_dtype(entry["dtype"])
                            .as_numpy_dtype)
            covered = 0
            for part in entry["slices"]:
                full[slice_index(part["offset"], part["shape"])] = stored[part["key"]]
                covered += int(np.prod(part["shape"], dtype=np.int64))
            if covered != full.size:
                raise _data_loss(index_file(self._prefix),
                                 f"the slices of {name} do not cover its shape "
                                 f"{entry['shape']}")
            values[name] = full
        return values

    def debug_string(self):
        """TF's listing: one `name (DT_FLOAT) [2,3]` line per tensor, as bytes."""
        lines = []
        for name in sorted(self._entries):
            entry = self._entries[name]
            dims = ",".join(str(d) for d in entry["shape"])
            lines.append(f"{name} (DT_{_dtypes.as_dtype(entry['dtype'])._tf_name.upper()}) "
                         f"[{dims}]\n")
        return "".join(lines).encode("utf-8")

    def _read_shard(self, shard, keys):
        """{stored key: array} for `keys`, (stored key, index entry) pairs."""
        from safetensors import SafetensorError, safe_open

        path = data_file(self._prefix, shard, self._num_shards)
        try:
            with safe_open(path, framework="np") as f:
                if (f.metadata() or {}).get("save_id") != self._save_id:
                    raise _data_loss(path, "it was written by a different save than the "
                                           f"index {index_file(self._prefix)}")
                return {key: _decode(key, f.get_tensor(key), entry, path)
                        for key, entry in keys}
        except (OSError, SafetensorError) as e:
            raise _data_loss(path, str(e)) from None


def _is_tensorflow_index(path):
    """Whether the index at `path` is TF's table rather than tensorflux's JSON."""
    if tensor_bundle.is_bundle_index(path):
        return True
    try:
        with open(path, "rb") as f:
            start = f.read(1)
    except OSError:
        return False  # _read_index reports it
    return start not in (b"{", b"")


def _read_index(prefix):
    path = index_file(prefix)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError as e:
        raise _data_loss(path, f"not a tensorflux checkpoint index ({e})") from None
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise errors.NotFoundError(
            None, None, f"Unsuccessful TensorSliceReader constructor: Failed to find any "
                        f"matching files for {prefix}") from None
    try:
        index = json.loads(text)
        if index.get("format") != FORMAT:
            raise ValueError(f"format is {index.get('format')!r}, not {FORMAT!r}")
        if index.get("version") != VERSION:
            raise ValueError(f"unsupported version {index.get('version')!r}")
        missing = {"save_id", "num_shards", "tensors"} - index.keys()
        if missing:
            raise ValueError(f"missing {sorted(missing)}")
    except (ValueError, AttributeError) as e:
        raise _data_loss(path, f"not a tensorflux checkpoint index ({e})") from None
    return index


def _decode(name, stored, entry, path):
    dtype = _dtypes.as_dtype(entry["dtype"]).as_numpy_dtype
    shape = tuple(entry["shape"])
    if _ENCODINGS.get(entry["dtype"]) == "float64_pairs":
        stored = stored.view(np.complex128).reshape(shape)
    elif _ENCODINGS.get(entry["dtype"]) == "length_prefixed_bytes":
        try:
            return _decode_strings(stored, shape)
        except ValueError as e:
            raise _data_loss(path, f"tensor {name} is not {list(shape)} strings: {e}") from None
    if stored.dtype != dtype or stored.shape != shape:
        raise _data_loss(path, f"tensor {name} holds {stored.dtype} {list(stored.shape)}, "
                               f"the index says {entry['dtype']} {list(shape)}")
    return stored


def _data_loss(path, why):
    return errors.DataLossError(None, None, f"Unable to read checkpoint file {path}: {why}")
