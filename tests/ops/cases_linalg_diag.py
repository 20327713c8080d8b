"""NumPy-checked cases for diagonals, bands, cross products and tridiagonal systems
(ops/linalg/diag_ops.py, linalg_impl.py, tridiagonal_ops.py)."""

import numpy as np

import tensorflux as tf
from tests.ops.harness import Case, nonzero

F64 = (np.float64,)


def np_band_diags(x, lo, hi, pad=0):
    """Diagonals hi..lo of x[..., M, N], each left-aligned and right-padded (V2's layout)."""
    m, n = x.shape[-2:]
    length = min(m + min(hi, 0), n - max(lo, 0))
    out = np.full(x.shape[:-2] + (hi - lo + 1, length), pad, x.dtype)
    for row, d in enumerate(range(hi, lo - 1, -1)):
        values = np.diagonal(x, offset=d, axis1=-2, axis2=-1)
        out[..., row, :values.shape[-1]] = values
    return out[..., 0, :] if lo == hi else out


def np_from_diags(diags, lo, hi, rows, cols, pad=0):
    if lo == hi:
        diags = diags[..., None, :]
    out = np.full(diags.shape[:-2] + (rows, cols), pad, diags.dtype)
    for row, d in enumerate(range(hi, lo - 1, -1)):
        for p in range(diags.shape[-1]):
            i, j = (p, p + d) if d >= 0 else (p - d, p)
            if i < rows and j < cols:
                out[..., i, j] = diags[..., row, p]
    return out


def np_set_diags(x, diags, lo, hi):
    m, n = x.shape[-2:]
    mask = np_from_diags(np.ones_like(diags), lo, hi, m, n) != 0
    return np.where(mask, np_from_diags(diags, lo, hi, m, n), x)


def np_band_part(x, lower, upper):
    m, n = x.shape[-2:]
    i, j = np.arange(m)[:, None], np.arange(n)[None, :]
    keep = ((lower < 0) | (i - j <= lower)) & ((upper < 0) | (j - i <= upper))
    return np.where(keep, x, 0)


def np_tridiagonal(d):
    """[..., 3, M] compact (super, main, sub) -> the dense [..., M, M] matrix."""
    m = d.shape[-1]
    out = np.zeros(d.shape[:-2] + (m, m), d.dtype)
    for i in range(m):
        out[..., i, i] = d[..., 1, i]
        if i + 1 < m:
            out[..., i, i + 1] = d[..., 0, i]
        if i > 0:
            out[..., i, i - 1] = d[..., 2, i]
    return out


def dominant_tridiagonal(rng, shape, dtype):
    """Compact diagonals with a strong main diagonal (no pivoting needed)."""
    d = rng.uniform(-1, 1, shape).astype(dtype)
    d[..., 1, :] += 4 * np.sign(d[..., 1, :] + 1e-3)
    return d


CASES = [
    # -- V1 diagonals ----------------------------------------------------------------------
    Case("MatrixDiag", tf.linalg.diag, lambda d: np_from_diags(d, 0, 0, d.shape[-1],
                                                               d.shape[-1]),
         [((2, 3),)], (np.float32, np.int32)),
    Case("MatrixDiagPart", tf.linalg.diag_part, lambda x: np_band_diags(x, 0, 0),
         [((2, 3, 4),)], (np.float32, np.complex64)),
    Case("MatrixDiagPart", tf.linalg.diag_part, lambda x: np_band_diags(x, 0, 0),
         [((4, 2),)], F64, name="MatrixDiagPart(tall)"),
    Case("MatrixSetDiag", tf.linalg.set_diag, lambda x, d: np_set_diags(x, d, 0, 0),
         [((2, 3, 4), (2, 3)), ((3, 2), (2,))], F64),
    # -- V2: offsets and bands -------------------------------------------------------------
    Case("MatrixDiagV2", lambda d: tf.linalg.diag(d, k=1),
         lambda d: np_from_diags(d, 1, 1, d.shape[-1] + 1, d.shape[-1] + 1),
         [((2, 3),)], (np.float64, np.int32), name="MatrixDiagV2(k=1)"),
    Case("MatrixDiagV2", lambda d: tf.linalg.diag(d, k=(-1, 1), num_cols=4, padding_value=7),
         lambda d: np_from_diags(d, -1, 1, 4, 4, pad=7), [((2, 3, 4),)], F64,
         name="MatrixDiagV2(band, num_cols, padding)"),
    Case("MatrixDiagV2", lambda d: tf.linalg.diag(d, k=-2, num_rows=5),
         lambda d: np_from_diags(d, -2, -2, 5, 3), [((3,),)], F64,
         name="MatrixDiagV2(k=-2, num_rows)"),
    Case("MatrixDiagPartV2", lambda x: tf.linalg.diag_part(x, k=(-1, 2), padding_value=9),
         lambda x: np_band_diags(x, -1, 2, pad=9), [((2, 3, 4),)], F64,
         name="MatrixDiagPartV2(band)"),
    Case("MatrixDiagPartV2", lambda x: tf.linalg.diag_part(x, k=-1),
         lambda x: np_band_diags(x, -1, -1), [((4, 3),)], (np.float32, np.int64),
         name="MatrixDiagPartV2(k=-1)"),
    Case("MatrixSetDiagV2", lambda x, d: tf.linalg.set_diag(x, d, k=(0, 1)),
         lambda x, d: np_set_diags(x, d, 0, 1), [((2, 3, 4), (2, 2, 3))], F64,
         name="MatrixSetDiagV2(band)"),
    Case("MatrixSetDiagV2", lambda x, d: tf.linalg.set_diag(x, d, k=-1),
         lambda x, d: np_set_diags(x, d, -1, -1), [((3, 3), (2,))], F64,
         name="MatrixSetDiagV2(k=-1)"),
    # -- bands -----------------------------------------------------------------------------
    Case("MatrixBandPart", lambda x: tf.linalg.band_part(x, 1, 0),
         lambda x: np_band_part(x, 1, 0), [((2, 3, 4),)], (np.float32, np.int32)),
    Case("MatrixBandPart", lambda x: tf.matrix_band_part(x, -1, 2),
         lambda x: np_band_part(x, -1, 2), [((5, 4),)], F64, name="MatrixBandPart(-1, 2)"),
    Case("MatrixBandPart", lambda x: tf.linalg.band_part(x, tf.constant(0, tf.int32), -1),
         lambda x: np_band_part(x, 0, -1), [((3, 3),)], F64,
         name="MatrixBandPart(int32 bounds)"),
    # -- cross -----------------------------------------------------------------------------
    Case("Cross", tf.cross, np.cross, [((2, 3), (2, 3))], (np.float32, np.int32)),
    # -- tridiagonal -------------------------------------------------------------------------
    Case("TridiagonalSolve", tf.linalg.tridiagonal_solve,
         lambda d, b: np.linalg.solve(np_tridiagonal(d), b), [((2, 3, 4), (2, 4, 2))],
         (np.float32,), gen=[dominant_tridiagonal, nonzero()], rtol=1e-4),
    Case("TridiagonalSolve",
         lambda d, b: tf.linalg.tridiagonal_solve(d, b, partial_pivoting=False),
         lambda d, b: np.linalg.solve(np_tridiagonal(d), b), [((3, 5), (5, 3))], F64,
         gen=[dominant_tridiagonal, nonzero()], name="TridiagonalSolve(no pivoting)"),
    Case("TridiagonalSolve",
         lambda d, b: tf.linalg.tridiagonal_solve(d, b, diagonals_format="matrix"),
         lambda d, b: np.linalg.solve(np_band_part(d, 1, 1), b), [((4, 4), (4, 2))], F64,
         gen=[lambda rng, s, t: rng.uniform(-1, 1, s) + 4 * np.eye(s[-1]), nonzero()],
         name="TridiagonalSolve(matrix format)", unknown_dims=False),
    Case("TridiagonalMatMul", tf.linalg.tridiagonal_matmul,
         lambda d, b: np_tridiagonal(d) @ b, [((2, 3, 4), (2, 4, 3))],
         (np.float32, np.complex128)),
    Case("TridiagonalMatMul",
         lambda sup, main, sub, b: tf.linalg.tridiagonal_matmul(
             [sup, main, sub], b, diagonals_format="sequence"),
         lambda sup, main, sub, b: np_tridiagonal(np.stack([sup, main, sub], -2)) @ b,
         [((4,), (4,), (4,), (4, 2))], F64, name="TridiagonalMatMul(sequence)"),
]
