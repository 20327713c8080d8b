"""tf.ConfigProto, tf.RunOptions, tf.RunMetadata are TF's protobuf messages, and the two
tensorflux additions (XLA compiler options, the run plan) live inside them."""

import copy

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.runtime.config import (
    compiler_options,
    compiler_options_config,
    run_plan,
    step_kind,
)

KEY = "xla_cpu_experimental_ynn_fusion_type"


def test_messages_have_tfs_fields_enums_and_wire_format():
    config = tf.ConfigProto(allow_soft_placement=True, device_count={"GPU": 0},
                            gpu_options=tf.GPUOptions(allow_growth=True))
    config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
    assert dict(config.device_count) == {"GPU": 0}
    assert isinstance(tf.ConfigProto.DeviceCountEntry(key="CPU", value=1),
                      tf.ConfigProto.DeviceCountEntry)
    # TF's wire format: gpu_options is field 6 (allow_growth its field 4), soft placement 7
    assert tf.ConfigProto(allow_soft_placement=True, gpu_options=tf.GPUOptions(
        allow_growth=True)).SerializeToString() == b"2\x02 \x018\x01"
    again = tf.ConfigProto.FromString(config.SerializeToString())
    assert again == config and again.graph_options.optimizer_options.global_jit_level == 1
    assert (tf.RunOptions.NO_TRACE, tf.RunOptions.SOFTWARE_TRACE,
            tf.RunOptions.HARDWARE_TRACE, tf.RunOptions.FULL_TRACE) == (0, 1, 2, 3)
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, timeout_in_ms=5)
    assert options.SerializeToString() == b"\x08\x03\x10\x05"
    assert tf.ConfigProto().allow_soft_placement is False  # TF's proto default
    with pytest.raises(ValueError, match=r'has no "compiler_options" field'):
        tf.ConfigProto(compiler_options={})


def test_session_rejects_a_config_that_is_not_a_config_proto():
    with pytest.raises(TypeError, match="config must be a tf.ConfigProto, but got"):
        tf.Session(config={"allow_soft_placement": True})


def test_explicit_config_places_strictly_as_tf():
    with tf.Graph().as_default():
        with tf.device("/device:CPU:7"):  # no such CPU here
            x = tf.constant([1.0, 2.0]) * 2.0
        with tf.Session(config=tf.ConfigProto()) as sess, \
                pytest.raises(tf.errors.InvalidArgumentError, match="Cannot assign a device"):
            sess.run(x)
        with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
            np.testing.assert_allclose(sess.run(x), [2.0, 4.0])


def test_compiler_options_survive_copies_and_serialization():
    base = tf.ConfigProto(log_device_placement=True)
    config = compiler_options_config({KEY: "LIBRARY_FUSION_TYPE_DOT", "flag": True,
                                      "level": 2, "ratio": 0.5, "removed": None}, base)
    want = {KEY: "LIBRARY_FUSION_TYPE_DOT", "flag": True, "level": 2, "ratio": 0.5,
            "removed": None}
    assert compiler_options(config) == want
    assert compiler_options(base) == {}  # the argument is not changed
    assert config.log_device_placement is True
    assert compiler_options(copy.deepcopy(config)) == want
    assert compiler_options(tf.ConfigProto.FromString(config.SerializeToString())) == want
    (entry,) = config.graph_options.rewrite_options.custom_optimizers
    assert entry.name == "xla_compiler_options"
    assert compiler_options(compiler_options_config({"other": 1}, config)) == {"other": 1}
    assert compiler_options_config({}).allow_soft_placement is True  # Session's default
    with pytest.raises(TypeError, match=r"compiler_options\['bad'\] must be a str"):
        compiler_options_config({"bad": [1]})


def test_traced_run_fills_tfs_run_metadata():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        y = tf.reduce_sum(x * 2.0)
        metadata = tf.RunMetadata()
        with tf.Session() as sess:
            sess.run(y, {x: [1.0, 2.0, 3.0]},
                     options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                     run_metadata=metadata)
            with pytest.raises(TypeError, match="run_metadata must be a tf.RunMetadata"):
                sess.run(y, {x: [1.0, 2.0, 3.0]}, run_metadata={})
    (dev,) = metadata.step_stats.dev_stats
    assert dev.device.endswith("device:CPU:0")
    assert step_kind(dev) == "xla:cluster_0"
    assert run_plan(metadata)[0].startswith("cluster_0 on cpu: ")
    assert {n.timeline_label for n in dev.node_stats} >= {"Mul", "Sum"}
    again = tf.RunMetadata.FromString(metadata.SerializeToString())
    assert run_plan(again) == run_plan(metadata)
