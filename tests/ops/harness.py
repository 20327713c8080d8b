"""Registry-driven op checks: each `Case` names the op type it covers and a NumPy
expectation written in the test. `run_case` builds the op on placeholders twice, once
with fully known shapes and once with every dimension unknown, runs both, and checks
values, dtype and the statically inferred shape against NumPy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

import tensorflux as tf

# Tolerances per result dtype (float16/bfloat16 are checked loosely, as TF's tests do).
_TOL = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12,
        np.dtype(np.complex64): 2e-5, np.dtype(np.complex128): 1e-12}


def uniform(low=-3.0, high=3.0):
    def make(rng, shape, dtype):
        dtype = np.dtype(dtype)
        if dtype == np.bool_:
            return rng.random(shape) < 0.5
        if dtype.kind in "iu":
            lo = max(int(low), 0) if dtype.kind == "u" else int(low)
            return rng.integers(lo, int(high) + 1, size=shape).astype(dtype)
        if dtype.kind == "c":
            return (rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)).astype(dtype)
        return rng.uniform(low, high, shape).astype(dtype)
    return make


def ints(low, high):
    """Integers in [low, high] (indices that are fed at run time)."""
    def make(rng, shape, dtype):
        return rng.integers(low, high + 1, size=shape).astype(dtype)
    return make


def fixed(values):
    """The same `values` every time, shaped as the input."""
    def make(rng, shape, dtype):
        return np.asarray(values, dtype).reshape(shape)
    return make


def positive(low=0.5, high=3.0):
    return uniform(low, high)


def nonzero(low=1, high=4):
    """Values away from zero with random signs (divisors)."""
    def make(rng, shape, dtype):
        mag = uniform(low, high)(rng, shape, dtype)
        if np.dtype(dtype).kind == "u":
            return mag
        return mag * np.where(rng.random(shape) < 0.5, -1, 1).astype(dtype)
    return make


@dataclass
class Case:
    """One op checked on random inputs against NumPy.

    op:      the registry op type this case covers (several cases may cover one op)
    fn:      builds the graph from input tensors, with the public tf API
    expect:  NumPy expectation on the input arrays (written in the test, not tensorflux)
    shapes:  a list of shape tuples, one tuple of input shapes per check
    dtypes:  input dtypes to try; `gen` makes values (one generator or one per input)
    out_dtype: expected result dtype when it is not the NumPy result's dtype
    unknown_dims: also build with every input dimension unknown (set False when an op
             needs static shapes at graph construction)
    """

    op: str
    fn: Callable
    expect: Callable
    shapes: Sequence[Sequence[tuple]]
    dtypes: Sequence = (np.float32, np.float64)
    gen: Callable | Sequence[Callable] = field(default_factory=uniform)
    out_dtype: object = None
    rtol: float | None = None
    unknown_dims: bool = True
    name: str = ""
    grad: bool = True  # also check the gradient against finite differences of `expect`
    grad_inputs: Sequence[int] | None = None  # which inputs (default: every float input)
    grad_gen: Callable | Sequence[Callable] | None = None  # values for the gradient check

    def __str__(self):
        return self.name or self.op


def _generators(case, n):
    return list(case.gen) if isinstance(case.gen, (list, tuple)) else [case.gen] * n


def _dtypes_for(dtype, n):
    return list(dtype) if isinstance(dtype, (list, tuple)) else [dtype] * n


def _assert_close(got, want, case, label):
    want = np.asarray(want)
    got_arr = np.asarray(got)
    expected_dtype = np.dtype(case.out_dtype) if case.out_dtype is not None else want.dtype
    assert got_arr.dtype == expected_dtype, f"{label}: dtype {got_arr.dtype} != {expected_dtype}"
    assert got_arr.shape == want.shape, f"{label}: shape {got_arr.shape} != {want.shape}"
    if got_arr.dtype.kind in "fc" or str(got_arr.dtype) == "bfloat16":
        rtol = case.rtol or _TOL.get(got_arr.dtype, 1e-2)
        np.testing.assert_allclose(got_arr.astype(np.complex128 if got_arr.dtype.kind == "c"
                                                  else np.float64),
                                   want.astype(np.complex128 if want.dtype.kind == "c"
                                               else np.float64),
                                   rtol=rtol, atol=rtol, err_msg=label)
    else:
        np.testing.assert_array_equal(got_arr, want, err_msg=label)


def run_case(case: Case, seed=0):
    """Runs every (shapes, dtype) combination of a case; raises AssertionError on mismatch."""
    rng = np.random.default_rng(seed)
    for shapes in case.shapes:
        for dtype in case.dtypes:
            dts = _dtypes_for(dtype, len(shapes))
            gens = _generators(case, len(shapes))
            arrays = [g(rng, s, d) for g, s, d in zip(gens, shapes, dts)]
            want = case.expect(*arrays)
            label = f"{case} shapes={list(shapes)} dtype={dts}"
            graph = tf.Graph()
            with graph.as_default():
                variants = [("known", [list(s) for s in shapes])]
                if case.unknown_dims:
                    variants.append(("unknown", [[None] * len(s) for s in shapes]))
                built = []
                for tag, ph_shapes in variants:
                    phs = [tf.placeholder(tf.as_dtype(d), s) for d, s in zip(dts, ph_shapes)]
                    built.append((tag, phs, case.fn(*phs)))
            # One run for both variants: one compile per (shapes, dtype).
            feeds = {ph: a for _, phs, _ in built for ph, a in zip(phs, arrays)}
            with tf.Session(graph=graph) as sess:
                results = sess.run([out for _, _, out in built], feeds)
            for (tag, phs, out), got in zip(built, results):
                outs, wants = (out, want) if isinstance(out, (list, tuple)) else ([out], [want])
                gots = got if isinstance(out, (list, tuple)) else [got]
                for t, g, w in zip(outs, gots, wants):
                    _assert_close(g, w, case, f"{label} [{tag}] {t.name}")
                    w_shape = np.shape(w)
                    assert t.shape.is_compatible_with(w_shape), \
                        f"{label} [{tag}]: static shape {t.shape} vs actual {w_shape}"
                    if tag == "known":
                        assert t.shape.is_fully_defined() and \
                            tuple(t.shape.as_list()) == w_shape, \
                            f"{label}: static shape {t.shape} should be {w_shape}"


def numeric_gradient(objective, arrays, i, eps=1e-6):
    """Central differences of the scalar `objective(*arrays)` with respect to arrays[i].

    Perturbs arrays[i] in place (restoring every element), so pass float64 arrays.
    """
    grad = np.zeros(np.shape(arrays[i]), dtype=np.float64)
    flat = arrays[i].reshape(-1)
    for j in range(flat.size):
        orig = flat[j]
        flat[j] = orig + eps
        up = objective(*arrays)
        flat[j] = orig - eps
        down = objective(*arrays)
        flat[j] = orig
        grad.reshape(-1)[j] = (up - down) / (2 * eps)
    return grad


def _float64(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.dtype(np.float64)
    if dtype.kind == "c":
        return np.dtype(np.complex128)
    return dtype


def gradient_dtypes(case):
    """Input dtypes for the float64 gradient check, or None when nothing is differentiable
    (no float input, or no float output to differentiate)."""
    for dtype in case.dtypes:
        dts = [_float64(d) for d in _dtypes_for(dtype, len(case.shapes[0]))]
        if not any(d.kind == "f" for d in dts):
            continue
        rng = np.random.default_rng(0)
        gens = _generators(case, len(dts)) if case.grad_gen is None else (
            list(case.grad_gen) if isinstance(case.grad_gen, (list, tuple))
            else [case.grad_gen] * len(dts))
        arrays = [g(rng, s, d) for g, s, d in zip(gens, case.shapes[0], dts)]
        outs = case.expect(*arrays)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        if any(np.asarray(o).dtype.kind == "f" for o in outs):
            return dts
    return None


def gradient_setup(case, seed=1):
    """(input dtypes, float64 input arrays, indices of the inputs to differentiate, one
    weight array per float output, objective) for checking d sum(w * op(x)) / dx: the
    objective is that sum computed with the NumPy `expect`."""
    rng = np.random.default_rng(seed)
    dts = gradient_dtypes(case)
    shapes = case.shapes[0]
    gens = _generators(case, len(shapes)) if case.grad_gen is None else (
        list(case.grad_gen) if isinstance(case.grad_gen, (list, tuple))
        else [case.grad_gen] * len(shapes))
    arrays = [g(rng, s, d) for g, s, d in zip(gens, shapes, dts)]
    wrt = case.grad_inputs if case.grad_inputs is not None else [
        i for i, d in enumerate(dts) if d.kind == "f"]
    outs = case.expect(*arrays)
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    weights = [rng.uniform(0.5, 1.5, np.shape(o)) if np.asarray(o).dtype.kind == "f" else None
               for o in outs]

    def objective(*xs):
        values = case.expect(*xs)
        values = list(values) if isinstance(values, (list, tuple)) else [values]
        return sum(float(np.sum(w * v)) for w, v in zip(weights, values) if w is not None)

    return dts, arrays, wrt, weights, objective


def run_gradient_case(case, seed=1, eps=1e-6, tol=1e-6):
    """tf.gradients of sum(w * op(x)) against central differences of the NumPy `expect`."""
    dts, arrays, wrt, weights, objective = gradient_setup(case, seed)
    shapes = case.shapes[0]
    graph = tf.Graph()
    with graph.as_default():
        phs = [tf.placeholder(tf.as_dtype(d), s) for d, s in zip(dts, shapes)]
        built = case.fn(*phs)
        built = list(built) if isinstance(built, (list, tuple)) else [built]
        terms = [tf.reduce_sum(t * tf.constant(w, dtype=t.dtype))
                 for t, w in zip(built, weights) if w is not None]
        loss = tf.add_n(terms) if len(terms) > 1 else terms[0]
        grads = tf.gradients(loss, [phs[i] for i in wrt])
        # gather's gradient is an IndexedSlices, as TF's: compare it densified
        grads = [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g
                 for g in grads]
    with tf.Session(graph=graph) as sess:
        got = sess.run([g for g in grads if g is not None], dict(zip(phs, arrays)))
    got_iter = iter(got)
    for i, g in zip(wrt, grads):
        assert g is not None, f"{case}: tf.gradients returned None for input {i}"
        analytic = next(got_iter)
        numeric = numeric_gradient(objective, arrays, i, eps)
        np.testing.assert_allclose(analytic, numeric, rtol=tol, atol=tol,
                                   err_msg=f"{case}: gradient of input {i}")
