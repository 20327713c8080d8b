"""NumPy-checked cases for the tf.nn extras: CTC loss (an alpha recursion written with
plain loops), morphology (window loops), the fractional-pooling gradient ops (cells from
a fixed valid pooling sequence), the raw convolution ops (direct sums over windows) and
the CTC label helpers. Ops whose outputs depend on the data's shape (decoders, collapse)
or on a random draw (fractional pooling) are checked in tests/ops/test_nn_extras_*.py."""

import itertools

import numpy as np

import tensorflux as tf
from tensorflux._src.ops.op_builder import apply_op
from tests.ops.harness import Case, fixed, uniform

FLOAT = (np.float32, np.float64)


def distinct(rng, shape, dtype):
    """Values 0.1 apart in random order: no ties, so maxima are differentiable."""
    n = int(np.prod(shape))
    return ((rng.permutation(n) - n / 2) * 0.1).reshape(shape).astype(dtype)


# -- CTC ---------------------------------------------------------------------------------------
def np_log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def _lse(values):
    values = [v for v in values if v > -np.inf]
    if not values:
        return -np.inf
    m = max(values)
    return m + np.log(sum(np.exp(v - m) for v in values))


def np_ctc_nll(logits, label, blank, merge=True):
    """-log p(label | logits [T, C]) by Graves' alpha recursion, one example."""
    lp = np_log_softmax(logits.astype(np.float64))
    ext = [blank]
    for c in label:
        ext += [c, blank]
    alpha = [-np.inf] * len(ext)
    alpha[0] = lp[0, blank]
    if len(ext) > 1:
        alpha[1] = lp[0, ext[1]]
    for t in range(1, len(lp)):
        new = []
        for s, c in enumerate(ext):
            terms = [alpha[s - 1]] if s >= 1 else []
            if merge or c == blank:
                terms.append(alpha[s])
            if s >= 2 and c != blank and not (merge and c == ext[s - 2]):
                terms.append(alpha[s - 2])
            new.append(_lse(terms) + lp[t, c])
        alpha = new
    return -_lse(alpha[-2:])


CTC_LABELS = [[0, 1], [2, 2], [1]]
CTC_SEQ = [5, 4, 3]


def _sparse(labels):
    idx = [[b, t] for b, row in enumerate(labels) for t in range(len(row))]
    vals = [v for row in labels for v in row]
    return tf.SparseTensor(np.array(idx, np.int64), np.array(vals, np.int32),
                           [len(labels), max(map(len, labels))])


def _ctc_expect(x):
    return np.array([np_ctc_nll(x[:n, b], lab, x.shape[2] - 1)
                     for b, (lab, n) in enumerate(zip(CTC_LABELS, CTC_SEQ))], x.dtype)


DENSE_LABELS = np.array([[1, 2, 0], [3, 3, 1], [2, 0, 0]], np.int32)
DENSE_LEN = [2, 3, 1]


def _dense_expect(x):
    return np.array([np_ctc_nll(x[:n, b], DENSE_LABELS[b, :k], 0)
                     for b, (k, n) in enumerate(zip(DENSE_LEN, [5, 5, 4]))], x.dtype)


def np_unique_rows(labels):
    uniq, idx = np.zeros(labels.shape, np.int64), np.zeros(labels.shape, np.int32)
    for b, row in enumerate(labels):
        seen = []
        for i, v in enumerate(row):
            if v not in seen:
                seen.append(v)
            idx[b, i] = seen.index(v)
        uniq[b, :len(seen)] = seen
    return uniq, idx


# -- morphology --------------------------------------------------------------------------------
def _tf_pads(size, k, stride, padding):
    if padding == "VALID":
        return 0, (size - k) // stride + 1
    out = -(-size // stride)
    return max((out - 1) * stride + k - size, 0) // 2, out


def _taps(x_shape, w_shape, strides, rates, padding):
    """For every output (b, y, x, c): the valid (input row, col, filter row, col) taps
    in row-major filter order."""
    geo = [_tf_pads(x_shape[a], (w_shape[a - 1] - 1) * rates[a] + 1, strides[a], padding)
           for a in (1, 2)]
    for oy, ox in itertools.product(range(geo[0][1]), range(geo[1][1])):
        taps = []
        for i, j in itertools.product(range(w_shape[0]), range(w_shape[1])):
            y = oy * strides[1] - geo[0][0] + i * rates[1]
            x = ox * strides[2] - geo[1][0] + j * rates[2]
            if 0 <= y < x_shape[1] and 0 <= x < x_shape[2]:
                taps.append((y, x, i, j))
        yield oy, ox, taps, (geo[0][1], geo[1][1])


def np_dilation(x, w, strides, rates, padding):
    out = None
    for oy, ox, taps, size in _taps(x.shape, w.shape, strides, rates, padding):
        if out is None:
            out = np.zeros((x.shape[0],) + size + (x.shape[3],), x.dtype)
        out[:, oy, ox] = np.max([x[:, y, xx] + w[i, j] for y, xx, i, j in taps], axis=0)
    return out


def np_dilation_grads(x, w, dy, strides, rates, padding):
    dx, dw = np.zeros_like(x), np.zeros_like(w)
    for oy, ox, taps, _ in _taps(x.shape, w.shape, strides, rates, padding):
        for b, c in itertools.product(range(x.shape[0]), range(x.shape[3])):
            vals = [x[b, y, xx, c] + w[i, j, c] for y, xx, i, j in taps]
            y, xx, i, j = taps[int(np.argmax(vals))]  # the first maximum
            dx[b, y, xx, c] += dy[b, oy, ox, c]
            dw[i, j, c] += dy[b, oy, ox, c]
    return dx, dw


DIL = dict(strides=[1, 2, 1, 1], rates=[1, 1, 2, 1])


# -- fractional pooling gradients --------------------------------------------------------------
ROWS = np.array([0, 2, 3, 5, 7], np.int64)  # 7 input rows -> 4 cells
COLS = np.array([0, 1, 3, 4, 6], np.int64)  # 6 input cols -> 4 cells


def _cells(seq, size, overlapping):
    return [list(range(seq[i], min(seq[i + 1] - (0 if overlapping else 1), size - 1) + 1))
            for i in range(len(seq) - 1)]


def np_frac_max_grad(x, dy, overlapping):
    dx = np.zeros_like(x)
    for (i, rows), (j, cols) in itertools.product(enumerate(_cells(ROWS, 7, overlapping)),
                                                  enumerate(_cells(COLS, 6, overlapping))):
        for b, c in itertools.product(range(x.shape[0]), range(x.shape[3])):
            cell = [(r, q) for r in rows for q in cols]
            r, q = cell[int(np.argmax([x[b, r, q, c] for r, q in cell]))]
            dx[b, r, q, c] += dy[b, i, j, c]
    return dx


def np_frac_avg_grad(shape, dy, overlapping):
    dx = np.zeros(shape, np.float64)
    for (i, rows), (j, cols) in itertools.product(enumerate(_cells(ROWS, 7, overlapping)),
                                                  enumerate(_cells(COLS, 6, overlapping))):
        share = dy[:, i, j] / (len(rows) * len(cols))
        for r, q in itertools.product(rows, cols):
            dx[:, r, q] += share
    return dx.astype(dy.dtype)


# -- raw convolutions --------------------------------------------------------------------------
def np_conv_nhwc(x, w, strides, padding, dilations=(1, 1), groups=1):
    """Direct 2-D convolution, NHWC input, HWIO filter (grouped)."""
    eff = [(w.shape[i] - 1) * dilations[i] + 1 for i in range(2)]
    geo = [_tf_pads(x.shape[1 + i], eff[i], strides[i], padding) for i in range(2)]
    xp = np.pad(x, [(0, 0)] + [(g[0], eff[i] + (g[1] - 1) * strides[i])
                               for i, g in enumerate(geo)] + [(0, 0)])
    cin, cout = w.shape[2], w.shape[3]
    out = np.zeros((x.shape[0], geo[0][1], geo[1][1], cout), np.float64)
    for oy, ox, g in itertools.product(range(geo[0][1]), range(geo[1][1]), range(groups)):
        patch = xp[:, oy * strides[0]:oy * strides[0] + eff[0]:dilations[0],
                   ox * strides[1]:ox * strides[1] + eff[1]:dilations[1],
                   g * cin:(g + 1) * cin]
        o = slice(g * cout // groups, (g + 1) * cout // groups)
        out[:, oy, ox, o] = np.einsum("bijc,ijco->bo", patch, w[:, :, :, o])
    return out.astype(x.dtype)


def np_conv_generic(x, w):
    """tf.conv with batch_dims=2, groups=2, strides [1, 1, 2, 1], SAME, channels last."""
    flat = x.reshape((-1,) + x.shape[2:])
    out = np_conv_nhwc(flat, w, (1, 2), "SAME", groups=2)
    return out.reshape(x.shape[:2] + out.shape[1:])


def np_conv1d_channels_first(x, w):
    """tf.conv on [B, C, W] with CHANNELS_FIRST, VALID, dilation 2."""
    out = np_conv_nhwc(np.transpose(x, (0, 2, 1))[:, None], w[None], (1, 1), "VALID",
                       dilations=(1, 2))
    return np.transpose(out[:, 0], (0, 2, 1))


def np_backprop_filter(x, dy, w_shape, strides, padding):
    """d(sum(dy * conv(x, w))) / dw, by linearity: the conv of x with each basis filter."""
    dw = np.zeros(w_shape, np.float64)
    for index in np.ndindex(*w_shape):
        basis = np.zeros(w_shape)
        basis[index] = 1
        dw[index] = np.sum(np_conv_nhwc(x.astype(np.float64), basis, strides, padding) * dy)
    return dw.astype(x.dtype)


def np_backprop_input(w, dy, x_shape, strides, padding):
    dx = np.zeros(x_shape, np.float64)
    for index in np.ndindex(*x_shape):
        basis = np.zeros(x_shape)
        basis[index] = 1
        dx[index] = np.sum(np_conv_nhwc(basis, w.astype(np.float64), strides, padding) * dy)
    return dx.astype(w.dtype)


CASES = [
    Case("CTCLoss", lambda x: tf.nn.ctc_loss(_sparse(CTC_LABELS), x, CTC_SEQ), _ctc_expect,
         [((5, 3, 4),)], (np.float32,), rtol=1e-4),
    Case("_CTCLossDense",
         lambda x: tf.nn.ctc_loss_v2(DENSE_LABELS, x, DENSE_LEN, [5, 5, 4]), _dense_expect,
         [((5, 3, 4),)], (np.float32,), rtol=1e-4),
    Case("PreventGradient", lambda x: apply_op("PreventGradient", input=x), lambda x: x,
         [((2, 3),)], FLOAT, grad=False),
    Case("_CTCUniqueLabels", lambda x: tf.nn.ctc_unique_labels(x), np_unique_rows,
         [((3, 6),)], (np.int32, np.int64), gen=uniform(0, 4)),
    Case("Dilation2D", lambda x, w: tf.nn.dilation2d(x, w, padding="SAME", **DIL),
         lambda x, w: np_dilation(x, w, padding="SAME", **DIL),
         [((2, 6, 5, 3), (3, 2, 3))], FLOAT + (np.int32,), gen=distinct,
         grad_gen=uniform()),  # continuous values: no tied window sums
    Case("Dilation2D", lambda x, w: tf.nn.dilation2d(x, w, [1, 1, 2, 1], [1, 2, 1, 1],
                                                     "VALID"),
         lambda x, w: np_dilation(x, w, [1, 1, 2, 1], [1, 2, 1, 1], "VALID"),
         [((1, 7, 6, 2), (2, 3, 2))], FLOAT, gen=distinct, grad_gen=uniform(),
         name="Dilation2D(VALID)"),
    Case("Dilation2DBackpropInput",
         lambda x, w, dy: apply_op("Dilation2DBackpropInput", input=x, filter=w,
                                   out_backprop=dy, padding="SAME", **DIL),
         lambda x, w, dy: np_dilation_grads(x, w, dy, padding="SAME", **DIL)[0],
         [((2, 6, 5, 3), (3, 2, 3), (2, 3, 5, 3))], FLOAT, gen=distinct, grad=False),
    Case("Dilation2DBackpropFilter",
         lambda x, w, dy: apply_op("Dilation2DBackpropFilter", input=x, filter=w,
                                   out_backprop=dy, padding="SAME", **DIL),
         lambda x, w, dy: np_dilation_grads(x, w, dy, padding="SAME", **DIL)[1],
         [((2, 6, 5, 3), (3, 2, 3), (2, 3, 5, 3))], FLOAT, gen=distinct, grad=False),
    Case("FractionalMaxPoolGrad",
         lambda x, dy, r, c: apply_op("FractionalMaxPoolGrad", orig_input=x,
                                      orig_output=dy, out_backprop=dy,
                                      row_pooling_sequence=r, col_pooling_sequence=c,
                                      overlapping=True),
         lambda x, dy, r, c: np_frac_max_grad(x, dy, True),
         [((2, 7, 6, 3), (2, 4, 4, 3), (5,), (5,))],
         [(d, d, np.int64, np.int64) for d in FLOAT + (np.int32,)],
         gen=[distinct, uniform(-3, 3), fixed(ROWS), fixed(COLS)], grad=False),
    Case("FractionalAvgPoolGrad",
         lambda dy, r, c: apply_op("FractionalAvgPoolGrad",
                                   orig_input_tensor_shape=np.array([2, 7, 6, 3], np.int64),
                                   out_backprop=dy, row_pooling_sequence=r,
                                   col_pooling_sequence=c),
         lambda dy, r, c: np_frac_avg_grad((2, 7, 6, 3), dy, False),
         [((2, 4, 4, 3), (5,), (5,))], [(d, np.int64, np.int64) for d in FLOAT],
         gen=[uniform(-3, 3), fixed(ROWS), fixed(COLS)], grad=False),
    Case("Conv", lambda x, w: tf.conv(x, w, [1, 1, 2, 1], "SAME", batch_dims=2, groups=2),
         np_conv_generic, [((2, 3, 5, 6, 4), (3, 3, 2, 6))], FLOAT, grad=False, rtol=1e-4),
    Case("Conv", lambda x, w: tf.conv(x, w, [1, 1, 1], "VALID", data_format="CHANNELS_FIRST",
                                      dilations=[1, 1, 2]),
         np_conv1d_channels_first, [((2, 3, 9), (3, 3, 4))], FLOAT, grad=False, rtol=1e-4,
         name="Conv(1-D, CHANNELS_FIRST)"),
    Case("Conv2DBackpropFilterV2",
         lambda x, w, dy: tf.conv2d_backprop_filter_v2(x, w, dy, [1, 2, 2, 1], "SAME"),
         lambda x, w, dy: np_backprop_filter(x, dy, w.shape, (2, 2), "SAME"),
         [((2, 5, 5, 3), (3, 3, 3, 2), (2, 3, 3, 2))], FLOAT, grad=False, rtol=1e-4),
    Case("Conv2DBackpropInputV2",
         lambda x, w, dy: tf.conv2d_backprop_input_v2(x, w, dy, [1, 2, 2, 1], "VALID"),
         lambda x, w, dy: np_backprop_input(w, dy, x.shape, (2, 2), "VALID"),
         [((2, 5, 5, 3), (3, 3, 3, 2), (2, 2, 2, 2))], FLOAT, grad=False, rtol=1e-4),
]
