"""Candidate sampling: the uniform and log-uniform samplers, accidental hits, and the
losses built on them (nce_loss, sampled_softmax_loss), with TF1's formulas.

A sampler op returns (sampled_candidates [num_sampled], true_expected_count
[batch, num_true], sampled_expected_count [num_sampled]). With unique=True TF draws until
it has num_sampled distinct classes, and the expected count of a class with probability
p is 1 - (1 - p) ** num_tries, num_tries being how many draws that took (p * num_sampled
without unique). Here the same distribution is sampled without a data-dependent loop:
the distinct classes in draw order follow the Gumbel-top-k law (sequential sampling
without replacement), and the rejected draws before the (j+1)-th new class are
geometric with success probability 1 - (mass of the j classes already drawn).
"""

from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import random_seed
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import array_ops, slicing_ops
from tensorflux._src.ops.array.array_ops import stop_gradient
from tensorflux._src.ops.array.generator_ops import ones, ones_like, zeros_like
from tensorflux._src.ops.linalg.linalg_ops import matmul
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.nn.nn_embedding_ops import _as_param_list, embedding_lookup
from tensorflux._src.ops.nn.nn_loss_ops import sigmoid_cross_entropy_with_logits
from tensorflux._src.ops.nn.nn_ops import softmax_cross_entropy_with_logits_v2
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import with_rank
from tensorflux._src.ops.registry import OpDef, REQUIRED, register

__all__ = ["uniform_candidate_sampler", "log_uniform_candidate_sampler",
           "compute_accidental_hits", "nce_loss", "sampled_softmax_loss"]

CandidateSamples = collections.namedtuple(
    "CandidateSamples", ["sampled_candidates", "true_expected_count", "sampled_expected_count"])
AccidentalHits = collections.namedtuple("AccidentalHits", ["indices", "ids", "weights"])

_FLOAT32_MAX = float(np.finfo(np.float32).max)


# -- the samplers --------------------------------------------------------------------------------
def _uniform_probability(values, range_max):
    return jnp.full(values.shape, 1.0 / range_max, jnp.float64)


def _log_uniform_probability(values, range_max):
    # P(k) = (log(k + 2) - log(k + 1)) / log(range_max + 1)
    v = values.astype(jnp.float64)
    return jnp.log((v + 2.0) / (v + 1.0)) / np.log(range_max + 1.0)


def _uniform_draws(key, n, range_max):
    return jax.random.randint(key, (n,), 0, range_max, dtype=jnp.int64)


def _log_uniform_draws(key, n, range_max):
    # TF's inverse transform: floor(exp(u * log(range_max + 1))) - 1, modulo range_max.
    u = jax.random.uniform(key, (n,), jnp.float64)
    value = jnp.floor(jnp.exp(u * np.log(range_max + 1.0))).astype(jnp.int64) - 1
    return value % range_max


def _sample(key, true_classes, num_sampled, unique, range_max, probability, draws):
    k_order, k_tries = jax.random.split(key)
    if unique:
        classes = jnp.arange(range_max, dtype=jnp.int64)
        scores = jnp.log(probability(classes, range_max)) + jax.random.gumbel(
            k_order, (range_max,), jnp.float64)
        _, sampled = jax.lax.top_k(scores, num_sampled)
        sampled = sampled.astype(jnp.int64)
        # Draws that hit an already sampled class, before each new one: geometric.
        drawn_mass = jnp.cumsum(probability(sampled, range_max))[:-1]
        drawn_mass = jnp.clip(drawn_mass, 1e-300, 1.0 - 1e-16)
        u = jax.random.uniform(k_tries, (num_sampled - 1,), jnp.float64, minval=1e-300)
        num_tries = num_sampled + jnp.sum(jnp.floor(jnp.log(u) / jnp.log(drawn_mass)))
    else:
        sampled = draws(k_order, num_sampled, range_max)
        num_tries = jnp.float64(num_sampled)

    def expected_count(p):
        return jnp.where(num_tries == num_sampled, p * num_sampled,
                         -jnp.expm1(num_tries * jnp.log1p(-p))).astype(jnp.float32)

    return (sampled, expected_count(probability(true_classes, range_max)),
            expected_count(probability(sampled, range_max)))


def _sampler_shape(op, has_range=True):
    """TF's CandidateSamplerShapeFn, after the attrs' minimum of 1 and (samplers with a
    range_max) the range check of unique sampling."""
    num_true, num_sampled = op.get_attr("num_true"), op.get_attr("num_sampled")
    for attr in ("num_true", "num_sampled", "range_max")[:3 if has_range else 2]:
        if op.get_attr(attr) < 1:
            raise ValueError(f"Value for attr '{attr}' of {op.get_attr(attr)} must be at "
                             f"least minimum 1")
    if has_range and op.get_attr("unique") and num_sampled > op.get_attr("range_max"):
        raise ValueError("Sampler's range is too small.")
    classes = with_rank(op.inputs[0].shape, 2)
    if classes[1].value is not None and classes[1].value != num_true:
        raise ValueError(f"true_classes must have num_true columns, expected: {num_true} "
                         f"was: {classes[1].value}")
    return [TensorShape([num_sampled]), TensorShape([classes[0].value, num_true]),
            TensorShape([num_sampled])]


def _register_sampler(op_type, probability, draws):
    def lower(key, true_classes, num_sampled, unique, range_max):
        return _sample(key, true_classes, num_sampled, unique, range_max, probability, draws)

    register(OpDef(
        op_type, inputs=("true_classes: int64",),
        outputs=("sampled_candidates: int64", "true_expected_count: float",
                 "sampled_expected_count: float"),
        attrs={"num_true": REQUIRED, "num_sampled": REQUIRED, "unique": REQUIRED,
               "range_max": REQUIRED, "seed": 0, "seed2": 0},
        shape=_sampler_shape, lower=lower, random=True, not_differentiable=True,
    ))


_register_sampler("UniformCandidateSampler", _uniform_probability, _uniform_draws)
_register_sampler("LogUniformCandidateSampler", _log_uniform_probability, _log_uniform_draws)


def _candidate_sampler(op_type, true_classes, num_true, num_sampled, unique, range_max, seed,
                       name):
    seed1, seed2 = random_seed.get_seed(seed)
    outs = apply_op(op_type, name=name, true_classes=true_classes, num_true=int(num_true),
                    num_sampled=int(num_sampled), unique=bool(unique),
                    range_max=int(range_max), seed=seed1 or 0, seed2=seed2 or 0)
    return CandidateSamples(*outs)


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                              seed=None, name=None):
    """Samples num_sampled classes uniformly from [0, range_max) (distinct if unique)."""
    return _candidate_sampler("UniformCandidateSampler", true_classes, num_true, num_sampled,
                              unique, range_max, seed, name)


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                  seed=None, name=None):
    """Samples classes from the Zipfian P(k) = log((k + 2) / (k + 1)) / log(range_max + 1)."""
    return _candidate_sampler("LogUniformCandidateSampler", true_classes, num_true,
                              num_sampled, unique, range_max, seed, name)


# -- accidental hits -----------------------------------------------------------------------------
def _accidental_hits_kernel(true_classes, sampled_candidates, num_true):
    # A sampled class maps to its last position in sampled_candidates, as TF's kernel does.
    position = {int(c): j for j, c in enumerate(np.reshape(sampled_candidates, -1))}
    indices, ids = [], []
    for i, row in enumerate(np.asarray(true_classes)):
        for c in row:
            j = position.get(int(c))
            if j is not None:
                indices.append(i)
                ids.append(j)
    return (np.array(indices, np.int32), np.array(ids, np.int64),
            np.full(len(ids), -_FLOAT32_MAX, np.float32))


def _accidental_hits_shape(op):
    classes = with_rank(op.inputs[0].shape, 2)
    with_rank(op.inputs[1].shape, 1)
    num_true = op.get_attr("num_true")
    if classes[1].value is not None and classes[1].value != num_true:
        raise ValueError(f"true_classes must have num_true columns, expected: {num_true} "
                         f"was: {classes[1].value}")
    return [TensorShape([None])] * 3


# The number of hits depends on the data: a host op. nce_loss and sampled_softmax_loss
# use the same rule through a dense mask instead, so they stay compiled.
register(OpDef(
    "ComputeAccidentalHits", inputs=("true_classes: int64", "sampled_candidates: int64"),
    outputs=("indices: int32", "ids: int64", "weights: float"),
    attrs={"num_true": REQUIRED, "seed": 0, "seed2": 0}, shape=_accidental_hits_shape,
    host=_accidental_hits_kernel, not_differentiable=True,
))


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """(row indices, sampled positions, -FLT_MAX weights) of sampled classes that equal one
    of their row's true classes."""
    seed1, seed2 = random_seed.get_seed(seed)
    outs = apply_op("ComputeAccidentalHits", name=name, true_classes=true_classes,
                    sampled_candidates=sampled_candidates, num_true=int(num_true),
                    seed=seed1 or 0, seed2=seed2 or 0)
    return AccidentalHits(*outs)


def _accidental_hit_mask(labels, sampled, num_sampled):
    """[batch, num_sampled] bool: where compute_accidental_hits would put a weight."""
    hits = reduce_ops.reduce_any(math_ops.equal(array_ops.expand_dims(labels, 2),
                                                array_ops.reshape(sampled, [1, 1, -1])), 1)
    # Only a class's last position among the samples is marked, as in TF's kernel.
    later = convert_to_tensor(np.triu(np.ones((num_sampled, num_sampled), bool), 1))
    same = math_ops.equal(array_ops.expand_dims(sampled, 1), array_ops.expand_dims(sampled, 0))
    repeated_later = reduce_ops.reduce_any(math_ops.logical_and(same, later), 1)
    return math_ops.logical_and(hits, math_ops.logical_not(repeated_later))


# -- sampled losses ------------------------------------------------------------------------------
def _sum_rows(x):
    # matmul with ones, as TF does (its gradient is cheaper than reduce_sum's there).
    cols = array_ops.shape(x)[1]
    return array_ops.reshape(matmul(x, ones(array_ops.stack([cols, 1]), x.dtype)), [-1])


def _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                            num_true=1, sampled_values=None, subtract_log_q=True,
                            remove_accidental_hits=False, partition_strategy="mod",
                            name=None, seed=None):
    """(logits [batch, num_true + num_sampled], labels of the same shape): the true classes'
    logits first, each true label 1 / num_true."""
    weights = _as_param_list(weights)
    with _graph.name_scope(name, "compute_sampled_logits", weights + [biases, inputs, labels]):
        labels = convert_to_tensor(labels, name="labels")
        inputs = convert_to_tensor(inputs, name="inputs")
        if labels.dtype != _dtypes.int64:
            labels = math_ops.cast(labels, _dtypes.int64)
        labels_flat = array_ops.reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(
                true_classes=labels, num_true=num_true, num_sampled=num_sampled, unique=True,
                range_max=num_classes, seed=seed)
        sampled, true_expected_count, sampled_expected_count = (
            stop_gradient(s) for s in sampled_values)
        sampled = math_ops.cast(sampled, _dtypes.int64)
        all_ids = array_ops.concat([labels_flat, sampled], 0)
        all_w = embedding_lookup(weights, all_ids, partition_strategy=partition_strategy)
        if all_w.dtype != inputs.dtype:
            all_w = math_ops.cast(all_w, inputs.dtype)
        n_true = array_ops.shape(labels_flat)[0]
        true_w = slicing_ops.slice(all_w, [0, 0], array_ops.stack([n_true, -1]))
        sampled_w = slicing_ops.slice(all_w, array_ops.stack([n_true, 0]), [-1, -1])
        sampled_logits = matmul(inputs, sampled_w, transpose_b=True)  # [batch, num_sampled]
        all_b = embedding_lookup(biases, all_ids, partition_strategy=partition_strategy)
        if all_b.dtype != inputs.dtype:
            all_b = math_ops.cast(all_b, inputs.dtype)
        true_b = slicing_ops.slice(all_b, [0], array_ops.shape(labels_flat))
        sampled_b = slicing_ops.slice(all_b, array_ops.shape(labels_flat), [-1])
        # Row-wise dots of inputs [batch, dim] with their true rows [batch, num_true, dim].
        dim = array_ops.shape(true_w)[1:2]
        row_wise_dots = math_ops.multiply(
            array_ops.expand_dims(inputs, 1),
            array_ops.reshape(true_w, array_ops.concat([[-1, num_true], dim], 0)))
        dots_as_matrix = array_ops.reshape(row_wise_dots, array_ops.concat([[-1], dim], 0))
        true_logits = array_ops.reshape(_sum_rows(dots_as_matrix), [-1, num_true])
        true_logits += array_ops.reshape(true_b, [-1, num_true])
        sampled_logits += sampled_b
        if remove_accidental_hits:
            mask = _accidental_hit_mask(labels, sampled, num_sampled)
            penalty = convert_to_tensor(-_FLOAT32_MAX, dtype=_dtypes.float32)
            sampled_logits += math_ops.cast(
                math_ops.cast(mask, _dtypes.float32) * penalty, sampled_logits.dtype)
        if subtract_log_q:
            # log Q(class): the prior probability that a class appears in the sample.
            true_logits -= math_ops.log(math_ops.cast(true_expected_count, inputs.dtype))
            sampled_logits -= math_ops.log(math_ops.cast(sampled_expected_count, inputs.dtype))
        out_logits = array_ops.concat([true_logits, sampled_logits], 1)
        out_labels = array_ops.concat([ones_like(true_logits) / num_true,
                                       zeros_like(sampled_logits)], 1)
        return out_logits, out_labels


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
             sampled_values=None, remove_accidental_hits=False, partition_strategy="mod",
             name="nce_loss"):
    """Noise-contrastive estimation loss per example: sigmoid cross-entropy of the true
    classes (label 1 / num_true) and num_sampled sampled classes (label 0), their logits
    corrected by log Q."""
    logits, labels = _compute_sampled_logits(
        weights=weights, biases=biases, labels=labels, inputs=inputs, num_sampled=num_sampled,
        num_classes=num_classes, num_true=num_true, sampled_values=sampled_values,
        subtract_log_q=True, remove_accidental_hits=remove_accidental_hits,
        partition_strategy=partition_strategy, name=name)
    sampled_losses = sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                                       name="sampled_losses")
    return _sum_rows(sampled_losses)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes,
                         num_true=1, sampled_values=None, remove_accidental_hits=True,
                         partition_strategy="mod", name="sampled_softmax_loss", seed=None):
    """Softmax cross-entropy over the true classes and num_sampled sampled classes, logits
    corrected by log Q; per example."""
    logits, labels = _compute_sampled_logits(
        weights=weights, biases=biases, labels=labels, inputs=inputs, num_sampled=num_sampled,
        num_classes=num_classes, num_true=num_true, sampled_values=sampled_values,
        subtract_log_q=True, remove_accidental_hits=remove_accidental_hits,
        partition_strategy=partition_strategy, name=name, seed=seed)
    labels = stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
