"""`tf.linalg.LinearOperator`: a matrix (or batch of matrices) known by how it acts.

Subclasses implement `_shape`, `_shape_tensor`, `_matmul` and whatever their structure
makes cheaper (`_solve`, `_determinant`, `_diag_part`, ...); the base class gives TF's
public methods, argument checks, hints and name scopes, and dense fallbacks. Operator
algebra (`adjoint()`, `inverse()`, `cholesky()`, matmul/solve of two operators) dispatches
on the operators' types through the tables below, filled by `registrations.py`, as TF's
linear_operator_algebra does.
"""

from __future__ import annotations

import contextlib

import numpy as np

from tensorflux._src.framework import dtypes as _d
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import Dimension, TensorShape
from tensorflux._src.ops.array.array_ops import expand_dims, matrix_transpose, shape, squeeze
from tensorflux._src.ops.array.generator_ops import ones_like
from tensorflux._src.ops.constant import constant
from tensorflux._src.ops.debug.check_ops import assert_equal, assert_less, assert_positive
from tensorflux._src.ops.linalg.diag_ops import matrix_diag_part
from tensorflux._src.ops.linalg.factor_ops import (cholesky, log_matrix_determinant,
                                                   matrix_determinant, matrix_solve,
                                                   matrix_triangular_solve)
from tensorflux._src.ops.linalg.linalg_ops import eye
from tensorflux._src.ops.linalg.spectral_ops import svd
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.math.reduce_ops import reduce_max, reduce_min, reduce_sum

__all__ = ["LinearOperator"]

# (type, ...) -> function; the most specific registered entry wins (MRO order).
ADJOINT, INVERSE, CHOLESKY, MATMUL, SOLVE = {}, {}, {}, {}, {}


def _lookup(table, *operators):
    for types in _mro_product([type(o).__mro__ for o in operators]):
        if types in table:
            return table[types]
    raise NotImplementedError(f"No algebra registered for {[type(o).__name__ for o in operators]}")


def _mro_product(mros):
    if not mros:
        yield ()
        return
    for head in mros[0]:
        for rest in _mro_product(mros[1:]):
            yield (head,) + rest


def adjoint(m):
    return matrix_transpose(m, conjugate=True)


def broadcast_batch(a, b):
    """a and b with their batch dimensions broadcast (TF 1.15's solves do not broadcast):
    each is multiplied by ones shaped like the other's batch."""
    sa, sb = a.shape, b.shape
    if sa.ndims is not None and sb.ndims is not None and sa[:-2].is_fully_defined() and \
            sb[:-2].is_fully_defined() and sa[:-2].as_list() == sb[:-2].as_list():
        return a, b
    return a * ones_like(b[..., :1, :1]), b * ones_like(a[..., :1, :1])


def matrix_solve_with_broadcast(matrix, rhs, adjoint=False):
    matrix, rhs = broadcast_batch(matrix, rhs)
    return matrix_solve(matrix, rhs, adjoint=adjoint)


def triangular_solve_with_broadcast(matrix, rhs, lower=True, adjoint=False):
    matrix, rhs = broadcast_batch(matrix, rhs)
    return matrix_triangular_solve(matrix, rhs, lower=lower, adjoint=adjoint)


def cholesky_solve_with_broadcast(chol, rhs):
    y = triangular_solve_with_broadcast(chol, rhs, lower=True, adjoint=False)
    return triangular_solve_with_broadcast(chol, y, lower=True, adjoint=True)


def combine_hint(operator, hint_name, provided, message):
    """TF's use_operator_or_provided_hint_unless_contradicting."""
    op_hint = getattr(operator, hint_name)
    if op_hint is False and provided:
        raise ValueError(message)
    if op_hint and provided is False:
        raise ValueError(message)
    if op_hint or provided:
        return True
    if op_hint is False or provided is False:
        return False
    return None


class LinearOperator:
    """Base class: a [batch of] M x N linear operator A acting on [batch of] N x R x."""

    def __init__(self, dtype, graph_parents=None, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        if is_positive_definite:
            if is_non_singular is False:
                raise ValueError("A positive definite matrix is always non-singular.")
            is_non_singular = True
        if is_non_singular:
            if is_square is False:
                raise ValueError("A non-singular matrix is always square.")
            is_square = True
        if is_self_adjoint:
            if is_square is False:
                raise ValueError("A self-adjoint matrix is always square.")
            is_square = True
        self._is_square_set_or_implied_by_hints = is_square
        graph_parents = [] if graph_parents is None else list(graph_parents)
        for i, t in enumerate(graph_parents):
            if t is None or not isinstance(t, Tensor):
                raise ValueError(f"Graph parent item {i} is not a Tensor; {t}.")
        self._dtype = _d.as_dtype(dtype).base_dtype if dtype is not None else None
        self._graph_parents = graph_parents
        self._is_non_singular = is_non_singular
        self._is_self_adjoint = is_self_adjoint
        self._is_positive_definite = is_positive_definite
        self._name = name or type(self).__name__

    @contextlib.contextmanager
    def _name_scope(self, name=None, values=None):
        with _graph.name_scope(self.name):
            with _graph.name_scope(name, values=(values or []) + self._graph_parents) as scope:
                yield scope

    # -- properties ----------------------------------------------------------------------------
    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self):
        return self._name

    @property
    def graph_parents(self):
        return self._graph_parents

    @property
    def is_non_singular(self):
        return self._is_non_singular

    @property
    def is_self_adjoint(self):
        return self._is_self_adjoint

    @property
    def is_positive_definite(self):
        return self._is_positive_definite

    @property
    def is_square(self):
        auto_square_check = self.domain_dimension == self.range_dimension
        if self._is_square_set_or_implied_by_hints is False and auto_square_check:
            raise ValueError("User set is_square hint to False, but the operator was square.")
        if self._is_square_set_or_implied_by_hints is None:
            return auto_square_check
        return self._is_square_set_or_implied_by_hints

    # -- shapes ---------------------------------------------------------------------------------
    def _shape(self):
        raise NotImplementedError("_shape is not implemented.")

    def _shape_tensor(self):
        raise NotImplementedError("_shape_tensor is not implemented.")

    @property
    def shape(self):
        return TensorShape(self._shape())

    def shape_tensor(self, name="shape_tensor"):
        with self._name_scope(name):
            if self.shape.is_fully_defined():
                return constant(self.shape.as_list(), dtype=_d.int32, name="shape")
            return self._shape_tensor()

    @property
    def batch_shape(self):
        return self.shape[:-2]

    def batch_shape_tensor(self, name="batch_shape_tensor"):
        with self._name_scope(name):
            if self.batch_shape.is_fully_defined():
                return constant(self.batch_shape.as_list(), dtype=_d.int32, name="shape")
            return self.shape_tensor()[:-2]

    @property
    def tensor_rank(self):
        return self.shape.ndims

    def tensor_rank_tensor(self, name="tensor_rank_tensor"):
        with self._name_scope(name):
            if self.tensor_rank is not None:
                return constant(self.tensor_rank, dtype=_d.int32)
            return shape(self.shape_tensor())[0]

    @property
    def domain_dimension(self):
        return self.shape.dims[-1] if self.shape.ndims is not None else Dimension(None)

    def domain_dimension_tensor(self, name="domain_dimension_tensor"):
        with self._name_scope(name):
            if self.domain_dimension.value is not None:
                return constant(self.domain_dimension.value, dtype=_d.int32)
            return self.shape_tensor()[-1]

    @property
    def range_dimension(self):
        return self.shape.dims[-2] if self.shape.ndims is not None else Dimension(None)

    def range_dimension_tensor(self, name="range_dimension_tensor"):
        with self._name_scope(name):
            if self.range_dimension.value is not None:
                return constant(self.range_dimension.value, dtype=_d.int32)
            return self.shape_tensor()[-2]

    # -- assertions -----------------------------------------------------------------------------
    def _max_condition_number_to_be_non_singular(self):
        eps = np.finfo(self.dtype.real_dtype.as_numpy_dtype
                       if self.dtype.is_complex else self.dtype.as_numpy_dtype).eps
        dims = [self.range_dimension.value, self.domain_dimension.value]
        if None not in dims:
            return 1.0 / (max(100.0, float(dims[0] * dims[1])) * eps)
        n = math_ops.cast(self.range_dimension_tensor() * self.domain_dimension_tensor(),
                          _d.float64)
        return 1.0 / (math_ops.maximum(n, 100.0) * eps)

    def _assert_non_singular(self):
        if self._can_use_cholesky():
            return self.assert_positive_definite()
        singular_values = svd(self.to_dense(), compute_uv=False)
        cond = reduce_max(singular_values, axis=-1) / reduce_min(singular_values, axis=-1)
        limit = math_ops.cast(self._max_condition_number_to_be_non_singular(), cond.dtype)
        return assert_less(cond, limit, message="Singular matrix up to precision epsilon.")

    def assert_non_singular(self, name="assert_non_singular"):
        with self._name_scope(name):
            return self._assert_non_singular()

    def _assert_positive_definite(self):
        if self.is_self_adjoint:
            return assert_positive(matrix_diag_part(cholesky(self.to_dense())),
                                   message="Matrix was not positive definite.")
        raise NotImplementedError("assert_positive_definite is not implemented.")

    def assert_positive_definite(self, name="assert_positive_definite"):
        with self._name_scope(name):
            return self._assert_positive_definite()

    def _assert_self_adjoint(self):
        dense = self.to_dense()
        return assert_equal(dense, adjoint(dense), message="Matrix was not equal to its adjoint.")

    def assert_self_adjoint(self, name="assert_self_adjoint"):
        with self._name_scope(name):
            return self._assert_self_adjoint()

    def _check_input_dtype(self, arg):
        if arg.dtype.base_dtype != self.dtype:
            raise TypeError(f"Expected argument to have dtype {self.dtype.name}.  Found: "
                            f"{arg.dtype.base_dtype.name} in tensor {arg}")

    # -- products and solves ---------------------------------------------------------------------
    def _with_operator(self, table, arg_name, other, adjoint, adjoint_arg, name):
        """matmul or solve (`table`) of self and another operator: an operator, found by the
        algebra registered for the two types."""
        left = self.adjoint() if adjoint else self
        right = other.adjoint() if adjoint_arg else other
        if right.range_dimension.value is not None and \
                left.domain_dimension.value is not None and \
                right.range_dimension.value != left.domain_dimension.value:
            raise ValueError(f"Operators are incompatible. Expected `{arg_name}` to have "
                             f"dimension {left.domain_dimension} but got "
                             f"{right.range_dimension}.")
        with self._name_scope(name):
            return _lookup(table, left, right)(left, right)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        raise NotImplementedError("_matmul is not implemented.")

    def matmul(self, x, adjoint=False, adjoint_arg=False, name="matmul"):
        """self @ x (adjoint(self) when `adjoint`, adjoint(x) when `adjoint_arg`); `x` may be
        a Tensor [..., N, R] or another LinearOperator (giving an operator)."""
        if isinstance(x, LinearOperator):
            return self._with_operator(MATMUL, "x", x, adjoint, adjoint_arg, name)
        with self._name_scope(name, values=[x]):
            x = convert_to_tensor(x, name="x")
            self._check_input_dtype(x)
            self_dim = -2 if adjoint else -1
            arg_dim = -1 if adjoint_arg else -2
            self.shape.dims[self_dim].assert_is_compatible_with(x.shape.dims[arg_dim])
            return self._matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _matvec(self, x, adjoint=False):
        return squeeze(self.matmul(expand_dims(x, -1), adjoint=adjoint), axis=-1)

    def matvec(self, x, adjoint=False, name="matvec"):
        """self @ x for vectors x [..., N]."""
        with self._name_scope(name, values=[x]):
            x = convert_to_tensor(x, name="x")
            self._check_input_dtype(x)
            self.shape.dims[-2 if adjoint else -1].assert_is_compatible_with(x.shape.dims[-1])
            return self._matvec(x, adjoint=adjoint)

    def __matmul__(self, other):
        return self.matmul(other)

    def _can_use_cholesky(self):
        return bool(self.is_self_adjoint and self.is_positive_definite)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = globals()["adjoint"](rhs) if adjoint_arg else rhs
        if self._can_use_cholesky():
            return cholesky_solve_with_broadcast(cholesky(self.to_dense()), rhs)
        return matrix_solve_with_broadcast(self.to_dense(), rhs, adjoint=adjoint)

    def _check_solvable(self):
        if self.is_non_singular is False:
            raise NotImplementedError("Exact solve not implemented for an operator that is "
                                      "expected to be singular.")
        if self.is_square is False:
            raise NotImplementedError("Exact solve not implemented for an operator that is "
                                      "expected to not be square.")

    def solve(self, rhs, adjoint=False, adjoint_arg=False, name="solve"):
        """x with self @ x = rhs (adjoint(self) when `adjoint`); rhs may be an operator."""
        self._check_solvable()
        if isinstance(rhs, LinearOperator):
            return self._with_operator(SOLVE, "rhs", rhs, adjoint, adjoint_arg, name)
        with self._name_scope(name, values=[rhs]):
            rhs = convert_to_tensor(rhs, name="rhs")
            self._check_input_dtype(rhs)
            self_dim = -1 if adjoint else -2
            arg_dim = -1 if adjoint_arg else -2
            self.shape.dims[self_dim].assert_is_compatible_with(rhs.shape.dims[arg_dim])
            return self._solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solvevec(self, rhs, adjoint=False):
        return squeeze(self.solve(expand_dims(rhs, -1), adjoint=adjoint), axis=-1)

    def solvevec(self, rhs, adjoint=False, name="solve"):
        """x with self @ x = rhs for vectors rhs [..., M]."""
        self._check_solvable()
        with self._name_scope(name, values=[rhs]):
            rhs = convert_to_tensor(rhs, name="rhs")
            self._check_input_dtype(rhs)
            self.shape.dims[-1 if adjoint else -2].assert_is_compatible_with(rhs.shape.dims[-1])
            return self._solvevec(rhs, adjoint=adjoint)

    # -- determinants ----------------------------------------------------------------------------
    def _check_square_for_det(self):
        if self.is_square is False:
            raise NotImplementedError("Determinant not implemented for an operator that is "
                                      "expected to not be square.")

    def _determinant(self):
        if self._can_use_cholesky():
            return math_ops.exp(self.log_abs_determinant())
        return matrix_determinant(self.to_dense())

    def determinant(self, name="det"):
        self._check_square_for_det()
        with self._name_scope(name):
            return self._determinant()

    def _log_abs_determinant(self):
        if self._can_use_cholesky():
            diag = matrix_diag_part(cholesky(self.to_dense()))
            return 2 * reduce_sum(math_ops.log(math_ops.real(diag)), axis=[-1])
        _, log_abs_det = log_matrix_determinant(self.to_dense())
        return math_ops.real(log_abs_det) if log_abs_det.dtype.is_complex else log_abs_det

    def log_abs_determinant(self, name="log_abs_det"):
        self._check_square_for_det()
        with self._name_scope(name):
            return self._log_abs_determinant()

    # -- derived operators ----------------------------------------------------------------------
    def adjoint(self, name="adjoint"):
        """The adjoint operator (self when self-adjoint)."""
        if self.is_self_adjoint is True:
            return self
        with self._name_scope(name):
            return _lookup(ADJOINT, self)(self)

    H = property(adjoint, None)

    def inverse(self, name="inverse"):
        if self.is_square is False:
            raise ValueError("Cannot take the Inverse: This operator represents a non square "
                             "matrix.")
        if self.is_non_singular is False:
            raise ValueError("Cannot take the Inverse: This operator represents a singular "
                             "matrix.")
        with self._name_scope(name):
            return _lookup(INVERSE, self)(self)

    def cholesky(self, name="cholesky"):
        if not self._can_use_cholesky():
            raise ValueError("Cannot take the Cholesky decomposition: Not a positive definite "
                             "self adjoint matrix.")
        with self._name_scope(name):
            return _lookup(CHOLESKY, self)(self)

    # -- dense views ----------------------------------------------------------------------------
    def _to_dense(self):
        if self.batch_shape.is_fully_defined():
            batch_shape = self.batch_shape.as_list()
        else:
            batch_shape = self.batch_shape_tensor()
        n = self.domain_dimension.value
        if n is None:
            n = self.domain_dimension_tensor()
        return self.matmul(eye(n, batch_shape=batch_shape, dtype=self.dtype))

    def to_dense(self, name="to_dense"):
        """The operator as a dense [batch of] matrices."""
        with self._name_scope(name):
            return self._to_dense()

    def _diag_part(self):
        return matrix_diag_part(self.to_dense())

    def diag_part(self, name="diag_part"):
        with self._name_scope(name):
            return self._diag_part()

    def _trace(self):
        return reduce_sum(self.diag_part(), axis=-1)

    def trace(self, name="trace"):
        with self._name_scope(name):
            return self._trace()

    def _add_to_tensor(self, x):
        return self.to_dense() + x

    def add_to_tensor(self, x, name="add_to_tensor"):
        """self.to_dense() + x."""
        with self._name_scope(name, values=[x]):
            x = convert_to_tensor(x, name="x")
            self._check_input_dtype(x)
            return self._add_to_tensor(x)
