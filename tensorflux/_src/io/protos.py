"""TF's protocol buffers used by summaries and event files, as protowire tables.

Field numbers and types are those of TensorFlow's .proto files:
tensorflow/core/util/event.proto (Event, LogMessage, SessionLog, TaggedRunMetadata),
core/framework/summary.proto (Summary, HistogramProto, SummaryMetadata,
SummaryDescription), tensor.proto / tensor_shape.proto (TensorProto, TensorShapeProto),
graph.proto / node_def.proto / attr_value.proto / versions.proto (GraphDef and what it
holds). Fields tensorflux never produces (resource handles, variants, function
libraries) are left out of the tables; a parser keeps them as unknown fields, so
nothing is lost when such a message is read and written back.

Also here: `make_tensor_proto` / `make_ndarray` (TF's tensor_util conversions) for the
tensors these messages carry.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.io.protowire import Field, Message


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


# -- tensors <-> TensorProto --------------------------------------------------------------------
def make_tensor_proto(values, dtype=None, shape=None, verify_shape=False,
                      allow_broadcast=False) -> TensorProto:
    """A TensorProto holding `values`, as TF's kernels write them: strings one per
    `string_val` entry, every other dtype as little-endian `tensor_content` bytes.
    With `shape`, values are filled or checked by `tf.constant`'s rules."""
    if isinstance(values, TensorProto):
        return values
    dtype = _dtypes.as_dtype(dtype) if dtype is not None else None
    if shape is not None:
        from tensorflux._src.framework.tensor_conversion import make_ndarray as as_array
        if allow_broadcast:
            array = np.asarray(values, dtype=None if dtype is None or dtype ==
                               _dtypes.string else dtype.as_numpy_dtype)
            try:
                values = np.broadcast_to(array, tuple(shape))
            except ValueError:
                raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, got "
                                f"{array.shape}.") from None
        else:
            values = as_array(values, dtype, shape, verify_shape)
    if dtype is not None and dtype.base_dtype == _dtypes.string:
        array = np.asarray(values, dtype=object)
    elif dtype is not None:
        array = np.asarray(values, dtype=dtype.as_numpy_dtype)
    else:
        array = np.asarray(values)
        if array.dtype.kind in "USO":
            array = array.astype(object)
        dtype = _dtypes.as_dtype(array.dtype) if array.dtype != object else _dtypes.string
    proto = TensorProto(dtype=dtype.as_datatype_enum,
                        tensor_shape=shape_proto(array.shape))
    if dtype.base_dtype == _dtypes.string:
        proto.string_val.extend(_as_bytes(s) for s in array.reshape(-1))
    else:
        little = array.astype(array.dtype.newbyteorder("<"), copy=False)
        proto.tensor_content = np.ascontiguousarray(little).tobytes()
    return proto


def make_ndarray(proto: TensorProto) -> np.ndarray:
    """The numpy array a TensorProto holds (TF's `tf.make_ndarray`)."""
    dtype = _dtypes.as_dtype(proto.dtype)
    shape = tuple(d.size for d in proto.tensor_shape.dim)
    count = int(np.prod(shape, dtype=np.int64))
    if dtype.base_dtype == _dtypes.string:
        out = np.empty(len(proto.string_val), dtype=object)
        out[:] = list(proto.string_val)
        return _fill(out, count).reshape(shape)
    np_dtype = np.dtype(dtype.as_numpy_dtype)
    if proto.tensor_content:
        flat = np.frombuffer(proto.tensor_content, dtype=np_dtype.newbyteorder("<"))
        return flat.astype(np_dtype).reshape(shape)
    return _fill(np.asarray(_typed_values(proto, dtype), dtype=np_dtype), count).reshape(shape)


def shape_proto(shape) -> TensorShapeProto:
    """TensorShapeProto of a concrete shape, a TensorShape, or None (unknown rank)."""
    dims = getattr(shape, "dims", shape)
    if dims is None:
        return TensorShapeProto(unknown_rank=True)
    sizes = [getattr(d, "value", d) for d in dims]  # Dimension objects or ints
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=-1 if s is None else int(s))
                                 for s in sizes])


def _typed_values(proto, dtype):
    """The repeated `*_val` field that holds `dtype`'s values in a TensorProto."""
    name = dtype.base_dtype.name
    by_name = {"float32": proto.float_val, "float64": proto.double_val,
               "int64": proto.int64_val, "bool": proto.bool_val,
               "uint32": proto.uint32_val, "uint64": proto.uint64_val}
    if name in by_name:
        return list(by_name[name])
    if name in ("float16", "bfloat16"):
        raw = np.asarray(list(proto.half_val), dtype=np.uint16)
        return raw.view(np.dtype(dtype.as_numpy_dtype))
    if name == "complex64":
        v = list(proto.scomplex_val)
        return [complex(a, b) for a, b in zip(v[::2], v[1::2])]
    if name == "complex128":
        v = list(proto.dcomplex_val)
        return [complex(a, b) for a, b in zip(v[::2], v[1::2])]
    return list(proto.int_val)  # int32, int16, int8, uint8, uint16


def _fill(flat: np.ndarray, count: int) -> np.ndarray:
    """TF's rule for short value lists: the last value repeats (an empty list is zeros)."""
    if flat.size >= count:
        return flat[:count]
    if flat.size == 0:
        return np.zeros(count, dtype=flat.dtype) if flat.dtype != object \
            else np.full(count, b"", dtype=object)
    out = np.empty(count, dtype=flat.dtype)
    out[:flat.size] = flat
    out[flat.size:] = flat[-1]
    return out


def _as_bytes(value) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    return bytes(value)
