"""BoostedTreesClassifier / BoostedTreesRegressor (TF 1.15): histogram gradient-boosted
trees grown layer by layer, one layer per `n_batches_per_layer` batches.

State lives in non-trainable graph variables under `boosted_trees/` (dense arrays of a
fixed-size ensemble, see boosted_trees_math), so Saver checkpoints it and SavedModel
exports it. Prediction is compiled graph ops: every tree is walked level by level for
the whole batch with gathers (no loop over examples). A TRAIN step runs one host op
that computes TF's closed-form gradients/hessians, accumulates the per-(node, feature,
bucket) histogram with a jitted segment sum and, at the end of a layer, picks splits;
its results are assigned to the variables. Numeric columns are bucketized into
1/quantile_sketch_epsilon quantile buckets from the first n_batches_per_layer batches.
"""

import numpy as np

from tensorflux._src.estimator.canned import _common
from tensorflux._src.estimator.canned import boosted_trees_math as btm
from tensorflux._src.estimator.canned import head as head_lib
from tensorflux._src.estimator.estimator import Estimator
from tensorflux._src.estimator.model_fn import ModeKeys
from tensorflux._src.feature_column import dense_columns
from tensorflux._src.framework import dtypes
from tensorflux._src.framework import graph as graph_lib
from tensorflux._src.layers import losses_impl
from tensorflux._src.ops import constant as constant_op
from tensorflux._src.ops.array import array_ops, gather_ops, generator_ops
from tensorflux._src.ops.control import script_ops
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.state import state_ops
from tensorflux._src.train import optimizer as optimizer_lib
from tensorflux._src.train import session_run_hook
from tensorflux._src.train import variable_scope as vs

_SUPPORTED_COLUMNS = "bucketized_column, indicator_column, numeric_column"
_SUM_OVER_BATCH_SIZE = losses_impl.Reduction.SUM_OVER_BATCH_SIZE  # TF's BT head reduction
_HOLD = object()


class _HParams:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def _check_params(n_batches_per_layer, hp):
    if not isinstance(n_batches_per_layer, int) or n_batches_per_layer <= 0:
        raise ValueError("n_batches_per_layer must be a positive integer; got "
                         f"{n_batches_per_layer!r}")
    if not isinstance(hp.n_trees, int) or hp.n_trees <= 0:
        raise ValueError(f"n_trees must be a positive integer; got {hp.n_trees!r}")
    if not isinstance(hp.max_depth, int) or hp.max_depth <= 0:
        raise ValueError(f"max_depth must be a positive integer; got {hp.max_depth!r}")
    if hp.pruning_mode not in ("none", "pre", "post"):
        raise ValueError(f"Invalid pruning_mode: {hp.pruning_mode!r}; expected one of "
                         "'none', 'pre', 'post'")
    if not 0.0 < hp.quantile_sketch_epsilon < 1.0:
        raise ValueError("quantile_sketch_epsilon must be between 0 and 1; got "
                         f"{hp.quantile_sketch_epsilon!r}")


def _check_pruning(hp):
    # TF raises these when the model_fn runs (train), not in the constructor.
    if hp.tree_complexity > 0:
        if hp.pruning_mode == "none":
            raise ValueError("Tree complexity have no effect unless pruning mode is chosen.")
    elif hp.pruning_mode != "none":
        raise ValueError("For pruning, tree_complexity must be positive.")


def _sorted_columns(feature_columns):
    columns = sorted(_common.check_feature_columns(feature_columns), key=lambda c: c.name)
    for column in columns:
        if isinstance(column, dense_columns.BucketizedColumn):
            source = column.source_column
            if tuple(source.shape) not in ((), (1,)):
                raise ValueError("For now, only supports features equivalent to rank 1 "
                                 f"but column `{source.name}` got: {source.shape}")
        elif isinstance(column, dense_columns.NumericColumn):
            if tuple(column.shape) not in ((), (1,)):
                raise ValueError("For now, only support Numeric column with shape less "
                                 f"than 2, but column `{column.name}` got: {column.shape}")
        else:
            raise ValueError(f"For now, only {_SUPPORTED_COLUMNS} is supported but got: "  # noqa: TRY004 - TF raises ValueError
                             f"{column}")
    return columns


class _Layout:
    """Static sizes of the ensemble for a set of columns."""

    def __init__(self, columns, hp):
        self.columns = columns
        self.numeric = [i for i, c in enumerate(columns)
                        if isinstance(c, dense_columns.NumericColumn)]
        self.n_quantiles = round(1.0 / hp.quantile_sketch_epsilon)
        sizes = [self.n_quantiles if isinstance(c, dense_columns.NumericColumn)
                 else len(c.boundaries) + 1 for c in columns]
        self.n_buckets = max([2, *sizes])
        self.n_internal = 2 ** hp.max_depth - 1
        self.n_all = 2 ** (hp.max_depth + 1) - 1


def _raw(features, column):
    source = column if isinstance(column, dense_columns.NumericColumn) \
        else column.source_column
    x = features[source.key]
    x = math_ops.cast(x, dtypes.float32)
    if source.normalizer_fn is not None:
        x = source.normalizer_fn(x)
    return array_ops.reshape(x, [-1])


def _variables(layout, hp):
    def var(name, value, dtype):
        return vs.get_variable(name, initializer=constant_op.constant(value, dtype=dtype),
                               trainable=False)
    f32, i32 = dtypes.float32, dtypes.int32
    n_num = max(1, len(layout.numeric))
    return {
        "feature": var("node_feature", np.zeros((hp.n_trees, layout.n_internal), np.int32),
                       i32),
        "threshold": var("node_threshold",
                         np.zeros((hp.n_trees, layout.n_internal), np.int32), i32),
        "value": var("node_value", np.zeros((hp.n_trees, layout.n_all), np.float32), f32),
        "depth": var("tree_depth", np.zeros((hp.n_trees,), np.int32), i32),
        "bias": var("bias", np.float32(0.0), f32),
        "boundaries": var("quantile_boundaries",
                          np.zeros((n_num, layout.n_quantiles - 1), np.float32), f32),
        "cur_tree": var("num_finalized_trees", np.int32(0), i32),
        "batch": var("batches_in_layer", np.int32(0), i32),
        "phase": var("phase", np.int32(0), i32),  # 0 quantiles, 1 centering, 2 trees
        "stats": var("layer_stats", np.zeros(
            (2 ** (hp.max_depth - 1), len(layout.columns), layout.n_buckets, 2),
            np.float32), f32),
    }


_STATE_KEYS = ("feature", "threshold", "value", "depth", "bias", "boundaries",
               "cur_tree", "batch", "phase", "stats")


def _bucketize_graph(raw, layout, boundaries):
    cols = []
    for j, column in enumerate(layout.columns):
        if isinstance(column, dense_columns.NumericColumn):
            b = gather_ops.gather(boundaries, layout.numeric.index(j))
        else:
            b = constant_op.constant(np.asarray(column.boundaries, np.float32))
        ge = math_ops.cast(math_ops.greater_equal(array_ops.expand_dims(raw[j], 1),
                                                  array_ops.expand_dims(b, 0)), dtypes.int32)
        cols.append(reduce_ops.reduce_sum(ge, axis=1))
    return array_ops.stack(cols, axis=1)  # [batch, features] int32


def _logits_graph(buckets, state, layout, hp):
    """Sum over trees of each tree's value at its current depth: D gathers per level
    for the whole batch (compiled)."""
    n_feat = len(layout.columns)
    batch = array_ops.shape(buckets)[0]
    t_off_int = math_ops.range(hp.n_trees) * layout.n_internal
    t_off_all = math_ops.range(hp.n_trees) * layout.n_all
    b_off = array_ops.expand_dims(math_ops.range(batch) * n_feat, 1)
    flat_x = array_ops.reshape(buckets, [-1])
    flat_f = array_ops.reshape(state["feature"], [-1])
    flat_t = array_ops.reshape(state["threshold"], [-1])
    flat_v = array_ops.reshape(state["value"], [-1])
    idx = array_ops.expand_dims(math_ops.range(batch) * 0, 1) + \
        array_ops.expand_dims(t_off_int * 0, 0)  # [batch, trees] zeros
    total = math_ops.cast(idx, dtypes.float32)
    depth = array_ops.expand_dims(state["depth"], 0)
    for level in range(hp.max_depth + 1):
        value = gather_ops.gather(flat_v, idx + t_off_all)
        total = total + value * math_ops.cast(math_ops.equal(depth, level), dtypes.float32)
        if level == hp.max_depth:
            break
        f = gather_ops.gather(flat_f, idx + t_off_int)
        thr = gather_ops.gather(flat_t, idx + t_off_int)
        x = gather_ops.gather(flat_x, b_off + f)
        idx = 2 * idx + 1 + math_ops.cast(math_ops.greater(x, thr), dtypes.int32)
    logits = reduce_ops.reduce_sum(total, axis=1, keepdims=True) + state["bias"]
    return logits


def _grad_hess(logits, labels, weights, is_classification):
    """TF's closed forms, normalized by the batch size (SUM_OVER_BATCH_SIZE loss)."""
    n = logits.shape[0]
    f = logits.reshape(-1).astype(np.float64)
    y = labels.reshape(-1).astype(np.float64)
    w = weights.reshape(-1).astype(np.float64)
    if is_classification:
        p = 1.0 / (1.0 + np.exp(-f))
        return w * (p - y) / n, w * p * (1.0 - p) / n
    return 2.0 * w * (f - y) / n, 2.0 * w / n * np.ones_like(f)


def _train_step(hp, layout, n_batches, is_classification, vocabulary):
    """The host op: takes the state, the batch and its logits; returns the new state."""
    def step(raw, logits, labels, weights, *values):
        state = {k: np.array(v) for k, v in zip(_STATE_KEYS, values)}
        if labels.dtype.kind in "SUO":
            index = {v.encode() if isinstance(v, str) else v: i
                     for i, v in enumerate(vocabulary)}
            labels = np.array([index[v] for v in labels.reshape(-1)], np.float64)
        g, h = _grad_hess(logits, labels, weights, is_classification)
        phase = int(state["phase"])
        if phase == 0:  # quantile boundaries (running mean of per-batch quantiles)
            if layout.numeric:
                k = int(state["batch"])
                b = btm.quantile_boundaries(raw[:, layout.numeric], layout.n_quantiles)
                state["boundaries"] = (state["boundaries"] * k + b) / (k + 1)
            state["batch"] += 1
            if not layout.numeric or state["batch"] >= n_batches:
                state["batch"] = 0
                state["phase"] = 1 if hp.center_bias else 2
                if layout.numeric:
                    return _finish(state)
            else:
                return _finish(state)
            phase = int(state["phase"])
        if phase == 1:  # center bias: Newton steps on the bias until it settles
            state["stats"][0, 0, 0] += (g.sum(), h.sum())
            state["batch"] += 1
            if state["batch"] >= n_batches:
                sg, sh = state["stats"][0, 0, 0] / n_batches
                delta = -sg / (sh + hp.l2) if sh + hp.l2 > 0 else 0.0
                state["bias"] = state["bias"] + delta
                state["stats"][...] = 0
                state["batch"] = 0
                if abs(delta) < 1e-2 or not is_classification:
                    state["phase"] = 2
            return _finish(state)
        t = int(state["cur_tree"])
        if t >= hp.n_trees:
            return _finish(state)
        buckets = _bucketize_numpy(raw, layout, state["boundaries"])
        level = int(state["depth"][t])
        node = btm.node_index(buckets, state["feature"][t], state["threshold"][t], level)
        node = node - (2 ** level - 1)
        state["stats"] += btm.histogram(buckets, node, g, h, state["stats"].shape[0],
                                        layout.n_buckets)
        state["batch"] += 1
        if state["batch"] >= n_batches:
            state = btm.grow_layer(state, state["stats"] / n_batches, hp, layout.n_buckets)
            state["stats"][...] = 0
            state["batch"] = 0
        return _finish(state)
    return step


_INT_KEYS = ("feature", "threshold", "depth", "cur_tree", "batch", "phase")


def _finish(state):
    return [np.asarray(state[k], np.int32 if k in _INT_KEYS else np.float32)
            for k in _STATE_KEYS]


def _bucketize_numpy(raw, layout, boundaries):
    out = np.zeros(raw.shape, np.int32)
    for j, column in enumerate(layout.columns):
        if isinstance(column, dense_columns.NumericColumn):
            b = boundaries[layout.numeric.index(j)]
        else:
            b = np.asarray(column.boundaries, np.float32)
        out[:, j] = np.searchsorted(b, raw[:, j].astype(np.float32), side="right")
    return out


class _StopWhenFinishedHook(session_run_hook.SessionRunHook):
    """Stops training once all trees are grown, as TF's estimator does."""

    def __init__(self, cur_tree, n_trees):
        self._cur_tree, self._n_trees = cur_tree, n_trees

    def before_run(self, run_context):
        return session_run_hook.SessionRunArgs(self._cur_tree)

    def after_run(self, run_context, run_values):
        if run_values.results >= self._n_trees:
            run_context.request_stop()


def _bt_model_fn(features, labels, mode, head, columns, hp, n_batches, weight_column,
                 is_classification, vocabulary):
    _common.check_features(features)
    if mode == ModeKeys.TRAIN:
        _check_pruning(hp)
    layout = _Layout(columns, hp)
    with vs.variable_scope("boosted_trees"):
        state = _variables(layout, hp)
    raw = [_raw(features, c) for c in columns]
    buckets = _bucketize_graph(raw, layout, state["boundaries"])
    logits = _logits_graph(buckets, state, layout, hp)

    def train_op_fn(loss):
        del loss
        weights = head_lib._weights(features, weight_column, logits)
        weights = weights * generator_ops.ones_like(logits) if not isinstance(weights, float) \
            else generator_ops.ones_like(logits) * weights
        values = [state[k] for k in _STATE_KEYS]
        outs = script_ops.py_func(
            _train_step(hp, layout, n_batches, is_classification, vocabulary),
            [array_ops.stack(raw, axis=1), logits, labels, weights, *values],
            [v.dtype.base_dtype for v in values], name="boosted_trees_train")
        assigns = []
        for k, v, out in zip(_STATE_KEYS, values, outs):
            out.set_shape(v.shape)
            assigns.append(state_ops.assign(v, out))
        with graph_lib.control_dependencies(assigns):
            return state_ops.assign_add(optimizer_lib.get_global_step(), 1)

    spec = head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                      train_op_fn=train_op_fn, logits=logits)
    if mode == ModeKeys.TRAIN:
        hook = _StopWhenFinishedHook(state["cur_tree"], hp.n_trees)
        spec = spec._replace(training_hooks=(*spec.training_hooks, hook))
    return spec


class _BoostedTreesBase(Estimator):
    def __init__(self, feature_columns, n_batches_per_layer, head, model_dir, config,
                 weight_column, is_classification, vocabulary, **hparams):
        hp = _HParams(**hparams)
        _check_params(n_batches_per_layer, hp)
        columns = _sorted_columns(feature_columns)

        def _model_fn(features, labels, mode, config):
            del config
            return _bt_model_fn(features, labels, mode, head, columns, hp,
                                n_batches_per_layer, weight_column, is_classification,
                                vocabulary)
        super().__init__(_model_fn, model_dir=model_dir, config=config)


class BoostedTreesClassifier(_BoostedTreesBase):
    """Binary classifier of gradient-boosted trees (TF 1.15 supports n_classes=2 only)."""

    def __init__(self, feature_columns, n_batches_per_layer, model_dir=None, n_classes=_HOLD,
                 weight_column=None, label_vocabulary=None, n_trees=100, max_depth=6,
                 learning_rate=0.1, l1_regularization=0., l2_regularization=0.,
                 tree_complexity=0., min_node_weight=0., config=None, center_bias=False,
                 pruning_mode="none", quantile_sketch_epsilon=0.01):
        if n_classes is _HOLD:
            n_classes = 2
        if n_classes != 2:
            raise ValueError("For now only binary classification is supported."
                             f"n_classes given as {n_classes}")
        head = head_lib.BinaryClassHead(weight_column=weight_column,
                                        label_vocabulary=label_vocabulary,
                                        loss_reduction=_SUM_OVER_BATCH_SIZE)
        super().__init__(
            feature_columns, n_batches_per_layer, head, model_dir, config, weight_column,
            True, label_vocabulary, n_trees=n_trees, max_depth=max_depth,
            learning_rate=learning_rate, l1=l1_regularization, l2=l2_regularization,
            tree_complexity=tree_complexity, min_node_weight=min_node_weight,
            center_bias=center_bias, pruning_mode=pruning_mode,
            quantile_sketch_epsilon=quantile_sketch_epsilon)


class BoostedTreesRegressor(_BoostedTreesBase):
    """Least-squares regressor of gradient-boosted trees (label_dimension=1, as TF)."""

    def __init__(self, feature_columns, n_batches_per_layer, model_dir=None,
                 label_dimension=_HOLD, weight_column=None, n_trees=100, max_depth=6,
                 learning_rate=0.1, l1_regularization=0., l2_regularization=0.,
                 tree_complexity=0., min_node_weight=0., config=None, center_bias=False,
                 pruning_mode="none", quantile_sketch_epsilon=0.01):
        if label_dimension is _HOLD:
            label_dimension = 1
        if label_dimension != 1:
            raise ValueError("For now only 1 dimension regression is supported."
                             f"label_dimension given as {label_dimension}")
        head = head_lib.RegressionHead(label_dimension=1, weight_column=weight_column,
                                       loss_reduction=_SUM_OVER_BATCH_SIZE)
        super().__init__(
            feature_columns, n_batches_per_layer, head, model_dir, config, weight_column,
            False, None, n_trees=n_trees, max_depth=max_depth,
            learning_rate=learning_rate, l1=l1_regularization, l2=l2_regularization,
            tree_complexity=tree_complexity, min_node_weight=min_node_weight,
            center_bias=center_bias, pruning_mode=pruning_mode,
            quantile_sketch_epsilon=quantile_sketch_epsilon)
