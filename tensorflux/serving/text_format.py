"""Protocol-buffer text format, read into plain dicts, for TF Serving's config files.

`--model_config_file` (a ModelServerConfig) and `--batching_parameters_file` (a
BatchingParameters) are written in this format by TF Serving users:

    model_config_list {
      config { name: "iris" base_path: "/models/iris"
               model_version_policy { specific { versions: 1 versions: 2 } } }
    }
    max_batch_size { value: 32 }
    allowed_batch_sizes: 8

`parse` returns {field: [value, ...]} (every field may repeat; a message is a nested
dict). Only the syntax is read here; callers check the field names they expect.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"""
    \s+ | \#[^\n]*                               # whitespace and comments
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<number>[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|inf|nan)[fF]?(?![\w.]))
  | (?P<name>[A-Za-z_][\w.]*)
  | (?P<punct>[{}<>\[\]:,;])
""", re.VERBOSE)

_CLOSE = {"{": "}", "<": ">"}


class TextFormatError(ValueError):
    """The text is not protocol-buffer text format; the message says where."""


def _tokens(text):
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            line = text.count("\n", 0, position) + 1
            raise TextFormatError(f"line {line}: unexpected {text[position:position + 20]!r}")
        position = match.end()
        kind = match.lastgroup
        if kind is not None:
            yield kind, match.group(kind), text.count("\n", 0, match.start()) + 1


def parse(text: str) -> dict:
    tokens = list(_tokens(text))
    fields, end = _message(tokens, 0, None)
    return fields


def _message(tokens, i, closer):
    fields = {}
    while i < len(tokens):
        kind, value, line = tokens[i]
        if kind == "punct" and value == closer:
            return fields, i + 1
        if kind == "punct" and value in ",;":
            i += 1
            continue
        if kind != "name":
            raise TextFormatError(f"line {line}: expected a field name, got {value!r}")
        i += 1
        if i >= len(tokens):
            raise TextFormatError(f"line {line}: field {value!r} has no value")
        has_colon = tokens[i][:2] == ("punct", ":")
        if has_colon:
            i += 1
        values, i = _value(tokens, i, value, line)
        fields.setdefault(value, []).extend(values)
    if closer is not None:
        raise TextFormatError(f"missing {closer!r} at the end of the text")
    return fields, i


def _value(tokens, i, field, line):
    if i >= len(tokens):
        raise TextFormatError(f"line {line}: field {field!r} has no value")
    kind, value, line = tokens[i]
    if kind == "punct" and value in _CLOSE:
        message, i = _message(tokens, i + 1, _CLOSE[value])
        return [message], i
    if kind == "punct" and value == "[":
        values, i = [], i + 1
        while i < len(tokens) and tokens[i][:2] != ("punct", "]"):
            if tokens[i][:2] == ("punct", ","):
                i += 1
                continue
            items, i = _value(tokens, i, field, line)
            values.extend(items)
        if i >= len(tokens):
            raise TextFormatError(f"line {line}: missing ']' for field {field!r}")
        return values, i + 1
    if kind == "string":
        return [_unquote(value)], i + 1
    if kind == "number":
        text = value.rstrip("fF") if not value.lower().endswith(("inf", "nan")) else value
        try:
            return [int(text) if re.fullmatch(r"[-+]?\d+", text) else float(text)], i + 1
        except ValueError:
            raise TextFormatError(f"line {line}: bad number {value!r}") from None
    if kind == "name":
        return [{"true": True, "false": False}.get(value, value)], i + 1
    raise TextFormatError(f"line {line}: field {field!r}: unexpected {value!r}")


def _unquote(token):
    body = token[1:-1]
    try:
        return body.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        raise TextFormatError(f"bad escape in string {token}") from None


def scalar(fields: dict, name: str, default=None, where=""):
    """The last value of a singular field (protobuf text format keeps the last one)."""
    values = fields.get(name)
    if not values:
        return default
    value = values[-1]
    if isinstance(value, dict):  # a wrapper such as google.protobuf.Int64Value
        if set(value) - {"value"}:
            raise TextFormatError(f"{where}{name}: expected a value or {{ value: ... }}")
        return value.get("value", [default])[-1]
    return value
