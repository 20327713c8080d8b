"""Operators held by a dense or diagonal tensor: FullMatrix, Diag, LowerTriangular,
Identity, ScaledIdentity, Zeros."""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _d
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array.array_ops import concat, expand_dims, shape, stack
from tensorflux._src.ops.array.generator_ops import ones, zeros
from tensorflux._src.ops.control.control_ops import no_op
from tensorflux._src.ops.debug.check_ops import assert_equal, assert_none_equal, assert_positive
from tensorflux._src.ops.linalg.diag_ops import (matrix_band_part, matrix_diag, matrix_diag_part,
                                                 matrix_set_diag)
from tensorflux._src.ops.linalg.linalg_ops import eye, matmul
from tensorflux._src.ops.linalg.linear_operator.base import (LinearOperator, adjoint,
                                                             triangular_solve_with_broadcast)
from tensorflux._src.ops.math import complex_parts, math_ops
from tensorflux._src.ops.math.reduce_ops import reduce_prod, reduce_sum
from tensorflux._src.ops.shape_fns import static_value

__all__ = [
    "LinearOperatorDiag", "LinearOperatorFullMatrix", "LinearOperatorIdentity",
    "LinearOperatorLowerTriangular", "LinearOperatorScaledIdentity", "LinearOperatorZeros",
]

_ALLOWED = (_d.float16, _d.float32, _d.float64, _d.complex64, _d.complex128)


def check_dtype(tensor, arg_name):
    if tensor.dtype.base_dtype not in _ALLOWED:
        allowed = "[" + ", ".join(f"tf.{d.name}" for d in _ALLOWED) + "]"
        raise TypeError(f"Argument {arg_name} must have dtype in {allowed}.  Found: "
                        f"{tensor.dtype.base_dtype.name}")


def assert_no_entries_with_modulus_zero(x, message=None):
    """An assert that no entry of x is 0 (in modulus)."""
    x = convert_to_tensor(x, name="x")
    if x.dtype.is_complex:
        x = math_ops.abs(x)
    return assert_none_equal(x, math_ops.cast(0, x.dtype), message=message)


class LinearOperatorFullMatrix(LinearOperator):
    """The operator given by a dense [batch of] matrices."""

    def __init__(self, matrix, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorFullMatrix"):
        with _graph.name_scope(name, values=[matrix]):
            self._matrix = convert_to_tensor(matrix, name="matrix")
            check_dtype(self._matrix, "matrix")
            if self._matrix.shape.ndims is not None and self._matrix.shape.ndims < 2:
                raise ValueError(f"Argument matrix must have at least 2 dimensions.  Found: "
                                 f"{self._matrix}")
            super().__init__(self._matrix.dtype, graph_parents=[self._matrix],
                             is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite, is_square=is_square,
                             name=name)

    def _shape(self):
        return self._matrix.shape

    def _shape_tensor(self):
        return shape(self._matrix)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return matmul(self._matrix, x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _to_dense(self):
        return self._matrix


class LinearOperatorDiag(LinearOperator):
    """diag(d): matmul scales rows, solve divides, the determinant is a product."""

    def __init__(self, diag, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, name="LinearOperatorDiag"):
        with _graph.name_scope(name, values=[diag]):
            self._diag = convert_to_tensor(diag, name="diag")
            check_dtype(self._diag, "diag")
            if self._diag.shape.ndims is not None and self._diag.shape.ndims < 1:
                raise ValueError(f"Argument diag must have at least 1 dimension.  Found: "
                                 f"{self._diag}")
            if not self._diag.dtype.is_complex:
                if is_self_adjoint is False:
                    raise ValueError("A real diagonal operator is always self adjoint.")
                is_self_adjoint = True
            if not is_square:
                raise ValueError("Only square diagonal operators currently supported.")
            super().__init__(self._diag.dtype, graph_parents=[self._diag],
                             is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite, is_square=is_square,
                             name=name)

    @property
    def diag(self):
        return self._diag

    def _shape(self):
        d = self._diag.shape
        return d.concatenate(d[-1:]) if d.ndims is not None else TensorShape(None)

    def _shape_tensor(self):
        s = shape(self._diag)
        return concat([s, s[-1:]], 0)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        diag_term = math_ops.conj(self._diag) if adjoint else self._diag
        x = globals()["adjoint"](x) if adjoint_arg else x
        return expand_dims(diag_term, -1) * x

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        diag_term = math_ops.conj(self._diag) if adjoint else self._diag
        rhs = globals()["adjoint"](rhs) if adjoint_arg else rhs
        return rhs * expand_dims(1.0 / diag_term, -1)

    def _determinant(self):
        return reduce_prod(self._diag, axis=[-1])

    def _log_abs_determinant(self):
        log_det = reduce_sum(math_ops.log(math_ops.abs(self._diag)), axis=[-1])
        return log_det

    def _to_dense(self):
        return matrix_diag(self._diag)

    def _diag_part(self):
        return self._diag

    def _add_to_tensor(self, x):
        return matrix_set_diag(x, self._diag + matrix_diag_part(x))

    def _assert_non_singular(self):
        return assert_no_entries_with_modulus_zero(
            self._diag, message="Singular operator:  Diagonal contained zero values.")

    def _assert_positive_definite(self):
        return assert_positive(math_ops.real(self._diag),
                               message="This diagonal operator had non-positive entries")

    def _assert_self_adjoint(self):
        return assert_equal(complex_parts.imag(self._diag),
                            math_ops.cast(0, self._diag.dtype.real_dtype),
                            message="This diagonal operator contained non-zero imaginary "
                                    "values.")


class LinearOperatorLowerTriangular(LinearOperator):
    """The lower triangle of a [batch of] square matrices (the rest is ignored)."""

    def __init__(self, tril, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None,
                 name="LinearOperatorLowerTriangular"):
        if is_square is False:
            raise ValueError("Only square lower triangular operators supported at this "
                             "time.")
        with _graph.name_scope(name, values=[tril]):
            tril = convert_to_tensor(tril, name="tril")
            check_dtype(tril, "tril")
            if tril.shape.ndims is not None and tril.shape.ndims < 2:
                raise ValueError(f"Argument tril must have at least 2 dimensions.  Found: "
                                 f"{tril}")
            self._tril = matrix_band_part(tril, -1, 0)
            self._diag = matrix_diag_part(self._tril)
            super().__init__(tril.dtype, graph_parents=[tril], is_non_singular=is_non_singular,
                             is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite, is_square=True,
                             name=name)

    def _shape(self):
        return self._tril.shape

    def _shape_tensor(self):
        return shape(self._tril)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return matmul(self._tril, x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = globals()["adjoint"](rhs) if adjoint_arg else rhs
        return triangular_solve_with_broadcast(self._tril, rhs, lower=True, adjoint=adjoint)

    def _determinant(self):
        return reduce_prod(self._diag, axis=[-1])

    def _log_abs_determinant(self):
        return reduce_sum(math_ops.log(math_ops.abs(self._diag)), axis=[-1])

    def _to_dense(self):
        return self._tril

    def _diag_part(self):
        return self._diag

    def _assert_non_singular(self):
        return assert_no_entries_with_modulus_zero(
            self._diag, message="Singular operator:  Diagonal contained zero values.")


# -- operators defined by a size ----------------------------------------------------------------
def _static_int(value, what):
    """A non-negative int (or None when only a tensor knows it), with TF's checks."""
    if isinstance(value, Tensor):
        if value.shape.ndims not in (None, 0):
            raise ValueError(f"Argument {what} must be a 0-D Tensor.")
        if not value.dtype.is_integer:
            raise TypeError(f"Argument {what} must be integer type.  Found: {value}")
        value = static_value(value)
        if value is None:
            return None
    if np.ndim(value) != 0:
        raise ValueError(f"Argument {what} must be a 0-D Tensor.")
    if not isinstance(value, (int, np.integer)) and not (
            isinstance(value, np.ndarray) and value.dtype.kind in "iu"):
        raise TypeError(f"Argument {what} must be integer type.  Found: {value}")
    if int(value) < 0:
        raise ValueError(f"Argument {what} must be non-negative.  Found: {int(value)}")
    return int(value)


def _static_batch(batch_shape):
    if batch_shape is None:
        return []
    value = static_value(batch_shape) if isinstance(batch_shape, Tensor) else \
        np.asarray(batch_shape)
    if value is None:
        return None
    if value.ndim != 1:
        raise ValueError("Argument batch_shape must be a 1-D Tensor.")
    if value.size and value.dtype.kind not in "iu":
        raise TypeError(f"Argument batch_shape must be integer type.  Found: {batch_shape}")
    if (value < 0).any():
        raise ValueError(f"Argument batch_shape must be non-negative.  Found: {value}")
    return [int(v) for v in value]


class _SizedOperator(LinearOperator):
    """Shape bookkeeping for operators given by num_rows (and batch_shape)."""

    def _init_size(self, num_rows, batch_shape, num_columns=None):
        self._num_rows_static = _static_int(num_rows, "num_rows")
        self._num_rows = convert_to_tensor(num_rows, dtype=_d.int32, name="num_rows")
        if num_columns is None:
            self._num_columns_static, self._num_columns = self._num_rows_static, self._num_rows
        else:
            self._num_columns_static = _static_int(num_columns, "num_columns")
            self._num_columns = convert_to_tensor(num_columns, dtype=_d.int32,
                                                  name="num_columns")
        self._batch_shape_static = _static_batch(batch_shape)
        self._batch_shape_arg = None if batch_shape is None else convert_to_tensor(
            batch_shape, dtype=_d.int32, name="batch_shape")

    def _batch(self):
        return TensorShape(None) if self._batch_shape_static is None else \
            TensorShape(self._batch_shape_static)

    def _shape(self):
        return self._batch().concatenate([self._num_rows_static, self._num_columns_static])

    def _shape_tensor(self):
        matrix = [self._num_rows, self._num_columns]
        if self._batch_shape_arg is None:
            return stack(matrix)
        return concat([self._batch_shape_arg, stack(matrix)], 0)

    def _rows(self):
        return self._num_rows_static if self._num_rows_static is not None else self._num_rows

    def _batch_list(self):
        if self._batch_shape_static is not None:
            return self._batch_shape_static
        return self._batch_shape_arg

    def _possibly_broadcast_batch_shape(self, x):
        """x broadcast against the operator's batch shape, as TF's identity does."""
        if self._batch_shape_arg is None:
            return x
        batch = self._batch_list()
        special = zeros(concat([convert_to_tensor(batch, dtype=_d.int32), [1, 1]], 0)
                        if not isinstance(batch, list) else batch + [1, 1], dtype=self.dtype)
        return x + special


class LinearOperatorIdentity(_SizedOperator):
    """The identity: every method is free (matmul returns x, broadcast to the batch)."""

    def __init__(self, num_rows, batch_shape=None, dtype=None, is_non_singular=True,
                 is_self_adjoint=True, is_positive_definite=True, is_square=True,
                 assert_proper_shapes=False, name="LinearOperatorIdentity"):
        dtype = dtype or _d.float32
        self._assert_proper_shapes = assert_proper_shapes
        with _graph.name_scope(name):
            if not is_self_adjoint:
                raise ValueError("An identity operator is always self adjoint.")
            if not is_non_singular:
                raise ValueError("An identity operator is always non-singular.")
            if not is_positive_definite:
                raise ValueError("An identity operator is always positive-definite.")
            if not is_square:
                raise ValueError("An identity operator is always square.")
            super().__init__(dtype, is_non_singular=is_non_singular,
                             is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite, is_square=is_square,
                             name=name)
            self._init_size(num_rows, batch_shape)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = globals()["adjoint"](x) if adjoint_arg else x
        return self._possibly_broadcast_batch_shape(x)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint_arg=adjoint_arg)

    def _determinant(self):
        return ones(self._batch_list(), dtype=self.dtype)

    def _log_abs_determinant(self):
        return zeros(self._batch_list(), dtype=self.dtype)

    def _to_dense(self):
        return eye(self._rows(), batch_shape=self._batch_list() or None, dtype=self.dtype)

    def _diag_part(self):
        rows = self._rows()
        batch = self._batch_list()
        dims = batch + [rows] if isinstance(batch, list) and isinstance(rows, int) else \
            concat([convert_to_tensor(batch, dtype=_d.int32), [rows]], 0)
        return ones(dims, dtype=self.dtype)

    def _trace(self):
        return math_ops.cast(self._rows(), self.dtype) * ones(self._batch_list(),
                                                              dtype=self.dtype)

    def _add_to_tensor(self, x):
        return matrix_set_diag(x, matrix_diag_part(x) + 1)

    def _assert_non_singular(self):
        return _no_op()

    def _assert_positive_definite(self):
        return _no_op()

    def _assert_self_adjoint(self):
        return _no_op()


def _no_op():
    return no_op("assert_const")


class LinearOperatorScaledIdentity(_SizedOperator):
    """multiplier * I, with a [batch of] scalar multipliers."""

    def __init__(self, num_rows, multiplier, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, assert_proper_shapes=False,
                 name="LinearOperatorScaledIdentity"):
        self._assert_proper_shapes = assert_proper_shapes
        if not is_square:
            raise ValueError("A ScaledIdentity operator is always square.")
        with _graph.name_scope(name, values=[multiplier, num_rows]):
            self._multiplier = convert_to_tensor(multiplier, name="multiplier")
            check_dtype(self._multiplier, "multiplier")
            if not self._multiplier.dtype.is_complex:
                if is_self_adjoint is False:
                    raise ValueError("A real diagonal operator is always self adjoint.")
                is_self_adjoint = True
            super().__init__(self._multiplier.dtype, graph_parents=[self._multiplier],
                             is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite, is_square=is_square,
                             name=name)
            m = self._multiplier.shape
            batch = m.as_list() if m.is_fully_defined() else None
            self._init_size(num_rows, batch if batch is not None else shape(self._multiplier))
            self._batch_shape_static = batch

    @property
    def multiplier(self):
        return self._multiplier

    def _batch(self):
        return self._multiplier.shape

    def _matrix_multiplier(self, conj=False):
        m = math_ops.conj(self._multiplier) if conj else self._multiplier
        return m[..., None, None]

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = globals()["adjoint"](x) if adjoint_arg else x
        return x * self._matrix_multiplier(adjoint)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = globals()["adjoint"](rhs) if adjoint_arg else rhs
        return rhs / self._matrix_multiplier(adjoint)

    def _determinant(self):
        return self._multiplier ** math_ops.cast(self._rows(), self.dtype)

    def _log_abs_determinant(self):
        return math_ops.cast(self._rows(), self.dtype.real_dtype) * \
            math_ops.log(math_ops.abs(self._multiplier))

    def _to_dense(self):
        return self._matrix_multiplier() * eye(self._rows(), dtype=self.dtype)

    def _diag_part(self):
        return self._multiplier[..., None] * ones([self._rows()], dtype=self.dtype)

    def _trace(self):
        return self._multiplier * math_ops.cast(self._rows(), self.dtype)

    def _add_to_tensor(self, x):
        return matrix_set_diag(x, matrix_diag_part(x) + self._multiplier[..., None])

    def _assert_non_singular(self):
        return assert_no_entries_with_modulus_zero(
            self._multiplier, message="LinearOperator was singular")

    def _assert_positive_definite(self):
        return assert_positive(math_ops.real(self._multiplier),
                               message="LinearOperator was not positive definite.")

    def _assert_self_adjoint(self):
        return assert_equal(complex_parts.imag(self._multiplier),
                            math_ops.cast(0, self.dtype.real_dtype),
                            message="LinearOperator was not self-adjoint")


class LinearOperatorZeros(_SizedOperator):
    """The zero operator; may be rectangular (num_columns)."""

    def __init__(self, num_rows, num_columns=None, batch_shape=None, dtype=None,
                 is_non_singular=False, is_self_adjoint=True, is_positive_definite=False,
                 is_square=True, assert_proper_shapes=False, name="LinearOperatorZeros"):
        dtype = dtype or _d.float32
        self._assert_proper_shapes = assert_proper_shapes
        with _graph.name_scope(name):
            if is_non_singular:
                raise ValueError("A Zeros operator is always singular.")
            if is_positive_definite:
                raise ValueError("A Zeros operator is always not positive-definite.")
            self._init_size(num_rows, batch_shape, num_columns)
            if num_columns is not None and self._num_rows_static != self._num_columns_static:
                is_square, is_self_adjoint = False, False
            super().__init__(dtype, is_non_singular=is_non_singular,
                             is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite, is_square=is_square,
                             name=name)

    def _out_shape(self, rows, cols):
        batch = self._batch_list()
        if isinstance(batch, list) and all(isinstance(v, int) for v in (rows, cols)):
            return batch + [rows, cols]
        return concat([convert_to_tensor(batch, dtype=_d.int32),
                       stack([convert_to_tensor(rows, dtype=_d.int32),
                              convert_to_tensor(cols, dtype=_d.int32)])], 0)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = globals()["adjoint"](x) if adjoint_arg else x
        rows = self._num_columns_static if adjoint else self._num_rows_static
        if rows is None:
            rows = self._num_columns if adjoint else self._num_rows
        x_cols = x.shape.dims[-1].value if x.shape.ndims else None
        x_cols = x_cols if x_cols is not None else shape(x)[-1]
        out = zeros(self._out_shape(rows, x_cols), dtype=self.dtype)
        # Broadcast against x's batch dimensions too.
        return out + zeros_like_batch(x)

    def _determinant(self):
        return zeros(self._batch_list(), dtype=self.dtype)

    def _log_abs_determinant(self):
        return math_ops.log(self._determinant())

    def _to_dense(self):
        return zeros(self._out_shape(
            self._num_rows_static if self._num_rows_static is not None else self._num_rows,
            self._num_columns_static if self._num_columns_static is not None
            else self._num_columns), dtype=self.dtype)

    def _diag_part(self):
        rows, cols = self._num_rows_static, self._num_columns_static
        n = min(rows, cols) if rows is not None and cols is not None else \
            math_ops.minimum(self._num_rows, self._num_columns)
        batch = self._batch_list()
        dims = batch + [n] if isinstance(batch, list) and isinstance(n, int) else \
            concat([convert_to_tensor(batch, dtype=_d.int32), [n]], 0)
        return zeros(dims, dtype=self.dtype)

    def _trace(self):
        return zeros(self._batch_list(), dtype=self.dtype)

    def _add_to_tensor(self, x):
        return x

    def _assert_non_singular(self):
        raise ValueError("Zero operators are always non-invertible.")

    def _assert_positive_definite(self):
        raise ValueError("Zero operators are always non-positive definite.")

    def _assert_self_adjoint(self):
        return _no_op()


def zeros_like_batch(x):
    """Zeros of shape x.shape[:-2] + [1, 1]: adding it broadcasts over x's batch."""
    return math_ops.multiply(x[..., :1, :1], 0)
