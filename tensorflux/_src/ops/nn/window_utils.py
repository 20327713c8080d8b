"""Helpers shared by the convolution and pooling families (conv_*.py, pool_*.py).

- TF's Python argument helpers: `get_sequence` (an int or a list of 1, N or N+2 values
  becomes the N+2-long attr list, in the data format's order) and `convert_padding`
  (a list of [before, after] pairs becomes padding="EXPLICIT" + explicit_paddings).
- `apply_checked`: checks string and list(int) attrs as TF's op_def_library does, with
  its messages ("Attr 'padding' of 'Conv2D' Op passed string ..."), then `apply_op`.
- Layouts: which axes of a `data_format` are batch, channel and spatial.
- Window sizes: `windowed_output_dim` is TF's shape-function rule (with its "Negative
  dimension size ..." error); `window_pads` is what the kernels compute at run time
  (SAME pads `max((out - 1) * stride + eff_k - in, 0)`, the extra one after), shared by
  the lowerings so that graph-time and run-time sizes agree.
"""

from __future__ import annotations

import collections.abc

import numpy as np

from tensorflux._src.framework import errors
from tensorflux._src.framework.tensor_shape import Dimension
from tensorflux._src.ops.op_builder import apply_op

PADDINGS = ("SAME", "VALID")
PADDINGS_EXPLICIT = ("SAME", "VALID", "EXPLICIT")
FORMATS_2D = ("NHWC", "NCHW")
FORMATS_3D = ("NDHWC", "NCDHW")

# Attr rules per op type, registered next to each OpDef: a tuple of strings is an
# enum attr, an int is a list(int) attr with that minimum length, `bool` a bool attr.
ATTR_RULES: dict[str, dict] = {}


# -- TF's Python-side argument helpers -------------------------------------------------------
def get_sequence(value, n, channel_index, name):
    """TF's `_get_sequence`: an int, or a list of 1, n or n + 2 ints, as n + 2 attr values."""
    if value is None:
        value = [1]
    elif not isinstance(value, collections.abc.Sized):
        value = [value]
    current_n = len(value)
    if current_n == n + 2:
        return [int(v) for v in value]
    if current_n == 1:
        value = [value[0]] * n
    elif current_n == n:
        value = list(value)
    else:
        raise ValueError(f"{name} should be of length 1, {n} or {n + 2} but was {current_n}")
    value = [int(v) for v in value]
    return [1, 1] + value if channel_index == 1 else [1] + value + [1]


def convert_padding(padding):
    """TF's `convert_padding`: returns (padding, explicit_paddings) for the op attrs."""
    explicit_paddings = []
    if padding == "EXPLICIT":
        raise ValueError('"EXPLICIT" is not a valid value for the padding parameter. To use '
                         'explicit padding, the padding parameter must be a list.')
    if isinstance(padding, (list, tuple)):
        for i, dim_paddings in enumerate(padding):
            if not isinstance(dim_paddings, (list, tuple)):
                raise ValueError(f"When padding is a list, each element of padding must be a "
                                 f"list/tuple of size 2. Element with index {i} of padding is "
                                 f"not a list/tuple")
            if len(dim_paddings) != 2:
                raise ValueError(f"When padding is a list, each element of padding must be a "
                                 f"list/tuple of size 2. Element with index {i} of padding has "
                                 f"size {len(dim_paddings)}")
            explicit_paddings.extend(int(p) for p in dim_paddings)
        if len(padding) != 4:
            raise ValueError(f"When padding is a list, it must be of size 4. Got padding of "
                             f"size: {len(padding)}")
        padding = "EXPLICIT"
    return padding, explicit_paddings


# -- attr checks, as op_def_library makes them ---------------------------------------------
def _check_attr(op_type, key, value, rule):
    if rule is bool:
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"Expected bool for argument '{key}' not {value!r}.")
        return bool(value)
    if isinstance(rule, tuple):  # an enum of strings
        if isinstance(value, bytes):
            value = value.decode()
        if not isinstance(value, str):
            raise TypeError(f"Expected string for argument '{key}' not {value!r}.")
        if value not in rule:
            allowed = '", "'.join(rule)
            raise ValueError(f"Attr '{key}' of '{op_type}' Op passed string '{value}' not in: "
                             f'"{allowed}".')
        return value
    # list(int) with a minimum length
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, np.ndarray)):
        raise TypeError(f"Expected list for attr {key}")
    out = []
    for v in value:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"Expected int for argument '{key}' not {v!r}.")
        out.append(int(v))
    if len(out) < rule:
        raise ValueError(f"Attr '{key}' of '{op_type}' Op passed list of length {len(out)} "
                         f"less than minimum {rule}.")
    return out


def apply_checked(op_type, name=None, **kwargs):
    """`apply_op` after TF's attr checks for `op_type` (see ATTR_RULES)."""
    for key, rule in ATTR_RULES.get(op_type, {}).items():
        if kwargs.get(key) is not None:
            kwargs[key] = _check_attr(op_type, key, kwargs[key], rule)
        elif key in kwargs:
            del kwargs[key]  # None: the attr's default
    return apply_op(op_type, name=name, **kwargs)


# -- layouts -----------------------------------------------------------------------------------
def channels_first(data_format) -> bool:
    return data_format.startswith("NC")


def spatial_axes(data_format, rank):
    return list(range(2, rank)) if channels_first(data_format) else list(range(1, rank - 1))


def channel_axis(data_format, rank):
    return 1 if channels_first(data_format) else rank - 1


def make_shape(data_format, batch, spatial, channels):
    """Dims in the order of `data_format` from batch, spatial dims and channels."""
    if channels_first(data_format):
        return [batch, channels] + list(spatial)
    return [batch] + list(spatial) + [channels]


# -- window sizes ------------------------------------------------------------------------------
def check_valid_padding(padding, explicit_paddings, rank, data_format):
    """TF's CheckValidPadding (shape functions of ops with explicit_paddings)."""
    if padding == "EXPLICIT":
        if len(explicit_paddings) != 2 * rank:
            raise ValueError(f"explicit_paddings attribute must contain {2 * rank} values, but "
                             f"got: {len(explicit_paddings)}")
        if any(p < 0 for p in explicit_paddings):
            raise ValueError("All elements of explicit_paddings must be nonnegative")
        for axis in (0, channel_axis(data_format, rank)):
            if explicit_paddings[2 * axis] or explicit_paddings[2 * axis + 1]:
                raise ValueError("Nonzero explicit padding in the batch or depth dimensions is "
                                 "not supported")
    elif explicit_paddings:
        raise ValueError("explicit_paddings attribute must be empty if the padding attribute "
                         "is not EXPLICIT")


def explicit_pads(explicit_paddings, axis):
    if not explicit_paddings:
        return 0, 0
    return explicit_paddings[2 * axis], explicit_paddings[2 * axis + 1]


def windowed_output_dim(in_dim, k_dim, dilation, stride, padding, before=0, after=0):
    """TF's GetWindowedOutputSizeFromDimsV2: one output dim (None when unknown)."""
    if stride <= 0:
        raise ValueError(f"Stride must be > 0, but got {stride}")
    if dilation < 1:
        raise ValueError(f"Dilation rate must be >= 1, but got {dilation}")
    size = in_dim.value if isinstance(in_dim, Dimension) else in_dim
    k = k_dim.value if isinstance(k_dim, Dimension) else k_dim
    if padding == "SAME":  # ceil(in / stride), whatever the window
        return None if size is None else (size + stride - 1) // stride
    if size is None or k is None:
        return None
    eff = (k - 1) * dilation + 1
    if padding == "EXPLICIT":
        size += before + after
    if size < eff:
        raise ValueError(f"Negative dimension size caused by subtracting {eff} from {size}")
    return (size - eff + stride) // stride


def _c_div(a, b):
    """C++ integer division (truncates toward zero), as TF's kernels compute sizes."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def window_pads(in_size, k, dilation, stride, padding, before=0, after=0):
    """(pad_before, pad_after, out_size) as TF's kernels compute them at run time."""
    if stride <= 0:
        raise errors.InvalidArgumentError(None, None, f"Stride must be > 0, but got {stride}")
    eff = (k - 1) * dilation + 1
    if padding == "SAME":
        out = _c_div(in_size + stride - 1, stride)
        total = max((out - 1) * stride + eff - in_size, 0)
        before, after = total // 2, total - total // 2
    else:
        if padding == "VALID":
            before = after = 0
        out = _c_div(in_size + before + after - eff + stride, stride)
    if out < 0:
        raise errors.InvalidArgumentError(
            None, None, f"Computed output size would be negative: {out} [input_size: "
            f"{in_size}, effective_filter_size: {eff}, stride: {stride}]")
    return before, after, out
