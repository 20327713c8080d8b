"""TF1's stochastic dual coordinate ascent ops (tf.train.sdca_*), after TF's CPU kernels
(core/kernels/sdca_ops.cc, sdca_internal.cc and the loss updaters).

- SdcaOptimizer / SdcaOptimizerV2: one pass of SDCA over a mini-batch of examples for a
  linear model with symmetric L1 + L2 regularization. A host op: the pass is sequential
  per example (each dual update sees the primal deltas of the ones before it), which is
  a loop of scalar Newton/closed-form steps, not an XLA computation. It returns the new
  example state and the weight deltas; the caller applies them (as TF's contrib
  SdcaModel does). Weights are `nominal + num_loss_partitions * delta`, shrunk by
  l1 / l2 (the proximal step), wherever a prediction is made.
- SdcaShrinkL1: the proximal L1 step sign(w) * max(|w| - l1 / l2, 0) applied in place to
  a list of ref variables, compiled (it is elementwise).
- SdcaFprint: FarmHash's Fingerprint128 of each string as two int64 (pyfarmhash).

Deliberate deviations from TF's kernel: examples are visited in order (TF 1.15's
kernel did the same; later versions shuffle them with an unseeded RNG), and the adaptive
sampler fills the slots it did not sample with the unseen examples by decreasing
probability, which is what TF's code means to do (it writes them to the wrong array).
"""

from __future__ import annotations

import collections

import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import dims_str, kernel_error, with_rank
from tensorflux._src.ops.registry import REQUIRED, OpDef, register

__all__ = ["sdca_fprint", "sdca_optimizer", "sdca_shrink_l1"]

_LOSS_TYPES = ("logistic_loss", "squared_loss", "hinge_loss", "smooth_hinge_loss",
               "poisson_loss")


def _fmt(x) -> str:
    """A float as TF's StrCat prints it (shortest round trip: 2, 0.5)."""
    return np.format_float_positional(np.float32(x), trim="-")


# -- the loss updaters (core/kernels/*-loss.h) -------------------------------------------
# Each: dual(P, y, c, a, wx, norm) -> new dual; primal(wx, y, c); dual_loss(a, y, c);
# derivative(wx, y, c); smoothness; labels converted from {0, 1} to {-1, 1} or checked.
class _Logistic:
    smoothness = 4.0  # the logistic derivative is 1/4-Lipschitz

    @staticmethod
    def convert(y):
        if y == 0.0:
            return -1.0
        if y == 1.0:
            return 1.0
        raise kernel_error(f"Only labels of 0.0 or 1.0 are supported right now. "
                           f"Found example with label: {_fmt(y)}")

    @staticmethod
    def dual(p, y, c, a, wx, norm):
        # Newton's method on x with new dual = (1 + tanh(x)) / (2y) (TF: 10 steps).
        x = 0.0
        k = p * norm * c
        for _ in range(10):
            t = np.tanh(x)
            num = -2 * y * x - wx - k * (0.5 * (1 + t) / y - a)
            den = -2 * y - k * (1 - t * t) * 0.5 / y
            x = x - num / den
        return 0.5 * (1 + np.tanh(x)) / y

    @staticmethod
    def dual_loss(a, y, c):
        ay = a * y
        log_ay = np.log(ay) if ay > 0 else 0.0
        rest = 1 - ay
        log_rest = np.log(rest) if rest > 0 else 0.0
        return (ay * log_ay + rest * log_rest) * c

    @staticmethod
    def primal(wx, y, c):
        z = y * wx
        return (np.log1p(np.exp(-z)) if z > 0 else np.log1p(np.exp(z)) - z) * c

    @staticmethod
    def derivative(wx, y, c):
        z = y * wx
        term = np.exp(-z) / (1 + np.exp(-z)) if z > 0 else 1 / (1 + np.exp(z))
        return -term * y * c


class _Squared:
    smoothness = 1.0

    @staticmethod
    def convert(y):
        return y

    @staticmethod
    def dual(p, y, c, a, wx, norm):
        return a + (y - a - wx) / (1 + p * norm * c)

    @staticmethod
    def dual_loss(a, y, c):
        return a * (0.5 * a - y) * c

    @staticmethod
    def primal(wx, y, c):
        return (wx - y) ** 2 * c * 0.5

    @staticmethod
    def derivative(wx, y, c):
        return (wx - y) * c


class _Hinge:
    smoothness = 0.0
    convert = _Logistic.convert
    gamma = 0.0

    @classmethod
    def dual(cls, p, y, c, a, wx, norm):
        # The unconstrained optimum, clipped to y * dual in [0, 1].
        candidate = a + (y - wx - cls.gamma * a) / (p * c * norm + cls.gamma)
        if y * candidate < 0:
            return 0.0
        if y * candidate > 1:
            return y
        return candidate

    @classmethod
    def dual_loss(cls, a, y, c):
        ya = a * y
        if ya < 0 or ya > 1:
            return np.finfo(np.float64).max
        return (-ya + 0.5 * cls.gamma * a * a) * c

    @staticmethod
    def primal(wx, y, c):
        return max(0.0, 1 - y * wx) * c

    @staticmethod
    def derivative(wx, y, c):
        return -y * c if y * wx < 1 else 0.0


class _SmoothHinge(_Hinge):
    gamma = 1.0  # TF fixes the smoothing at 1
    smoothness = 1.0

    @staticmethod
    def primal(wx, y, c):
        z = y * wx
        if z >= 1:
            return 0.0
        if z <= 0:  # 1 - gamma
            return (1 - z - 0.5) * c
        return (1 - z) ** 2 * c * 0.5

    @staticmethod
    def derivative(wx, y, c):
        # TF's kernel omits the example weight here (it only steers adaptive sampling).
        z = y * wx
        if z >= 1:
            return 0.0
        if z <= 0:
            return -y
        return wx - y


class _Poisson:
    smoothness = 1.0

    @staticmethod
    def convert(y):
        if y < 0:
            raise kernel_error(f"Only non-negative labels can be used with the Poisson log "
                               f"loss. Found example with label: {_fmt(y)}")
        return y

    @staticmethod
    def dual(p, y, c, a, wx, norm):
        # Newton's method on x with new dual = y - exp(x), started at exp(x) = y - a.
        k = p * norm * c
        x = np.log(y - a) if y - a > 0 else 0.0
        for _ in range(10):
            e = np.exp(x)
            x = x - (x - wx - k * (y - a - e)) / (1 + k * e)
        return y - np.exp(x)

    @staticmethod
    def dual_loss(a, y, c):
        rest = y - a
        if rest == 0:
            return 0.0
        if rest < 0:
            return np.finfo(np.float64).max
        return rest * (np.log(rest) - 1) * c

    @staticmethod
    def primal(wx, y, c):
        return (np.exp(wx) - wx * y) * c

    @staticmethod
    def derivative(wx, y, c):
        return (np.exp(wx) - y) * c


_UPDATERS = {"logistic_loss": _Logistic, "squared_loss": _Squared, "hinge_loss": _Hinge,
             "smooth_hinge_loss": _SmoothHinge, "poisson_loss": _Poisson}


# -- SdcaOptimizer -------------------------------------------------------------------------
def _optimizer_shape(op):
    s = op.get_attr("num_sparse_features")
    sv = op.get_attr("num_sparse_features_with_values")
    d = op.get_attr("num_dense_features")
    start = 3 * s + sv + d + 2  # sparse_weights' offset in the flat inputs
    sparse = [t.shape for t in op.inputs[start:start + s]]
    dense = [t.shape for t in op.inputs[start + s:start + s + d]]
    return [TensorShape([None, 4])] + sparse + dense


def _shrink(w, shrinkage):
    return np.sign(w) * np.maximum(np.abs(w) - shrinkage, 0.0)


class _Group:
    """One sparse feature group: the examples' (feature index, value) pairs and the
    group's weights, as TF's FeatureWeightsSparseStorage keys them."""

    def __init__(self, n, j, example_indices, feature_indices, values, weight_indices,
                 weights):
        ex, fi = np.asarray(example_indices).ravel(), np.asarray(feature_indices).ravel()
        if ex.size != fi.size:
            raise kernel_error(f"Found mismatched example_indices and feature_indices "
                               f"[{' '.join(map(str, ex))}] vs [{' '.join(map(str, fi))}]")
        vals = None if values is None else np.asarray(values, np.float32).ravel()
        self.nominal = np.asarray(weights, np.float32).ravel()
        self.delta = np.zeros_like(self.nominal)
        position = {int(k): i for i, k in enumerate(np.asarray(weight_indices).ravel())}
        # Features of example i are the run of entries whose example index is i, the
        # runs in example order (TF's parse: sorted example indices).
        self.rows, end = [], 0
        for i in range(n):
            begin = end
            while end < ex.size and ex[end] == i:
                end += 1
            cols = []
            for k in range(begin, end):
                if int(fi[k]) not in position:
                    raise kernel_error(f"Found sparse feature indices out of valid range: "
                                       f"{int(fi[k])}")
                cols.append(position[int(fi[k])])
            v = (np.ones(end - begin, np.float64) if vals is None
                 else vals[begin:end].astype(np.float64))
            self.rows.append((np.asarray(cols, np.int64), v))


def _parse(inputs, s, sv, d):
    it = iter(inputs)
    take = lambda k: [next(it) for _ in range(k)]  # noqa: E731
    ex_idx, feat_idx, feat_vals, dense = take(s), take(s), take(sv), take(d)
    weights, labels = next(it), next(it)
    sp_idx, sp_w, dense_w = take(s), take(s), take(d)
    return ex_idx, feat_idx, feat_vals, dense, weights, labels, sp_idx, sp_w, dense_w, next(it)


def _sdca_kernel(*inputs, loss_type, num_sparse_features, num_sparse_features_with_values,
                 num_dense_features, l1, l2, num_loss_partitions, adaptive=True,
                 adaptative=None):
    s, sv, d = num_sparse_features, num_sparse_features_with_values, num_dense_features
    if adaptative is not None:  # SdcaOptimizer's (misspelt) attr
        adaptive = adaptative
    if s + d == 0:
        raise kernel_error("Requires at least one feature to train.")
    updater = _UPDATERS[loss_type]
    (ex_idx, feat_idx, feat_vals, dense, ex_weights, ex_labels, sp_idx, sp_w, dense_w,
     state) = _parse(inputs, s, sv, d)
    ex_weights = np.asarray(ex_weights, np.float32).ravel()
    ex_labels = np.asarray(ex_labels, np.float32).ravel()
    n = ex_weights.size
    if ex_labels.size != n:
        raise kernel_error(f"Expected {n} example labels but got {ex_labels.size}")
    dense = [np.asarray(x, np.float32) for x in dense]
    for i, x in enumerate(dense):
        if x.ndim != 2:
            raise kernel_error(f"Dense features at index {i} must be rank 2 but is rank "
                               f"{x.ndim}")
    groups = [_Group(n, j, ex_idx[j], feat_idx[j], feat_vals[j] if j < sv else None,
                     sp_idx[j], sp_w[j]) for j in range(s)]
    dense_nominal = [np.asarray(w, np.float32).ravel() for w in dense_w]
    for x, w in zip(dense, dense_nominal):
        if x.shape[1] > w.size:
            raise kernel_error(f"More dense features than we have parameters for: "
                               f"{x.shape[1]}")
    dense_delta = [np.zeros_like(w) for w in dense_nominal]
    norms = np.zeros(n)
    for i in range(n):
        for g in groups:
            cols, v = g.rows[i]
            if np.unique(cols).size != cols.size:
                raise kernel_error("Duplicate index in sparse vector.")
            norms[i] += float(np.dot(v, v))
        for x in dense:
            norms[i] += float(np.dot(x[i].astype(np.float64), x[i]))
    state = np.asarray(state, np.float32)
    if state.shape != (n, 4):
        raise kernel_error(f"Expected shape [{n},4] for example_state_data, got "
                           f"{dims_str(state.shape)}")
    state = state.copy()
    p, l2 = int(num_loss_partitions), float(np.float32(l2))
    shrinkage = float(l1) / float(l2) if l2 else np.inf

    def predictions(i):
        """(w.x with the current deltas, w.x with the nominal weights), both shrunk."""
        wx = prev = 0.0
        for g in groups:
            cols, v = g.rows[i]
            nominal = g.nominal[cols].astype(np.float64)
            prev += float(np.dot(v, _shrink(nominal, shrinkage)))
            wx += float(np.dot(v, _shrink(nominal + g.delta[cols] * p, shrinkage)))
        for x, w, dw in zip(dense, dense_nominal, dense_delta):
            f = x.shape[1]
            prev += float(np.dot(x[i], _shrink(w[:f], shrinkage).astype(np.float32)))
            current = (w[:f] + dw[:f] * np.float32(p)).astype(np.float32)
            wx += float(np.dot(x[i], _shrink(current, shrinkage).astype(np.float32)))
        return wx, prev

    labels = [updater.convert(float(y)) for y in ex_labels]
    order = range(n)
    if adaptive:
        order = _adaptive_order(n, ex_weights, labels, norms, state, l2, updater,
                                lambda i: predictions(i)[0])
    for i in order:
        a, c, y = float(state[i, 0]), float(ex_weights[i]), labels[i]
        wx, prev = predictions(i)
        new = updater.dual(p, y, c, a, wx, norms[i] / l2)
        step = (new - a) * c / l2
        for g in groups:
            cols, v = g.rows[i]
            g.delta[cols] += (v * step).astype(np.float32)
        for x, dw in zip(dense, dense_delta):
            f = x.shape[1]
            dw[:f] += x[i] * np.float32(step)
        state[i] = (new, updater.primal(prev, y, c), updater.dual_loss(a, y, c), c)
    deltas = [g.delta.reshape(np.shape(w)) for g, w in zip(groups, sp_w)]
    deltas += [dw.reshape(np.shape(w)) for dw, w in zip(dense_delta, dense_w)]
    return [state] + deltas


def _adaptive_order(n, weights, labels, norms, state, l2, updater, wx_of):
    """TF's adaptive SDCA sampling: example i drawn with probability proportional to
    c_i * sqrt(|x_i|^2 + l2 * smoothness) * |dual_i + loss'(w.x_i)|, a drawn example
    kept with probability 0.1 ** (times drawn before); at most n retries; the slots left
    go to the unseen examples by decreasing probability."""
    prob = np.array([weights[i] * np.sqrt(norms[i] + l2 * updater.smoothness)
                     * abs(state[i, 0] + updater.derivative(wx_of(i), labels[i], 1.0))
                     for i in range(n)], np.float64)
    total = prob.sum()
    if not np.isfinite(total) or total <= 0:
        return range(n)
    rng = np.random.default_rng()  # TF seeds its sampler from std::random_device
    counts = np.zeros(n, np.int64)
    order, retries = [], 0
    while len(order) < n and retries < n:
        i = int(rng.choice(n, p=prob / total))
        if rng.random() > 0.1 ** counts[i]:
            retries += 1
            continue
        counts[i] += 1
        order.append(i)
    unseen = sorted((i for i in range(n) if counts[i] == 0), key=lambda i: -prob[i])
    return order + unseen[:n - len(order)]


def _register_optimizer(op_type, adaptive_attr):
    register(OpDef(
        op_type,
        inputs=("sparse_example_indices: num_sparse_features * int64",
                "sparse_feature_indices: num_sparse_features * int64",
                "sparse_feature_values: num_sparse_features_with_values * float",
                "dense_features: num_dense_features * float",
                "example_weights: float", "example_labels: float",
                "sparse_indices: num_sparse_features * int64",
                "sparse_weights: num_sparse_features * float",
                "dense_weights: num_dense_features * float",
                "example_state_data: float"),
        outputs=("out_example_state_data: float",
                 "out_delta_sparse_weights: num_sparse_features * float",
                 "out_delta_dense_weights: num_dense_features * float"),
        # The list lengths (num_sparse_features, ...) are number attrs set by the lists.
        # TF1's Python wrappers default to adaptive sampling (api golden: True).
        attrs={"loss_type": REQUIRED, adaptive_attr: True, "l1": REQUIRED, "l2": REQUIRED,
               "num_loss_partitions": REQUIRED, "num_inner_iterations": REQUIRED},
        shape=_optimizer_shape, host=_sdca_kernel, stateful=False, not_differentiable=True))


_register_optimizer("SdcaOptimizer", "adaptative")
_register_optimizer("SdcaOptimizerV2", "adaptive")

_SdcaOptimizerOutput = collections.namedtuple(
    "SdcaOptimizer", ["out_example_state_data", "out_delta_sparse_weights",
                      "out_delta_dense_weights"])


def _check_list(op_type, name, value, length=None, length_of=None):
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"Expected list for '{name}' argument to '{op_type}' Op, not "
                        f"{value!r}.")
    if length is not None and len(value) != length:
        raise ValueError(f"List argument '{name}' to '{op_type}' Op with length "
                         f"{len(value)} must match length {length} of argument "
                         f"'{length_of}'.")
    return list(value)


def _min_attr(op_type, name, value, minimum):
    value = int(value)
    if value < minimum:
        raise ValueError(f"Attr '{name}' of '{op_type}' Op passed {value} less than minimum "
                         f"{minimum}.")
    return value


def _sdca(op_type, adaptive_attr, adaptive, sparse_example_indices, sparse_feature_indices,
          sparse_feature_values, dense_features, example_weights, example_labels,
          sparse_indices, sparse_weights, dense_weights, example_state_data, loss_type, l1,
          l2, num_loss_partitions, num_inner_iterations, name):
    ex = _check_list(op_type, "sparse_example_indices", sparse_example_indices)
    s = len(ex)
    fi = _check_list(op_type, "sparse_feature_indices", sparse_feature_indices, s,
                     "sparse_example_indices")
    fv = _check_list(op_type, "sparse_feature_values", sparse_feature_values)
    dense = _check_list(op_type, "dense_features", dense_features)
    si = _check_list(op_type, "sparse_indices", sparse_indices, s, "sparse_example_indices")
    sw = _check_list(op_type, "sparse_weights", sparse_weights, s, "sparse_example_indices")
    dw = _check_list(op_type, "dense_weights", dense_weights, len(dense), "dense_features")
    loss_type = loss_type.decode() if isinstance(loss_type, bytes) else str(loss_type)
    if loss_type not in _LOSS_TYPES:
        allowed = '", "'.join(_LOSS_TYPES)
        raise ValueError(f"Attr 'loss_type' of '{op_type}' Op passed string '{loss_type}' "
                         f"not in: \"{allowed}\".")
    outs = apply_op(
        op_type, name=name, sparse_example_indices=ex, sparse_feature_indices=fi,
        sparse_feature_values=fv, dense_features=dense, example_weights=example_weights,
        example_labels=example_labels, sparse_indices=si, sparse_weights=sw,
        dense_weights=dw, example_state_data=example_state_data, loss_type=loss_type,
        l1=float(l1), l2=float(l2), **{adaptive_attr: bool(adaptive)},
        num_loss_partitions=_min_attr(op_type, "num_loss_partitions", num_loss_partitions, 1),
        num_inner_iterations=_min_attr(op_type, "num_inner_iterations",
                                       num_inner_iterations, 1))
    outs = list(outs)
    return _SdcaOptimizerOutput(outs[0], outs[1:1 + s], outs[1 + s:])


def sdca_optimizer(sparse_example_indices, sparse_feature_indices, sparse_feature_values,
                   dense_features, example_weights, example_labels, sparse_indices,
                   sparse_weights, dense_weights, example_state_data, loss_type, l1, l2,
                   num_loss_partitions, num_inner_iterations, adaptative=True, name=None):
    """One SDCA pass over a mini-batch: (new example state [N, 4], sparse weight deltas,
    dense weight deltas). See the module docstring."""
    return _sdca("SdcaOptimizer", "adaptative", adaptative, sparse_example_indices,
                 sparse_feature_indices, sparse_feature_values, dense_features,
                 example_weights, example_labels, sparse_indices, sparse_weights,
                 dense_weights, example_state_data, loss_type, l1, l2, num_loss_partitions,
                 num_inner_iterations, name)


def sdca_optimizer_v2(sparse_example_indices, sparse_feature_indices, sparse_feature_values,
                      dense_features, example_weights, example_labels, sparse_indices,
                      sparse_weights, dense_weights, example_state_data, loss_type, l1, l2,
                      num_loss_partitions, num_inner_iterations, adaptive=True, name=None):
    """SdcaOptimizer with its attr spelt `adaptive`."""
    return _sdca("SdcaOptimizerV2", "adaptive", adaptive, sparse_example_indices,
                 sparse_feature_indices, sparse_feature_values, dense_features,
                 example_weights, example_labels, sparse_indices, sparse_weights,
                 dense_weights, example_state_data, loss_type, l1, l2, num_loss_partitions,
                 num_inner_iterations, name)


# -- SdcaShrinkL1 --------------------------------------------------------------------------
def _shrink_l1(*weights, l1, l2):
    # TF: shrinkage l1 / l2 in double, applied to the float weights.
    shrinkage = np.float32(float(l1) / float(l2)) if float(l2) else np.float32(np.inf)
    out = tuple(jnp.sign(w) * jnp.maximum(jnp.abs(w) - shrinkage, 0).astype(w.dtype)
                for w in weights)
    return out if len(out) != 1 else out[0]


register(OpDef(
    "SdcaShrinkL1", inputs=("weights: num_features * Ref(float)",), outputs=(),
    attrs={"l1": REQUIRED, "l2": REQUIRED},
    shape=lambda op: [], lower=_shrink_l1, writes=("weights",), not_differentiable=True))


def sdca_shrink_l1(weights, l1, l2, name=None):
    """Applies the L1 proximal step sign(w) * max(|w| - l1 / l2, 0) to each of the ref
    variables `weights` in place; returns the Operation."""
    # A Variable passes its ref tensor (TF's l-value input).
    weights = [w._ref() if hasattr(w, "_ref") else w
               for w in _check_list("SdcaShrinkL1", "weights", weights)]
    if not all(getattr(w, "dtype", None) is not None and w.dtype._is_ref_dtype
               for w in weights):
        # TF's op_def_library message for a list input that must be refs.
        raise TypeError("'SdcaShrinkL1' Op requires that input 'weights' be a mutable "
                        "tensor (e.g.: a tf.Variable)")
    return apply_op("SdcaShrinkL1", name=name, weights=weights, l1=float(l1), l2=float(l2))


# -- SdcaFprint ----------------------------------------------------------------------------
def _fprint_kernel(input):  # noqa: A002  (TF's input name)
    import farmhash  # pyfarmhash
    values = np.asarray(input, dtype=object)
    if values.ndim != 1:
        raise kernel_error(f"Input must be a vector, got shape {dims_str(values.shape)}")
    out = np.empty((values.size, 2), np.uint64)
    for i, s in enumerate(values):
        low, high = farmhash.fingerprint128(bytes(s))
        # TF never returns 0 or 1 as the first half (callers use them as sentinels).
        out[i] = (low if low >= 2 else (low - 2) % (1 << 64), high)
    return out.view(np.int64)


register(OpDef(
    "SdcaFprint", inputs=("input: string",), outputs=("output: int64",),
    shape=lambda op: with_rank(op.inputs[0].shape, 1).concatenate([2]),
    host=_fprint_kernel, not_differentiable=True))


def sdca_fprint(input, name=None):  # noqa: A002
    """[N, 2] int64: FarmHash Fingerprint128 of each string of the vector `input`."""
    return apply_op("SdcaFprint", name=name, input=input)
