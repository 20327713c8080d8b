"""JSON <-> arrays for TensorFlow Serving's REST API (the rules of its json_tensor).

Requests:
    predict   {"signature_name"?, "instances": rows}  or  {"signature_name"?, "inputs": columns}
    classify / regress  {"signature_name"?, "context"?: {feature: value}, "examples": [{...}]}
Answers:
    predict   {"predictions": ...} for rows, {"outputs": ...} for columns; a signature with a
              single output omits its name (a bare list), several give objects per row or a
              map of columns.
    classify  {"results": [[[label, score], ...] per example]}
    regress   {"results": [value per example]}
    errors    {"error": "..."} with an HTTP status (`ApiError.status`).

Binary strings travel as {"b64": "..."}: accepted for any string input or feature, and
written for string outputs whose name ends in `_bytes` (and for strings that are not
UTF-8, which JSON cannot carry). Floats may be NaN / Infinity / -Infinity, as TF Serving
allows. Nothing here touches files or the loader: request content only ever becomes
numpy arrays checked against a signature, or serialized tf.train.Example messages.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from dataclasses import dataclass

import numpy as np
import orjson

PREDICT_METHOD = "tensorflow/serving/predict"
CLASSIFY_METHOD = "tensorflow/serving/classify"
REGRESS_METHOD = "tensorflow/serving/regress"
DEFAULT_SIGNATURE = "serving_default"

# TF's DataType enum names (types.proto), which the metadata API prints.
_DT_NAMES = {
    "float16": "DT_HALF", "bfloat16": "DT_BFLOAT16", "float32": "DT_FLOAT",
    "float64": "DT_DOUBLE", "int8": "DT_INT8", "int16": "DT_INT16", "int32": "DT_INT32",
    "int64": "DT_INT64", "uint8": "DT_UINT8", "uint16": "DT_UINT16", "uint32": "DT_UINT32",
    "uint64": "DT_UINT64", "bool": "DT_BOOL", "string": "DT_STRING",
    "complex64": "DT_COMPLEX64", "complex128": "DT_COMPLEX128",
}


class ApiError(Exception):
    """A request that cannot be answered: `status` is the HTTP code, str() the message."""

    def __init__(self, message, status=400):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Limits:
    """Bounds on what one request may ask for (checked before any array is allocated)."""

    max_body_bytes: int = 64 << 20
    max_depth: int = 32           # nesting of a tensor's lists
    max_elements: int = 8 << 20   # elements in all of a request's tensors together


# -- JSON documents -------------------------------------------------------------------------

# A run of 19 digits, found with C byte operations (a regex scan costs twice the parse).
_DIGITS_AS_ONES = bytes(0x31 if 0x30 <= b <= 0x39 else 0 for b in range(256))
_DIGIT_RUN = b"1" * 19


def parse_request(body: bytes) -> dict:
    """The request body as a JSON object, or ApiError(400) saying why it is not one."""
    if not body or not body.strip():
        raise ApiError("JSON Parse error: The document is empty")
    # orjson parses a request ~5x faster than json. What it refuses (NaN and Infinity,
    # lone surrogates, deep nesting) goes to json, whose answer (a value or the error) is
    # the one given either way; so do bodies with a run of 19+ digits, since orjson reads
    # integers past 64 bits as floats where json keeps them exact.
    document = None
    if _DIGIT_RUN not in body.translate(_DIGITS_AS_ONES):
        try:
            document = orjson.loads(body)
        except orjson.JSONDecodeError:
            pass
    if document is None:
        document = _parse_with_json(body)
    if not isinstance(document, dict):
        raise ApiError(f"JSON Value: {_preview(document)} Is not object")
    return document


def _parse_with_json(body):
    try:
        return json.loads(body)
    except RecursionError:
        raise ApiError("JSON Parse error: the document is nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(f"JSON Parse error: {exc}") from None


def dumps(document) -> bytes:
    """JSON bytes of an answer; NaN and Infinity are written as TF Serving writes them."""
    return json.dumps(document, separators=(",", ":")).encode()


def signature_name_of(request: dict) -> str:
    name = request.get("signature_name", DEFAULT_SIGNATURE)
    if not isinstance(name, str):
        raise ApiError(f"'signature_name' must be a string, got {_preview(name)}")
    return name or DEFAULT_SIGNATURE


def _preview(value, width=60):
    text = json.dumps(value) if not isinstance(value, (bytes, bytearray)) else repr(value)
    return text if len(text) <= width else text[:width] + "..."


def _is_b64(value):
    return isinstance(value, dict) and len(value) == 1 and "b64" in value


def _b64decode(value, where):
    text = value["b64"]
    if not isinstance(text, str):
        raise ApiError(f"{where}: 'b64' must hold a base64 string, got {_preview(text)}")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ApiError(f"{where}: unable to base64 decode {_preview(text)}: {exc}") from None


# -- tensors in -----------------------------------------------------------------------------

def _dtype_name(dtype):
    if isinstance(dtype, np.dtype):
        return "string" if dtype == object else dtype.name
    return getattr(dtype, "name", str(dtype))


def _numpy_dtype(dtype):
    return np.dtype(getattr(dtype, "as_numpy_dtype", dtype))


def _leading_shape(value, where, limits):
    """The shape a nested list claims, read along its first elements (O(depth))."""
    shape = []
    while isinstance(value, list):
        shape.append(len(value))
        if len(shape) > limits.max_depth:
            raise ApiError(f"{where}: nested more than {limits.max_depth} levels deep")
        if not value:
            break
        value = value[0]
    return shape


class _Budget:
    """Counts the elements a request allocates, across all of its tensors."""

    def __init__(self, limits):
        self.limits = limits
        self.left = limits.max_elements

    def take(self, count, where):
        if count > self.left:
            raise ApiError(f"{where}: the request holds more than {self.limits.max_elements:,} "
                           f"elements; send fewer or smaller tensors", 400)
        self.left -= count


def to_array(value, info, where, budget) -> np.ndarray:
    """One input's JSON value as an array of the signature's dtype and shape, or ApiError."""
    shape = _leading_shape(value, where, budget.limits)
    budget.take(math.prod(shape), where)
    if info.dtype is None:  # unknown dtype: strings stay strings, numbers as JSON gave them
        name = "string" if _first_leaf(value, shape) is not None and isinstance(
            _first_leaf(value, shape), (str, dict)) else "float64"
        info = _Untyped(info, name)
    name = _dtype_name(info.dtype)
    if name == "string":
        flat = []
        _flatten_strings(value, shape, 0, flat, where)
        array = np.empty(len(flat), dtype=object)
        array[:] = flat
        array = array.reshape(shape)
    else:
        array = _numeric_array(value, shape, name, _numpy_dtype(info.dtype), where)
    check_shape(array, info, where)
    return array


class _Untyped:
    def __init__(self, info, name):
        self.shape, self.name, self.dtype = info.shape, info.name, np.dtype(
            object if name == "string" else np.float64)
        self.dtype_name = name


def _first_leaf(value, shape):
    for _ in shape:
        if not value:
            return None
        value = value[0]
    return value


def _flatten_strings(value, shape, depth, out, where):
    if depth < len(shape):
        if not isinstance(value, list) or len(value) != shape[depth]:
            raise ApiError(f"{where}: the nested lists are ragged (expected a list of "
                           f"{shape[depth]} at depth {depth}, got {_preview(value)})")
        for item in value:
            _flatten_strings(item, shape, depth + 1, out, where)
    elif isinstance(value, str):
        out.append(value.encode("utf-8", "surrogatepass"))
    elif _is_b64(value):
        out.append(_b64decode(value, where))
    else:
        raise ApiError(f"{where}: expected a string or {{\"b64\": ...}} for a DT_STRING "
                       f"tensor, got {_preview(value)}")


def _numeric_array(value, shape, name, target, where):
    try:
        array = np.array(value)
    except (ValueError, TypeError, OverflowError):
        raise ApiError(f"{where}: cannot make a {name} tensor of {_preview(value)}: the "
                       f"nested lists are ragged or hold other values than numbers") from None
    if array.shape != tuple(shape):
        raise ApiError(f"{where}: the nested lists are ragged (shape {shape} read from the "
                       f"first elements, {list(array.shape)} overall)")
    kind = array.dtype.kind
    if target.kind == "b":
        ok = kind == "b"
    elif target.kind in "iu":
        ok = kind in "iu"
    elif target.kind in "fc" or name == "bfloat16":
        ok = kind in "iuf" or (target.kind == "c" and kind == "c")
    else:
        ok = False
    if array.size == 0 and kind == "f":  # `[]` reads as float64; any dtype takes it
        ok = True
    if not ok:
        raise ApiError(f"{where}: expected {_json_kind(name)} for a "
                       f"{_DT_NAMES.get(name, name)} tensor, got {_preview(value)}")
    if target.kind in "iu" and array.size:
        info = np.iinfo(target)
        low, high = array.min(), array.max()
        if low < info.min or high > info.max:
            raise ApiError(f"{where}: value {low if low < info.min else high} is out of range "
                           f"for {name}")
    return array.astype(target, copy=False)


def _json_kind(name):
    if name == "bool":
        return "true or false"
    if name.startswith(("int", "uint")):
        return "whole numbers"
    return "numbers"


def _render_shape(shape):
    return "[" + ", ".join("?" if d is None or d < 0 else str(d) for d in shape) + "]"


def check_shape(array, info, where):
    """ApiError(400) unless `array` fits the signature's (partially known) shape."""
    expected = info.shape
    if expected is None:
        return
    expected = list(expected)
    if array.ndim != len(expected) or any(
            d is not None and d >= 0 and d != n for d, n in zip(expected, array.shape)):
        raise ApiError(f"{where}: expected shape {_render_shape(expected)}, got "
                       f"{list(array.shape)}")


def predict_feeds(request: dict, signature, limits: Limits):
    """(feeds, format) for a predict request: format is "row" or "columnar"."""
    has_rows, has_columns = "instances" in request, "inputs" in request
    if has_rows == has_columns:
        raise ApiError("Missing 'inputs' or 'instances' key" if not has_rows else
                       "Request must contain either 'instances' or 'inputs', not both")
    budget = _Budget(limits)
    inputs = signature.inputs
    if has_rows:
        columns = _rows_to_columns(request["instances"], inputs)
        fmt = "row"
    else:
        columns = _named_columns(request["inputs"], inputs)
        fmt = "columnar"
    missing = sorted(set(inputs) - set(columns))
    if missing:
        raise ApiError(f"Missing input(s) {', '.join(map(repr, missing))}: the signature takes "
                       f"{', '.join(sorted(inputs))}")
    feeds = {key: to_array(value, inputs[key], f"input '{key}'", budget)
             for key, value in columns.items()}
    if fmt == "row":
        rows = {array.shape[0] for array in feeds.values()}
        if len(rows) > 1:  # cannot happen from row format, kept as a guard
            raise ApiError("The instances give the inputs different batch sizes")
    return feeds, fmt


def _check_names(names, inputs, where):
    unknown = sorted(set(names) - set(inputs))
    if unknown:
        raise ApiError(f"{where}: unknown input {unknown[0]!r}; the signature takes "
                       f"{', '.join(sorted(inputs)) or 'no inputs'}")


def _rows_to_columns(instances, inputs):
    if not isinstance(instances, list) or not instances:
        raise ApiError("'instances' must be a non-empty list, got " + _preview(instances))
    first = instances[0]
    named = isinstance(first, dict) and not _is_b64(first)
    if not named:
        if len(inputs) != 1:
            raise ApiError(f"The signature has {len(inputs)} inputs "
                           f"({', '.join(sorted(inputs))}): each instance must be an object "
                           f"naming them")
        return {next(iter(inputs)): instances}
    columns = {}
    for index, row in enumerate(instances):
        if not isinstance(row, dict) or _is_b64(row):
            raise ApiError(f"instance {index}: expected an object of named inputs like "
                           f"instance 0, got {_preview(row)}")
        _check_names(row, inputs, f"instance {index}")
        if index and set(row) != set(columns):
            missing = sorted(set(columns) ^ set(row))
            raise ApiError(f"instance {index}: input {missing[0]!r} is missing in some "
                           f"instances")
        for key, value in row.items():
            columns.setdefault(key, []).append(value)
    return columns


def _named_columns(value, inputs):
    if isinstance(value, dict) and not _is_b64(value):
        _check_names(value, inputs, "'inputs'")
        return dict(value)
    if len(inputs) != 1:
        raise ApiError(f"The signature has {len(inputs)} inputs "
                       f"({', '.join(sorted(inputs))}): 'inputs' must be an object naming them")
    return {next(iter(inputs)): value}


# -- tensors out ----------------------------------------------------------------------------

def _json_value(array, name):
    if array.dtype == object or array.dtype.kind in "SU":
        binary = name.endswith("_bytes")
        return _strings_to_json(array.tolist(), binary)
    if array.dtype.kind == "c":
        raise ApiError(f"output '{name}': complex tensors have no JSON form", 500)
    if array.dtype.kind == "f" and array.dtype.itemsize < 4 or str(array.dtype) == "bfloat16":
        array = array.astype(np.float32)
    return array.tolist()


def _strings_to_json(value, binary):
    if isinstance(value, list):
        return [_strings_to_json(item, binary) for item in value]
    if isinstance(value, str):
        value = value.encode()
    if not binary:
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return {"b64": base64.b64encode(value).decode("ascii")}


def encode_predictions(outputs: dict, fmt: str) -> dict:
    """The predict answer for `outputs` {key: array} in the request's format."""
    if not outputs:
        raise ApiError("The signature produced no outputs", 500)
    if fmt == "columnar":
        if len(outputs) == 1:
            ((name, array),) = outputs.items()
            return {"outputs": _json_value(np.asarray(array), name)}
        return {"outputs": {name: _json_value(np.asarray(a), name) for name, a in outputs.items()}}
    arrays = {name: np.asarray(a) for name, a in outputs.items()}
    batch = None
    for name, array in arrays.items():
        if array.ndim == 0:
            raise ApiError(f"output '{name}' is a scalar; row format needs a batch dimension "
                           f"(use 'inputs' for the columnar format)")
        if batch is None:
            batch = array.shape[0]
        elif array.shape[0] != batch:
            raise ApiError(f"output '{name}' has inconsistent batch size {array.shape[0]}, "
                           f"expecting {batch} (use 'inputs' for the columnar format)")
    if len(arrays) == 1:
        ((name, array),) = arrays.items()
        return {"predictions": _json_value(array, name)}
    columns = {name: _json_value(array, name) for name, array in arrays.items()}
    return {"predictions": [{name: column[i] for name, column in columns.items()}
                            for i in range(batch)]}


# -- classify / regress ---------------------------------------------------------------------

def serialized_examples(request: dict, limits: Limits) -> np.ndarray:
    """The request's examples (merged with its context) as serialized tf.train.Example."""
    from tensorflux._src.io import example_proto as pb

    examples = request.get("examples")
    if not isinstance(examples, list) or not examples:
        raise ApiError("'examples' must be a non-empty list of objects, got "
                       + _preview(examples))
    context = request.get("context", {})
    if not isinstance(context, dict):
        raise ApiError("'context' must be an object of features, got " + _preview(context))
    budget = _Budget(limits)
    shared = {name: _feature(value, f"context feature '{name}'", budget, pb)
              for name, value in context.items()}
    serialized = np.empty(len(examples), dtype=object)
    for index, example in enumerate(examples):
        if not isinstance(example, dict):
            raise ApiError(f"example {index}: expected an object of features, got "
                           f"{_preview(example)}")
        features = dict(shared)
        for name, value in example.items():
            if name in shared:
                raise ApiError(f"example {index}: feature '{name}' is also in 'context'")
            features[name] = _feature(value, f"example {index} feature '{name}'", budget, pb)
        message = pb.Example(features=pb.Features(feature=features))
        serialized[index] = message.SerializeToString()
    return serialized


def _feature(value, where, budget, pb):
    values = value if isinstance(value, list) else [value]
    budget.take(len(values), where)
    kinds = set()
    decoded = []
    for item in values:
        if isinstance(item, bool) or item is None:
            raise ApiError(f"{where}: expected numbers or strings, got {_preview(item)}")
        if isinstance(item, int):
            if not -(1 << 63) <= item < (1 << 63):
                raise ApiError(f"{where}: {item} is out of the int64 range")
            kinds.add("int")
        elif isinstance(item, float):
            kinds.add("float")
        elif isinstance(item, str):
            kinds.add("bytes")
            item = item.encode("utf-8", "surrogatepass")
        elif _is_b64(item):
            kinds.add("bytes")
            item = _b64decode(item, where)
        else:
            raise ApiError(f"{where}: expected a number, a string or {{\"b64\": ...}}, got "
                           f"{_preview(item)}")
        decoded.append(item)
    if "bytes" in kinds and len(kinds) > 1:
        raise ApiError(f"{where}: mixes strings and numbers")
    if "bytes" in kinds:
        return pb.Feature(bytes_list=pb.BytesList(value=decoded))
    if "float" in kinds or not kinds:
        return pb.Feature(float_list=pb.FloatList(value=[float(v) for v in decoded]))
    return pb.Feature(int64_list=pb.Int64List(value=decoded))


def example_input(signature, method):
    """The key of a classify/regress signature's one string input, or ApiError."""
    if signature.method_name != method:
        raise ApiError(f"Expected {method.rsplit('/', 1)[1]} signature method_name to be "
                       f"{method}. Was: {signature.method_name}")
    strings = [k for k, info in signature.inputs.items() if _dtype_name(info.dtype) == "string"]
    if len(signature.inputs) != 1 or len(strings) != 1:
        raise ApiError(f"A {method} signature must have one DT_STRING input of serialized "
                       f"tf.train.Example; this one has {sorted(signature.inputs)}")
    return strings[0]


def classification_results(outputs: dict, count: int) -> dict:
    classes, scores = outputs.get("classes"), outputs.get("scores")
    if classes is None and scores is None:
        raise ApiError("The classify signature has neither 'classes' nor 'scores' outputs", 500)
    classes = None if classes is None else _per_example(np.asarray(classes), "classes", count)
    scores = None if scores is None else _per_example(np.asarray(scores), "scores", count)
    width = (classes if classes is not None else scores).shape[1]
    if classes is not None and scores is not None and scores.shape[1] != width:
        raise ApiError(f"'classes' has {width} columns but 'scores' {scores.shape[1]}", 500)
    results = []
    for row in range(count):
        pairs = []
        for column in range(width):
            label = "" if classes is None else _label(classes[row, column])
            score = 0.0 if scores is None else float(scores[row, column])
            pairs.append([label, score])
        results.append(pairs)
    return {"results": results}


def _label(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value.item() if hasattr(value, "item") else value)


def regression_results(outputs: dict, count: int) -> dict:
    if "outputs" not in outputs and len(outputs) != 1:
        raise ApiError("The regress signature has no 'outputs' output", 500)
    values = np.asarray(outputs.get("outputs", next(iter(outputs.values()))))
    values = _per_example(values.reshape(values.shape[0], -1) if values.ndim else values,
                          "outputs", count)
    if values.shape[1] != 1:
        raise ApiError(f"regress 'outputs' must hold one value per example, got shape "
                       f"{list(values.shape)}", 500)
    return {"results": [float(v) for v in values[:, 0]]}


def _per_example(array, name, count):
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2 or array.shape[0] != count:
        raise ApiError(f"output '{name}' has shape {list(array.shape)}, expected "
                       f"[{count}, ...] for {count} examples", 500)
    return array


# -- metadata -------------------------------------------------------------------------------

def tensor_info_json(info) -> dict:
    if info.shape is None:
        shape = {"dim": [], "unknown_rank": True}
    else:
        shape = {"dim": [{"size": str(-1 if d is None else int(d)), "name": ""}
                         for d in info.shape], "unknown_rank": False}
    return {"dtype": _DT_NAMES.get(_dtype_name(info.dtype), "DT_INVALID"),
            "tensor_shape": shape, "name": info.name}


def signature_def_json(signature) -> dict:
    return {"inputs": {k: tensor_info_json(v) for k, v in signature.inputs.items()},
            "outputs": {k: tensor_info_json(v) for k, v in signature.outputs.items()},
            "method_name": signature.method_name}


def metadata_json(name, version, signatures) -> dict:
    return {
        "model_spec": {"name": name, "signature_name": "", "version": str(version)},
        "metadata": {"signature_def": {
            "@type": "type.googleapis.com/tensorflow.serving.SignatureDefMap",
            "signature_def": {key: signature_def_json(sig) for key, sig in signatures.items()},
        }},
    }
