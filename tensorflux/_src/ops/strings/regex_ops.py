"""Regular expressions on string tensors: RegexReplace, StaticRegexReplace,
RegexFullMatch, StaticRegexFullMatch (host records).

TF matches with RE2; here patterns are translated to Python's `re` by re2_syntax.py,
which documents what maps and what raises. As in TF, the wrappers pick the Static
record when the pattern (and rewrite) are Python strings, and an invalid pattern is
the kernel's InvalidArgumentError "Invalid pattern: <pattern>, error: <RE2's text>".
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import dims_str, kernel_error, with_rank
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.strings import re2_syntax
from tensorflux._src.ops.strings.string_util import as_bytes, map_strings, ragged_elementwise

__all__ = ["regex_full_match", "regex_replace"]

_TEXT = "surrogateescape"  # invalid UTF-8 bytes survive as one character each


def _compile(pattern: bytes):
    try:
        return re2_syntax.compile_re2(pattern)
    except re2_syntax.RE2Error as e:
        raise kernel_error(f"Invalid pattern: {pattern.decode('utf-8', 'replace')}, error: "
                           f"{e}") from None


def _scalar(value, what):
    value = np.asarray(value, object)
    if value.ndim != 0:
        raise kernel_error(f"{what} must be scalar, but received {dims_str(value.shape)}")
    return as_bytes(value[()])


def _replace_all(input, pattern, rewrite, replace_global):  # noqa: A002 - TF's name
    compiled = _compile(as_bytes(pattern))
    rewrite = as_bytes(rewrite).decode("utf-8", _TEXT)

    def one(s):
        text = s.decode("utf-8", _TEXT)
        return re2_syntax.replace(compiled, text, rewrite, replace_global).encode("utf-8",
                                                                                  _TEXT)
    return map_strings(one, input)


def _full_match_all(input, pattern):  # noqa: A002
    compiled = _compile(as_bytes(pattern))
    return map_strings(lambda s: re2_syntax.full_match(compiled, s.decode("utf-8", _TEXT)),
                       input, np.bool_)


def _regex_replace_kernel(input, pattern, rewrite, replace_global):  # noqa: A002
    pattern = _scalar(pattern, "Pattern")
    rewrite = _scalar(rewrite, "Rewrite")
    return _replace_all(input, pattern, rewrite, replace_global)


def _regex_full_match_kernel(input, pattern):  # noqa: A002
    return _full_match_all(input, _scalar(pattern, "Pattern"))


def _scalar_inputs_shape(*indices):
    def shape(op):
        for i in indices:
            with_rank(op.inputs[i].shape, 0)
        return op.inputs[0].shape
    return shape


def _input_shape(op):
    return op.inputs[0].shape


_NO_GRAD = dict(not_differentiable=True)
register(OpDef("RegexReplace", inputs=("input: string", "pattern: string", "rewrite: string"),
               outputs=("output: string",), attrs={"replace_global": True},
               shape=_scalar_inputs_shape(1, 2), host=_regex_replace_kernel, **_NO_GRAD))
register(OpDef("StaticRegexReplace", inputs=("input: string",), outputs=("output: string",),
               attrs={"pattern": "", "rewrite": "", "replace_global": True},
               shape=_input_shape, host=_replace_all, **_NO_GRAD))
register(OpDef("RegexFullMatch", inputs=("input: string", "pattern: string"),
               outputs=("output: bool",), shape=_scalar_inputs_shape(1),
               host=_regex_full_match_kernel, **_NO_GRAD))
register(OpDef("StaticRegexFullMatch", inputs=("input: string",), outputs=("output: bool",),
               attrs={"pattern": ""}, shape=_input_shape, host=_full_match_all,
               **_NO_GRAD))


def _is_text(value):
    return isinstance(value, (str, bytes))


@ragged_elementwise
def regex_full_match(input, pattern, name=None):  # noqa: A002
    """A bool tensor: whether each string matches the RE2 `pattern` as a whole."""
    if _is_text(pattern):
        return apply_op("StaticRegexFullMatch", name=name, input=input,
                        pattern=pattern)
    return apply_op("RegexFullMatch", name=name, input=input, pattern=pattern)


@ragged_elementwise
def regex_replace(input, pattern, rewrite, replace_global=True, name=None):  # noqa: A002
    """Replaces matches of the RE2 `pattern` in each string with `rewrite`, where \\0 to
    \\9 insert groups and \\\\ a backslash; only the first match unless
    `replace_global`."""
    if _is_text(pattern) and _is_text(rewrite):
        return apply_op("StaticRegexReplace", name=name, input=input,
                        pattern=pattern, rewrite=rewrite,
                        replace_global=bool(replace_global))
    return apply_op("RegexReplace", name=name, input=input, pattern=pattern, rewrite=rewrite,
                    replace_global=bool(replace_global))

