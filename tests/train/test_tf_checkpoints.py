"""Checkpoints written by TensorFlow, read through tf.train (Saver.restore, the readers,
init_from_checkpoint).

The fixture (tests/fixtures/tf1, written by TF 2.21's tf.compat.v1 code in
make_fixtures.py) is a small CNN after 3 Adam steps with a partitioned dense/kernel, an
int64 global_step and a string variable; expected.json holds the values TF read back.
"""

import glob
import json
import os
import re
import shutil

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.io import tensor_bundle

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "fixtures", "tf1")
with open(os.path.join(FIXTURES, "expected.json")) as _f:
    EXPECTED = json.load(_f)["checkpoint"]
CKPT = os.path.join(FIXTURES, EXPECTED["prefix"])


def expected_value(name):
    record = EXPECTED["tensors"][name]
    if record["dtype"] == "string":
        flat = np.array([s.encode("latin-1") for s in record["value"]], dtype=object)
    else:
        flat = np.array(record["value"], dtype=record["dtype"])
    return flat.reshape(record["shape"])


def _build_fixture_model(v1=tf, ops=tf):
    """The fixture's training graph, written as a TF1 user would (same names): in
    tensorflux by default, in real TensorFlow with v1=tf.compat.v1, ops=tensorflow."""
    x = v1.placeholder(ops.float32, [None, 8, 8, 1], name="x")
    y = v1.placeholder(ops.int64, [None], name="y")
    with v1.variable_scope("conv1"):
        kernel = v1.get_variable("kernel", [3, 3, 1, 4])
        bias = v1.get_variable("bias", [4], initializer=v1.zeros_initializer())
    h = ops.nn.relu(ops.nn.conv2d(x, kernel, [1, 1, 1, 1], "SAME") + bias)
    h = ops.reshape(ops.nn.max_pool2d(h, 2, 2, "VALID"), [-1, 64])
    with v1.variable_scope("dense", partitioner=v1.fixed_size_partitioner(2)):
        dense_kernel = v1.get_variable("kernel", [64, 3])
    with v1.variable_scope("dense"):
        dense_bias = v1.get_variable("bias", [3], initializer=v1.zeros_initializer())
    logits = ops.matmul(h, dense_kernel) + dense_bias
    loss = ops.reduce_mean(
        ops.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    global_step = v1.train.get_or_create_global_step()
    v1.Variable(b"", dtype=ops.string, name="label", trainable=False)
    v1.train.AdamOptimizer(0.01).minimize(loss, global_step=global_step)
    return dense_kernel


def test_saver_restores_tensorflow_checkpoint():
    with tf.Graph().as_default():
        dense_kernel = _build_fixture_model()
        variables = {v.op.name: v for v in tf.global_variables()}
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, tf.train.latest_checkpoint(os.path.dirname(CKPT)))
            values = sess.run(variables)
            full_kernel = sess.run(dense_kernel.as_tensor())
    # Every variable (Adam slots and beta powers included) holds TF's value; the parts
    # of the partitioned kernel and its slots hold their rows of it.
    checked = set()
    for op_name, value in values.items():
        # `dense/kernel/part_1/Adam` is rows 32:64 of the checkpoint's dense/kernel/Adam.
        match = re.fullmatch(r"(.*)/part_(\d+)(.*)", op_name)
        name = match.group(1) + match.group(3) if match else op_name
        expected = expected_value(name)
        if match:
            part = int(match.group(2))
            expected = expected[32 * part:32 * (part + 1)]
        np.testing.assert_array_equal(value, expected, err_msg=op_name)
        checked.add(name)
    assert checked == set(EXPECTED["tensors"])
    np.testing.assert_array_equal(full_kernel, expected_value("dense/kernel"))
    assert values["global_step"] == 3 and values["label"] == b"tensorflux fixture"


def test_readers_list_and_load():
    ckpt_dir = os.path.dirname(CKPT)
    assert [[n, s] for n, s in tf.train.list_variables(ckpt_dir)] == \
        EXPECTED["list_variables"]
    reader = tf.train.NewCheckpointReader(CKPT)
    dtypes = reader.get_variable_to_dtype_map()
    assert dtypes["global_step"] == tf.int64 and dtypes["label"] == tf.string
    assert dtypes["dense/kernel/Adam_1"] == tf.float32
    assert reader.has_tensor("dense/kernel") and not reader.has_tensor("dense/kernel/part_0")
    assert b"dense/kernel (DT_FLOAT) [64,3]\n" in reader.debug_string()
    np.testing.assert_array_equal(tf.train.load_variable(ckpt_dir, "conv1/kernel:0"),
                                  expected_value("conv1/kernel"))
    np.testing.assert_array_equal(tf.train.load_checkpoint(CKPT).get_tensor("dense/kernel"),
                                  expected_value("dense/kernel"))
    assert tf.train.load_checkpoint(CKPT).get_tensor("global_step") == 3


def test_init_from_checkpoint_with_assignment_map():
    with tf.Graph().as_default():
        with tf.variable_scope("net"):
            with tf.variable_scope("dense", partitioner=tf.fixed_size_partitioner(4)):
                kernel = tf.get_variable("kernel", [64, 3])
            with tf.variable_scope("dense"):
                bias = tf.get_variable("bias", [3])
        step = tf.get_variable("step", [], tf.int64)
        tf.train.init_from_checkpoint(os.path.dirname(CKPT), {"dense/": "net/dense/",
                                                               "global_step": step})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run([kernel.as_tensor(), bias, step])
    np.testing.assert_array_equal(got[0], expected_value("dense/kernel"))
    np.testing.assert_array_equal(got[1], expected_value("dense/bias"))
    assert got[2] == 3


def test_bundle_written_here_restores_through_saver(tmp_path):
    prefix = str(tmp_path / "model.ckpt-7")
    kernel = np.arange(12, dtype=np.float32).reshape(6, 2) / 8
    tensor_bundle.write_bundle(prefix, [[("w", kernel[:3], ([6, 2], [0, 0])),
                                         ("w", kernel[3:], ([6, 2], [3, 0])),
                                         ("n", np.array([b"x", b"yz"], dtype=object), None)]])
    with tf.Graph().as_default():
        w = tf.get_variable("w", [6, 2], partitioner=tf.fixed_size_partitioner(3))
        n = tf.Variable([b"", b""], name="n")
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, prefix)
            got_w, got_n = sess.run([w.as_tensor(), n])
    np.testing.assert_array_equal(got_w, kernel)
    assert list(got_n) == [b"x", b"yz"]
    assert tf.train.list_variables(prefix) == [("n", [2]), ("w", [6, 2])]


def test_damaged_tensorflow_checkpoint(tmp_path):
    prefix = str(tmp_path / "model.ckpt-3")
    for path in glob.glob(CKPT + ".*"):
        shutil.copy(path, prefix + path[len(CKPT):])
    data = prefix + ".data-00000-of-00001"
    with open(data, "rb") as f:
        raw = bytearray(f.read())
    raw[-30] ^= 0xFF  # inside the last tensor TF wrote
    with open(data, "wb") as f:
        f.write(raw)
    with tf.Graph().as_default():
        _build_fixture_model()
        variables = tf.global_variables()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run(variables)
            with pytest.raises(tf.errors.DataLossError, match="model.ckpt-3.data-00000"):
                tf.train.Saver().restore(sess, prefix)
            after = sess.run(variables)  # a failed restore changes nothing
    for b, a in zip(before, after):
        np.testing.assert_array_equal(a, b)
    with open(prefix + ".index", "rb") as f:
        index = f.read()
    with open(prefix + ".index", "wb") as f:
        f.write(index[:len(index) // 2])
    # Half an index has lost its table footer.
    with pytest.raises(tf.errors.DataLossError, match="bad magic number.*model.ckpt-3.index"):
        tf.train.NewCheckpointReader(prefix)


def test_tensorflow_saver_restores_bundle_written_here(tmp_path):
    """Real TF's Saver restores the fixture rewritten by write_bundle: name order, the
    partitioned tensors' slices split over two data files."""
    real_tf = pytest.importorskip("tensorflow")
    v1 = real_tf.compat.v1
    reader = tensor_bundle.BundleReader(CKPT)
    shards = [[], []]
    for name in reader.names():
        value = reader.read(name)
        if name.startswith("dense/kernel"):
            shards[0].append((name, value[:32], ([64, 3], [0, 0])))
            shards[1].append((name, value[32:], ([64, 3], [32, 0])))
        else:
            shards[1].append((name, value, None))
    prefix = str(tmp_path / "model.ckpt-3")
    tensor_bundle.write_bundle(prefix, shards)
    with real_tf.Graph().as_default():
        with v1.variable_scope("conv1"):
            v1.get_variable("kernel", [3, 3, 1, 4])
        with v1.variable_scope("dense", partitioner=v1.fixed_size_partitioner(2)):
            v1.get_variable("kernel", [64, 3])
        v1.train.get_or_create_global_step()
        v1.Variable(b"", dtype=real_tf.string, name="label")
        with v1.Session() as sess:
            v1.train.Saver().restore(sess, prefix)
            values = {v.op.name: sess.run(v) for v in v1.global_variables()}
    np.testing.assert_array_equal(values["conv1/kernel"], expected_value("conv1/kernel"))
    np.testing.assert_array_equal(values["dense/kernel/part_1"],
                                  expected_value("dense/kernel")[32:])
    assert values["global_step"] == 3 and values["label"] == b"tensorflux fixture"


def test_tensorflow_saver_restores_what_tensorflux_saver_writes(tmp_path):
    """Real TF's Saver restores a checkpoint tensorflux's Saver wrote (Adam slots, a
    partitioned kernel saved as slices, an int64 global_step, a string variable), and
    TF's load_checkpoint lists the same names and shapes."""
    real_tf = pytest.importorskip("tensorflow")
    v1 = real_tf.compat.v1
    rng = np.random.RandomState(0)
    feed_x = rng.rand(5, 8, 8, 1).astype(np.float32)
    feed_y = rng.randint(0, 3, 5)
    with tf.Graph().as_default():
        _build_fixture_model()
        label = [v for v in tf.global_variables() if v.op.name == "label"][0]
        train = tf.get_collection(tf.GraphKeys.TRAIN_OP)  # minimize's op, as TF's
        graph = tf.get_default_graph()
        x, y = graph.get_tensor_by_name("x:0"), graph.get_tensor_by_name("y:0")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(label.assign(b"written by tensorflux"))
            for _ in range(3):
                sess.run(train, {x: feed_x, y: feed_y})
            ours = sess.run({v.op.name: v for v in tf.global_variables()})
            prefix = tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"),
                                           global_step=tf.train.get_global_step())
        listed = tf.train.list_variables(prefix)
    assert prefix.endswith("model.ckpt-3") and ours["global_step"] == 3
    with real_tf.Graph().as_default():
        _build_fixture_model(v1, real_tf)
        with v1.Session() as sess:
            v1.train.Saver().restore(sess, prefix)
            theirs = {v.op.name: sess.run(v) for v in v1.global_variables()}
    assert sorted(theirs) == sorted(ours)
    assert "dense/kernel/part_1/Adam" in theirs
    for name, value in ours.items():
        np.testing.assert_array_equal(theirs[name], value, err_msg=name)
    assert theirs["global_step"].dtype == np.int64
    assert theirs["label"] == b"written by tensorflux"
    reader = real_tf.train.load_checkpoint(prefix)
    assert sorted(reader.get_variable_to_shape_map().items()) == \
        sorted((name, list(shape)) for name, shape in listed)
    assert reader.get_variable_to_dtype_map()["global_step"] == real_tf.int64
    np.testing.assert_array_equal(
        reader.get_tensor("dense/kernel"),
        np.concatenate([ours["dense/kernel/part_0"], ours["dense/kernel/part_1"]]))
