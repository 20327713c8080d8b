"""TF1's dtype set: `tf.float32`, `tf.int32`, ... with TF's names, enums and rules.

A DType is a small immutable record. Each has a numpy counterpart (bfloat16 comes from
ml_dtypes, strings are numpy object arrays of bytes) and a `_ref` twin that variables
report (`float32_ref`), as in TF1.
"""

from __future__ import annotations

import builtins

import ml_dtypes
import numpy as np

_REF_OFFSET = 100


class DType:
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
        return self.base_dtype in (uint8, uint16, uint32, uint64)

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
        return False

    @property
    def size(self) -> int:
        if self.base_dtype in (string, resource, variant):
            return 1
        return np.dtype(self.as_numpy_dtype).itemsize

    @property
    def min(self):
        """Smallest representable value (TF raises TypeError for bool/complex/string)."""
        base = self.base_dtype
        if base.is_floating:
            return _finfo(base).min
        if base.is_integer:
            return np.iinfo(base.as_numpy_dtype).min
        raise TypeError(f"Cannot find minimum value of {self}.")

    @property
    def max(self):
        base = self.base_dtype
        if base.is_floating:
            return _finfo(base).max
        if base.is_integer:
            return np.iinfo(base.as_numpy_dtype).max
        raise TypeError(f"Cannot find maximum value of {self}.")

    @property
    def limits(self):
        return self.min, self.max

    def is_compatible_with(self, other) -> bool:
        other = as_dtype(other)
        return self._enum in (other._enum, other.base_dtype._enum)

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
    return ml_dtypes.finfo(dt.as_numpy_dtype) if dt == bfloat16 else np.finfo(dt.as_numpy_dtype)


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

_BASE = (float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, uint16,
         uint32, uint64, bool, string, complex64, complex128, resource, variant)
_BY_ENUM = {d._enum: d for d in _BASE}
for _d in _BASE:
    _ref = DType(_d._enum + _REF_OFFSET, _d._name + "_ref", _d._tf_name + "_ref", _d._np)
    _BY_ENUM[_ref._enum] = _ref
    globals()[_ref._name] = _ref

_FLOATING = frozenset((float16, bfloat16, float32, float64))
_INTEGER = frozenset((int8, int16, int32, int64, uint8, uint16, uint32, uint64))

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
    "string", "complex64", "complex128", "resource", "variant",
]
