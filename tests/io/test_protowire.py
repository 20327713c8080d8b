"""The protobuf wire format and TF's message tables, checked against protobuf itself
(TensorBoard ships TF's .proto files compiled for the `protobuf` package)."""

import numpy as np
import pytest
from tensorboard.compat.proto import event_pb2, graph_pb2, summary_pb2, tensor_pb2
from tensorboard.util import tensor_util

from tensorflux._src.framework import protos, protowire
from tensorflux._src.framework import tensor_util as ours_util


@pytest.mark.parametrize("value, encoded", [
    (0, b"\x00"), (1, b"\x01"), (300, b"\xac\x02"),
    (-1, b"\xff" * 9 + b"\x01"),  # negative ints are 10 bytes of two's complement
])
def test_varints(value, encoded):
    assert protowire.encode_varint(value) == encoded
    decoded, end = protowire.decode_varint(encoded, 0)
    assert end == len(encoded) and decoded == value & (2 ** 64 - 1)


def _summary_pair():
    ours = protos.Summary(value=[
        protos.Summary.Value(tag="zero", simple_value=0.0),  # a oneof member: kept at 0
        protos.Summary.Value(tag="h", histo=protos.HistogramProto(
            min=-2.5, max=3.0, num=4, sum=1.5, sum_squares=20.25,
            bucket_limit=[-1.0, 0.0, 1.7976931348623157e308], bucket=[1.0, 0.0, 3.0])),
        protos.Summary.Value(tag="img", image=protos.Summary.Image(
            height=2, width=3, colorspace=4, encoded_image_string=b"\x89PNG")),
        protos.Summary.Value(tag="snd", audio=protos.Summary.Audio(
            sample_rate=8000.0, num_channels=2, length_frames=10,
            encoded_audio_string=b"RIFF", content_type="audio/wav")),
        protos.Summary.Value(tag="t", metadata=protos.SummaryMetadata(
            plugin_data=protos.SummaryMetadata.PluginData(plugin_name="text")),
            tensor=ours_util.make_tensor_proto(["a", "bc"])),
    ])
    theirs = summary_pb2.Summary()
    theirs.value.add(tag="zero", simple_value=0.0)
    histo = theirs.value.add(tag="h").histo
    histo.min, histo.max, histo.num, histo.sum, histo.sum_squares = -2.5, 3.0, 4, 1.5, 20.25
    histo.bucket_limit.extend([-1.0, 0.0, 1.7976931348623157e308])
    histo.bucket.extend([1.0, 0.0, 3.0])
    theirs.value.add(tag="img").image.CopyFrom(summary_pb2.Summary.Image(
        height=2, width=3, colorspace=4, encoded_image_string=b"\x89PNG"))
    theirs.value.add(tag="snd").audio.CopyFrom(summary_pb2.Summary.Audio(
        sample_rate=8000.0, num_channels=2, length_frames=10,
        encoded_audio_string=b"RIFF", content_type="audio/wav"))
    text = theirs.value.add(tag="t")
    text.metadata.plugin_data.plugin_name = "text"
    text.tensor.CopyFrom(tensor_util.make_tensor_proto([b"a", b"bc"]))
    return ours, theirs


def test_summary_bytes_match_protobuf():
    ours, theirs = _summary_pair()
    assert ours.SerializeToString() == theirs.SerializeToString()
    parsed = protos.Summary.FromString(theirs.SerializeToString())
    assert parsed == ours
    assert parsed.value[1].histo.bucket_limit[2] == 1.7976931348623157e308
    assert parsed.value[0].WhichOneof("value") == "simple_value"


def test_event_bytes_match_protobuf():
    ours = protos.Event(wall_time=1.25, step=-3, summary=_summary_pair()[0])
    theirs = event_pb2.Event(wall_time=1.25, step=-3, summary=_summary_pair()[1])
    assert ours.SerializeToString() == theirs.SerializeToString()
    version = protos.Event(wall_time=5.0, file_version="brain.Event:2")
    assert event_pb2.Event.FromString(version.SerializeToString()).file_version == \
        "brain.Event:2"


def test_tensor_proto_round_trips_through_tensorboard():
    for array in (np.arange(6, dtype=np.float32).reshape(2, 3), np.array([-1, 7], np.int64),
                  np.array(True), np.array([[b"x", b"yz"]], dtype=object)):
        proto = ours_util.make_tensor_proto(array)
        theirs = tensor_pb2.TensorProto.FromString(proto.SerializeToString())
        np.testing.assert_array_equal(tensor_util.make_ndarray(theirs), array)
        np.testing.assert_array_equal(ours_util.make_ndarray(proto), array)
    # Values TF stores in the typed fields (not tensor_content) read back too.
    theirs = tensor_util.make_tensor_proto([1.5, 2.5], dtype="float64")
    theirs.ClearField("tensor_content")
    theirs.double_val.extend([1.5, 2.5])
    ours = protos.TensorProto.FromString(theirs.SerializeToString())
    np.testing.assert_array_equal(ours_util.make_ndarray(ours), [1.5, 2.5])


def test_graph_def_with_map_attrs_parses_in_protobuf():
    node = protos.NodeDef(name="a", op="Const", input=["x", "y:1", "^z"], device="/cpu:0")
    node.attr["dtype"].type = 1
    node.attr["value"].tensor.CopyFrom(ours_util.make_tensor_proto(np.float32(2.0)))
    node.attr["shapes"].CopyFrom(protos.AttrValue(list=protos.AttrValue.ListValue(
        shape=[protos.shape_proto([2, None])])))
    graph = protos.GraphDef(node=[node])
    theirs = graph_pb2.GraphDef.FromString(graph.SerializeToString())
    (n,) = theirs.node
    assert (n.name, n.op, list(n.input), n.device) == ("a", "Const", ["x", "y:1", "^z"],
                                                       "/cpu:0")
    assert n.attr["dtype"].type == 1
    assert [d.size for d in n.attr["shapes"].list.shape[0].dim] == [2, -1]
    assert tensor_util.make_ndarray(n.attr["value"].tensor) == np.float32(2.0)
    assert protos.GraphDef.FromString(theirs.SerializeToString()) == graph


def test_reading_a_submessage_does_not_set_it():
    value = protos.Summary.Value(tag="x", simple_value=1.0)
    assert value.image.height == 0  # an empty default...
    assert value.WhichOneof("value") == "simple_value"  # ...that changed nothing
    value.image.height = 4  # writing into it sets it, and switches the oneof
    assert value.WhichOneof("value") == "image" and value.simple_value == 0.0
    assert value.HasField("image") and not value.HasField("histo")


def test_unknown_fields_survive_a_round_trip():
    event = event_pb2.Event(wall_time=1.0, step=2)
    event.source_metadata.writer = "someone"  # field 10, not in our table
    data = event.SerializeToString()
    ours = protos.Event.FromString(data)
    assert ours.step == 2 and ours.SerializeToString() == data


def test_packed_and_unpacked_repeated_fields_both_parse():
    # bucket (field 7, double) written unpacked: tag 7/I64 per value.
    unpacked = b"".join(protowire.tag(7, protowire.I64) + np.float64(v).tobytes()
                        for v in (1.0, 2.0))
    assert list(protos.HistogramProto.FromString(unpacked).bucket) == [1.0, 2.0]
    packed = protos.HistogramProto(bucket=[1.0, 2.0]).SerializeToString()
    assert packed[0] == (7 << 3) | protowire.LEN


def test_bad_bytes_raise_decode_error():
    with pytest.raises(protos.DecodeError):
        protos.Summary.FromString(b"\x0a\x05ab")  # a 5-byte field with 2 bytes left
    with pytest.raises(ValueError, match="no_such_field"):
        protos.Summary.Value(no_such_field=1)
