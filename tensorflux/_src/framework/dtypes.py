"""TF1's dtype set: `tf.float32`, `tf.int32`, ... with TF's names, enums and rules.

A DType is a small immutable record. Each has a numpy counterpart (bfloat16 comes from
ml_dtypes, strings are numpy object arrays of bytes) and a `_ref` twin that variables
report (`float32_ref`), as in TF1.
"""

from __future__ import annotations

import builtins

import ml_dtypes
import numpy as np

from tensorflux._src.framework.protos import SerializedDType
from tensorflux._src.framework.trace_type import SelfDescribingType

_REF_OFFSET = 100


class DType(SelfDescribingType):
    """A TensorFlow element type (`tf.float32`, `tf.int32`, ...)."""

    __slots__ = ("_enum", "_name", "_tf_name", "_np", "_np_dtype")

    def __init__(self, enum: int, name: str, tf_name: str, np_type):
        self._enum = enum
        self._name = name  # python-side name: "float32"
        self._tf_name = tf_name  # DataTypeString, used in runtime messages: "float"
        self._np = np_type
        self._np_dtype = np.dtype(np_type)  # compared against feeds on every run

    # -- identity ---------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def as_datatype_enum(self) -> int:
        return self._enum

    @property
    def _is_ref_dtype(self) -> bool:
        return self._enum > _REF_OFFSET

    @property
    def base_dtype(self) -> "DType":
        return _BY_ENUM[self._enum - _REF_OFFSET] if self._is_ref_dtype else self

    @property
    def _as_ref(self) -> "DType":
        return self if self._is_ref_dtype else _BY_ENUM[self._enum + _REF_OFFSET]

    @property
    def real_dtype(self) -> "DType":
        base = self.base_dtype
        return {complex64: float32, complex128: float64}.get(base, base)

    @property
    def as_numpy_dtype(self):
        return self.base_dtype._np

    # -- classification ---------------------------------------------------------
    @property
    def is_floating(self) -> bool:
        return self.base_dtype in _FLOATING

    @property
    def is_integer(self) -> bool:
        return self.base_dtype in _INTEGER

    @property
    def is_unsigned(self) -> bool:
        return self.base_dtype in (uint8, uint16, uint32, uint64, uint4, uint2, quint8, quint16)

    @property
    def is_complex(self) -> bool:
        return self.base_dtype in (complex64, complex128)

    @property
    def is_bool(self) -> bool:
        return self.base_dtype == bool

    @property
    def is_numpy_compatible(self) -> bool:
        return self.base_dtype not in (resource, variant)

    @property
    def is_quantized(self) -> bool:
        return self.base_dtype in _QUANTIZED

    @property
    def is_numeric(self) -> bool:
        return self.base_dtype not in (bool, string, resource, variant)

    @property
    def size(self) -> int:
        if self.base_dtype in (string, resource, variant):
            return 1
        return np.dtype(self.as_numpy_dtype).itemsize

    @property
    def min(self):
        """Smallest representable value (TF raises TypeError for bool/complex/string)."""
        base = self.base_dtype
        if base.is_quantized:
            raise TypeError(f"Cannot find minimum value of {self} with quantized type {base}.")
        if base.is_floating:
            return _finfo(base).min
        if base.is_integer:
            return ml_dtypes.iinfo(base.as_numpy_dtype).min
        raise TypeError(f"Cannot find minimum value of {self}.")

    @property
    def max(self):
        base = self.base_dtype
        if base.is_quantized:
            raise TypeError(f"Cannot find maximum value of {self} with quantized type {base}.")
        if base.is_floating:
            return _finfo(base).max
        if base.is_integer:
            return ml_dtypes.iinfo(base.as_numpy_dtype).max
        raise TypeError(f"Cannot find maximum value of {self}.")

    @property
    def limits(self):
        return self.min, self.max

    def is_compatible_with(self, other) -> bool:
        other = as_dtype(other)
        return self._enum in (other._enum, other.base_dtype._enum)

    # -- TF 2.x's TraceType protocol: a DType is a type that only matches itself ------
    def is_subtype_of(self, other) -> bool:
        return self == other

    def most_specific_common_supertype(self, types):
        return self if all(self == other for other in types) else None


    @classmethod
    def experimental_type_proto(cls):
        return SerializedDType

    @classmethod
    def experimental_from_proto(cls, proto):
        return as_dtype(proto.datatype)

    def experimental_as_proto(self):
        return SerializedDType(datatype=self._enum)

    # -- python protocol --------------------------------------------------------
    def __eq__(self, other):
        if isinstance(other, DType):
            return self._enum == other._enum
        if other is None:
            return False
        try:
            return self._enum == as_dtype(other)._enum
        except TypeError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return self._enum

    def __reduce__(self):
        return as_dtype, (self._name,)

    def __repr__(self):
        return "tf." + self._name

    def __str__(self):
        return f"<dtype: {self._name!r}>"


def _finfo(dt: DType):
    np_type = dt.as_numpy_dtype
    return np.finfo(np_type) if np_type in (np.float16, np.float32, np.float64) else \
        ml_dtypes.finfo(np_type)


# Enum values are TF's DataType proto numbers.
float16 = half = DType(19, "float16", "half", np.float16)
bfloat16 = DType(14, "bfloat16", "bfloat16", ml_dtypes.bfloat16)
float32 = DType(1, "float32", "float", np.float32)
float64 = double = DType(2, "float64", "double", np.float64)
int8 = DType(6, "int8", "int8", np.int8)
int16 = DType(5, "int16", "int16", np.int16)
int32 = DType(3, "int32", "int32", np.int32)
int64 = DType(9, "int64", "int64", np.int64)
uint8 = DType(4, "uint8", "uint8", np.uint8)
uint16 = DType(17, "uint16", "uint16", np.uint16)
uint32 = DType(22, "uint32", "uint32", np.uint32)
uint64 = DType(23, "uint64", "uint64", np.uint64)
bool = DType(10, "bool", "bool", np.bool_)  # noqa: A001 - TF's public name
string = DType(7, "string", "string", np.object_)
complex64 = DType(8, "complex64", "complex64", np.complex64)
complex128 = DType(18, "complex128", "complex128", np.complex128)
resource = DType(20, "resource", "resource", np.object_)
variant = DType(21, "variant", "variant", np.object_)
# Quantized types: numpy sees them as one-field records, as TF's Python layer does. They
# name the dtypes of TF's quantized kernels, which tensorflux does not have: no op accepts
# them (api_exclusions.txt lists the quantized ops).
qint8 = DType(11, "qint8", "qint8", np.dtype([("qint8", np.int8)]))
quint8 = DType(12, "quint8", "quint8", np.dtype([("quint8", np.uint8)]))
qint32 = DType(13, "qint32", "qint32", np.dtype([("qint32", np.int32)]))
qint16 = DType(15, "qint16", "qint16", np.dtype([("qint16", np.int16)]))
quint16 = DType(16, "quint16", "quint16", np.dtype([("quint16", np.uint16)]))
# Narrow types of later TF versions (`tf.dtypes.experimental`), ml_dtypes' numpy types.
# 24-30 are TF's DataType numbers; TF has not numbered the last four, so they take the
# next free ones (they never leave this process in a proto TF reads).
float8_e5m2 = DType(24, "float8_e5m2", "float8_e5m2", ml_dtypes.float8_e5m2)
float8_e4m3fn = DType(25, "float8_e4m3fn", "float8_e4m3fn", ml_dtypes.float8_e4m3fn)
float8_e4m3fnuz = DType(26, "float8_e4m3fnuz", "float8_e4m3fnuz", ml_dtypes.float8_e4m3fnuz)
float8_e4m3b11fnuz = DType(27, "float8_e4m3b11fnuz", "float8_e4m3b11fnuz",
                           ml_dtypes.float8_e4m3b11fnuz)
float8_e5m2fnuz = DType(28, "float8_e5m2fnuz", "float8_e5m2fnuz", ml_dtypes.float8_e5m2fnuz)
int4 = DType(29, "int4", "int4", ml_dtypes.int4)
uint4 = DType(30, "uint4", "uint4", ml_dtypes.uint4)
int2 = DType(31, "int2", "int2", ml_dtypes.int2)
uint2 = DType(32, "uint2", "uint2", ml_dtypes.uint2)
float4_e2m1fn = DType(33, "float4_e2m1fn", "float4_e2m1fn", ml_dtypes.float4_e2m1fn)

_QUANTIZED = frozenset((qint8, quint8, qint16, quint16, qint32))
_NARROW = (float8_e5m2, float8_e4m3fn, float8_e4m3fnuz, float8_e4m3b11fnuz, float8_e5m2fnuz,
           int4, uint4, int2, uint2, float4_e2m1fn)
_BASE = (float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, uint16,
         uint32, uint64, bool, string, complex64, complex128, resource, variant,
         *sorted(_QUANTIZED, key=lambda d: d._enum), *_NARROW)
_BY_ENUM = {d._enum: d for d in _BASE}
for _d in _BASE:
    _ref = DType(_d._enum + _REF_OFFSET, _d._name + "_ref", _d._tf_name + "_ref", _d._np)
    _BY_ENUM[_ref._enum] = _ref
    globals()[_ref._name] = _ref

_FLOATING = frozenset((float16, bfloat16, float32, float64, float8_e5m2, float8_e4m3fn,
                       float8_e4m3fnuz, float8_e4m3b11fnuz, float8_e5m2fnuz, float4_e2m1fn))
_INTEGER = frozenset((int8, int16, int32, int64, uint8, uint16, uint32, uint64, int4, uint4,
                      int2, uint2))
QUANTIZED_DTYPES = frozenset(_QUANTIZED | {d._as_ref for d in _QUANTIZED})

# Groups used by op records to declare what each type attr accepts.
FLOATS = (float16, bfloat16, float32, float64)
COMPLEX = (complex64, complex128)
INTS = (int8, int16, int32, int64, uint8, uint16, uint32, uint64)
SIGNED_INTS = (int8, int16, int32, int64)
INDEX = (int32, int64)
REAL = FLOATS + INTS
NUMBERS = REAL + COMPLEX
FLOAT_COMPLEX = FLOATS + COMPLEX
ALL = NUMBERS + (bool, string)

_BY_NAME = {d._name: d for d in _BY_ENUM.values()}
_BY_NAME.update({"half": float16, "float": float32, "double": float64})
_BY_NP = {np.dtype(d._np): d for d in _BASE if d._np is not np.object_}
_BY_PY = {builtins.float: float32, builtins.bool: bool, builtins.int: int32,
          builtins.complex: complex128, builtins.str: string, builtins.bytes: string,
          builtins.object: string}


def as_dtype(type_value) -> DType:
    """Converts a DType, name, numpy dtype or Python type into a `DType` (TF's rules)."""
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str) and type_value in _BY_NAME:
        return _BY_NAME[type_value]
    if isinstance(type_value, int) and not isinstance(type_value, builtins.bool):
        if type_value in _BY_ENUM:
            return _BY_ENUM[type_value]
    if type_value in _BY_PY:
        return _BY_PY[type_value]
    try:
        np_dtype = np.dtype(type_value)
    except TypeError:
        np_dtype = None
    if np_dtype is not None:
        if np_dtype in _BY_NP:
            return _BY_NP[np_dtype]
        if np_dtype.kind in "OSU":
            return string
    raise TypeError(f"Cannot convert value {type_value!r} to a TensorFlow DType.")


__all__ = [
    "DType", "as_dtype", "float16", "half", "bfloat16", "float32", "float64", "double",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool",
    "string", "complex64", "complex128", "resource", "variant", "qint8", "quint8", "qint16",
    "quint16", "qint32", "QUANTIZED_DTYPES",
]
