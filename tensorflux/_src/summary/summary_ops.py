"""Summary ops: `tf.summary.scalar`, `histogram`, `image`, `audio`, `text`, `merge`, ...

Each summary is a graph op whose output is a scalar string tensor holding a serialized
`Summary` protocol buffer (`tf.summary.FileWriter.add_summary` writes it to an event
file). Strings never enter XLA, so every op here is a `host` record: a NumPy kernel
that runs after the compiled part of the run that computes its inputs. Ops, attrs,
kernels and error messages follow TF1.15 (core/ops/logging_ops.cc,
core/kernels/summary_*.cc); the Python wrappers follow python/summary/summary.py:

- tags: the op's name scope is the tag, so enclosing name scopes prefix it and a
  repeated name gets TF's `_1` suffix; characters outside `[-/\\w.]` become '_' (with
  a logged warning; TF logs it at INFO) and leading slashes are dropped. `family`
  puts the summary under `family/` in both the scope and, once more, in front of the
  tag, so TensorBoard shows it in that tab.
- every summary is added to `collections` (default `[GraphKeys.SUMMARIES]`), which
  `merge_all` merges.
"""

from __future__ import annotations

import contextlib
import logging
import re

import numpy as np

from tensorflux._src.compiler import effects
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.framework import protos, tensor_util
from tensorflux._src.framework.protowire import LEN, DecodeError, iter_fields
from tensorflux._src.ops.op_helpers import dims_str, kernel_error
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.summary import encoders

__all__ = ["audio", "histogram", "image", "merge", "merge_all", "scalar", "tensor_summary",
           "text"]

_log = logging.getLogger("tensorflux")
_STRING = _dtypes.string


# -- tags and scopes (python/ops/summary_op_util.py) --------------------------------------------
_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")


def clean_tag(name):
    """`name` with characters TF does not allow in tags replaced by '_', leading '/'
    removed; logs when it changed anything."""
    if name is None:
        return None
    cleaned = _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")
    if cleaned != name:
        _log.warning("Summary name %s is illegal; using %s instead.", name, cleaned)
    return cleaned


@contextlib.contextmanager
def summary_scope(name, family=None, default_name=None, values=None):
    """Enters the summary's name scope; yields (tag, scope).

    The scope makes the tag unique; with `family`, the scope is `<outer>/family/name`
    and the tag `family/<outer>/family/name`, so `family` always leads the tag.
    """
    name = clean_tag(name)
    family = clean_tag(family)
    base = name if family is None else f"{family}/{name}"
    with _graph.name_scope(base, default_name, values) as scope:
        tag = scope.rstrip("/")
        if family is not None:
            tag = f"{family}/{tag}"
        yield tag, scope


def _collect(value, collections, default_collections):
    for key in default_collections if collections is None else collections:
        _graph.add_to_collection(key, value)


def _check_min(op_type, attr, value, minimum):
    if value < minimum:
        raise ValueError(f"Attr '{attr}' of '{op_type}' Op passed {value} less than minimum "
                         f"{minimum}.")


# -- kernel helpers -----------------------------------------------------------------------------
def _string_scalar(data: bytes) -> np.ndarray:
    """A 0-d object array holding `data` (a bytes-dtype array would drop trailing NULs)."""
    out = np.empty((), dtype=object)
    out[()] = data
    return out


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _scalar_tag(tag: np.ndarray, message: str) -> str:
    # TF's IsLegacyScalar also accepts a one-element vector.
    if tag.size != 1 or tag.ndim > 1:
        raise kernel_error(message)
    return _text(tag.reshape(-1)[0])


def _current_op_name() -> str:
    op = effects.current_op()
    return op.name if op is not None else ""


def _output_tags(base_tag: str, kind: str, count: int, max_outputs: int):
    """'tag/image' for max_outputs 1, else 'tag/image/0', 'tag/image/1', ... (the suffix
    depends on how many were asked for, not how many the batch has)."""
    if max_outputs > 1:
        return [f"{base_tag}/{kind}/{i}" for i in range(count)]
    return [f"{base_tag}/{kind}"] * count


def _serialize(values) -> np.ndarray:
    return _string_scalar(protos.Summary(value=values).SerializeToString())


def _scalar_shape(op):
    return TensorShape([])


# -- ScalarSummary ------------------------------------------------------------------------------
def _scalar_summary_kernel(tags, values):
    if tags.shape != values.shape:
        single = f" (tag '{_text(tags.reshape(-1)[0])}')" if tags.size == 1 else ""
        raise kernel_error(f"tags and values not the same shape: {dims_str(tags.shape)} != "
                           f"{dims_str(values.shape)}{single}")
    return _serialize([protos.Summary.Value(tag=_text(t), simple_value=float(v))
                       for t, v in zip(tags.reshape(-1), values.reshape(-1))])


register(OpDef("ScalarSummary", inputs=("tags: string", "values: T"),
               outputs=("summary: string",), attrs={"T": _dtypes.REAL},
               shape=_scalar_shape, host=_scalar_summary_kernel, not_differentiable=True))


def scalar(name, tensor, collections=None, family=None):
    """A `Summary` with one scalar value, tagged by the summary's scope (TF1's
    `tf.summary.scalar`). Returns a scalar string tensor."""
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        value = apply_op("ScalarSummary", name=scope, tags=tag, values=tensor)
        _collect(value, collections, [GraphKeys.SUMMARIES])
    return value


# -- HistogramSummary (core/lib/histogram/histogram.cc) -----------------------------------------
def _default_bucket_limits() -> np.ndarray:
    """TF's default buckets: 1e-12 growing by 10% up to 1e20, mirrored for negatives,
    0 in the middle and +/-DBL_MAX at the ends (the loop mirrors TF's double loop)."""
    positive, v = [], 1.0e-12
    while v < 1.0e20:
        positive.append(v)
        v *= 1.1
    positive.append(np.finfo(np.float64).max)
    return np.array([-x for x in reversed(positive)] + [0.0] + positive)


_BUCKET_LIMITS = _default_bucket_limits()


def histogram_proto(values: np.ndarray) -> protos.HistogramProto:
    """TF's Histogram of `values` (finite) encoded as EncodeToProto does, with runs of
    empty buckets collapsed into one entry at the run's last limit."""
    flat = values.astype(np.float64).reshape(-1)
    limits = _BUCKET_LIMITS
    # upper_bound: the first limit greater than the value.
    index = np.minimum(np.searchsorted(limits, flat, side="right"), len(limits) - 1)
    counts = np.bincount(index, minlength=len(limits)).astype(np.float64)
    filled = counts > 0
    # Keep non-empty buckets and the last bucket of each empty run.
    keep = filled | np.append(filled[1:], True)
    proto = protos.HistogramProto(
        min=float(flat.min()) if flat.size else float(limits[-1]),
        max=float(flat.max()) if flat.size else -float(limits[-1]),
        num=float(flat.size),
        # Running sums add in element order, as TF's loop does (np.sum would pair up).
        sum=float(np.cumsum(flat)[-1]) if flat.size else 0.0,
        sum_squares=float(np.cumsum(flat * flat)[-1]) if flat.size else 0.0)
    proto.bucket_limit.extend(limits[keep].tolist())
    proto.bucket.extend(counts[keep].tolist())
    return proto


def _histogram_summary_kernel(tag, values):
    if tag.ndim != 0:
        raise kernel_error("tags must be scalar")
    flat = values.astype(np.float64).reshape(-1)
    if np.isnan(flat).any():
        raise kernel_error(f"Nan in summary histogram for: {_current_op_name()}")
    if np.isinf(flat).any():
        raise kernel_error(f"Infinity in summary histogram for: {_current_op_name()}")
    return _serialize([protos.Summary.Value(tag=_text(tag[()]), histo=histogram_proto(flat))])


register(OpDef("HistogramSummary", inputs=("tag: string", "values: T"),
               outputs=("summary: string",), attrs={"T": _dtypes.REAL},
               type_defaults={"T": _dtypes.float32}, shape=_scalar_shape,
               host=_histogram_summary_kernel, not_differentiable=True))


def histogram(name, values, collections=None, family=None):
    """A `Summary` with a histogram of `values` (any shape) in TF's default buckets
    (TF1's `tf.summary.histogram`). A NaN or infinite value fails the run."""
    with summary_scope(name, family, values=[values],
                       default_name="HistogramSummary") as (tag, scope):
        value = apply_op("HistogramSummary", name=scope, tag=tag, values=values)
        _collect(value, collections, [GraphKeys.SUMMARIES])
    return value


# -- ImageSummary (core/kernels/summary_image_op.cc) --------------------------------------------
_BAD_COLOR = np.array([255, 0, 0, 255], np.uint8)  # TF's default: opaque red
_ZERO_THRESHOLD = np.float32(1e-6)  # below this the image is all zeros


def _normalize_image(image: np.ndarray, bad_color: np.ndarray) -> np.ndarray:
    """A float image [h, w, depth] as uint8, TF's way: all values >= 0 are scaled so the
    largest is 255; otherwise 0 goes to 128 and the largest magnitude to 127 away.
    Pixels with a non-finite channel become `bad_color`."""
    depth = image.shape[-1]
    pixels = image.reshape(-1, depth)
    finite = np.isfinite(pixels).all(axis=1)
    good = pixels[finite].astype(np.float32)
    low = np.float32(good.min()) if good.size else np.float32(np.inf)
    high = np.float32(good.max()) if good.size else np.float32(-np.inf)
    if low < 0:
        biggest = max(abs(low), abs(high))
        scale = np.float32(0.0) if biggest < _ZERO_THRESHOLD else np.float32(127.0) / biggest
        offset = np.float32(128.0)
    else:
        scale = np.float32(0.0) if high < _ZERO_THRESHOLD else np.float32(255.0) / high
        offset = np.float32(0.0)
    # The affine map runs in the image's own type (half stays half), as TF's Eigen code.
    kind = pixels.dtype.type
    mapped = pixels * kind(scale) + kind(offset)
    out = np.clip(np.nan_to_num(mapped.astype(np.float64)), 0, 255).astype(np.uint8)
    out[~finite] = bad_color
    return out.reshape(image.shape)


def _check_image_tensor(tensor):
    if tensor.ndim != 4 or tensor.shape[3] not in (1, 3, 4):
        raise kernel_error(f"Tensor must be 4-D with last dim 1, 3, or 4, not "
                           f"{dims_str(tensor.shape)}")
    _, height, width, _ = tensor.shape
    if max(tensor.shape[:3]) >= 1 << 31 or height * width >= 1 << 29:
        raise kernel_error(f"Tensor too large for summary {dims_str(tensor.shape)}")


def _image_summary_kernel(tag, tensor, max_images, bad_color):
    base_tag = _scalar_tag(tag, "Tags must be a scalar")
    _check_image_tensor(tensor)
    batch, height, width, depth = tensor.shape
    bad_color = np.asarray(bad_color, np.uint8).reshape(-1)
    is_uint8 = tensor.dtype == np.uint8
    if not is_uint8 and bad_color.size < depth:
        raise kernel_error(f"expected depth <= bad_color.size, got depth = {depth}, "
                           f"bad_color.size = {bad_color.size}")
    count = min(max_images, batch)
    values = []
    for i, tag_i in enumerate(_output_tags(base_tag, "image", count, max_images)):
        pixels = tensor[i] if is_uint8 else _normalize_image(tensor[i], bad_color[:depth])
        values.append(protos.Summary.Value(tag=tag_i, image=protos.Summary.Image(
            height=height, width=width, colorspace=depth,
            encoded_image_string=encoders.encode_png(pixels))))
    return _serialize(values)


register(OpDef("ImageSummary", inputs=("tag: string", "tensor: T"),
               outputs=("summary: string",),
               attrs={"max_images": 3, "bad_color": _BAD_COLOR,
                      "T": (_dtypes.uint8, _dtypes.float32, _dtypes.float16, _dtypes.float64)},
               type_defaults={"T": _dtypes.float32}, shape=_scalar_shape,
               host=_image_summary_kernel, not_differentiable=True))


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """A `Summary` with up to `max_outputs` PNG images from a [batch, height, width,
    channels] tensor, channels 1 (grayscale), 3 (RGB) or 4 (RGBA); uint8 as is, floats
    rescaled per image (TF1's `tf.summary.image`). Tags are `name/image` when
    max_outputs is 1, else `name/image/0`, `name/image/1`, ..."""
    _check_min("ImageSummary", "max_images", max_outputs, 1)
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        value = apply_op("ImageSummary", name=scope, tag=tag, tensor=tensor,
                         max_images=max_outputs)
        _collect(value, collections, [GraphKeys.SUMMARIES])
    return value


# -- AudioSummaryV2 (core/kernels/summary_audio_op.cc) ------------------------------------------
def _audio_summary_kernel(tag, tensor, sample_rate, max_outputs):
    base_tag = _scalar_tag(tag, "Tag must be a scalar")
    if tensor.ndim not in (2, 3):
        raise kernel_error(f"Tensor must be 3-D or 2-D, got: {dims_str(tensor.shape)}")
    if sample_rate.size != 1:
        raise kernel_error(f"sample_rate must be a scalar, got shape "
                           f"{dims_str(sample_rate.shape)}")
    rate = np.float32(sample_rate.reshape(-1)[0])
    if not rate > 0:
        raise kernel_error("sample_rate must be > 0")
    batch, frames = tensor.shape[:2]
    channels = 1 if tensor.ndim == 2 else tensor.shape[2]
    wav_rate = max(int(np.rint(rate)), 1)  # lrintf: nearest, ties to even
    count = min(max_outputs, batch)
    values = []
    for i, tag_i in enumerate(_output_tags(base_tag, "audio", count, max_outputs)):
        clip = tensor[i].reshape(frames, channels)
        values.append(protos.Summary.Value(tag=tag_i, audio=protos.Summary.Audio(
            sample_rate=float(rate), num_channels=channels, length_frames=frames,
            content_type="audio/wav", encoded_audio_string=encoders.encode_wav(clip, wav_rate))))
    return _serialize(values)


register(OpDef("AudioSummaryV2",
               inputs=("tag: string", "tensor: float32", "sample_rate: float32"),
               outputs=("summary: string",), attrs={"max_outputs": 3}, shape=_scalar_shape,
               host=_audio_summary_kernel, not_differentiable=True))


def audio(name, tensor, sample_rate, max_outputs=3, collections=None, family=None):
    """A `Summary` with up to `max_outputs` WAV clips (16-bit PCM) from a float32
    [batch, frames, channels] or [batch, frames] tensor with values in [-1, 1]
    (TF1's `tf.summary.audio`). Tags are `name/audio` or `name/audio/0`, ..."""
    _check_min("AudioSummaryV2", "max_outputs", max_outputs, 1)
    with summary_scope(name, family=family, values=[tensor]) as (tag, scope):
        sample_rate = convert_to_tensor(sample_rate, dtype=_dtypes.float32, name="sample_rate")
        value = apply_op("AudioSummaryV2", name=scope, tag=tag, tensor=tensor,
                         sample_rate=sample_rate, max_outputs=max_outputs)
        _collect(value, collections, [GraphKeys.SUMMARIES])
    return value


# -- TensorSummaryV2 and text (core/kernels/summary_tensor_op.cc) -------------------------------
def _tensor_summary_kernel(tag, tensor, serialized_summary_metadata, T):  # noqa: N803
    if tag.ndim != 0:
        raise kernel_error("tag must be scalar")
    if serialized_summary_metadata.ndim != 0:
        raise kernel_error("serialized_summary_metadata must be scalar")
    metadata = protos.SummaryMetadata()
    try:
        metadata.ParseFromString(bytes(serialized_summary_metadata[()]))
    except DecodeError:
        metadata.Clear()  # TF ignores a metadata string that does not parse
    # TF always sets `metadata`, even when it is empty.
    return _serialize([protos.Summary.Value(
        tag=_text(tag[()]), tensor=tensor_util.make_tensor_proto(tensor, dtype=T),
        metadata=metadata)])


register(OpDef("TensorSummaryV2",
               inputs=("tag: string", "tensor: T", "serialized_summary_metadata: string"),
               outputs=("summary: string",), attrs={"T": _dtypes.ALL}, shape=_scalar_shape,
               host=_tensor_summary_kernel, not_differentiable=True))


def tensor_summary(name, tensor, summary_description=None, collections=None,
                   summary_metadata=None, family=None, display_name=None):
    """A `Summary` holding `tensor` itself as a TensorProto, with `summary_metadata`
    telling TensorBoard which plugin reads it (TF1's `tf.summary.tensor_summary`)."""
    metadata = protos.SummaryMetadata()
    if summary_metadata is not None:
        metadata.MergeFromString(_serialized(summary_metadata))
    if summary_description is not None:
        metadata.summary_description = summary_description
    if display_name is not None:
        metadata.display_name = display_name
    serialized = metadata.SerializeToString()
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        value = apply_op("TensorSummaryV2", name=scope, tag=tag, tensor=tensor,
                         serialized_summary_metadata=serialized)
        _collect(value, collections, [GraphKeys.SUMMARIES])
    return value


def text(name, tensor, collections=None):
    """A `Summary` of a string tensor for TensorBoard's text dashboard (TF1's
    `tf.summary.text`): a tensor summary whose metadata names the "text" plugin."""
    tensor = convert_to_tensor(tensor)
    if tensor.dtype != _STRING:
        raise ValueError(f"Expected tensor {tensor.name} to have dtype string, got "
                         f"{tensor.dtype}")
    metadata = protos.SummaryMetadata(
        plugin_data=protos.SummaryMetadata.PluginData(plugin_name="text"))
    return tensor_summary(name=name, tensor=tensor, summary_metadata=metadata,
                          collections=collections)


def _serialized(message) -> bytes:
    if isinstance(message, (bytes, bytearray)):
        return bytes(message)
    return message.SerializeToString()  # ours, or a protobuf message


# -- MergeSummary (core/kernels/summary_op.cc) --------------------------------------------------
def _value_tag(raw: bytes) -> str:
    """The tag of one serialized Summary.Value, without decoding the rest of it."""
    tag = ""
    for number, wire_type, value, _, _ in iter_fields(raw):
        if number == 1 and wire_type == LEN:
            tag = value.decode("utf-8", "replace")
    return tag


def _merge_summary_kernel(*inputs):
    # A Summary is only its repeated `value` field, so merging is concatenating the
    # encoded values (protobuf merges concatenated messages) once their tags are checked.
    pieces, tags = [], set()
    for summaries in inputs:
        for serialized in summaries.reshape(-1):
            data = bytes(serialized)
            try:
                fields = [(v, data[s:e]) for n, w, v, s, e in iter_fields(data)
                          if n == 1 and w == LEN]
                fields = [(_value_tag(v), piece) for v, piece in fields]
            except (DecodeError, UnicodeDecodeError):
                raise kernel_error("Could not parse one of the summary inputs") from None
            for tag, piece in fields:
                # TensorSummary values may have no tag, so only non-empty tags must differ.
                if tag and tag in tags:
                    raise kernel_error(f"Duplicate tag {tag} found in summary inputs")
                tags.add(tag)
                pieces.append(piece)
    return _string_scalar(b"".join(pieces))


register(OpDef("MergeSummary", inputs=("inputs: N * string",), outputs=("summary: string",),
               shape=_scalar_shape, host=_merge_summary_kernel,
               not_differentiable=True))


def merge(inputs, collections=None, name=None):
    """One `Summary` with the values of all `inputs` (serialized summaries); a run fails
    on two values with the same tag (TF1's `tf.summary.merge`)."""
    name = clean_tag(name)
    with _graph.name_scope(name, "Merge", inputs):
        value = apply_op("MergeSummary", name=name, inputs=list(inputs))
        _collect(value, collections, [])
    return value


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """Merges every summary in the default graph's `key` collection (those whose names
    match `scope`, when given); None when there are none (TF1's `tf.summary.merge_all`)."""
    summaries = _graph.get_collection(key, scope=scope)
    if not summaries:
        return None
    return merge(summaries, name=name)
