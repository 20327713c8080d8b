"""NumPy-checked cases for roll, parallel_stack, unravel_index, shape utilities, bitcast,
searchsorted, histograms and fake quantization (array family)."""

import numpy as np

import tensorflux as tf
from tensorflux._src.ops.op_builder import apply_op
from tests.ops.harness import Case, fixed, ints, uniform

F = (np.float32,)
FI = (np.float32, np.int32)


def sorted_rows(rng, shape, dtype):
    return np.sort(uniform(-3, 3)(rng, shape, dtype), axis=-1)


def np_searchsorted(seq, values, side="left", dtype=np.int32):
    s2, v2 = seq.reshape(-1, seq.shape[-1]), values.reshape(-1, values.shape[-1])
    out = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(s2, v2)])
    return out.reshape(values.shape).astype(dtype)


def np_histogram(values, lo, hi, nbins, dtype=np.int32):
    # np.histogram's bins are half-open except the last, which holds hi itself; values
    # outside [lo, hi] count at the nearest edge, as in TF.
    counts, _ = np.histogram(np.clip(values, lo, hi), bins=nbins, range=(lo, hi))
    return counts.astype(dtype)


def np_fake_quant(x, mn, mx, bits=8, narrow=False):
    f = np.float32
    qmin, qmax = f(1 if narrow else 0), f(2 ** bits - 1)
    mn, mx = np.asarray(mn, f), np.asarray(mx, f)
    scale = (mx - mn) / (qmax - qmin)
    zero_from_min = qmin - mn / scale
    zero = np.where(zero_from_min < qmin, qmin,
                    np.where(zero_from_min > qmax, qmax, np.floor(zero_from_min + f(0.5))))
    lo, hi = (qmin - zero) * scale, (qmax - zero) * scale
    return (np.floor((np.clip(x, lo, hi) - lo) / scale + f(0.5)) * scale + lo).astype(f), lo, hi


def np_fake_quant_grads(g, x, mn, mx, bits=8, narrow=False, per_channel=False):
    _, lo, hi = np_fake_quant(x, mn, mx, bits, narrow)
    axes = tuple(range(x.ndim - 1)) if per_channel else None
    inside = (x >= lo) & (x <= hi)
    return (np.where(inside, g, 0).astype(np.float32),
            np.sum(np.where(x < lo, g, 0), axis=axes).astype(np.float32),
            np.sum(np.where(x > hi, g, 0), axis=axes).astype(np.float32))


MIN_MAX = [uniform(-4, 4), fixed(-1.3), fixed(2.1)]
PER_CHANNEL = [uniform(-4, 4), fixed([-1.0, -0.3, 0.0, -2.5]), fixed([1.0, 2.7, 3.0, 0.4])]

CASES = [
    # -- roll ---------------------------------------------------------------------------------
    Case("Roll", lambda x: tf.roll(x, [2, -1], [0, 1]), lambda x: np.roll(x, [2, -1], [0, 1]),
         [((4, 3),)], FI),
    Case("Roll", lambda x, s: tf.manip.roll(x, s, [1, -1]),
         lambda x, s: np.roll(x, int(s.sum()), axis=1), [((2, 5), (2,))],
         [(np.float32, np.int32), (np.int64, np.int64)], gen=[uniform(), ints(-7, 7)],
         name="Roll(fed shifts, one axis twice)"),
    # -- parallel_stack (needs fully known shapes; no gradient in TF) ---------------------------
    Case("ParallelConcat", lambda x, y: tf.parallel_stack([x, y]),
         lambda x, y: np.stack([x, y]), [((2, 3), (2, 3))], FI, unknown_dims=False,
         grad=False),
    # -- unravel_index, shape_n, broadcast_dynamic_shape --------------------------------------
    Case("UnravelIndex", lambda i: tf.unravel_index(i, [3, 4, 5]),
         lambda i: np.stack(np.unravel_index(i, (3, 4, 5))).astype(i.dtype), [((6,),)],
         (np.int32, np.int64), gen=ints(0, 59)),
    Case("UnravelIndex", lambda i, d: tf.unravel_index(i, d),
         lambda i, d: np.array(np.unravel_index(int(i), tuple(d)), np.int32),
         [((), (3,))], [(np.int32, np.int32)], gen=[fixed(37), fixed([2, 5, 4])],
         name="UnravelIndex(scalar, fed dims)"),
    Case("ShapeN", lambda x, y: tf.shape_n([x, y]),
         lambda x, y: [np.array(x.shape, np.int32), np.array(y.shape, np.int32)],
         [((2, 3), (4,))], F),
    Case("ShapeN", lambda x: tf.shape_n([x], out_type=tf.int64),
         lambda x: [np.array(x.shape, np.int64)], [((1, 2, 3),)], F, name="ShapeN(int64)"),
    Case("BroadcastArgs", tf.broadcast_dynamic_shape,
         lambda a, b: np.array(np.broadcast_shapes(tuple(a), tuple(b)), a.dtype),
         [((3,), (2,))], (np.int32, np.int64), gen=[fixed([3, 1, 4]), fixed([5, 1])]),
    # ConcatV2's gradient in TF-written graphs: each input's start along the axis.
    Case("ConcatOffset",
         lambda a, b, c: apply_op("ConcatOffset", concat_dim=1, shape=[a, b, c]),
         lambda a, b, c: [np.array([0, 0, 0], a.dtype), np.array([0, 2, 0], a.dtype),
                          np.array([0, 5, 0], a.dtype)],
         [((3,), (3,), (3,))], (np.int32, np.int64),
         gen=[fixed([4, 2, 7]), fixed([4, 3, 7]), fixed([4, 1, 7])]),
    Case("ConcatOffset",
         lambda a, b: apply_op("ConcatOffset", concat_dim=-1, shape=[a, b]),
         lambda a, b: [np.array([0, 0], a.dtype), np.array([0, 6], a.dtype)],
         [((2,), (2,))], (np.int32,), gen=[fixed([5, 6]), fixed([5, 2])],
         name="ConcatOffset(negative axis)"),
    # -- ensure_shape, bitcast, guarantee_const -------------------------------------------------
    Case("EnsureShape", lambda x: tf.ensure_shape(x, [None, 3]), lambda x: x, [((2, 3),)], FI),
    Case("Bitcast", lambda x: tf.bitcast(x, tf.int32), lambda x: x.view(np.int32),
         [((2, 3),)], F, grad=False),
    Case("Bitcast", lambda x: tf.bitcast(x, tf.uint16),
         lambda x: x.view(np.uint16).reshape(x.shape + (4,)), [((3,),)], (np.float64,),
         grad=False, name="Bitcast(to a smaller type)"),
    Case("Bitcast", lambda x: tf.bitcast(x, tf.float32),
         lambda x: x.view(np.float32).reshape(x.shape[:-1]), [((3, 2),)], (np.int16,),
         gen=ints(-300, 300), grad=False, name="Bitcast(to a bigger type)"),
    Case("GuaranteeConst", tf.guarantee_const, lambda x: x, [((3,),)], FI, grad=False),
    # -- searchsorted, histograms ---------------------------------------------------------------
    Case("LowerBound", tf.searchsorted, np_searchsorted, [((2, 3, 6), (2, 3, 4)), ((5,), (7,))],
         FI, gen=[sorted_rows, uniform(-4, 4)]),
    Case("UpperBound", lambda s, v: tf.searchsorted(s, v, side="right", out_type=tf.int64),
         lambda s, v: np_searchsorted(s, v, "right", np.int64), [((3, 5), (3, 2))], FI,
         gen=[sorted_rows, ints(-3, 3)]),
    Case("HistogramFixedWidth", lambda v: tf.histogram_fixed_width(v, [-1.0, 2.0], nbins=5),
         lambda v: np_histogram(v, -1.0, 2.0, 5), [((40,),), ((3, 7),)],
         (np.float32, np.float64), gen=uniform(-2, 3)),
    Case("HistogramFixedWidth",
         lambda v, r: tf.histogram_fixed_width(v, r, nbins=4, dtype=tf.int64),
         lambda v, r: np_histogram(v, r[0], r[1], 4, np.int64), [((30,), (2,))],
         [(np.int32, np.int32)], gen=[ints(-3, 12), fixed([0, 8])],
         name="HistogramFixedWidth(int values, fed range)"),
    # -- fake quantization (float32 in and out; forward gradients are straight-through,
    #    checked in test_array_ops.py) ------------------------------------------------------
    Case("FakeQuantWithMinMaxArgs", tf.fake_quant_with_min_max_args,
         lambda x: np_fake_quant(x, -6.0, 6.0)[0], [((4, 5),)], F, gen=uniform(-8, 8),
         grad=False),
    Case("FakeQuantWithMinMaxArgs",
         lambda x: tf.fake_quant_with_min_max_args(x, -0.5, 1.3, num_bits=4, narrow_range=True),
         lambda x: np_fake_quant(x, -0.5, 1.3, 4, True)[0], [((12,),)], F, gen=uniform(-1, 2),
         grad=False, name="FakeQuantWithMinMaxArgs(4 bits, narrow)"),
    Case("FakeQuantWithMinMaxArgsGradient",
         lambda g, x: tf.fake_quant_with_min_max_args_gradient(g, x, -1.0, 1.5),
         lambda g, x: np_fake_quant_grads(g, x, -1.0, 1.5)[0], [((10,), (10,))], F,
         gen=uniform(-2, 2)),
    Case("FakeQuantWithMinMaxVars",
         lambda x, mn, mx: tf.fake_quant_with_min_max_vars(x, mn, mx, num_bits=6),
         lambda x, mn, mx: np_fake_quant(x, mn, mx, 6)[0], [((3, 4), (), ())], F,
         gen=MIN_MAX, grad=False),
    Case("FakeQuantWithMinMaxVarsGradient",
         lambda g, x, mn, mx: tf.fake_quant_with_min_max_vars_gradient(g, x, mn, mx),
         lambda g, x, mn, mx: list(np_fake_quant_grads(g, x, mn, mx)),
         [((3, 4), (3, 4), (), ())], F, gen=[uniform()] + MIN_MAX),
    Case("FakeQuantWithMinMaxVarsPerChannel",
         lambda x, mn, mx: tf.fake_quant_with_min_max_vars_per_channel(x, mn, mx,
                                                                      narrow_range=True),
         lambda x, mn, mx: np_fake_quant(x, mn, mx, 8, True)[0], [((2, 3, 4), (4,), (4,))],
         F, gen=PER_CHANNEL, grad=False),
    Case("FakeQuantWithMinMaxVarsPerChannelGradient",
         lambda g, x, mn, mx: tf.fake_quant_with_min_max_vars_per_channel_gradient(
             g, x, mn, mx, num_bits=5),
         lambda g, x, mn, mx: list(np_fake_quant_grads(g, x, mn, mx, 5, per_channel=True)),
         [((5, 4), (5, 4), (4,), (4,))], F, gen=[uniform()] + PER_CHANNEL),
]
