"""Flattening Python structures (dicts by sorted key, lists, tuples, namedtuples) into
leaves and packing leaves back, as GradientTape and defun see their arguments."""

from __future__ import annotations


def flatten(x):
    """The leaves of `x`, depth first (a dict's values in sorted-key order)."""
    if isinstance(x, dict):
        return [v for k in sorted(x) for v in flatten(x[k])]
    if isinstance(x, (list, tuple)):
        return [v for e in x for v in flatten(e)]
    return [x]


def pack(structure, flat):
    """`structure` with its leaves replaced, in order, by those of `flat`."""
    leaves = iter(flat)

    def build(s):
        if isinstance(s, dict):
            return {k: build(s[k]) for k in sorted(s)}
        if isinstance(s, (list, tuple)):
            items = [build(e) for e in s]
            return type(s)(*items) if hasattr(s, "_fields") else type(s)(items)
        return next(leaves)

    return build(structure)
