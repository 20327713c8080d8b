"""tf.io.decode_json_example / tf.decode_json_example: the DecodeJSONExample host record,
JSON-encoded tf.train.Examples to serialized ones (protobuf's JSON mapping, in
io/example_json.py), for tf.io.parse_example."""

from __future__ import annotations

from tensorflux._src.io import example_json
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import unchanged
from tensorflux._src.ops.strings.string_util import map_strings

__all__ = ["decode_json_example"]


def _decode_json_example_kernel(json_examples):
    def one(text):
        try:
            return example_json.json_to_example(text)
        except example_json.JsonError as e:
            raise kernel_error(f"Error while parsing JSON: {e}") from None
    return map_strings(one, json_examples)


register(OpDef("DecodeJSONExample", inputs=("json_examples: string",),
               outputs=("binary_examples: string",), shape=unchanged,
               host=_decode_json_example_kernel, not_differentiable=True))


def decode_json_example(json_examples, name=None):
    """Serialized tf.train.Example protos from their JSON text (protobuf's JSON mapping:
    {"features": {"feature": {"k": {"int64List": {"value": ["1"]}}}}})."""
    return apply_op("DecodeJSONExample", name=name, json_examples=json_examples)
