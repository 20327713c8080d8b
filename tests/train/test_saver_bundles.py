"""What tf.train.Saver writes: TensorFlow's V2 tensor bundle (issue 21).

Partitioned variables as TF1's slices, sharded saves (one data file per device), every
dtype TF checkpoints, atomic writes under failures, TF's errors on Saver-written files,
and checkpoints of tensorflux's older safetensors + JSON format. Expected values are
numpy arrays and byte strings written here.
"""

import glob
import os

import ml_dtypes
import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.framework.protos import BundleEntryProto, BundleHeaderProto
from tensorflux._src.io import tensor_bundle
from tensorflux._src.train import atomic_write

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "fixtures", "tensorflux_ckpt_v1")
KERNEL = np.arange(24, dtype=np.float32).reshape(8, 3) / 8


def _index(prefix):
    """(BundleHeaderProto, {key bytes: BundleEntryProto}) of TF's index table."""
    with open(prefix + ".index", "rb") as f:
        items = tensor_bundle.read_table(f.read(), prefix)
    assert items[0][0] == b""
    return (BundleHeaderProto.FromString(items[0][1]),
            {key: BundleEntryProto.FromString(value) for key, value in items[1:]})


def _partitioned_model(parts=2):
    with tf.variable_scope("dense", partitioner=tf.fixed_size_partitioner(parts)):
        kernel = tf.get_variable("kernel", [8, 3])
    step = tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.float32, [None, 8])
    loss = tf.reduce_sum(tf.matmul(x, kernel))
    opt = tf.train.AdamOptimizer(0.1)
    train = opt.minimize(loss, global_step=step)
    return kernel, step, train, x, opt


# -- partitioned variables ---------------------------------------------------------------------
def test_partitioned_variable_is_saved_as_tf1_slices(tmp_path):
    kernel, step, train, x, opt = _partitioned_model()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([p.assign(KERNEL[4 * i:4 * i + 4]) for i, p in enumerate(kernel)])
        sess.run(train, {x: np.ones([2, 8], np.float32)})
        kernel_value, adam_m = sess.run([kernel.as_tensor(),
                                         [opt.get_slot(p, "m") for p in kernel]])
        prefix = tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"), global_step=step)
    assert prefix.endswith("model.ckpt-1")
    _, entries = _index(prefix)
    # The full entry: dtype and full shape, one TensorSliceProto per part (rows 0:4, 4:8).
    full = entries[b"dense/kernel"]
    assert [d.size for d in full.shape.dim] == [8, 3] and not full.size
    assert [[(e.start, e.length) for e in s.extent] for s in full.slices] == [
        [(0, 4), (0, 3)], [(4, 4), (0, 3)]]
    # Each part under TF's OrderedCode key of (name, starts, lengths).
    for start in (0, 4):
        part = entries[tensor_bundle.slice_key("dense/kernel", [start, 0], [4, 3])]
        assert [d.size for d in part.shape.dim] == [4, 3] and part.size == 48
    # The slots of the parts are slices of one full slot, as TF1's slot_creator names them.
    assert b"dense/kernel/Adam" in entries and entries[b"dense/kernel/Adam"].slices
    assert not any(b"part_" in key for key in entries)
    assert tf.train.list_variables(prefix) == [
        ("beta1_power", []), ("beta2_power", []), ("dense/kernel", [8, 3]),
        ("dense/kernel/Adam", [8, 3]), ("dense/kernel/Adam_1", [8, 3]), ("global_step", [])]
    np.testing.assert_array_equal(tf.train.load_variable(prefix, "dense/kernel"),
                                  kernel_value)
    np.testing.assert_array_equal(tf.train.load_variable(prefix, "dense/kernel/Adam"),
                                  np.concatenate(adam_m))
    # Adam's first moment after one step on d(loss)/d(kernel) = 2 (two rows of ones).
    np.testing.assert_allclose(np.concatenate(adam_m), np.full([8, 3], 0.2), rtol=1e-6)


def test_partitioned_checkpoint_restores_into_other_partitionings(tmp_path):
    with tf.Graph().as_default():
        with tf.variable_scope("dense", partitioner=tf.fixed_size_partitioner(2)):
            kernel = tf.get_variable("kernel", [8, 3])
        with tf.Session() as sess:
            sess.run([p.assign(KERNEL[4 * i:4 * i + 4]) for i, p in enumerate(kernel)])
            prefix = tf.train.Saver().save(sess, str(tmp_path / "m"))
    for parts in (1, 4):  # 8 rows as one variable, or four parts of 2 rows
        with tf.Graph().as_default():
            with tf.variable_scope("dense", partitioner=tf.fixed_size_partitioner(parts)):
                kernel = tf.get_variable("kernel", [8, 3])
            with tf.Session() as sess:
                tf.train.Saver().restore(sess, prefix)
                np.testing.assert_array_equal(sess.run(kernel.as_tensor()), KERNEL)
    # init_from_checkpoint with an assignment map, into three parts under a new scope.
    with tf.Graph().as_default():
        with tf.variable_scope("net/dense", partitioner=tf.fixed_size_partitioner(3)):
            kernel = tf.get_variable("kernel", [8, 3])
        tf.train.init_from_checkpoint(prefix, {"dense/": "net/dense/"})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(kernel.as_tensor()), KERNEL)


def test_sharded_saver_writes_one_data_file_per_device(tmp_path):
    with tf.device("/job:ps/task:1"):
        tf.Variable(np.float32(2.5), name="b")
    with tf.device("/job:ps/task:0"):
        tf.Variable(np.arange(3, dtype=np.int64), name="a")
    parts = []
    for i in range(2):  # one part of `p/w` on each task, as replica_device_setter places
        with tf.device(f"/job:ps/task:{i}"):
            parts.append(tf.Variable(KERNEL[4 * i:4 * i + 4], name=f"p/w/part_{i}"))
        parts[-1]._set_save_slice_info(tf.Variable.SaveSliceInfo(
            "p/w", [8, 3], [4 * i, 0], [4, 3]))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = tf.train.Saver(sharded=True).save(sess, str(tmp_path / "model.ckpt"))
    assert sorted(os.path.basename(p) for p in glob.glob(prefix + ".data-*")) == [
        "model.ckpt.data-00000-of-00002", "model.ckpt.data-00001-of-00002"]
    header, entries = _index(prefix)
    assert header.num_shards == 2
    shard_of = {key: e.shard_id for key, e in entries.items() if not e.slices}
    assert shard_of[b"a"] == 0 and shard_of[b"b"] == 1  # devices in sorted order
    assert shard_of[tensor_bundle.slice_key("p/w", [0, 0], [4, 3])] == 0
    assert shard_of[tensor_bundle.slice_key("p/w", [4, 0], [4, 3])] == 1
    # Data file 0 holds a's int64s then p/w's rows 0:4, back to back.
    with open(prefix + ".data-00000-of-00002", "rb") as f:
        assert f.read() == np.arange(3, dtype="<i8").tobytes() + KERNEL[:4].tobytes()
    reader = tf.train.NewCheckpointReader(prefix)
    np.testing.assert_array_equal(reader.get_tensor("p/w"), KERNEL)
    assert reader.get_tensor("b") == np.float32(2.5)


# -- every dtype -------------------------------------------------------------------------------
DTYPE_VALUES = {
    "f16": np.array([1.5, -2.25], np.float16), "f32": np.array([[1.5], [3.0]], np.float32),
    "f64": np.array([1e300], np.float64),
    "bf16": np.array([0.5, -1.25, 1024.0], ml_dtypes.bfloat16),
    "c64": np.array([1 + 2j], np.complex64), "c128": np.array([[1 - 2j, 3j]], np.complex128),
    "i8": np.array([-128, 127], np.int8), "i16": np.array([-3], np.int16),
    "i32": np.array([2 ** 31 - 1], np.int32), "i64": np.int64(2 ** 40 + 7),
    "u8": np.array([255], np.uint8), "u16": np.array([65535], np.uint16),
    "u32": np.array([2 ** 32 - 1], np.uint32), "u64": np.array([2 ** 64 - 1], np.uint64),
    "bool": np.array([True, False, True]),
    "str": np.array([[b"", b"a\x00b"], [b"\xff" * 200, b"tensorflux"]], dtype=object),
}


def test_every_dtype_round_trips_through_saver(tmp_path):
    variables = {name: tf.Variable(value, name=name) for name, value in DTYPE_VALUES.items()}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = tf.train.Saver().save(sess, str(tmp_path / "all"))
    _, entries = _index(prefix)
    with open(prefix + ".data-00000-of-00001", "rb") as f:
        data = f.read()
    for name, value in DTYPE_VALUES.items():
        entry = entries[name.encode()]
        assert entry.dtype == tf.as_dtype(variables[name].dtype.base_dtype)._enum, name
        if name != "str":  # numbers: their little-endian bytes
            value = np.asarray(value)
            assert data[entry.offset:entry.offset + entry.size] == \
                value.astype(value.dtype.newbyteorder("<")).tobytes(), name
    # A string tensor: varint lengths, a 4-byte checksum of them, then the bytes.
    s = entries[b"str"]
    raw = data[s.offset:s.offset + s.size]
    assert raw[:5] == bytes([0, 3, 0xC8, 0x01, 10]) and raw[-10:] == b"tensorflux"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([v.assign(tf.zeros_like(v)) for n, v in variables.items() if n != "str"])
        tf.train.Saver().restore(sess, prefix)
        got = sess.run(variables)
    for name, value in DTYPE_VALUES.items():
        assert np.asarray(got[name]).dtype == np.asarray(value).dtype, name
        np.testing.assert_array_equal(got[name], value, err_msg=name)


# -- atomicity ---------------------------------------------------------------------------------
@pytest.mark.parametrize("fail_at", [".data-00000-of-00002", ".data-00001-of-00002", ".index"])
def test_save_that_raises_midway_keeps_the_previous_checkpoint(tmp_path, monkeypatch, fail_at):
    with tf.device("/cpu:0"):
        a = tf.Variable(np.zeros(4, np.float32), name="a")
        step = tf.train.get_or_create_global_step()
    with tf.device("/job:ps/task:0"):
        b = tf.Variable(np.zeros(2, np.int64), name="b")
    saver = tf.train.Saver(sharded=True)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    sess.run([a.assign(np.ones(4, np.float32)), step.assign(1)])
    first = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=step)
    sess.run([a.assign(np.full(4, 9, np.float32)), b.assign([5, 6]), step.assign(2)])
    real = atomic_write.write_bytes

    def failing(path, data):
        if path.endswith(fail_at):
            with open(path + ".tmpdead", "wb") as f:  # a partial temp file, then the failure
                f.write(data[:len(data) // 2])
            os.remove(path + ".tmpdead")
            raise OSError(f"disk full writing {path}")
        real(path, data)
    monkeypatch.setattr(atomic_write, "write_bytes", failing)
    with pytest.raises(OSError, match="disk full"):
        saver.save(sess, str(tmp_path / "model.ckpt"), global_step=step)
    monkeypatch.undo()
    assert tf.train.latest_checkpoint(str(tmp_path)) == first
    assert not tf.train.checkpoint_exists(str(tmp_path / "model.ckpt-2"))
    assert not glob.glob(str(tmp_path / "*.tmp*"))
    with tf.Session() as other:
        saver.restore(other, first)
        np.testing.assert_array_equal(other.run(a), np.ones(4, np.float32))
        np.testing.assert_array_equal(other.run(b), [0, 0])
        assert other.run(step) == 1


def test_failed_data_write_leaves_no_partial_file(tmp_path, monkeypatch):
    """The real atomic writer: a failure inside the write removes its temp file."""
    v = tf.Variable(KERNEL, name="v")
    sess = tf.Session()
    sess.run(v.initializer)
    prefix = tf.train.Saver().save(sess, str(tmp_path / "m"), global_step=1)
    old_data = open(prefix + ".data-00000-of-00001", "rb").read()

    def broken_fsync(path):
        raise OSError("fsync failed")
    monkeypatch.setattr(atomic_write, "_fsync_file", broken_fsync)
    with pytest.raises(OSError, match="fsync failed"):
        tf.train.Saver().save(sess, str(tmp_path / "m"), global_step=1)
    monkeypatch.undo()
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "m-1.data-00000-of-00001",
                                            "m-1.index", "m-1.meta"]
    assert open(prefix + ".data-00000-of-00001", "rb").read() == old_data
    np.testing.assert_array_equal(tf.train.load_variable(prefix, "v"), KERNEL)


# -- errors on Saver-written files --------------------------------------------------------------
def test_restore_errors_on_saver_written_checkpoint(tmp_path):
    with tf.Graph().as_default():
        w = tf.Variable(KERNEL, name="w")
        with tf.Session() as sess:
            sess.run(w.initializer)
            prefix = tf.train.Saver().save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default():
        tf.Variable(np.zeros([3, 8], np.float32), name="w")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"Assign requires shapes of both tensors to match. "
                                     r"lhs shape= \[3,8\] rhs shape= \[8,3\]"):
                tf.train.Saver().restore(sess, prefix)
    with tf.Graph().as_default():
        tf.Variable(np.zeros(1, np.float32), name="missing")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.NotFoundError,
                               match="Key missing not found in checkpoint"):
                tf.train.Saver().restore(sess, prefix)
    with pytest.raises(tf.errors.NotFoundError, match="Key nope not found in checkpoint"):
        tf.train.load_checkpoint(prefix).get_tensor("nope")
    data = prefix + ".data-00000-of-00001"
    raw = bytearray(open(data, "rb").read())
    raw[5] ^= 0x01
    open(data, "wb").write(bytes(raw))
    with pytest.raises(tf.errors.DataLossError, match=r"m\.data-00000-of-00001"):
        tf.train.load_variable(prefix, "w")
    index = open(prefix + ".index", "rb").read()
    open(prefix + ".index", "wb").write(index[:-10])
    with pytest.raises(tf.errors.DataLossError, match=r"m\.index"):
        tf.train.NewCheckpointReader(prefix)


# -- the older tensorflux format ---------------------------------------------------------------
def test_checkpoints_of_the_old_safetensors_format_still_restore():
    """tests/fixtures/tensorflux_ckpt_v1 was written by the safetensors + JSON writer
    this branch replaced (Saver.save and checkpoint_format.write_shards at db0db51)."""
    prefix = os.path.join(FIXTURES, "model.ckpt")
    expected = {"w": np.arange(6, dtype=np.float32).reshape(2, 3),
                "global_step": np.int64(7),
                "s": np.array([b"ab", b"", b"c\x00d"], dtype=object),
                "bf": np.array([1.5, -2.0], ml_dtypes.bfloat16),
                "c": np.array([1 + 2j, -3j], np.complex128)}
    with tf.Graph().as_default():
        variables = {
            "w": tf.Variable(np.zeros([2, 3], np.float32), name="w"),
            "global_step": tf.Variable(np.int64(0), name="global_step"),
            "s": tf.Variable([b"", b"", b""], name="s"),
            "bf": tf.Variable(np.zeros(2, ml_dtypes.bfloat16), name="bf"),
            "c": tf.Variable(np.zeros(2, np.complex128), name="c")}
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, prefix)
            got = sess.run(variables)
    for name, value in expected.items():
        assert np.asarray(got[name]).dtype == np.asarray(value).dtype, name
        np.testing.assert_array_equal(got[name], value, err_msg=name)
    assert tf.train.list_variables(prefix) == [("bf", [2]), ("c", [2]), ("global_step", []),
                                               ("s", [3]), ("w", [2, 3])]
    sliced = tf.train.load_checkpoint(os.path.join(FIXTURES, "sliced"))
    np.testing.assert_array_equal(sliced.get_tensor("big"),
                                  np.arange(8, dtype=np.float32).reshape(4, 2))
    assert sliced.get_tensor("x") == 5
