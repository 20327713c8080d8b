"""tensorflux's .proto files against TensorFlow's, and descriptors.binpb against them.

The interop test runs where `tensorflow` is importable (skipped in the main venv; ran
with TF 2.21 in /work/tfvenv): every message, field and enum value we declare must be
TF's, with TF's number, type, label and oneof, so bytes and text format agree. TF may
have more fields than we declare (they stay unknown fields here).
"""

import importlib
import os

import pytest

from tensorflux._src.framework import proto

PROTO_DIR = os.path.dirname(proto.__file__)
PROTO_FILES = sorted(f for f in os.listdir(PROTO_DIR) if f.endswith(".proto"))

# TF's generated modules holding the messages our files declare.
TF_MODULES = [
    "tensorflow.core.framework.types_pb2", "tensorflow.core.framework.tensor_pb2",
    "tensorflow.core.framework.graph_pb2", "tensorflow.core.framework.summary_pb2",
    "tensorflow.core.framework.step_stats_pb2", "tensorflow.core.framework.cost_graph_pb2",
    "tensorflow.core.framework.tensor_slice_pb2", "tensorflow.core.framework.variable_pb2",
    "tensorflow.core.protobuf.meta_graph_pb2", "tensorflow.core.protobuf.saved_model_pb2",
    "tensorflow.core.protobuf.saver_pb2", "tensorflow.core.protobuf.tensor_bundle_pb2",
    "tensorflow.core.protobuf.queue_runner_pb2", "tensorflow.core.protobuf.config_pb2",
    "tensorflow.core.protobuf.rewriter_config_pb2", "tensorflow.core.protobuf.debug_pb2",
    "tensorflow.core.protobuf.cluster_pb2", "tensorflow.core.util.event_pb2",
    "tensorflow.core.protobuf.trackable_object_graph_pb2",
    "tensorflow.core.example.example_pb2",
    "tensorflow.python.training.checkpoint_state_pb2",
]


def _messages(container):
    for message in container.message_types_by_name.values():
        yield message
        yield from _messages_nested(message)


def _messages_nested(message):
    for nested in message.nested_types:
        yield nested
        yield from _messages_nested(nested)


def _enums(file_descriptor):
    yield from file_descriptor.enum_types_by_name.values()
    for message in _messages(file_descriptor):
        yield from message.enum_types


def _signature(field):
    return (field.number, field.type, field.is_repeated if hasattr(field, "is_repeated")
            else field.label == field.LABEL_REPEATED,
            field.message_type.full_name if field.message_type else None,
            field.enum_type.full_name if field.enum_type else None,
            field.containing_oneof.name if field.containing_oneof else None)


def _differences(file_name, theirs):
    ours = proto.pool().FindFileByName(file_name)
    problems = []
    for message in _messages(ours):
        try:
            tf_message = theirs.FindMessageTypeByName(message.full_name)
        except KeyError:
            problems.append(f"TensorFlow has no message {message.full_name}")
            continue
        for field in message.fields:
            tf_field = tf_message.fields_by_name.get(field.name)
            if tf_field is None:
                problems.append(f"TensorFlow's {message.full_name} has no field {field.name}")
            elif _signature(field) != _signature(tf_field):
                problems.append(f"{message.full_name}.{field.name}: ours "
                                f"{_signature(field)}, TensorFlow's {_signature(tf_field)}")
    for enum in _enums(ours):
        tf_enum = theirs.FindEnumTypeByName(enum.full_name)
        for value in enum.values:
            tf_value = tf_enum.values_by_name.get(value.name)
            if tf_value is None or tf_value.number != value.number:
                problems.append(f"{enum.full_name}.{value.name} = {value.number}: TensorFlow "
                                f"has {tf_value and tf_value.number}")
    return problems


@pytest.mark.parametrize("file_name", PROTO_FILES)
def test_messages_match_tensorflow(file_name):
    pytest.importorskip("tensorflow")
    from google.protobuf import descriptor_pool

    for module in TF_MODULES:
        importlib.import_module(module)
    assert _differences(file_name, descriptor_pool.Default()) == []


def test_descriptor_set_is_regenerated_from_the_proto_files(tmp_path):
    pytest.importorskip("grpc_tools")
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "regenerate", os.path.join(PROTO_DIR, "regenerate.py"))
    regenerate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(regenerate)
    built = regenerate.build(str(tmp_path / "descriptors.binpb"))
    with open(built, "rb") as f, open(regenerate.OUTPUT, "rb") as g:
        assert f.read() == g.read(), "run framework/proto/regenerate.py and commit the result"


def test_every_proto_file_is_in_the_descriptor_set():
    for file_name in PROTO_FILES:
        assert proto.pool().FindFileByName(file_name).name == file_name


def test_tensorflow_reads_our_config_and_run_metadata():
    pytest.importorskip("tensorflow")
    from tensorflow.core.protobuf import config_pb2

    import tensorflux as tf
    from tensorflux._src.runtime.config import compiler_options_config

    config = compiler_options_config({"xla_cpu_experimental_ynn_fusion_type": None},
                                     tf.ConfigProto(log_device_placement=True))
    theirs = config_pb2.ConfigProto.FromString(config.SerializeToString())
    assert theirs.log_device_placement and not theirs.allow_soft_placement  # as given
    assert theirs.graph_options.rewrite_options.custom_optimizers[0].name == \
        "xla_compiler_options"
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        metadata = tf.RunMetadata()
        with tf.Session() as sess:
            sess.run(x * 2.0, {x: [1.0, 2.0]}, run_metadata=metadata)
    theirs = config_pb2.RunMetadata.FromString(metadata.SerializeToString())
    assert theirs.SerializeToString() == metadata.SerializeToString()
    assert theirs.step_stats.dev_stats[0].thread_names[0].startswith("cluster_0")
