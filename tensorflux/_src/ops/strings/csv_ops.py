"""tf.io.decode_csv / tf.decode_csv: the DecodeCSV host record, after TF1.15's kernel.

Each record is split into fields at `field_delim` (one byte); with use_quote_delim a
field may be quoted ("a,b" and "" for a quote inside), CR and LF between fields are
skipped, and a record ending in the delimiter has an empty last field. Empty fields (or
fields equal to `na_value`) take the column's default; a column whose default is empty
is required. Numbers parse as tf.strings.to_number does (TF's safe_strto32/strtof),
and each error names the field and the record, as TF's do.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.strings.string_ops import parse_float, parse_int
from tensorflux._src.ops.strings.string_util import as_bytes

__all__ = ["decode_csv"]

_TYPES = (_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64, _dtypes.string)
_WORD = {_dtypes.float32: "float", _dtypes.float64: "double", _dtypes.int32: "int32",
         _dtypes.int64: "int64"}


def _extract_fields(record: bytes, delim: int, use_quote: bool, select_cols):
    """TF's ExtractFields: the (selected) fields of one record."""
    quote, fields, i, n = ord('"'), [], 0, len(record)
    parsed, selector = 0, 0
    if not record:
        return fields

    def include():
        return not select_cols or select_cols[selector] == parsed

    while i < n:
        if record[i] in (0x0A, 0x0D):
            i += 1
            continue
        keep = include()
        quoted = use_quote and record[i] == quote
        i += quoted
        field = bytearray()
        if not quoted:
            while i < n and record[i] != delim:
                if (use_quote and record[i] == quote) or record[i] in (0x0A, 0x0D):
                    raise kernel_error("Unquoted fields cannot have quotes/CRLFs inside")
                field.append(record[i])
                i += 1
            i += 1
        else:
            while i < n - 1 and (record[i] != quote or record[i + 1] != delim):
                if record[i] != quote:
                    field.append(record[i])
                    i += 1
                else:
                    if record[i + 1] != quote:
                        raise kernel_error("Quote inside a string has to be escaped by "
                                           "another quote")
                    field.append(quote)
                    i += 2
            if not (i < n and record[i] == quote and (i == n - 1 or record[i + 1] == delim)):
                raise kernel_error("Quoted field has to end with quote followed by delim or "
                                   "end")
            i += 2
        parsed += 1
        if keep:
            fields.append(bytes(field))
            selector += 1
            if select_cols and selector == len(select_cols):
                return fields
    if include() and record[-1] == delim:
        fields.append(b"")
    return fields


def _dtype_of(value):
    value = np.asarray(value)
    return _dtypes.string if value.dtype == object else _dtypes.as_dtype(value.dtype)


def _decode_csv_kernel(records, *record_defaults, field_delim, use_quote_delim, na_value,
                       select_cols):
    OUT_TYPE = [_dtype_of(d) for d in record_defaults]  # noqa: N806 - TF's attr name
    select_cols = list(select_cols)
    if select_cols and len(select_cols) != len(OUT_TYPE):
        raise kernel_error("select_cols should match output size")
    if any(a >= b for a, b in zip(select_cols, select_cols[1:])):
        raise kernel_error("select_cols should be strictly increasing indices")
    if select_cols and select_cols[0] < 0:
        raise kernel_error("select_cols should be non-negative indices")
    delim = as_bytes(field_delim)
    if len(delim) != 1:
        raise kernel_error("field_delim should be only 1 char")
    for i, default in enumerate(record_defaults):
        if np.ndim(default) > 1:
            raise kernel_error("Each record default should be at most rank 1")
        if np.size(default) >= 2:
            raise kernel_error(f"There should only be 1 default per field but field {i} has "
                               f"{np.size(default)}")
    records = np.asarray(records, object)
    na = as_bytes(na_value)
    columns = [[] for _ in OUT_TYPE]
    for r, record in enumerate(records.reshape(-1)):
        fields = _extract_fields(as_bytes(record), delim[0], use_quote_delim, select_cols)
        if len(fields) != len(OUT_TYPE):
            raise kernel_error(f"Expect {len(OUT_TYPE)} fields but have {len(fields)} in "
                               f"record {r}")
        for f, (dtype, field) in enumerate(zip(OUT_TYPE, fields)):
            if not field or field == na:
                default = np.asarray(record_defaults[f]).reshape(-1)
                if default.size != 1:
                    raise kernel_error(f"Field {f} is required but missing in record {r}!")
                columns[f].append(default[0])
                continue
            if dtype == _dtypes.string:
                columns[f].append(field)
                continue
            parse = parse_float if dtype.is_floating else parse_int
            value = parse(field, dtype.as_numpy_dtype)
            if value is None:
                raise kernel_error(f"Field {f} in record {r} is not a valid {_WORD[dtype]}: "
                                   f"{field.decode('utf-8', 'replace')}")
            columns[f].append(value)
    outputs = []
    for dtype, column in zip(OUT_TYPE, columns):
        out = np.empty(len(column), object if dtype == _dtypes.string else dtype.as_numpy_dtype)
        out[:] = [as_bytes(v) for v in column] if dtype == _dtypes.string else column
        outputs.append(out.reshape(records.shape))
    return outputs


def _decode_csv_shape(op):
    for default in op.inputs[1:]:
        shape = default.shape
        if shape.ndims is not None and shape.ndims > 1:
            raise ValueError(f"Shape must be at most rank 1 but is rank {shape.ndims}")
        if shape.ndims == 1 and shape.dims[0].value is not None and shape.dims[0].value > 1:
            raise ValueError("Shape of a default must be a length-0 or length-1 vector, or a "
                             "scalar.")
    return [op.inputs[0].shape] * (len(op.inputs) - 1)


register(OpDef("DecodeCSV", inputs=("records: string", "record_defaults: list(OUT_TYPE)"),
               outputs=("output: list(OUT_TYPE)",),
               attrs={"field_delim": ",", "use_quote_delim": True, "na_value": "",
                      "select_cols": ()},
               shape=_decode_csv_shape, host=_decode_csv_kernel, not_differentiable=True))


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None,
               na_value="", select_cols=None):
    """Converts CSV records (a string tensor) to one tensor per column, each the shape
    of `records`. `record_defaults` gives each column's type and default: [] for a
    required column, [value] otherwise. `select_cols` picks columns (strictly
    increasing indices), one default each."""
    if select_cols is not None and any(select_cols[i] >= select_cols[i + 1]
                                       for i in range(len(select_cols) - 1)):
        raise ValueError("select_cols is not strictly increasing.")
    if select_cols is not None and select_cols[0] < 0:
        raise ValueError("select_cols contains negative values.")
    if select_cols is not None and len(select_cols) != len(record_defaults):
        raise ValueError("Length of select_cols and record_defaults do not match.")
    defaults = [d if isinstance(d, Tensor) else convert_to_tensor(d)
                for d in record_defaults]
    for d in defaults:
        if d.dtype.base_dtype not in _TYPES:
            raise TypeError(f"Value passed to parameter 'record_defaults' has DataType "
                            f"{d.dtype.base_dtype.name} not in list of allowed values: "
                            f"{', '.join(t.name for t in _TYPES)}")
    return apply_op("DecodeCSV", name=name, records=records, record_defaults=defaults,
                    field_delim=field_delim, use_quote_delim=bool(use_quote_delim),
                    na_value=na_value,
                    select_cols=tuple(int(c) for c in (select_cols or ())))
