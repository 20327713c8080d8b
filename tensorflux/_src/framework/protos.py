"""TF's protocol buffers used by summaries and event files, as protowire tables.

Field numbers and types are those of TensorFlow's .proto files:
tensorflow/core/util/event.proto (Event, LogMessage, SessionLog, TaggedRunMetadata),
core/framework/summary.proto (Summary, HistogramProto, SummaryMetadata,
SummaryDescription), tensor.proto / tensor_shape.proto (TensorProto, TensorShapeProto),
graph.proto / node_def.proto / attr_value.proto / versions.proto (GraphDef and what it
holds). Fields tensorflux never produces (resource handles, variants, function
libraries) are left out of the tables; a parser keeps them as unknown fields, so
nothing is lost when such a message is read and written back.

The messages need only the wire codec; converting tensors to and from TensorProto
(`make_tensor_proto`, `make_ndarray`) needs dtypes and is in tensor_util.py.
"""

from __future__ import annotations

from tensorflux._src.framework.protowire import Field, Message


# -- tensor_shape.proto / tensor.proto ----------------------------------------------------------
class TensorShapeProto(Message):
    class Dim(Message):
        FIELDS = (Field(1, "size", "int64"), Field(2, "name", "string"))

    FIELDS = (
        Field(2, "dim", "message", repeated=True, message=lambda: TensorShapeProto.Dim),
        Field(3, "unknown_rank", "bool"),
    )


class TensorProto(Message):
    FIELDS = (
        Field(1, "dtype", "enum"),
        Field(2, "tensor_shape", "message", message=lambda: TensorShapeProto),
        Field(3, "version_number", "int32"),
        Field(4, "tensor_content", "bytes"),
        Field(13, "half_val", "int32", repeated=True),
        Field(5, "float_val", "float", repeated=True),
        Field(6, "double_val", "double", repeated=True),
        Field(7, "int_val", "int32", repeated=True),
        Field(8, "string_val", "bytes", repeated=True),
        Field(9, "scomplex_val", "float", repeated=True),
        Field(10, "int64_val", "int64", repeated=True),
        Field(11, "bool_val", "bool", repeated=True),
        Field(12, "dcomplex_val", "double", repeated=True),
        Field(16, "uint32_val", "uint32", repeated=True),
        Field(17, "uint64_val", "uint64", repeated=True),
    )


class SerializedDType(Message):
    """types.proto's wrapper of one DataType (TF 2.x's `DType.experimental_as_proto`)."""

    FIELDS = (Field(1, "datatype", "enum"),)


# -- summary.proto ------------------------------------------------------------------------------
class HistogramProto(Message):
    FIELDS = (
        Field(1, "min", "double"),
        Field(2, "max", "double"),
        Field(3, "num", "double"),
        Field(4, "sum", "double"),
        Field(5, "sum_squares", "double"),
        Field(6, "bucket_limit", "double", repeated=True),
        Field(7, "bucket", "double", repeated=True),
    )


class SummaryDescription(Message):
    FIELDS = (Field(1, "type_hint", "string"),)


class SummaryMetadata(Message):
    class PluginData(Message):
        FIELDS = (Field(1, "plugin_name", "string"), Field(2, "content", "bytes"))

    FIELDS = (
        Field(1, "plugin_data", "message", message=lambda: SummaryMetadata.PluginData),
        Field(2, "display_name", "string"),
        Field(3, "summary_description", "string"),
    )


class Summary(Message):
    class Image(Message):
        FIELDS = (
            Field(1, "height", "int32"),
            Field(2, "width", "int32"),
            Field(3, "colorspace", "int32"),  # 1 grayscale, 2 grayscale+alpha, 3 RGB, 4 RGBA
            Field(4, "encoded_image_string", "bytes"),
        )

    class Audio(Message):
        FIELDS = (
            Field(1, "sample_rate", "float"),
            Field(2, "num_channels", "int64"),
            Field(3, "length_frames", "int64"),
            Field(4, "encoded_audio_string", "bytes"),
            Field(5, "content_type", "string"),
        )

    class Value(Message):
        FIELDS = (
            Field(7, "node_name", "string"),
            Field(1, "tag", "string"),
            Field(9, "metadata", "message", message=lambda: SummaryMetadata),
            Field(2, "simple_value", "float", oneof="value"),
            Field(3, "obsolete_old_style_histogram", "bytes", oneof="value"),
            Field(4, "image", "message", oneof="value", message=lambda: Summary.Image),
            Field(5, "histo", "message", oneof="value", message=lambda: HistogramProto),
            Field(6, "audio", "message", oneof="value", message=lambda: Summary.Audio),
            Field(8, "tensor", "message", oneof="value", message=lambda: TensorProto),
        )

    FIELDS = (Field(1, "value", "message", repeated=True, message=lambda: Summary.Value),)


# -- event.proto --------------------------------------------------------------------------------
class LogMessage(Message):
    UNKNOWN, DEBUGGING, INFO, WARN, ERROR, FATAL = 0, 10, 20, 30, 40, 50
    FIELDS = (Field(1, "level", "enum"), Field(2, "message", "string"))


class SessionLog(Message):
    STATUS_UNSPECIFIED, START, STOP, CHECKPOINT = 0, 1, 2, 3
    FIELDS = (
        Field(1, "status", "enum"),
        Field(2, "checkpoint_path", "string"),
        Field(3, "msg", "string"),
    )


class TaggedRunMetadata(Message):
    FIELDS = (Field(1, "tag", "string"), Field(2, "run_metadata", "bytes"))


class Event(Message):
    FIELDS = (
        Field(1, "wall_time", "double"),
        Field(2, "step", "int64"),
        Field(3, "file_version", "string", oneof="what"),
        Field(4, "graph_def", "bytes", oneof="what"),
        Field(5, "summary", "message", oneof="what", message=lambda: Summary),
        Field(6, "log_message", "message", oneof="what", message=lambda: LogMessage),
        Field(7, "session_log", "message", oneof="what", message=lambda: SessionLog),
        Field(8, "tagged_run_metadata", "message", oneof="what",
              message=lambda: TaggedRunMetadata),
        Field(9, "meta_graph_def", "bytes", oneof="what"),
    )


# -- graph.proto, node_def.proto, attr_value.proto, versions.proto -----------------------------
class NameAttrList(Message):
    FIELDS = (
        Field(1, "name", "string"),
        Field(2, "attr", "map", map_key="string", message=lambda: AttrValue),
    )


class AttrValue(Message):
    class ListValue(Message):
        FIELDS = (
            Field(2, "s", "bytes", repeated=True),
            Field(3, "i", "int64", repeated=True),
            Field(4, "f", "float", repeated=True),
            Field(5, "b", "bool", repeated=True),
            Field(6, "type", "enum", repeated=True),
            Field(7, "shape", "message", repeated=True, message=lambda: TensorShapeProto),
            Field(8, "tensor", "message", repeated=True, message=lambda: TensorProto),
            Field(9, "func", "message", repeated=True, message=lambda: NameAttrList),
        )

    FIELDS = (
        Field(2, "s", "bytes", oneof="value"),
        Field(3, "i", "int64", oneof="value"),
        Field(4, "f", "float", oneof="value"),
        Field(5, "b", "bool", oneof="value"),
        Field(6, "type", "enum", oneof="value"),
        Field(7, "shape", "message", oneof="value", message=lambda: TensorShapeProto),
        Field(8, "tensor", "message", oneof="value", message=lambda: TensorProto),
        Field(1, "list", "message", oneof="value", message=lambda: AttrValue.ListValue),
        Field(10, "func", "message", oneof="value", message=lambda: NameAttrList),
        Field(9, "placeholder", "string", oneof="value"),
    )


class NodeDef(Message):
    FIELDS = (
        Field(1, "name", "string"),
        Field(2, "op", "string"),
        Field(3, "input", "string", repeated=True),
        Field(4, "device", "string"),
        Field(5, "attr", "map", map_key="string", message=lambda: AttrValue),
    )


class VersionDef(Message):
    FIELDS = (
        Field(1, "producer", "int32"),
        Field(2, "min_consumer", "int32"),
        Field(3, "bad_consumers", "int32", repeated=True),
    )


class GraphDef(Message):
    FIELDS = (
        Field(1, "node", "message", repeated=True, message=lambda: NodeDef),
        Field(4, "versions", "message", message=lambda: VersionDef),
        Field(3, "version", "int32"),
    )


def shape_proto(shape) -> TensorShapeProto:
    """TensorShapeProto of a concrete shape, a TensorShape, or None (unknown rank)."""
    dims = getattr(shape, "dims", shape)
    if dims is None:
        return TensorShapeProto(unknown_rank=True)
    sizes = [getattr(d, "value", d) for d in dims]  # Dimension objects or ints
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=-1 if s is None else int(s))
                                 for s in sizes])


# -- tensor_slice.proto, tensor_bundle.proto (V2 checkpoints: io/tensor_bundle.py) -------------
class TensorSliceProto(Message):
    class Extent(Message):
        # `length` unset (not merely 0) means the whole dimension: hence the oneof.
        FIELDS = (Field(1, "start", "int64"),
                  Field(2, "length", "int64", oneof="has_length"))

    FIELDS = (Field(1, "extent", "message", repeated=True,
                    message=lambda: TensorSliceProto.Extent),)


class BundleHeaderProto(Message):
    LITTLE, BIG = 0, 1  # Endianness
    FIELDS = (
        Field(1, "num_shards", "int32"),
        Field(2, "endianness", "enum"),
        Field(3, "version", "message", message=lambda: VersionDef),
    )


class BundleEntryProto(Message):
    FIELDS = (
        Field(1, "dtype", "enum"),
        Field(2, "shape", "message", message=lambda: TensorShapeProto),
        Field(3, "shard_id", "int32"),
        Field(4, "offset", "int64"),
        Field(5, "size", "int64"),
        Field(6, "crc32c", "fixed32"),
        Field(7, "slices", "message", repeated=True, message=lambda: TensorSliceProto),
    )
