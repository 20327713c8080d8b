"""The on-disk checkpoint format: TensorFlow's V2 tensor bundle.

A checkpoint with prefix `model.ckpt-100` is

    model.ckpt-100.data-00000-of-00001   the tensors' bytes (one file per shard)
    model.ckpt-100.index                 TF's table: a BundleHeaderProto, then one
                                         BundleEntryProto (dtype, shape, shard, offset,
                                         size, crc32c, slices) per tensor

exactly as TensorFlow writes them (io/tensor_bundle.py has the byte-level details), so
TF's `tf.train.Saver`, `tf.train.load_checkpoint` and `tf.train.list_variables` read
what tensorflux writes and the other way round. Every dtype TF checkpoints is stored
natively (bfloat16, half, complex64/128, bool, int8..uint64, strings).

Writing order: every data shard, then the index, each to a temp file that is fsync'd
and renamed (atomic_write.py). The index is the commit point: a prefix whose index
exists is complete, and a write that fails midway leaves the previous checkpoint at the
same prefix readable (its old index still describes its old data files, which are only
replaced file by file; a reader checks each tensor's CRC32C, so data of another save
that slipped under an old index is reported as DataLossError, never read as values).

A tensor may be stored in slices (a partitioned variable saved by Saver, or a sharding
callback that splits a large tensor over several data files): its entry keeps the full
dtype and shape and lists TensorSliceProtos; each slice is an entry of its own under
TF's OrderedCode key. Readers get the full tensor, reassembled on the host.

Checkpoints written by earlier tensorflux versions (a safetensors file per shard and a
JSON index: {"format": "tensorflux.checkpoint", "version": 1, "save_id": ..., "tensors":
{name: {dtype, shape, shard | slices}}}) are still read: `CheckpointReader` picks the
reader by the index (TF's table ends with its magic number; the old index is JSON).
"""

from __future__ import annotations

import glob
import json
import os

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework.protos import BundleEntryProto
from tensorflux._src.io import tensor_bundle

FORMAT = "tensorflux.checkpoint"  # the JSON index of the old format (read only)
VERSION = 1

# dtype name -> how the old format stored it when safetensors has no such dtype.
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
    by_shard = [[] for _ in range(num_shards)]
    for name in sorted(tensors):
        by_shard[shards.get(name, 0)].append((name, tensors[name], None))
    write_shards(prefix, by_shard)


def write_shards(prefix, shards):
    """Writes checkpoint `prefix` from `shards`, one list per data file of
    (name, value, part) triples: `part` None for a whole tensor, else
    (full_shape, offset) of the slice `value` (slices of one name together tile it).
    """
    for items in shards:
        for name, value, part in items:
            _check_writable(name, value)
    tensor_bundle.write_bundle(os.fspath(prefix), shards)


def _check_writable(name, value):
    value = np.asarray(value)
    if value.dtype == object or value.dtype.kind in "SU":
        return
    try:
        _dtypes.as_dtype(value.dtype)
    except TypeError:
        raise TypeError(f"Cannot save tensor {name!r} in a checkpoint: received dtype "
                        f"{value.dtype}, expected one of TensorFlow's dtypes") from None


def slice_index(offset, shape):
    """The numpy index of the slice at `offset` with `shape` inside its full tensor."""
    return tuple(slice(o, o + n) for o, n in zip(offset, shape))


def write_data_shard(prefix, shard, num_shards, tensors, save_id=None):
    """Writes `tensors` ({name: numpy array}) atomically as data file `shard` of
    `num_shards` of checkpoint `prefix`; returns their index entries ({name: serialized
    BundleEntryProto}, plain bytes so they can be sent to another process). A checkpoint
    is complete once `write_index` has written its index from every shard's entries
    (parameter-server tasks each write their own shard: distribute/ps/checkpoints.py).

    `save_id` is accepted for callers that stamp saves; TF's bundle has no field for it,
    and a shard of another save is caught by the entries' CRC32Cs instead."""
    for name, value in tensors.items():
        _check_writable(name, value)
    entries = tensor_bundle.write_data_file(
        os.fspath(prefix), shard, num_shards,
        [(name, tensors[name], None) for name in sorted(tensors)])
    return {key.decode("utf-8"): entry.SerializeToString() for key, entry in entries.items()}


def write_index(prefix, entries, num_shards, save_id=None):
    """Writes the index of `prefix` (the commit point: written after every data file)
    from the entries `write_data_shard` returned for each shard, merged into one dict."""
    protos = {}
    for name, entry in entries.items():
        if isinstance(entry, (bytes, bytearray)):
            entry = BundleEntryProto.FromString(bytes(entry))
        tensor_bundle.merge_entries(protos, {name.encode("utf-8"): entry})
    tensor_bundle.write_index(os.fspath(prefix), num_shards, protos)


def remove(prefix):
    """Deletes a checkpoint's index and data files; the index first, so a crash midway
    leaves no prefix that looks complete but lacks data."""
    for pattern in (glob.escape(index_file(prefix)),
                    glob.escape(prefix) + ".data-?????-of-?????"):
        for path in glob.glob(pattern):
            os.remove(path)


# -- reading ---------------------------------------------------------------------------------
class CheckpointReader:
    """Reads one checkpoint (TF's `pywrap_tensorflow.CheckpointReader` interface): a
    tensor bundle, or a checkpoint in tensorflux's old safetensors + JSON format."""

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


def _data_loss(path, why):
    return errors.DataLossError(None, None, f"Unable to read checkpoint file {path}: {why}")
