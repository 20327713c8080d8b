"""Argument normalization shared by the conv and pooling layers (TF1's conv_utils)."""

from __future__ import annotations


def normalize_tuple(value, n, name):
    """An int or an iterable of n ints -> a tuple of n ints (TF's error wording)."""
    if isinstance(value, int):
        return (value,) * n
    try:
        value_tuple = tuple(value)
    except TypeError:
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: "
                         f"{value}") from None
    if len(value_tuple) != n:
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: "
                         f"{value}")
    for single in value_tuple:
        try:
            int(single)
        except (ValueError, TypeError):
            raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. "
                             f"Received: {value} including element {single} of type "
                             f"{type(single)}") from None
    return tuple(int(v) for v in value_tuple)


def normalize_padding(value):
    padding = value.lower() if isinstance(value, str) else value
    if padding not in {"valid", "same", "causal"}:
        raise ValueError('The `padding` argument must be one of "valid", "same" (or "causal", '
                         f'only for `Conv1D). Received: {padding}')
    return padding


def normalize_data_format(value):
    data_format = (value or "channels_last").lower()
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError('The `data_format` argument must be one of "channels_first", '
                         f'"channels_last". Received: {value}')
    return data_format


def convert_data_format(data_format, ndim):
    """'channels_last' / 'channels_first' -> TF's NWC/NHWC/NDHWC or NCW/NCHW/NCDHW."""
    spatial = {3: "W", 4: "HW", 5: "DHW"}
    if ndim not in spatial:
        raise ValueError(f"Input rank not supported: {ndim}")
    if data_format == "channels_last":
        return "N" + spatial[ndim] + "C"
    if data_format == "channels_first":
        return "NC" + spatial[ndim]
    raise ValueError(f"Invalid data_format: {data_format}")


def conv_output_length(input_length, filter_size, padding, stride, dilation=1):
    """Output length of a convolution or pooling along one axis (None stays None)."""
    if input_length is None:
        return None
    dilated = filter_size + (filter_size - 1) * (dilation - 1)
    if padding in ("same", "causal"):
        length = input_length
    elif padding == "valid":
        length = input_length - dilated + 1
    else:  # "full"
        length = input_length + dilated - 1
    return (length + stride - 1) // stride


def deconv_output_length(input_length, filter_size, padding, output_padding=None, stride=0,
                         dilation=1):
    """Output length of a transposed convolution along one axis (TF1's formula)."""
    if input_length is None:
        return None
    filter_size = filter_size + (filter_size - 1) * (dilation - 1)
    if output_padding is None:
        if padding == "valid":
            return input_length * stride + max(filter_size - stride, 0)
        if padding == "full":
            return input_length * stride - (stride + filter_size - 2)
        return input_length * stride  # same
    pad = {"same": filter_size // 2, "valid": 0, "full": filter_size - 1}[padding]
    return (input_length - 1) * stride + filter_size - 2 * pad + output_padding
