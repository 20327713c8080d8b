"""TensorFlow's tensor bundle (the V2 checkpoint format): reading and writing.

A bundle with prefix `model.ckpt-3` is

    model.ckpt-3.index                  a table: "" -> BundleHeaderProto,
                                        tensor name -> BundleEntryProto
    model.ckpt-3.data-00000-of-00001    the tensors' bytes, one shard per data file

(TF: core/util/tensor_bundle/tensor_bundle.{h,cc}, protobuf/tensor_bundle.proto.)

The index is a LevelDB-style sorted string table (TF's core/lib/io/table_builder.cc,
block_builder.cc, format.cc): data blocks of prefix-compressed entries with a restart
point every 16 entries, then an empty metaindex block, an index block (one entry per
data block: a separator key -> the block's handle, two varint64s offset and size), and a
48-byte footer (the two handles padded to 40 bytes, then the magic 0xdb4775248b80fb57 as
two little-endian uint32s). Each block is followed by a compression byte (0: none) and
the masked CRC32C of the block and that byte. TF writes bundle indexes uncompressed.

Data files hold each tensor's bytes back to back (no alignment padding, TF's default):
numbers as little-endian raw arrays, bool one byte each; a string tensor as the varint64
length of every element, a uint32 length checksum, then the elements' bytes. An entry's
`crc32c` is the masked CRC32C of its bytes, except for strings: TF checksums each length
as a little-endian uint32 (uint64 above 2**32 - 1) rather than its varint, so the length
checksum is the masked CRC32C of those, and the entry's covers them, the length checksum
and the strings' bytes (WriteStringTensor in tensor_bundle.cc).

A tensor saved in slices (a partitioned variable) has an entry with the full dtype and
shape and a `slices` list of TensorSliceProtos; each slice's bytes are an entry of their
own under a key made with TF's OrderedCode (saved_tensor_slice_util.cc): NumIncreasing(0),
String(name), NumIncreasing(rank), then SignedNumIncreasing(start), (length) per
dimension, -1 as the length of a whole dimension. Such keys start with a 0 byte, so they
sort before every name, right after the header.
"""

from __future__ import annotations

import os
import re
import struct

import google_crc32c
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework.protos import (BundleEntryProto, BundleHeaderProto,
                                              TensorShapeProto, TensorSliceProto, VersionDef)
from tensorflux._src.framework.protowire import DecodeError, decode_varint, encode_varint
from tensorflux._src.train import atomic_write

__all__ = ["BundleReader", "write_bundle", "write_data_file", "write_index", "merge_entries",
           "is_bundle_index", "index_file", "data_file"]

TABLE_MAGIC = 0xDB4775248B80FB57
_FOOTER_SIZE = 48  # two BlockHandles padded to 2 * 20 bytes, then the 8-byte magic
_TRAILER_SIZE = 5  # compression type byte + masked crc32c
_BLOCK_SIZE = 262144  # TF's table::Options defaults
_RESTART_INTERVAL = 16
_NO_COMPRESSION = 0
_MASK_DELTA = 0xA282EAD8
# tensor_bundle.h: kTensorBundleVersion (what is written as producer; readers are consumers).
_BUNDLE_VERSION = 1
_DT_STRING = 7


def index_file(prefix):
    return prefix + ".index"


def data_file(prefix, shard, num_shards):
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


def is_bundle_index(path) -> bool:
    """Whether `path` ends with a table footer (TF's index), not tensorflux's JSON index."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() < _FOOTER_SIZE:
                return False
            f.seek(-8, os.SEEK_END)
            return struct.unpack("<Q", f.read(8))[0] == TABLE_MAGIC
    except OSError:
        return False


# -- CRC32C ---------------------------------------------------------------------------------------
def _masked_crc(data) -> int:
    """TF's masked CRC32C (crc32c::Mask: rotate right 15 bits, add a constant)."""
    crc = google_crc32c.value(bytes(data))
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def _data_loss(path, why):
    return errors.DataLossError(None, None, f"{why} (file {path})")


# -- the sorted string table ----------------------------------------------------------------------
class _BlockBuilder:
    """One block: prefix-compressed entries, restart offsets, their count."""

    def __init__(self, restart_interval):
        self._interval = restart_interval
        self._buf = bytearray()
        self._restarts = [0]
        self._counter = 0
        self._last_key = b""
        self.empty = True

    def add(self, key, value):
        shared = 0
        if self._counter < self._interval:
            limit = min(len(key), len(self._last_key))
            while shared < limit and key[shared] == self._last_key[shared]:
                shared += 1
        else:
            self._restarts.append(len(self._buf))
            self._counter = 0
        self._buf += encode_varint(shared) + encode_varint(len(key) - shared)
        self._buf += encode_varint(len(value)) + key[shared:] + value
        self._last_key = key
        self._counter += 1
        self.empty = False

    def estimated_size(self):
        return len(self._buf) + 4 * len(self._restarts) + 4

    def finish(self) -> bytes:
        return bytes(self._buf + struct.pack(f"<{len(self._restarts) + 1}I",
                                             *self._restarts, len(self._restarts)))


def _shortest_separator(start: bytes, limit: bytes) -> bytes:
    """A short key >= start and < limit (LevelDB's bytewise FindShortestSeparator)."""
    n = min(len(start), len(limit))
    i = 0
    while i < n and start[i] == limit[i]:
        i += 1
    if i < n and start[i] < 0xFF and start[i] + 1 < limit[i]:
        return start[:i] + bytes([start[i] + 1])
    return start


def _short_successor(key: bytes) -> bytes:
    """A short key >= key (LevelDB's bytewise FindShortSuccessor)."""
    for i, byte in enumerate(key):
        if byte != 0xFF:
            return key[:i] + bytes([byte + 1])
    return key


def _handle(offset, size) -> bytes:
    return encode_varint(offset) + encode_varint(size)


def build_table(items) -> bytes:
    """The table of `items`, (key, value) byte pairs in strictly increasing key order,
    as TF's TableBuilder writes it."""
    out = bytearray()
    index = _BlockBuilder(1)
    block = _BlockBuilder(_RESTART_INTERVAL)
    pending = None  # (last key of the flushed block, its handle), indexed at the next key

    def write_block(builder):
        contents = builder.finish() + bytes([_NO_COMPRESSION])
        offset = len(out)
        out.extend(contents + struct.pack("<I", _masked_crc(contents)))
        return _handle(offset, len(contents) - 1)

    last_key = None
    for key, value in items:
        if last_key is not None and key <= last_key:
            raise ValueError(f"table keys out of order: {last_key!r} then {key!r}")
        if pending is not None:
            index.add(_shortest_separator(pending[0], key), pending[1])
            pending = None
        block.add(key, value)
        last_key = key
        if block.estimated_size() >= _BLOCK_SIZE:
            pending = (last_key, write_block(block))
            block = _BlockBuilder(_RESTART_INTERVAL)
    if not block.empty:
        pending = (last_key, write_block(block))
    if pending is not None:
        index.add(_short_successor(pending[0]), pending[1])
    metaindex_handle = write_block(_BlockBuilder(_RESTART_INTERVAL))
    index_handle = write_block(index)
    footer = (metaindex_handle + index_handle).ljust(40, b"\0")
    out.extend(footer + struct.pack("<II", TABLE_MAGIC & 0xFFFFFFFF, TABLE_MAGIC >> 32))
    return bytes(out)


def _read_handle(data, pos, path):
    try:
        offset, pos = decode_varint(data, pos)
        size, pos = decode_varint(data, pos)
    except DecodeError:
        raise _data_loss(path, "bad block handle") from None
    return offset, size, pos


def _read_block(data, offset, size, path):
    """A block's contents, its trailer checked."""
    if offset + size + _TRAILER_SIZE > len(data):
        raise _data_loss(path, "truncated block read")
    contents = data[offset:offset + size + 1]
    (stored,) = struct.unpack_from("<I", data, offset + size + 1)
    if _masked_crc(contents) != stored:
        raise _data_loss(path, "block checksum mismatch")
    if contents[-1] != _NO_COMPRESSION:
        raise _data_loss(path, f"unsupported block compression type {contents[-1]}")
    return contents[:-1]


def _block_entries(block, path):
    """Yields a block's (key, value) pairs."""
    if len(block) < 4:
        raise _data_loss(path, "bad block contents")
    (num_restarts,) = struct.unpack_from("<I", block, len(block) - 4)
    limit = len(block) - 4 * (num_restarts + 1)
    if limit < 0:
        raise _data_loss(path, "bad block contents")
    pos, key = 0, b""
    try:
        while pos < limit:
            shared, pos = decode_varint(block, pos)
            non_shared, pos = decode_varint(block, pos)
            value_size, pos = decode_varint(block, pos)
            if shared > len(key) or pos + non_shared + value_size > limit:
                raise DecodeError("bad entry")
            key = key[:shared] + bytes(block[pos:pos + non_shared])
            pos += non_shared
            yield key, bytes(block[pos:pos + value_size])
            pos += value_size
    except DecodeError:
        raise _data_loss(path, "bad entry in block") from None


def read_table(data, path):
    """[(key, value)] of a table's bytes, every block checked."""
    data = memoryview(data)
    if len(data) < _FOOTER_SIZE:
        raise _data_loss(path, "file is too short to be an sstable")
    footer = len(data) - _FOOTER_SIZE
    lo, hi = struct.unpack_from("<II", data, len(data) - 8)
    if lo | (hi << 32) != TABLE_MAGIC:
        raise _data_loss(path, "not an sstable (bad magic number)")
    _, _, pos = _read_handle(data, footer, path)  # the metaindex: nothing is kept there
    index_offset, index_size, _ = _read_handle(data, pos, path)
    if index_offset + index_size + _TRAILER_SIZE > footer:
        raise _data_loss(path, "truncated block read")
    items = []
    for _, handle in _block_entries(_read_block(data, index_offset, index_size, path), path):
        offset, size, _ = _read_handle(handle, 0, path)
        if offset + size + _TRAILER_SIZE > footer:
            raise _data_loss(path, "truncated block read")
        items.extend(_block_entries(_read_block(data, offset, size, path), path))
    return items


# -- OrderedCode keys of tensor slices ------------------------------------------------------------
_SPECIAL_BYTE = re.compile(rb"[\x00\xff]")
_ESCAPES = {b"\x00": b"\x00\xff", b"\xff": b"\xff\x00"}


def _num_increasing(value: int) -> bytes:
    raw = value.to_bytes(8, "big").lstrip(b"\0")
    return bytes([len(raw)]) + raw


def _string_code(s: bytes) -> bytes:
    """OrderedCode::WriteString: 0x00 -> 00 ff, 0xff -> ff 00, then the separator 00 01."""
    return _SPECIAL_BYTE.sub(lambda m: _ESCAPES[m.group()], s) + b"\x00\x01"


def _signed_num_increasing(value: int) -> bytes:
    x = ~value if value < 0 else value
    if x < 64:
        return bytes([(0x80 ^ value) & 0xFF])
    # Length in bytes: n bytes hold numbers of up to 7n - 1 bits besides the sign.
    length = (x.bit_length() + 1 + 6) // 7
    header = [(0, 0), (0x80, 0), (0xC0, 0), (0xE0, 0), (0xF0, 0), (0xF8, 0), (0xFC, 0),
              (0xFE, 0), (0xFF, 0), (0xFF, 0x80), (0xFF, 0xC0)][length]
    raw = bytearray((value & ((1 << (8 * length)) - 1)).to_bytes(length, "big"))
    raw[0] ^= header[0]
    raw[1] ^= header[1]
    return bytes(raw)


def slice_key(name: str, starts, lengths) -> bytes:
    """The index key of one slice of tensor `name` (EncodeTensorNameSlice)."""
    out = _num_increasing(0) + _string_code(name.encode("utf-8")) + _num_increasing(len(starts))
    for start, length in zip(starts, lengths):
        out += _signed_num_increasing(int(start)) + _signed_num_increasing(int(length))
    return out


def _slice_extents(proto, full_shape):
    """(starts, lengths as TF keys them, lengths in elements) of a TensorSliceProto."""
    starts, key_lengths, sizes = [], [], []
    for extent, dim in zip(proto.extent, full_shape):
        if extent.HasField("length"):
            starts.append(extent.start)
            key_lengths.append(extent.length)
            sizes.append(extent.length)
        else:  # the whole dimension (TensorSlice's kFullExtent)
            starts.append(0)
            key_lengths.append(-1)
            sizes.append(dim)
    return starts, key_lengths, sizes


# -- reading --------------------------------------------------------------------------------------
class BundleReader:
    """The entries of one bundle and their values (TF's BundleReader)."""

    def __init__(self, prefix):
        self._prefix = os.fspath(prefix)
        path = index_file(self._prefix)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise errors.NotFoundError(
                None, None, f"Unsuccessful TensorSliceReader constructor: Failed to find "
                            f"any matching files for {self._prefix}") from None
        items = read_table(data, path)
        if not items or items[0][0] != b"":
            raise _data_loss(path, "the bundle has no header entry")
        try:
            header = BundleHeaderProto.FromString(items[0][1])
            self._entries, self._slices = {}, {}
            for key, value in items[1:]:
                entry = BundleEntryProto.FromString(value)
                if key[:1] == b"\0":
                    self._slices[key] = entry
                else:
                    self._entries[key.decode("utf-8")] = entry
        except (DecodeError, UnicodeDecodeError) as e:
            raise _data_loss(path, f"entry not parseable: {e}") from None
        if header.endianness != BundleHeaderProto.LITTLE:
            raise errors.UnimplementedError(
                None, None, f"Reading a big-endian bundle is not supported: {path}")
        # TF's CheckVersions with kTensorBundleMinProducer 0: any producer, but this
        # reader (version 1) must be at least min_consumer and not a bad consumer.
        if _BUNDLE_VERSION < header.version.min_consumer \
                or _BUNDLE_VERSION in header.version.bad_consumers:
            raise errors.InvalidArgumentError(
                None, None, f"Checkpoint {path} was written with tensor bundle version "
                            f"{header.version.producer} (min consumer "
                            f"{header.version.min_consumer}); this reader is version "
                            f"{_BUNDLE_VERSION}")
        self._num_shards = header.num_shards
        self._index_path = path

    def names(self):
        return sorted(self._entries)

    def dtype(self, name):
        return _dtypes.as_dtype(self._entry(name).dtype)

    def shape(self, name):
        return [d.size for d in self._entry(name).shape.dim]

    def has_tensor(self, name):
        return name in self._entries

    def read(self, name):
        """The tensor's value as a numpy array (slices reassembled)."""
        entry = self._entry(name)
        dtype = _dtypes.as_dtype(entry.dtype)
        shape = [d.size for d in entry.shape.dim]
        if not entry.slices:
            return self._read_entry(entry, name, dtype, shape)
        full = np.empty(shape, dtype=dtype.as_numpy_dtype)
        covered = 0
        for proto in entry.slices:
            starts, key_lengths, sizes = _slice_extents(proto, shape)
            key = slice_key(name, starts, key_lengths)
            part = self._slices.get(key)
            if part is None:
                raise _data_loss(self._index_path, f"slice of {name} at {starts} missing")
            full[tuple(slice(s, s + n) for s, n in zip(starts, sizes))] = \
                self._read_entry(part, name, dtype, sizes)
            covered += int(np.prod(sizes, dtype=np.int64))
        if covered != full.size:
            raise _data_loss(self._index_path,
                             f"the slices of {name} do not cover its shape {shape}")
        return full

    def _entry(self, name):
        entry = self._entries.get(name)
        if entry is None:
            raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint")
        return entry

    def _read_entry(self, entry, name, dtype, shape):
        path = data_file(self._prefix, entry.shard_id, self._num_shards)
        if [d.size for d in entry.shape.dim] != list(shape) or entry.dtype != dtype._enum:
            raise _data_loss(self._index_path, f"entry of {name} disagrees with its slice")
        try:
            with open(path, "rb") as f:
                f.seek(entry.offset)
                raw = f.read(entry.size)
        except OSError as e:
            raise _data_loss(path, f"cannot read tensor {name}: {e}") from None
        if len(raw) != entry.size:
            raise _data_loss(path, f"truncated data file: tensor {name} needs bytes "
                                   f"[{entry.offset}, {entry.offset + entry.size})")
        count = int(np.prod(shape, dtype=np.int64))
        if entry.dtype == _DT_STRING:
            value, crc = _decode_strings(raw, count, name, path)
        else:
            value, crc = None, _masked_crc(raw)
        if crc != entry.crc32c:
            raise _data_loss(path, f"Checksum does not match: stored {entry.crc32c:#010x} vs. "
                                   f"calculated on the restored bytes {crc:#010x} "
                                   f"(tensor {name})")
        if value is not None:
            return value.reshape(shape)
        np_dtype = np.dtype(dtype.as_numpy_dtype).newbyteorder("<")
        if len(raw) != count * np_dtype.itemsize:
            raise _data_loss(path, f"tensor {name}: {len(raw)} bytes for {count} elements of "
                                   f"{dtype.name}")
        value = np.frombuffer(raw, dtype=np_dtype).reshape(shape)
        return value.astype(np_dtype.newbyteorder("="), copy=True)


def _checksummed_lengths(lengths) -> bytes:
    """The bytes TF checksums for string lengths: uint32 each, uint64 if larger."""
    return b"".join(struct.pack("<I" if n <= 0xFFFFFFFF else "<Q", n) for n in lengths)


def _decode_strings(raw, count, name, path):
    """(object array of the `count` strings in `raw`, the masked CRC32C TF records)."""
    lengths, pos = [], 0
    try:
        for _ in range(count):
            length, pos = decode_varint(raw, pos)
            lengths.append(length)
    except DecodeError:
        raise _data_loss(path, f"tensor {name}: bad string lengths") from None
    checked = _checksummed_lengths(lengths)
    if pos + 4 > len(raw) or struct.unpack_from("<I", raw, pos)[0] != _masked_crc(checked):
        raise _data_loss(path, f"tensor {name}: the checksum of its string lengths "
                               f"does not match")
    strings = raw[pos + 4:]
    if sum(lengths) != len(strings):
        raise _data_loss(path, f"tensor {name}: {count} strings do not fill its bytes")
    out = np.empty(count, dtype=object)
    pos = 0
    for i, length in enumerate(lengths):
        out[i] = strings[pos:pos + length]
        pos += length
    return out, _masked_crc(checked + raw[len(raw) - len(strings) - 4:])


# -- writing --------------------------------------------------------------------------------------
def _encode(value):
    """(DataType enum, the tensor's bytes, the masked CRC32C its entry records)."""
    value = np.asarray(value)
    if value.dtype == object or value.dtype.kind in "SU":
        strings = [s.encode("utf-8") if isinstance(s, str) else bytes(s)
                   for s in value.reshape(-1)]
        checked = _checksummed_lengths([len(s) for s in strings])
        tail = struct.pack("<I", _masked_crc(checked)) + b"".join(strings)
        raw = b"".join(encode_varint(len(s)) for s in strings) + tail
        return _DT_STRING, raw, _masked_crc(checked + tail)
    dtype = _dtypes.as_dtype(value.dtype)
    raw = np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("<")).tobytes()
    return dtype._enum, raw, _masked_crc(raw)


def _shape_proto(shape):
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(d)) for d in shape])


def write_bundle(prefix, shards):
    """Writes the bundle `prefix` from `shards`, one list per data file of
    (name, value, part) triples: `part` None for a whole tensor, else
    (full_shape, offset) of the slice `value` (slices of one name together tile it).

    Every data file goes to a temp name and is renamed into place, the index last: the
    index is the commit point, so a failed write leaves a previous bundle readable.
    """
    prefix = os.fspath(prefix)
    shards = shards or [[]]
    entries = {}
    for shard_id, items in enumerate(shards):
        merge_entries(entries, write_data_file(prefix, shard_id, len(shards), items))
    write_index(prefix, len(shards), entries)


def write_data_file(prefix, shard_id, num_shards, items):
    """Writes data file `shard_id` of `num_shards` (atomically) from `items`, (name,
    value, part) triples as write_bundle takes; returns {index key: BundleEntryProto}
    of what it holds (for slices, also the full tensor's entry listing them). The
    bundle is complete once `write_index` has written the merged entries of every file
    (TF's sharded save: each device writes its part, MergeV2Checkpoints the index)."""
    prefix = os.fspath(prefix)
    entries = {}  # key bytes -> BundleEntryProto
    chunks, offset = [], 0
    for name, value, part in items:
        enum, raw, crc = _encode(value)
        shape = np.shape(value)
        entry = BundleEntryProto(dtype=enum, shape=_shape_proto(shape), shard_id=shard_id,
                                 offset=offset, size=len(raw), crc32c=crc)
        if part is None:
            key = name.encode("utf-8")
        else:
            full_shape, starts = ([int(d) for d in p] for p in part)
            key = slice_key(name, starts, shape)
            full = entries.get(name.encode("utf-8"))
            if full is None:
                full = entries[name.encode("utf-8")] = BundleEntryProto(
                    dtype=enum, shape=_shape_proto(full_shape))
            elif full.dtype != enum or [d.size for d in full.shape.dim] != full_shape:
                raise ValueError(f"Slices of {name} disagree on its dtype or full shape")
            extents = [TensorSliceProto.Extent(start=s, length=int(n))
                       for s, n in zip(starts, shape)]
            full.slices.append(TensorSliceProto(extent=extents))
        if key in entries:
            raise ValueError(f"Two tensors saved under the name {name!r}")
        entries[key] = entry
        chunks.append(raw)
        offset += len(raw)
    atomic_write.write_bytes(data_file(prefix, shard_id, num_shards), b"".join(chunks))
    return entries


def merge_entries(into, entries):
    """Adds one data file's entries to `into`: a sliced tensor's full entries are
    merged (its slices may lie in several files); any other repeated key is an error."""
    for key, entry in entries.items():
        known = into.get(key)
        if known is None:
            into[key] = entry
            continue
        if not (known.slices and entry.slices):
            raise ValueError(f"Two tensors saved under the name "
                             f"{key.decode('utf-8', 'replace')!r}")
        if known.dtype != entry.dtype or known.shape != entry.shape:
            raise ValueError(f"Slices of {key.decode('utf-8', 'replace')} disagree on its "
                             f"dtype or full shape")
        known.slices.extend(entry.slices)
    return into


def write_index(prefix, num_shards, entries):
    """Writes the index of bundle `prefix` (atomically; the commit point) from
    {index key: BundleEntryProto} of all its data files."""
    header = BundleHeaderProto(num_shards=num_shards,
                               version=VersionDef(producer=_BUNDLE_VERSION))
    items = [(b"", header.SerializeToString())]
    items += [(key, entries[key].SerializeToString()) for key in sorted(entries)]
    atomic_write.write_bytes(index_file(os.fspath(prefix)), build_table(items))
