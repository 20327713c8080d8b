"""SaveV2, RestoreV2, MergeV2Checkpoints, ShardedFilename: the ops of TensorFlow's Saver
graphs, run on the checkpoint TensorFlow wrote (tests/fixtures/tf1, values TF recorded
in expected.json) and on bundles they write."""

import os

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.ops.op_builder import apply_op
from tests.train.test_tf_checkpoints import CKPT, expected_value


def _restore(prefix, names, specs, dtypes):
    return apply_op("RestoreV2", prefix=prefix, tensor_names=names, shape_and_slices=specs,
                    dtypes=tuple(dtypes))


def test_restore_v2_reads_tensorflows_checkpoint_whole_and_by_slice():
    with tf.Graph().as_default():
        outs = _restore(CKPT, ["conv1/kernel", "global_step", "label", "dense/kernel"],
                        ["", "", "", "64 3 32,32:-"],
                        [tf.float32, tf.int64, tf.string, tf.float32])
        with tf.Session() as sess:
            kernel, step, label, lower_half = sess.run(outs)
    np.testing.assert_array_equal(kernel, expected_value("conv1/kernel"))
    assert step == expected_value("global_step")
    assert label == expected_value("label")
    np.testing.assert_array_equal(lower_half, expected_value("dense/kernel")[32:])


def test_restore_v2_errors_name_the_tensor():
    with tf.Graph().as_default():
        wrong_dtype = _restore(CKPT, ["global_step"], [""], [tf.int32])
        missing = _restore(CKPT, ["nope"], [""], [tf.float32])
        bad_spec = _restore(CKPT, ["dense/kernel"], ["64 3 0,32"], [tf.float32])
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="global_step; expected dtype int32 does not equal "
                                     "restored dtype int64"):
                sess.run(wrong_dtype)
            with pytest.raises(tf.errors.NotFoundError, match="Key nope not found"):
                sess.run(missing)
            with pytest.raises(tf.errors.InvalidArgumentError, match="shape_and_slices"):
                sess.run(bad_spec)


def test_sharded_save_then_merge_as_tensorflows_sharded_saver(tmp_path):
    # TF's sharded Saver: each device saves a shard under <prefix>_temp/part, then
    # MergeV2Checkpoints makes one bundle at <prefix> and removes the temp directory.
    prefix = str(tmp_path / "model.ckpt")
    temp = str(tmp_path / "model.ckpt_temp" / "part")
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    b = np.array([b"x", b"yz"], dtype=object)
    with tf.Graph().as_default():
        shards = [apply_op("ShardedFilename", basename=temp, shard=i, num_shards=2)
                  for i in range(2)]
        saves = [
            apply_op("SaveV2", prefix=shards[0], tensor_names=["a", "p"],
                     shape_and_slices=["", "4 3 0,2:-"], tensors=[a, a[:2]]),
            apply_op("SaveV2", prefix=shards[1], tensor_names=["b", "p"],
                     shape_and_slices=["", "4 3 2,2:-"], tensors=[b, a[2:] * 10]),
        ]
        with tf.control_dependencies(saves):
            merge = apply_op("MergeV2Checkpoints", checkpoint_prefixes=tf.stack(shards),
                             destination_prefix=prefix)
        spec = apply_op("ShardedFilespec", basename=temp, num_shards=2)
        with tf.Session() as sess:
            names = sess.run(shards)
            assert [n.decode() for n in names] == [temp + "-00000-of-00002",
                                                   temp + "-00001-of-00002"]
            assert sess.run(spec).decode() == temp + "-?????-of-00002"
            sess.run(merge)
    assert not os.path.exists(tmp_path / "model.ckpt_temp")
    assert sorted(os.listdir(tmp_path)) == ["model.ckpt.data-00000-of-00002",
                                            "model.ckpt.data-00001-of-00002", "model.ckpt.index"]
    reader = tf.train.NewCheckpointReader(prefix)
    np.testing.assert_array_equal(reader.get_tensor("a"), a)
    assert list(reader.get_tensor("b")) == [b"x", b"yz"]
    np.testing.assert_array_equal(reader.get_tensor("p"), np.concatenate([a[:2], a[2:] * 10]))
