"""Static shapes with unknown dimensions: TF1's `Dimension` and `TensorShape`.

`TensorShape(None)` has unknown rank; `TensorShape([None, 3])` has rank 2 and an unknown
first dimension. They print as TF1 does: `<unknown>`, `()`, `(3,)`, `(?, 3)`.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework.protos import TensorShapeProto
from tensorflux._src.framework.trace_type import SelfDescribingType


class Dimension:
    """One dimension of a shape: an int, or None when unknown."""

    __slots__ = ("_value",)

    def __init__(self, value):
        if isinstance(value, Dimension):
            value = value.value
        if value is None:
            self._value = None
            return
        if isinstance(value, (bool, np.bool_)) or not hasattr(value, "__index__"):
            raise TypeError(f"Dimension value must be integer or None or have an __index__ "
                            f"method, got value '{value!r}' with type '{type(value)}'")
        self._value = int(value.__index__())
        if self._value < 0:
            raise ValueError(f"Dimension {self._value} must be >= 0")

    @property
    def value(self):
        return self._value

    def __repr__(self):
        return f"Dimension({self._value!r})"

    def __str__(self):
        return "?" if self._value is None else str(self._value)

    def __int__(self):
        return self._value

    def __index__(self):
        return self._value

    def __hash__(self):
        return hash(self._value)

    def __eq__(self, other):
        other = _as_dimension_or_none(other)
        if other is NotImplemented:
            return NotImplemented
        if self._value is None or other.value is None:
            return None
        return self._value == other.value

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is None or eq is NotImplemented else not eq

    def is_compatible_with(self, other) -> bool:
        other = as_dimension(other)
        return self._value is None or other.value is None or self._value == other.value

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {other} are not compatible")

    def merge_with(self, other) -> "Dimension":
        other = as_dimension(other)
        self.assert_is_compatible_with(other)
        return Dimension(self._value if self._value is not None else other.value)

    # Arithmetic propagates unknowns, as in TF.
    def _arith(self, other, fn):
        other = _as_dimension_or_none(other)
        if other is NotImplemented:
            return NotImplemented
        if self._value is None or other.value is None:
            return Dimension(None)
        return Dimension(fn(self._value, other.value))

    def __add__(self, other):
        return self._arith(other, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, other):
        return self._arith(other, lambda a, b: a - b)

    def __rsub__(self, other):
        return self._arith(other, lambda a, b: b - a)

    def __mul__(self, other):
        return self._arith(other, lambda a, b: a * b)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        return self._arith(other, lambda a, b: a // b)

    def __rfloordiv__(self, other):
        return self._arith(other, lambda a, b: b // a)

    def __mod__(self, other):
        return self._arith(other, lambda a, b: a % b)

    def _compare(self, other, fn):
        other = as_dimension(other)
        if self._value is None or other.value is None:
            return None
        return fn(self._value, other.value)

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)


def _as_dimension_or_none(value):
    try:
        return as_dimension(value)
    except (TypeError, ValueError):
        return NotImplemented


def as_dimension(value) -> Dimension:
    return value if isinstance(value, Dimension) else Dimension(value)


def dimension_value(dim):
    """The int (or None) of a Dimension or int, as `tf.compat.dimension_value`."""
    return dim.value if isinstance(dim, Dimension) else dim


class TensorShape(SelfDescribingType):
    """The static shape of a tensor; rank and dimensions may be unknown."""

    __slots__ = ("_dims",)

    def __init__(self, dims):
        if dims is None:
            self._dims = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif isinstance(dims, (str, bytes)):
            raise TypeError(f"A string has ambiguous TensorShape, please wrap in a list or "
                            f"convert to an int: {dims!r}")
        else:
            try:
                items = iter(dims)
            except TypeError:
                items = iter([dims])  # a scalar int means a vector of that length
            self._dims = tuple(as_dimension(d) for d in items)

    # -- accessors ---------------------------------------------------------------
    @property
    def dims(self):
        return None if self._dims is None else list(self._dims)

    @property
    def ndims(self):
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def as_list(self):
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return [d.value for d in self._dims]

    def as_tuple_or_none(self):
        """The dims as a tuple of ints/None, or None when the rank is unknown."""
        return None if self._dims is None else tuple(d.value for d in self._dims)

    def is_fully_defined(self) -> bool:
        return self._dims is not None and all(d.value is not None for d in self._dims)

    def assert_is_fully_defined(self):
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        return int(np.prod([d.value for d in self._dims], dtype=np.int64))

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __bool__(self):
        return self._dims is not None

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key):
        if self._dims is not None:
            if isinstance(key, slice):
                return TensorShape(self._dims[key])
            return self._dims[key]
        if isinstance(key, slice):
            start, stop = key.start, key.stop
            if key.step not in (None, 1) or (start or 0) < 0 or (stop is not None and stop < 0):
                return unknown_shape()
            return unknown_shape(None if stop is None else stop - (start or 0))
        return Dimension(None)

    # -- compatibility -----------------------------------------------------------
    def is_compatible_with(self, other) -> bool:
        if type(other) is tuple and self._dims is not None and \
                all(type(n) is int for n in other):
            # A concrete array shape (host kernels check every output against shape
            # inference, per dataset element): compared without building a TensorShape.
            return len(self._dims) == len(other) and all(
                d.value is None or d.value == n for d, n in zip(self._dims, other))
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a.is_compatible_with(b) for a, b in zip(self._dims, other._dims))

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def merge_with(self, other) -> "TensorShape":
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        try:
            self.assert_same_rank(other)
            return TensorShape([a.merge_with(b) for a, b in zip(self._dims, other._dims)])
        except ValueError:
            raise ValueError(f"Shapes {self} and {other} are not compatible") from None

    def most_specific_compatible_shape(self, other) -> "TensorShape":
        other = as_shape(other)
        if self._dims is None or other._dims is None or len(self) != len(other):
            return unknown_shape()
        return TensorShape([a.value if a.value == b.value else None
                            for a, b in zip(self._dims, other._dims)])

    def concatenate(self, other) -> "TensorShape":
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return unknown_shape()
        return TensorShape(self._dims + other._dims)

    def assert_same_rank(self, other):
        other = as_shape(other)
        if self.ndims is not None and other.ndims is not None and self.ndims != other.ndims:
            raise ValueError(f"Shapes {self} and {other} must have the same rank")

    def assert_has_rank(self, rank):
        if self.ndims not in (None, rank):
            raise ValueError(f"Shape {self} must have rank {rank}")

    def with_rank(self, rank) -> "TensorShape":
        try:
            return self.merge_with(unknown_shape(rank))
        except ValueError:
            raise ValueError(f"Shape {self} must have rank {rank}") from None

    def with_rank_at_least(self, rank) -> "TensorShape":
        if self.ndims is not None and self.ndims < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def with_rank_at_most(self, rank) -> "TensorShape":
        if self.ndims is not None and self.ndims > rank:
            raise ValueError(f"Shape {self} must have rank at most {rank}")
        return self

    # -- TensorShapeProto ---------------------------------------------------------
    def as_proto(self):
        """This shape as TF's TensorShapeProto (-1 for an unknown dimension)."""
        if self._dims is None:
            return TensorShapeProto(unknown_rank=True)
        return TensorShapeProto(dim=[TensorShapeProto.Dim(size=-1 if d.value is None
                                                          else d.value)
                                     for d in self._dims])

    @classmethod
    def experimental_type_proto(cls):
        return TensorShapeProto

    @classmethod
    def experimental_from_proto(cls, proto):
        if proto.unknown_rank:
            return unknown_shape()
        return cls([None if d.size == -1 else d.size for d in proto.dim])

    def experimental_as_proto(self):
        return self.as_proto()

    # -- TF 2.x's TraceType protocol: a shape matches the shapes at least as specific -
    def is_subtype_of(self, other) -> bool:
        other = as_shape(other)
        if other._dims is None:
            return True
        if self._dims is None or len(self._dims) != len(other._dims):
            return False
        return all(b.value is None or a.value == b.value
                   for a, b in zip(self._dims, other._dims))

    def most_specific_common_supertype(self, others):
        result = self
        for other in others:
            result = result.most_specific_compatible_shape(other)
        return result


    def _coerce(self, value):
        return as_shape(value)

    # -- python protocol ---------------------------------------------------------
    def __eq__(self, other):
        try:
            other = as_shape(other)
        except TypeError:
            return NotImplemented
        return self._dims == other._dims

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash(self.as_tuple_or_none())

    def __reduce__(self):
        return TensorShape, (self.as_tuple_or_none(),)

    def __repr__(self):
        return "TensorShape(None)" if self._dims is None else f"TensorShape({list(self._dims)!r})"

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return f"({self._dims[0]},)"
        return "(" + ", ".join(str(d) for d in self._dims) + ")"

    def _bracket_str(self) -> str:
        """Shape as TF's runtime messages print it: `[?,3]`, or `?` for unknown rank."""
        if self._dims is None:
            return "?"
        return "[" + ",".join(str(d) for d in self._dims) + "]"


def as_shape(shape) -> TensorShape:
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank=None, ndims=None) -> TensorShape:
    rank = ndims if rank is None else rank
    return TensorShape(None if rank is None else [None] * rank)


def scalar() -> TensorShape:
    return TensorShape([])


def vector(length) -> TensorShape:
    return TensorShape([length])


def matrix(rows, cols) -> TensorShape:
    return TensorShape([rows, cols])
