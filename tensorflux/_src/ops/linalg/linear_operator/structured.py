"""Structured operators: Circulant (1-D, 2-D, 3-D blocks), Toeplitz, Tridiag, Householder,
Permutation.

Circulant operators act through their spectrum: x -> IFFT(spectrum * FFT(x)) over the
block dimensions (the FFT/FFT2D/FFT3D ops, as TF). Toeplitz builds its dense matrix by a
gather (TF embeds it in a circulant of size 2N); Tridiag uses the TridiagonalMatMul/Solve
ops.
"""

from __future__ import annotations


import numpy as np

from tensorflux._src.framework import dtypes as _d
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array.array_ops import concat, reshape, reverse, shape, stack, transpose
from tensorflux._src.ops.array.gather_ops import gather, one_hot
from tensorflux._src.ops.array.generator_ops import ones, ones_like
from tensorflux._src.ops.constant import constant
from tensorflux._src.ops.debug.check_ops import assert_equal
from tensorflux._src.ops.linalg.diag_ops import matrix_diag
from tensorflux._src.ops.linalg.linalg_ops import matmul
from tensorflux._src.ops.linalg.linear_operator.base import LinearOperator, adjoint
from tensorflux._src.ops.linalg.linear_operator.basic import _no_op, check_dtype
from tensorflux._src.ops.linalg.tridiagonal_ops import (_compact_from_matrix,
                                                        _compact_from_sequence,
                                                        _transpose_tridiagonal,
                                                        tridiagonal_matmul, tridiagonal_solve)
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.math.math_ops import range as tf_range
from tensorflux._src.ops.math.reduce_ops import reduce_mean, reduce_prod, reduce_sum
from tensorflux._src.ops.shape_fns import broadcast
from tensorflux._src.ops.signal.fft_ops import fft, fft2d, fft3d, ifft, ifft2d, ifft3d

__all__ = [
    "LinearOperatorCirculant", "LinearOperatorCirculant2D", "LinearOperatorCirculant3D",
    "LinearOperatorHouseholder", "LinearOperatorPermutation", "LinearOperatorToeplitz",
    "LinearOperatorTridiag",
]


def _to_complex(x):
    if x.dtype.is_complex:
        return x
    return math_ops.cast(x, _d.complex128 if x.dtype.base_dtype == _d.float64
                         else _d.complex64)


# The (inverse) DFT over the innermost 1, 2 or 3 dimensions.
_FFTS = {(1, False): fft, (2, False): fft2d, (3, False): fft3d,
         (1, True): ifft, (2, True): ifft2d, (3, True): ifft3d}


# -- Circulant ---------------------------------------------------------------------------------
class _BaseLinearOperatorCirculant(LinearOperator):
    """A (block-)circulant operator given by its spectrum over `block_depth` dimensions."""

    def __init__(self, spectrum, block_depth, input_output_dtype=_d.complex64,
                 is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=True, name="LinearOperatorCirculant"):
        with _graph.name_scope(name, values=[spectrum]):
            spectrum = convert_to_tensor(spectrum, name="spectrum")
            check_dtype(spectrum, "spectrum")
            if spectrum.shape.ndims is not None and spectrum.shape.ndims < block_depth:
                raise ValueError(f"Argument spectrum must have at least {block_depth} "
                                 f"dimensions.  Found: {spectrum}")
            if not spectrum.dtype.is_complex:
                if is_self_adjoint is False:
                    raise ValueError("A real spectrum always corresponds to a self-adjoint "
                                     "operator.")
                is_self_adjoint = True
            if is_square is False:
                raise ValueError("A [[nested] block] circulant operator is always square.")
            self._block_depth = block_depth
            self._spectrum = _to_complex(spectrum)
            super().__init__(input_output_dtype, graph_parents=[spectrum],
                             is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite, is_square=True,
                             name=name)

    @property
    def spectrum(self):
        return self._spectrum

    @property
    def block_depth(self):
        return self._block_depth

    @property
    def block_shape(self):
        return self._spectrum.shape[-self._block_depth:]

    def block_shape_tensor(self):
        return shape(self._spectrum)[-self._block_depth:]

    def _block_dims(self):
        dims = self.block_shape.as_list() if self.block_shape.ndims is not None else None
        if dims is None or None in dims:
            raise ValueError("LinearOperatorCirculant needs the block shape of its spectrum "
                             "when the graph is built.")
        return dims

    def _shape(self):
        s = self._spectrum.shape
        if s.ndims is None:
            return TensorShape(None)
        block = s[-self._block_depth:].as_list()
        n = int(np.prod(block)) if None not in block else None
        return s[:-self._block_depth].concatenate([n, n])

    def _shape_tensor(self):
        s = shape(self._spectrum)
        n = reduce_prod(s[-self._block_depth:])
        return concat([s[:-self._block_depth], stack([n, n])], 0)

    def _transform(self, x, inverse):
        """The (inverse) DFT of x [..., N1, ..., Nd, R] along its block dimensions."""
        d = self._block_depth
        rank = x.shape.ndims
        # [..., R, N1, ..., Nd]: the FFT ops transform the innermost dimensions.
        to_inner = list(range(rank - d - 1)) + [rank - 1] + list(range(rank - d - 1, rank - 1))
        back = list(range(rank - d - 1)) + list(range(rank - d, rank)) + [rank - d - 1]
        return transpose(_FFTS[(d, inverse)](transpose(x, to_inner)), back)

    def _apply_spectrum(self, x, spectrum_fn, adjoint=False, adjoint_arg=False):
        x = globals()["adjoint"](x) if adjoint_arg else x
        dims = self._block_dims()
        spectrum = math_ops.conj(self._spectrum) if adjoint else self._spectrum
        xc = math_ops.cast(x, spectrum.dtype)
        batch = shape(xc)[:-2]
        r = shape(xc)[-1]
        blocks = reshape(xc, concat([batch, dims, [r]], 0))
        y = self._transform(spectrum_fn(self._transform(blocks, False), spectrum[..., None]),
                            True)
        y = reshape(y, concat([shape(y)[:-self._block_depth - 1], [int(np.prod(dims)), r]], 0))
        return self._from_complex(y)

    def _from_complex(self, y):
        if self.dtype.is_complex:
            return math_ops.cast(y, self.dtype)
        return math_ops.cast(math_ops.real(y), self.dtype)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._apply_spectrum(x, lambda a, s: a * s, adjoint, adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._apply_spectrum(rhs, lambda a, s: a / s, adjoint, adjoint_arg)

    def convolution_kernel(self, name="convolution_kernel"):
        """The operator's first column (the kernel h with A x = h * x, circularly)."""
        with self._name_scope(name):
            h = self._transform(self._spectrum[..., None], True)[..., 0]
            return self._from_complex(h)

    def _reduce_axes(self):
        return [-(i + 1) for i in range(self._block_depth)]

    def _determinant(self):
        return self._from_complex(reduce_prod(self._spectrum, axis=self._reduce_axes()))

    def _log_abs_determinant(self):
        log_abs = reduce_sum(math_ops.log(math_ops.abs(self._spectrum)),
                             axis=self._reduce_axes())
        return math_ops.cast(log_abs, self.dtype)

    def _diag_part(self):
        mean = reduce_mean(self._spectrum, axis=self._reduce_axes())
        n = int(np.prod(self._block_dims()))
        return self._from_complex(mean[..., None] * ones([n], dtype=mean.dtype))

    def _trace(self):
        return self._from_complex(reduce_sum(self._spectrum, axis=self._reduce_axes()))

    def assert_hermitian_spectrum(self, name="assert_hermitian_spectrum"):
        """Asserts spectrum[k] = conj(spectrum[-k mod N]): a real convolution kernel."""
        with self._name_scope(name):
            flipped = self._spectrum
            for axis, n in enumerate(self._block_dims()):
                index = constant((-np.arange(n)) % n, dtype=_d.int32)
                flipped = gather(flipped, index, axis=axis - self._block_depth
                                 + (self._spectrum.shape.ndims or 0))
            return assert_equal(self._spectrum, math_ops.conj(flipped),
                                message="Spectrum was not Hermitian")


class LinearOperatorCirculant(_BaseLinearOperatorCirculant):
    """A circulant matrix: A x = IDFT(spectrum * DFT(x))."""

    def __init__(self, spectrum, input_output_dtype=_d.complex64, is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=True,
                 name="LinearOperatorCirculant"):
        super().__init__(spectrum, 1, input_output_dtype, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name)


class LinearOperatorCirculant2D(_BaseLinearOperatorCirculant):
    """Block circulant with circulant blocks; spectrum [..., N0, N1]."""

    def __init__(self, spectrum, input_output_dtype=_d.complex64, is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=True,
                 name="LinearOperatorCirculant2D"):
        super().__init__(spectrum, 2, input_output_dtype, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name)


class LinearOperatorCirculant3D(_BaseLinearOperatorCirculant):
    """Nested block circulant of depth 3; spectrum [..., N0, N1, N2]."""

    def __init__(self, spectrum, input_output_dtype=_d.complex64, is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=True,
                 name="LinearOperatorCirculant3D"):
        super().__init__(spectrum, 3, input_output_dtype, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name)


# -- Toeplitz ----------------------------------------------------------------------------------
class LinearOperatorToeplitz(LinearOperator):
    """T[i, j] = col[i - j] for i >= j, row[j - i] otherwise (row[0] is ignored)."""

    def __init__(self, col, row, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorToeplitz"):
        with _graph.name_scope(name, values=[row, col]):
            self._row = convert_to_tensor(row, name="row")
            self._col = convert_to_tensor(col, name="col", dtype=self._row.dtype.base_dtype)
            check_dtype(self._row, "row")
            super().__init__(self._row.dtype, graph_parents=[self._row, self._col],
                             is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite, is_square=is_square,
                             name=name)

    @property
    def row(self):
        return self._row

    @property
    def col(self):
        return self._col

    def _shape(self):
        s = broadcast(self._row.shape, self._col.shape)
        return s.concatenate(s[-1:]) if s.ndims is not None else TensorShape(None)

    def _shape_tensor(self):
        s = shape(self._row + self._col)
        return concat([s, s[-1:]], 0)

    def _to_dense(self):
        n = self._row.shape.dims[-1].value if self._row.shape.ndims else None
        if n is None:
            raise ValueError("LinearOperatorToeplitz needs the static size of `row`.")
        row, col = self._row + 0 * self._col, self._col + 0 * self._row
        values = concat([reverse(row[..., 1:], [-1]), col], -1)  # row[n-1..1], col[0..n-1]
        index = np.arange(n)[:, None] - np.arange(n)[None, :] + n - 1
        return gather(values, constant(index.astype(np.int32)),
                      axis=(values.shape.ndims or 1) - 1)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return matmul(self.to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _diag_part(self):
        n = self._row.shape.dims[-1].value
        return self._col[..., :1] * ones([n], dtype=self.dtype) + 0 * self._row[..., :1]


# -- Tridiag -----------------------------------------------------------------------------------
class LinearOperatorTridiag(LinearOperator):
    """A tridiagonal operator: diagonals 'compact' [..., 3, N], 'sequence' or 'matrix'."""

    def __init__(self, diagonals, diagonals_format="compact", is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=None,
                 name="LinearOperatorTridiag"):
        if diagonals_format not in ("compact", "sequence", "matrix"):
            raise ValueError(f"Diagonals Format must be one of compact, matrix, sequence, "
                             f"got : {diagonals_format}")
        if is_square is False:
            raise ValueError("A tridiagonal operator is always square.")
        with _graph.name_scope(name, values=[diagonals]):
            self._diagonals_arg = diagonals
            self._diagonals_format = diagonals_format
            if diagonals_format == "compact":
                compact = convert_to_tensor(diagonals, name="diagonals")
            elif diagonals_format == "sequence":
                compact = _compact_from_sequence(diagonals)
            else:
                compact = _compact_from_matrix(diagonals)
            check_dtype(compact, "diagonals")
            self._compact = compact
            super().__init__(compact.dtype, is_non_singular=is_non_singular,
                             is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite, is_square=True,
                             name=name)

    @property
    def diagonals(self):
        return self._diagonals_arg

    @property
    def diagonals_format(self):
        return self._diagonals_format

    def _shape(self):
        s = self._compact.shape
        return s[:-2].concatenate([s.dims[-1], s.dims[-1]]) if s.ndims else TensorShape(None)

    def _shape_tensor(self):
        s = shape(self._compact)
        return concat([s[:-2], s[-1:], s[-1:]], 0)

    def _adjoint_compact(self):
        """The compact diagonals of the conjugate transpose."""
        return math_ops.conj(_transpose_tridiagonal(self._compact))

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = globals()["adjoint"](x) if adjoint_arg else x
        diags = self._adjoint_compact() if adjoint else self._compact
        return tridiagonal_matmul(diags, x)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = globals()["adjoint"](rhs) if adjoint_arg else rhs
        diags = self._adjoint_compact() if adjoint else self._compact
        return tridiagonal_solve(diags, rhs)

    def _to_dense(self):
        n = self._compact.shape.dims[-1].value
        return (matrix_diag(self._compact[..., 1, :])
                + matrix_diag(self._compact[..., 0, :n - 1], k=1)
                + matrix_diag(self._compact[..., 2, 1:], k=-1))

    def _diag_part(self):
        return self._compact[..., 1, :]


# -- Householder -------------------------------------------------------------------------------
class LinearOperatorHouseholder(LinearOperator):
    """I - 2 v v^H / ||v||^2: a reflection, its own inverse and adjoint."""

    def __init__(self, reflection_axis, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorHouseholder"):
        with _graph.name_scope(name, values=[reflection_axis]):
            self._reflection_axis = convert_to_tensor(reflection_axis, name="reflection_axis")
            check_dtype(self._reflection_axis, "reflection_axis")
            if self._reflection_axis.shape.ndims is not None and \
                    self._reflection_axis.shape.ndims < 1:
                raise ValueError(f"Argument reflection_axis must have at least 1 dimension.  "
                                 f"Found: {self._reflection_axis}")
            if is_self_adjoint is False:
                raise ValueError("A Householder operator is always self adjoint.")
            if is_non_singular is False:
                raise ValueError("A Householder operator is always non-singular.")
            if is_square is False:
                raise ValueError("A Householder operator is always square.")
            super().__init__(self._reflection_axis.dtype,
                             graph_parents=[self._reflection_axis], is_non_singular=True,
                             is_self_adjoint=True, is_positive_definite=is_positive_definite,
                             is_square=True, name=name)

    @property
    def reflection_axis(self):
        return self._reflection_axis

    def _shape(self):
        s = self._reflection_axis.shape
        return s.concatenate(s[-1:]) if s.ndims is not None else TensorShape(None)

    def _shape_tensor(self):
        s = shape(self._reflection_axis)
        return concat([s, s[-1:]], 0)

    def _unit_axis(self):
        v = self._reflection_axis
        norm_sq = reduce_sum(math_ops.conj(v) * v, axis=-1, keepdims=True)
        return v / math_ops.sqrt(norm_sq)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = globals()["adjoint"](x) if adjoint_arg else x
        u = self._unit_axis()[..., None]
        return x - 2 * u * matmul(u, x, adjoint_a=True)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint, adjoint_arg)

    def _determinant(self):
        return -ones_like(self._reflection_axis[..., 0])

    def _log_abs_determinant(self):
        return 0 * math_ops.abs(self._reflection_axis[..., 0])

    def _diag_part(self):
        u = self._unit_axis()
        return 1 - 2 * u * math_ops.conj(u)

    def _trace(self):
        n = math_ops.cast(shape(self._reflection_axis)[-1], self.dtype)
        return n - 2 + 0 * self._reflection_axis[..., 0]

    def _assert_non_singular(self):
        return _no_op()

    def _assert_self_adjoint(self):
        return _no_op()

    def _assert_positive_definite(self):
        raise ValueError("Householder operators are always non-positive definite.")


# -- Permutation -------------------------------------------------------------------------------
class LinearOperatorPermutation(LinearOperator):
    """The permutation matrix P with (P x)[i] = x[perm[i]]."""

    def __init__(self, perm, dtype=_d.float32, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorPermutation"):
        with _graph.name_scope(name, values=[perm]):
            self._perm = convert_to_tensor(perm, name="perm")
            if not self._perm.dtype.is_integer:
                raise TypeError(f"Argument perm must have integer dtype. Found: "
                                f"{self._perm.dtype.name}")
            if self._perm.shape.ndims is not None and self._perm.shape.ndims < 1:
                raise ValueError(f"Argument perm must have at least 1 dimension.  Found: "
                                 f"{self._perm}")
            if is_non_singular is False:
                raise ValueError("A Permutation operator is always non-singular.")
            if is_square is False:
                raise ValueError("A Permutation operator is always square.")
            super().__init__(dtype, graph_parents=[self._perm], is_non_singular=True,
                             is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite, is_square=True,
                             name=name)

    @property
    def perm(self):
        return self._perm

    def _shape(self):
        s = self._perm.shape
        return s.concatenate(s[-1:]) if s.ndims is not None else TensorShape(None)

    def _shape_tensor(self):
        s = shape(self._perm)
        return concat([s, s[-1:]], 0)

    def _n(self):
        n = self._perm.shape.dims[-1].value if self._perm.shape.ndims else None
        return n if n is not None else shape(self._perm)[-1]

    def _to_dense(self):
        return math_ops.cast(one_hot(self._perm, self._n(), dtype=_d.float64), self.dtype)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return matmul(self.to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return matmul(self.to_dense(), rhs, adjoint_a=not adjoint, adjoint_b=adjoint_arg)

    def _determinant(self):
        # (-1)^(number of inversions).
        n = self._perm.shape.dims[-1].value
        i, j = np.triu_indices(n, 1)
        first = gather(self._perm, constant(i.astype(np.int32)), axis=-1)
        second = gather(self._perm, constant(j.astype(np.int32)), axis=-1)
        inversions = reduce_sum(math_ops.cast(math_ops.greater(first, second), _d.int32), -1)
        odd = math_ops.cast(math_ops.floormod(inversions, 2), self.dtype)
        return 1 - 2 * odd

    def _log_abs_determinant(self):
        return math_ops.cast(0 * self._perm[..., 0], self.dtype)

    def _diag_part(self):
        return math_ops.cast(math_ops.equal(self._perm, tf_range(self._n(), dtype=self._perm.dtype)),
                             self.dtype)
