"""TF's tensor-bundle format (io/tensor_bundle.py) against files written by TensorFlow.

tests/fixtures/tf1 holds a checkpoint and a SavedModel's variables written by TF 2.21
(make_fixtures.py) and expected.json, the values TF read back from them. Where
TensorFlow is importable, TF itself reads bundles written here.
"""

import glob
import json
import os
import struct

import ml_dtypes
import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.io import tensor_bundle as tb

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "fixtures", "tf1")
with open(os.path.join(FIXTURES, "expected.json")) as _f:
    EXPECTED = json.load(_f)
CKPT = os.path.join(FIXTURES, EXPECTED["checkpoint"]["prefix"])
SAVED_VARS = os.path.join(FIXTURES, "saved_model", "variables", "variables")


def expected_value(record):
    """A tensor recorded in expected.json as a numpy array."""
    if record["dtype"] == "string":
        flat = np.array([s.encode("latin-1") for s in record["value"]], dtype=object)
    else:
        flat = np.array(record["value"], dtype=record["dtype"])
    return flat.reshape(record["shape"])


def test_reads_tensorflow_checkpoint():
    reader = tb.BundleReader(CKPT)
    tensors = EXPECTED["checkpoint"]["tensors"]
    assert reader.names() == sorted(tensors)
    for name, record in tensors.items():
        assert reader.dtype(name).name == record["dtype"], name
        assert reader.shape(name) == record["shape"], name
        value = reader.read(name)
        assert value.dtype == expected_value(record).dtype, name
        np.testing.assert_array_equal(value, expected_value(record), err_msg=name)
    # The partitioned kernel (and its Adam slots) are stored as two slices.
    assert len(reader._entries["dense/kernel"].slices) == 2
    assert reader.read("label")[()] == b"tensorflux fixture"
    assert reader.read("global_step").dtype == np.int64


def _rewrite_in_tf_order(reader, prefix):
    """Writes `reader`'s tensors with write_bundle in the order TF laid out its data."""
    items = []
    for name in reader.names():
        entry = reader._entries[name]
        if not entry.slices:
            items.append((entry.offset, (name, reader.read(name), None)))
            continue
        full = reader.read(name)
        for proto in entry.slices:
            starts, key_lengths, sizes = tb._slice_extents(proto, reader.shape(name))
            part = reader._slices[tb.slice_key(name, starts, key_lengths)]
            index = tuple(slice(s, s + n) for s, n in zip(starts, sizes))
            items.append((part.offset, (name, full[index], (reader.shape(name), starts))))
    tb.write_bundle(prefix, [[item for _, item in sorted(items, key=lambda t: t[0])]])


@pytest.mark.parametrize("fixture", [CKPT, SAVED_VARS], ids=["checkpoint", "saved_model"])
def test_writer_is_byte_identical_to_tensorflow(tmp_path, fixture):
    out = str(tmp_path / "ours")
    _rewrite_in_tf_order(tb.BundleReader(fixture), out)
    for suffix in (".index", ".data-00000-of-00001"):
        with open(fixture + suffix, "rb") as f, open(out + suffix, "rb") as g:
            assert f.read() == g.read(), suffix
    assert sorted(os.listdir(tmp_path)) == ["ours.data-00000-of-00001", "ours.index"]


def _many_dtypes():
    rng = np.random.RandomState(0)
    part = rng.rand(6, 4).astype(np.float32)
    shard0 = [("bf", np.array([1.5, -2.25], dtype=ml_dtypes.bfloat16), None),
              ("c128", np.array([1 + 2j, -3j]), None),
              ("bool", np.array([True, False, True]), None),
              ("u8", np.arange(4, dtype=np.uint8).reshape(2, 2), None),
              ("f16", np.array([0.5, -7.0], dtype=np.float16), None),
              ("strs", np.array([b"a", b"", b"x" * 300, "h\u00e9".encode()],
                                dtype=object).reshape(2, 2), None),
              ("s0", np.array(b"scalar", dtype=object), None),
              ("part", part[0:4], ([6, 4], [0, 0]))]
    shard1 = [("part", part[4:6], ([6, 4], [4, 0])),
              ("i64", np.array([[2 ** 40, -3]], np.int64), None)]
    expected = {name: value for name, value, part in shard0 + shard1 if part is None}
    expected["part"] = part
    return [shard0, shard1], expected


def test_round_trip_dtypes_slices_and_shards(tmp_path):
    prefix = str(tmp_path / "model.ckpt-1")
    shards, expected = _many_dtypes()
    tb.write_bundle(prefix, shards)
    assert os.path.isfile(prefix + ".data-00001-of-00002")
    reader = tb.BundleReader(prefix)
    assert reader.names() == sorted(expected)
    for name, value in expected.items():
        got = reader.read(name)
        assert got.dtype == value.dtype and got.shape == value.shape, name
        np.testing.assert_array_equal(got, value, err_msg=name)
    assert reader.dtype("strs") == tf.string and reader.dtype("bf") == tf.bfloat16


def test_index_with_several_blocks(tmp_path):
    # ~3000 entries overflow TF's 256 KiB block size: several data blocks, separators.
    names = [f"layer_{i:05d}/" + "v" * 80 for i in range(3000)]
    tb.write_bundle(str(tmp_path / "m"), [[(n, np.int32(i), None)
                                           for i, n in enumerate(names)]])
    with open(tmp_path / "m.index", "rb") as f:
        data = f.read()
    assert struct.unpack("<Q", data[-8:])[0] == 0xDB4775248B80FB57
    index_offset, index_size, _ = tb._read_handle(data, tb._read_handle(data, len(data) - 48,
                                                                        "m")[2], "m")
    index_block = tb._read_block(data, index_offset, index_size, "m")
    assert len(list(tb._block_entries(index_block, "m"))) == 2  # two data blocks
    reader = tb.BundleReader(str(tmp_path / "m"))
    assert reader.names() == names
    assert [int(reader.read(names[i])) for i in (0, 1499, 2999)] == [0, 1499, 2999]


def test_ordered_code_matches_tensorflows_documented_examples():
    # ordered_code.cc: 0x424242 -> f0 42 42 42, -0x800 -> 38 00; one byte for [-64, 64).
    assert tb._signed_num_increasing(0x424242) == bytes.fromhex("f0424242")
    assert tb._signed_num_increasing(-0x800) == bytes.fromhex("3800")
    assert tb._signed_num_increasing(0) == b"\x80"
    assert tb._signed_num_increasing(-1) == b"\x7f"
    assert tb._num_increasing(0) == b"\x00" and tb._num_increasing(258) == b"\x02\x01\x02"
    assert tb._string_code(b"a\x00\xff") == b"a\x00\xff\xff\x00\x00\x01"


def _copy_fixture(tmp_path):
    prefix = str(tmp_path / "model.ckpt-3")
    for path in glob.glob(CKPT + ".*"):
        with open(path, "rb") as f, open(prefix + path[len(CKPT):], "wb") as g:
            g.write(f.read())
    return prefix


def test_bad_input(tmp_path):
    prefix = _copy_fixture(tmp_path)
    index, data = prefix + ".index", prefix + ".data-00000-of-00001"
    raw_index = open(index, "rb").read()
    # A truncated index.
    with open(index, "wb") as f:
        f.write(raw_index[:-10])
    with pytest.raises(tf.errors.DataLossError, match="model.ckpt-3.index"):
        tb.BundleReader(prefix)
    # A flipped byte inside the index's data block: the block checksum catches it.
    with open(index, "wb") as f:
        f.write(bytes([raw_index[0] ^ 1]) + raw_index[1:])
    with pytest.raises(tf.errors.DataLossError, match="block checksum mismatch.*index"):
        tb.BundleReader(prefix)
    with open(index, "wb") as f:
        f.write(raw_index)
    # A flipped byte in the data shard: the entry's CRC32C catches it when it is read.
    reader = tb.BundleReader(prefix)
    entry = reader._entries["conv1/bias"]
    raw_data = bytearray(open(data, "rb").read())
    raw_data[entry.offset + 1] ^= 0x10
    with open(data, "wb") as f:
        f.write(raw_data)
    with pytest.raises(tf.errors.DataLossError,
                       match=r"Checksum does not match.*conv1/bias.*data-00000-of-00001"):
        reader.read("conv1/bias")
    np.testing.assert_array_equal(reader.read("dense/bias"), expected_value(
        EXPECTED["checkpoint"]["tensors"]["dense/bias"]))
    # A truncated data shard.
    with open(data, "wb") as f:
        f.write(raw_data[:100])
    with pytest.raises(tf.errors.DataLossError, match="truncated data file"):
        reader.read("label")
    with pytest.raises(tf.errors.NotFoundError, match="Key nope not found in checkpoint"):
        reader.read("nope")
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        tb.BundleReader(str(tmp_path / "missing"))
    assert tb.is_bundle_index(CKPT + ".index") and not tb.is_bundle_index(data)


def test_failed_write_keeps_the_previous_bundle(tmp_path):
    prefix = str(tmp_path / "model.ckpt")
    tb.write_bundle(prefix, [[("w", np.arange(3, dtype=np.float32), None)]])
    with pytest.raises(TypeError):
        tb.write_bundle(prefix, [[("w", np.zeros(2, np.float32), None),
                                  ("bad", np.array([object()]), None)]])
    assert sorted(os.listdir(tmp_path)) == ["model.ckpt.data-00000-of-00001",
                                            "model.ckpt.index"]
    np.testing.assert_array_equal(tb.BundleReader(prefix).read("w"), [0, 1, 2])


def test_tensorflow_reads_our_bundle(tmp_path):
    real_tf = pytest.importorskip("tensorflow")
    prefix = str(tmp_path / "model.ckpt-1")
    shards, expected = _many_dtypes()
    tb.write_bundle(prefix, shards)
    reader = real_tf.train.load_checkpoint(prefix)
    assert sorted(reader.get_variable_to_shape_map()) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_array_equal(np.asarray(reader.get_tensor(name)), value,
                                      err_msg=name)


def test_header_checks(tmp_path):
    from tensorflux._src.framework.protos import BundleHeaderProto, VersionDef

    prefix = str(tmp_path / "m")
    tb.write_bundle(prefix, [[("w", np.float32(1), None)]])
    entries = tb.read_table(open(prefix + ".index", "rb").read(), "m")[1:]

    def write_header(**fields):
        header = BundleHeaderProto(num_shards=1, **fields).SerializeToString()
        with open(prefix + ".index", "wb") as f:
            f.write(tb.build_table([(b"", header)] + entries))

    write_header(version=VersionDef(producer=0))  # TF's minimum producer is 0
    assert tb.BundleReader(prefix).read("w") == 1
    write_header(version=VersionDef(producer=2, min_consumer=2))
    with pytest.raises(tf.errors.InvalidArgumentError, match="min consumer 2"):
        tb.BundleReader(prefix)
    write_header(version=VersionDef(producer=1, bad_consumers=[1]))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tb.BundleReader(prefix)
    write_header(endianness=BundleHeaderProto.BIG, version=VersionDef(producer=1))
    with pytest.raises(tf.errors.UnimplementedError, match="big-endian"):
        tb.BundleReader(prefix)
