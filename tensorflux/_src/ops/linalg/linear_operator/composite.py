"""Operators built from other operators: Composition, Kronecker, BlockDiag,
BlockLowerTriangular, LowRankUpdate, Adjoint, Inversion."""

from __future__ import annotations

import operator as _operator

import numpy as np

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import Dimension, TensorShape
from tensorflux._src.ops.array.array_ops import concat, reshape, shape, stack, transpose
from tensorflux._src.ops.array.generator_ops import zeros
from tensorflux._src.ops.array.slicing_ops import split
from tensorflux._src.ops.linalg.diag_ops import matrix_diag
from tensorflux._src.ops.linalg.factor_ops import (log_matrix_determinant, matrix_determinant,
                                                   matrix_solve)
from tensorflux._src.ops.linalg.linalg_ops import eye, matmul
from tensorflux._src.ops.linalg.linear_operator.base import (LinearOperator, adjoint,
                                                             broadcast_batch, combine_hint)
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.math.reduce_ops import reduce_prod, reduce_sum
from tensorflux._src.ops.shape_fns import broadcast

__all__ = [
    "LinearOperatorAdjoint", "LinearOperatorBlockDiag", "LinearOperatorBlockLowerTriangular",
    "LinearOperatorComposition", "LinearOperatorInversion", "LinearOperatorKronecker",
    "LinearOperatorLowRankUpdate",
]


def _check_operators(operators, what="operators"):
    operators = list(operators)
    if not operators:
        raise ValueError(f"Expected a non-empty list of {what}. Found: {operators}")
    dtype = operators[0].dtype
    for op in operators:
        if op.dtype != dtype:
            names = "   ".join(f"{o.name}: {o.dtype.name}" for o in operators)
            raise TypeError(f"Expected all operators to have the same dtype.  Found {names}")
    return operators


def _batch_of(operators):
    batch = TensorShape([])
    for op in operators:
        batch = broadcast(batch, op.batch_shape)
    return batch


def _all(operators, hint):
    return all(getattr(o, hint) for o in operators)


def _static_dim(dim):
    return dim.value if isinstance(dim, Dimension) else dim


_HINT_WORDS = {"is_non_singular": "non-singular", "is_self_adjoint": "self-adjoint",
               "is_positive_definite": "positive-definite", "is_square": "square"}


def _hint_of_all(operators, hint, given, message):
    """A combination of operators that all have `hint` has it too (TF raises `message`,
    formatted with the hint's words, when the caller says False); else the caller's."""
    if not _all(operators, hint):
        return given
    if given is False:
        raise ValueError(message.format(_HINT_WORDS[hint]))
    return True


def _fold(operators, method, combine):
    """combine(...combine(op0.method(), op1.method())..., opn.method())."""
    result = getattr(operators[0], method)()
    for op in operators[1:]:
        result = combine(result, getattr(op, method)())
    return result


class _Combination(LinearOperator):
    """An operator made of a list of operators (Composition, Kronecker, BlockDiag,
    BlockLowerTriangular): their dtype and graph tensors; with a `joiner`, a name left
    out is their names joined."""

    def __init__(self, operators, name, joiner=None, **hints):
        self._operators = operators
        if joiner is not None:
            name = name or joiner.join(o.name for o in operators)
        with _graph.name_scope(name):
            super().__init__(operators[0].dtype,
                             graph_parents=[t for o in operators for t in o.graph_parents],
                             name=name, **hints)

    @property
    def operators(self):
        return self._operators


# -- Composition -------------------------------------------------------------------------------
class LinearOperatorComposition(_Combination):
    """A1 @ A2 @ ... @ An, applied right to left."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        operators = _check_operators(operators)
        is_non_singular = _hint_of_all(operators, "is_non_singular", is_non_singular,
                                       "The composition of {0} operators is always {0}.")
        super().__init__(operators, name, "_o_", is_non_singular=is_non_singular,
                         is_self_adjoint=is_self_adjoint,
                         is_positive_definite=is_positive_definite, is_square=is_square)

    def _shape(self):
        domain = self._operators[0].domain_dimension
        for op in self._operators[1:]:
            domain.assert_is_compatible_with(op.range_dimension)
            domain = op.domain_dimension
        matrix = [self._operators[0].range_dimension, self._operators[-1].domain_dimension]
        return _batch_of(self._operators).concatenate(matrix)

    def _shape_tensor(self):
        batch = self._operators[0].batch_shape_tensor()
        for op in self._operators[1:]:
            batch = shape(zeros(batch) + zeros(op.batch_shape_tensor()))
        return concat([batch, [self._operators[0].range_dimension_tensor(),
                               self._operators[-1].domain_dimension_tensor()]], 0)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        if adjoint:
            ops, result = self._operators, x
            result = ops[0].matmul(result, adjoint=True, adjoint_arg=adjoint_arg)
            for op in ops[1:]:
                result = op.matmul(result, adjoint=True)
            return result
        ops = list(reversed(self._operators))
        result = ops[0].matmul(x, adjoint_arg=adjoint_arg)
        for op in ops[1:]:
            result = op.matmul(result)
        return result

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        ops = list(reversed(self._operators)) if adjoint else self._operators
        result = ops[0].solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for op in ops[1:]:
            result = op.solve(result, adjoint=adjoint)
        return result

    def _determinant(self):
        return _fold(self._operators, "determinant", _operator.mul)

    def _log_abs_determinant(self):
        return _fold(self._operators, "log_abs_determinant", _operator.add)


# -- Kronecker ---------------------------------------------------------------------------------
class LinearOperatorKronecker(_Combination):
    """A1 (x) A2 (x) ... : each factor acts along its own axis of x reshaped to a grid."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        operators = _check_operators(operators)
        message = "The Kronecker product of {0} operators is always {0}."
        is_non_singular = _hint_of_all(operators, "is_non_singular", is_non_singular, message)
        is_self_adjoint = _hint_of_all(operators, "is_self_adjoint", is_self_adjoint, message)
        is_positive_definite = _hint_of_all(operators, "is_positive_definite",
                                            is_positive_definite, message)
        super().__init__(operators, name, "_x_", is_non_singular=is_non_singular,
                         is_self_adjoint=is_self_adjoint,
                         is_positive_definite=is_positive_definite, is_square=is_square)

    def _dims(self, which):
        dims = [_static_dim(getattr(o, which)) for o in self._operators]
        return None if None in dims else dims

    def _shape(self):
        rows, cols = self._dims("range_dimension"), self._dims("domain_dimension")
        matrix = [None if rows is None else int(np.prod(rows)),
                  None if cols is None else int(np.prod(cols))]
        return _batch_of(self._operators).concatenate(matrix)

    def _shape_tensor(self):
        return shape(self.to_dense())

    def _apply(self, x, method, adjoint=False, adjoint_arg=False):
        """Applies each factor's `method` along its own axis of x seen as a grid
        [..., n_1, ..., n_k, R] (row-major: A (x) B acts on axes 1 and 2)."""
        x = globals()["adjoint"](x) if adjoint_arg else x
        transposed = adjoint or method == "solve"
        in_dims = self._dims("range_dimension" if transposed else "domain_dimension")
        out_dims = self._dims("domain_dimension" if transposed else "range_dimension")
        if in_dims is None or out_dims is None or x.shape.ndims is None:
            raise ValueError("LinearOperatorKronecker needs its factors' sizes and the rank "
                             "of its argument when the graph is built.")
        k = len(in_dims)
        r = shape(x)[-1:]
        grid = reshape(x, concat([shape(x)[:-2], in_dims, r], 0))
        dims = list(in_dims)
        for i, op in enumerate(self._operators):
            nb = grid.shape.ndims - k - 1
            local = [i] + [j for j in range(k) if j != i] + [k]
            moved = transpose(grid, list(range(nb)) + [nb + a for a in local])
            flat = reshape(moved, concat([shape(moved)[:nb], [dims[i], -1]], 0))
            out = getattr(op, method)(flat, adjoint=adjoint)
            dims[i] = out_dims[i]
            nb = out.shape.ndims - 2
            rest = [dims[j] for j in range(k) if j != i]
            out = reshape(out, concat([shape(out)[:nb], [dims[i]] + rest, r], 0))
            inverse = [int(a) for a in np.argsort(local)]
            grid = transpose(out, list(range(nb)) + [nb + a for a in inverse])
        nb = grid.shape.ndims - k - 1
        return reshape(grid, concat([shape(grid)[:nb], [int(np.prod(out_dims))], r], 0))

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._apply(x, "matmul", adjoint, adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._apply(rhs, "solve", adjoint, adjoint_arg)

    def _to_dense(self):
        product = self._operators[0].to_dense()
        for op in self._operators[1:]:
            right = op.to_dense()
            a, b = broadcast_batch(product, right)
            sa, sb = shape(a), shape(b)
            batch = sa[:-2]
            left4 = reshape(a, concat([batch, stack([sa[-2], 1, sa[-1], 1])], 0))
            right4 = reshape(b, concat([batch, stack([1, sb[-2], 1, sb[-1]])], 0))
            product = reshape(left4 * right4,
                              concat([batch, stack([sa[-2] * sb[-2], sa[-1] * sb[-1]])], 0))
        product.set_shape(self.shape)
        return product

    def _determinant(self):
        total = int(np.prod(self._dims("domain_dimension")))
        result = None
        for op, n in zip(self._operators, self._dims("domain_dimension")):
            term = op.determinant() ** math_ops.cast(total // n, self.dtype)
            result = term if result is None else result * term
        return result

    def _log_abs_determinant(self):
        total = int(np.prod(self._dims("domain_dimension")))
        result = None
        for op, n in zip(self._operators, self._dims("domain_dimension")):
            term = op.log_abs_determinant() * (total // n)
            result = term if result is None else result + term
        return result

    def _diag_part(self):
        diag = self._operators[0].diag_part()
        for op in self._operators[1:]:
            right = op.diag_part()
            diag = reshape(diag[..., :, None] * right[..., None, :],
                           concat([shape(diag[..., :, None] * right[..., None, :])[:-2], [-1]],
                                  0))
        return diag

    def _trace(self):
        return _fold(self._operators, "trace", _operator.mul)


# -- Blocks: BlockDiag and BlockLowerTriangular ----------------------------------------------
class _Blocks(_Combination):
    """A block operator whose square diagonal blocks (`_diagonal`) give its size, shape,
    determinant and diagonal; `_blocks` lists all its blocks."""

    def _blocks(self):
        return self._operators

    def _sizes(self):
        sizes = [_static_dim(o.domain_dimension) for o in self._diagonal]
        if None in sizes:
            raise ValueError(f"{type(self).__name__} needs its blocks' sizes when the graph "
                             f"is built.")
        return sizes

    def _shape(self):
        sizes = [_static_dim(o.domain_dimension) for o in self._diagonal]
        n = None if None in sizes else sum(sizes)
        return _batch_of(self._blocks()).concatenate([n, n])

    def _shape_tensor(self):
        return shape(self.to_dense())

    def _split_rows(self, x, adjoint_arg):
        """x (or its adjoint) split into the blocks' row ranges."""
        x = globals()["adjoint"](x) if adjoint_arg else x
        return split(x, self._sizes(), axis=-2)

    def _determinant(self):
        return _fold(self._diagonal, "determinant", _operator.mul)

    def _log_abs_determinant(self):
        return _fold(self._diagonal, "log_abs_determinant", _operator.add)

    def _diag_part(self):
        return concat(_broadcast_all([op.diag_part()[..., None] for op in self._diagonal]),
                      -2)[..., 0]


# -- BlockDiag ---------------------------------------------------------------------------------
class LinearOperatorBlockDiag(_Blocks):
    """diag(A1, ..., An) of square blocks."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, name=None):
        operators = _check_operators(operators)
        message = "The direct sum of {0} operators is always {0}."
        is_non_singular = _hint_of_all(operators, "is_non_singular", is_non_singular, message)
        is_self_adjoint = _hint_of_all(operators, "is_self_adjoint", is_self_adjoint, message)
        is_positive_definite = _hint_of_all(operators, "is_positive_definite",
                                            is_positive_definite, message)
        if not is_square:
            raise ValueError("A blockdiagonal operator is always square.")
        if not all(o.is_square for o in operators):
            raise ValueError("Can only represent a block diagonal of square matrices.")
        self._diagonal = operators
        super().__init__(operators, name, "_ds_", is_non_singular=is_non_singular,
                         is_self_adjoint=is_self_adjoint,
                         is_positive_definite=is_positive_definite, is_square=True)

    def _blockwise(self, x, method, adjoint=False, adjoint_arg=False):
        parts = self._split_rows(x, adjoint_arg)
        outs = [getattr(op, method)(p, adjoint=adjoint) for op, p in zip(self._operators,
                                                                          parts)]
        outs = _broadcast_all(outs)
        return concat(outs, -2)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._blockwise(x, "matmul", adjoint, adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._blockwise(rhs, "solve", adjoint, adjoint_arg)

    def _to_dense(self):
        sizes = self._sizes()
        total = sum(sizes)
        rows, start = [], 0
        denses = _broadcast_all([op.to_dense() for op in self._operators])
        for dense, n in zip(denses, sizes):
            batch = shape(dense)[:-2]
            left = zeros(concat([batch, [n, start]], 0), dtype=self.dtype)
            right = zeros(concat([batch, [n, total - start - n]], 0), dtype=self.dtype)
            rows.append(concat([left, dense, right], -1))
            start += n
        out = concat(rows, -2)
        out.set_shape(self.shape)
        return out

    def _trace(self):
        return _fold(self._operators, "trace", _operator.add)


def _broadcast_all(tensors):
    """Tensors [..., a_i, b_i] with their batch dimensions broadcast to a common one."""
    ranks = [t.shape.ndims for t in tensors]
    if None not in ranks and all(r == 2 for r in ranks):
        return tensors
    out = list(tensors)
    for i in range(len(out)):
        for j in range(len(out)):
            if i != j:
                out[i], _ = broadcast_batch(out[i], tensors[j])
    return out


# -- BlockLowerTriangular ----------------------------------------------------------------------
class LinearOperatorBlockLowerTriangular(_Blocks):
    """[[L00], [L10, L11], ...]: row i holds blocks L_i0 ... L_ii (square diagonal blocks)."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None,
                 name="LinearOperatorBlockLowerTriangular"):
        rows = [list(r) for r in operators]
        if not rows:
            raise ValueError(f"Expected a non-empty list of operators. Found: {operators}")
        for i, row in enumerate(rows):
            if len(row) != i + 1:
                raise ValueError(f"Argument `operators[{i}]` must contain `{i + 1}` blocks, "
                                 f"but actually contains `{len(row)}` blocks.")
        flat = _check_operators([o for row in rows for o in row])
        diagonal = [row[-1] for row in rows]
        if not all(o.is_square for o in diagonal):
            raise ValueError("The diagonal operators must be square.")
        if is_square is False:
            raise ValueError("A block lower triangular operator is always square.")
        is_non_singular = _hint_of_all(
            diagonal, "is_non_singular", is_non_singular,
            "A blockwise lower-triangular operator with {0} operators on the main diagonal "
            "is always {0}.")
        self._diagonal = diagonal
        super().__init__(flat, name, is_non_singular=is_non_singular,
                         is_self_adjoint=is_self_adjoint,
                         is_positive_definite=is_positive_definite, is_square=True)
        self._operators = rows  # `operators` is the list of rows, as in TF

    def _blocks(self):
        return [o for row in self._operators for o in row]

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        parts = self._split_rows(x, adjoint_arg)
        n = len(self._operators)
        outs = []
        for i in range(n):
            if adjoint:  # column i of the blocks, adjointed: sum_j L_ji^H x_j for j >= i
                terms = [self._operators[j][i].matmul(parts[j], adjoint=True)
                         for j in range(i, n)]
            else:
                terms = [self._operators[i][j].matmul(parts[j]) for j in range(i + 1)]
            outs.append(math_ops.add_n(_broadcast_all(terms)) if len(terms) > 1 else terms[0])
        return concat(_broadcast_all(outs), -2)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        parts = self._split_rows(rhs, adjoint_arg)
        n = len(self._operators)
        solution = [None] * n
        order = range(n - 1, -1, -1) if adjoint else range(n)
        for i in order:
            residual = parts[i]
            others = range(i + 1, n) if adjoint else range(i)
            for j in others:
                block = self._operators[j][i] if adjoint else self._operators[i][j]
                residual, term = broadcast_batch(residual,
                                                 block.matmul(solution[j], adjoint=adjoint))
                residual = residual - term
            solution[i] = self._diagonal[i].solve(residual, adjoint=adjoint)
        return concat(_broadcast_all(solution), -2)

    def _to_dense(self):
        sizes = self._sizes()
        total = sum(sizes)
        rows = []
        for i, row in enumerate(self._operators):
            denses = _broadcast_all([o.to_dense() for o in row])
            batch = shape(denses[0])[:-2]
            filled = sum(sizes[:i + 1])
            pad = zeros(concat([batch, [sizes[i], total - filled]], 0), dtype=self.dtype)
            rows.append(concat(denses + [pad], -1))
        out = concat(_broadcast_all(rows), -2)
        out.set_shape(self.shape)
        return out


# -- LowRankUpdate -------------------------------------------------------------------------------
class LinearOperatorLowRankUpdate(LinearOperator):
    """L + U D V^H: matmul by parts, solve by Woodbury's identity, determinant by the
    matrix determinant lemma (through the K x K capacitance matrix D^-1 + V^H L^-1 U)."""

    def __init__(self, base_operator, u, diag_update=None, v=None,
                 is_diag_update_positive=None, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None,
                 name="LinearOperatorLowRankUpdate"):
        dtype = base_operator.dtype
        if v is None and base_operator.is_self_adjoint and (
                diag_update is None or is_diag_update_positive) and is_self_adjoint is None:
            is_self_adjoint = True
        if v is None and base_operator.is_positive_definite and (
                diag_update is None or is_diag_update_positive):
            if is_positive_definite is False:
                raise ValueError("Diagonal update is positive definite and base operator is "
                                 "positive definite: the sum must be too.")
            is_positive_definite = True
        if is_square is False:
            raise ValueError("A LinearOperatorLowRankUpdate is always square.")
        with _graph.name_scope(name):
            def as_tensor(value, arg_name):
                if value is None:
                    return None
                if not isinstance(value, Tensor):
                    return convert_to_tensor(value, dtype=dtype, name=arg_name)
                if value.dtype.base_dtype != dtype:
                    raise TypeError(f"Expected {arg_name} to have dtype {dtype.name}. Found: "
                                    f"{value.dtype.base_dtype.name}")
                return value

            self._u = as_tensor(u, "u")
            self._v = self._u if v is None else as_tensor(v, "v")
            self._diag_update = as_tensor(diag_update, "diag_update")
            self._base_operator = base_operator
            self._is_diag_update_positive = is_diag_update_positive
            self._use_cholesky = bool(base_operator.is_positive_definite
                                      and base_operator.is_self_adjoint
                                      and is_diag_update_positive and v is None)
            parents = list(base_operator.graph_parents) + [self._u]
            super().__init__(dtype, graph_parents=parents, is_non_singular=is_non_singular,
                             is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite, is_square=True,
                             name=name)

    @property
    def u(self):
        return self._u

    @property
    def v(self):
        return self._v

    @property
    def diag_update(self):
        return self._diag_update

    @property
    def is_diag_update_positive(self):
        return self._is_diag_update_positive

    @property
    def base_operator(self):
        return self._base_operator

    def _shape(self):
        batch = broadcast(self._base_operator.batch_shape, self._u.shape[:-2]
                          if self._u.shape.ndims is not None else TensorShape(None))
        return batch.concatenate(self._base_operator.shape[-2:])

    def _shape_tensor(self):
        return shape(self.to_dense())

    def _d(self, conj=False):
        """D as a [batch of] K x K matrices."""
        if self._diag_update is None:
            k = self._u.shape.dims[-1].value
            k = k if k is not None else shape(self._u)[-1]
            return eye(k, dtype=self.dtype)
        d = math_ops.conj(self._diag_update) if conj else self._diag_update
        return matrix_diag(d)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        u, v = (self._v, self._u) if adjoint else (self._u, self._v)
        x = globals()["adjoint"](x) if adjoint_arg else x
        base = self._base_operator.matmul(x, adjoint=adjoint)
        low_rank = matmul(u, matmul(self._d(conj=adjoint), matmul(v, x, adjoint_a=True)))
        base, low_rank = broadcast_batch(base, low_rank)
        return base + low_rank

    def _capacitance(self, adjoint=False):
        u, v = (self._v, self._u) if adjoint else (self._u, self._v)
        linv_u = self._base_operator.solve(u, adjoint=adjoint)
        d_inv = matrix_solve(*broadcast_batch(self._d(conj=adjoint),
                                              eye(shape(u)[-1], dtype=self.dtype)))
        vh_linv_u = matmul(v, linv_u, adjoint_a=True)
        d_inv, vh_linv_u = broadcast_batch(d_inv, vh_linv_u)
        return d_inv + vh_linv_u, linv_u, v

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = globals()["adjoint"](rhs) if adjoint_arg else rhs
        cap, linv_u, v = self._capacitance(adjoint)
        linv_rhs = self._base_operator.solve(rhs, adjoint=adjoint)
        vh_linv_rhs = matmul(v, linv_rhs, adjoint_a=True)
        cap, vh_linv_rhs = broadcast_batch(cap, vh_linv_rhs)
        correction = matmul(linv_u, matrix_solve(cap, vh_linv_rhs))
        linv_rhs, correction = broadcast_batch(linv_rhs, correction)
        return linv_rhs - correction

    def _log_abs_determinant(self):
        cap, _, _ = self._capacitance()
        _, log_abs_cap = log_matrix_determinant(cap)
        log_abs_d = 0 if self._diag_update is None else reduce_sum(
            math_ops.log(math_ops.abs(self._diag_update)), axis=-1)
        result = self._base_operator.log_abs_determinant() + log_abs_cap + log_abs_d
        return math_ops.real(result) if result.dtype.is_complex else result

    def _determinant(self):
        cap, _, _ = self._capacitance()
        det_d = 1 if self._diag_update is None else reduce_prod(
            self._diag_update, axis=-1)
        return self._base_operator.determinant() * matrix_determinant(cap) * det_d

    def _to_dense(self):
        base = self._base_operator.to_dense()
        low_rank = matmul(self._u, matmul(self._d(), self._v, adjoint_b=True))
        base, low_rank = broadcast_batch(base, low_rank)
        return base + low_rank


# -- Adjoint and Inversion ---------------------------------------------------------------------
class _OfOne(LinearOperator):
    """An operator's adjoint or inverse (`relation`): each hint is the operator's or the
    caller's, which must not contradict each other (TF's
    use_operator_or_provided_hint_unless_contradicting)."""

    def __init__(self, operator, relation, name, **given):
        self._operator = operator
        hints = {hint: combine_hint(operator, hint, provided,
                                    f"An operator is {_HINT_WORDS[hint]} if and only if its "
                                    f"{relation} is {_HINT_WORDS[hint]}.")
                 for hint, provided in given.items()}
        with _graph.name_scope(name):
            super().__init__(operator.dtype, graph_parents=operator.graph_parents, name=name,
                             **hints)

    @property
    def operator(self):
        return self._operator


class LinearOperatorAdjoint(_OfOne):
    """The adjoint A^H of an operator, acting through the operator's adjoint methods."""

    def __init__(self, operator, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        super().__init__(operator, "adjoint", name or operator.name + "_adjoint",
                         is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                         is_positive_definite=is_positive_definite, is_square=is_square)

    def _shape(self):
        s = self._operator.shape
        return s[:-2].concatenate([s.dims[-1], s.dims[-2]]) if s.ndims else TensorShape(None)

    def _shape_tensor(self):
        s = self._operator.shape_tensor()
        return concat([s[:-2], s[-1:], s[-2:-1]], 0)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._operator.matmul(x, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._operator.solve(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self):
        det = self._operator.determinant()
        return math_ops.conj(det) if det.dtype.is_complex else det

    def _log_abs_determinant(self):
        return self._operator.log_abs_determinant()

    def _trace(self):
        trace = self._operator.trace()
        return math_ops.conj(trace) if trace.dtype.is_complex else trace

    def _diag_part(self):
        diag = self._operator.diag_part()
        return math_ops.conj(diag) if diag.dtype.is_complex else diag

    def _to_dense(self):
        return adjoint(self._operator.to_dense())


class LinearOperatorInversion(_OfOne):
    """A^-1: matmul solves with the operator and solve multiplies by it."""

    def __init__(self, operator, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        if operator.is_non_singular is False or is_non_singular is False:
            raise ValueError(f"operator and supplied hints must result in a non-singular "
                             f"matrix: {operator.name}")
        if operator.is_square is False or is_square is False:
            raise ValueError(f"operator and supplied hints must result in a square matrix: "
                             f"{operator.name}")
        super().__init__(operator, "inverse", name or operator.name + "_inv",
                         is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                         is_positive_definite=is_positive_definite, is_square=is_square)

    def _shape(self):
        return self._operator.shape

    def _shape_tensor(self):
        return self._operator.shape_tensor()

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._operator.solve(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._operator.matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self):
        return 1.0 / self._operator.determinant()

    def _log_abs_determinant(self):
        return -1.0 * self._operator.log_abs_determinant()

