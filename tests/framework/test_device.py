import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.framework.device import DeviceSpec, canonical_name, merge_device


@pytest.mark.parametrize("spec, canonical", [
    ("/cpu:0", "/device:CPU:0"),
    ("/gpu:1", "/device:GPU:1"),
    ("/device:GPU:0", "/device:GPU:0"),
    ("/job:worker/replica:0/task:1/device:GPU:0", "/job:worker/replica:0/task:1/device:GPU:0"),
    ("/job:ps/task:2", "/job:ps/task:2"),
    ("/job:ps/cpu:*", "/job:ps/device:CPU:*"),
    ("", ""),
])
def test_canonical_forms(spec, canonical):
    assert canonical_name(spec) == canonical


def test_bad_device_string():
    with pytest.raises(ValueError, match="Unknown attribute: 'foo:bar:baz'"):
        canonical_name("/job:a/foo:bar:baz")


def test_merge_inner_overrides():
    assert merge_device("/job:worker/task:1", "/gpu:0") == "/job:worker/task:1/device:GPU:0"
    assert merge_device("/job:worker/device:GPU:0", "/cpu:0") == "/job:worker/device:CPU:0"
    assert DeviceSpec.from_string("/job:w/task:3").task == 3


def test_nested_device_scopes_on_ops():
    with tf.device("/job:worker/task:1"):
        a = tf.constant(1)
        with tf.device("/gpu:0"):
            b = tf.constant(2)
            with tf.device(None):
                c = tf.constant(3)
        with tf.device("/job:ps"):
            d = tf.constant(4)
    assert a.device == "/job:worker/task:1"
    assert b.device == "/job:worker/task:1/device:GPU:0"
    assert c.device == ""
    assert d.device == "/job:ps/task:1"
    assert str(b) == ('Tensor("Const_1:0", shape=(), dtype=int32, '
                      'device=/job:worker/task:1/device:GPU:0)')


def test_device_functions():
    def place(op):
        return "/cpu:0" if op.type == "Const" else "/gpu:0"

    with tf.device(place):
        a = tf.constant(1.0)
        b = a + 1.0
    assert a.device == "/device:CPU:0"
    assert b.device == "/device:GPU:0"


def test_soft_placement_runs_gpu_ops_on_cpu():
    with tf.device("/gpu:0"):
        x = tf.constant([1.0, 2.0]) * 3.0
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(x), [3.0, 6.0])
