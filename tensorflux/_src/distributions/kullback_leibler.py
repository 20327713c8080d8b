"""KL divergences between distributions: a registry keyed by class pairs, looked up
through both classes' MROs (TF's rule: the registered pair nearest to the two types)."""

from __future__ import annotations

import inspect

from tensorflux._src.framework import graph as _graph
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.debug.debug_ops import Assert

__all__ = ["RegisterKL", "kl_divergence"]

_DIVERGENCES = {}


def _registered_kl(type_a, type_b):
    """The KL function for the nearest registered pair of (ancestor of a, ancestor of b)."""
    hierarchy_a, hierarchy_b = inspect.getmro(type_a), inspect.getmro(type_b)
    dist_to_children, kl_fn = None, None
    for mro_to_a, parent_a in enumerate(hierarchy_a):
        for mro_to_b, parent_b in enumerate(hierarchy_b):
            candidate_dist = mro_to_a + mro_to_b
            candidate_kl_fn = _DIVERGENCES.get((parent_a, parent_b), None)
            if not kl_fn or (candidate_kl_fn and candidate_dist < dist_to_children):
                dist_to_children = candidate_dist
                kl_fn = candidate_kl_fn
    return kl_fn


def kl_divergence(distribution_a, distribution_b, allow_nan_stats=True, name=None):
    """KL(distribution_a || distribution_b), batchwise; with allow_nan_stats=False a run
    fails when any value is NaN."""
    kl_fn = _registered_kl(type(distribution_a), type(distribution_b))
    if kl_fn is None:
        raise NotImplementedError(
            "No KL(distribution_a || distribution_b) registered for distribution_a type %s "
            "and distribution_b type %s" % (type(distribution_a).__name__,
                                           type(distribution_b).__name__))
    with _graph.name_scope("KullbackLeibler"):
        kl_t = kl_fn(distribution_a, distribution_b, name=name)
        if allow_nan_stats:
            return kl_t
        kl_t = array_ops.identity(kl_t, name="kl")
        with _graph.control_dependencies([Assert(
                math_ops.logical_not(reduce_ops.reduce_any(math_ops.is_nan(kl_t))),
                ["KL calculation between %s and %s returned NaN values (and was called with "
                 "allow_nan_stats=False). Values:" % (distribution_a.name,
                                                      distribution_b.name), kl_t])]):
            return array_ops.identity(kl_t, name="checked_kl")


def cross_entropy(ref, other, allow_nan_stats=True, name=None):
    """H[ref, other] = entropy(ref) + KL(ref || other)."""
    with _graph.name_scope(name, "cross_entropy"):
        return ref.entropy() + kl_divergence(ref, other, allow_nan_stats=allow_nan_stats)


class RegisterKL:
    """Decorator registering a KL(dist_cls_a || dist_cls_b) function."""

    def __init__(self, dist_cls_a, dist_cls_b):
        self._key = (dist_cls_a, dist_cls_b)

    def __call__(self, kl_fn):
        if not callable(kl_fn):
            raise TypeError("kl_fn must be callable, received: %s" % kl_fn)
        if self._key in _DIVERGENCES:
            raise ValueError("KL(%s || %s) has already been registered to: %s"
                             % (self._key[0].__name__, self._key[1].__name__,
                                _DIVERGENCES[self._key]))
        _DIVERGENCES[self._key] = kl_fn
        return kl_fn
