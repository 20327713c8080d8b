"""`tf.nest`: TF's rules for nested structures of values.

Structure is any `collections.abc.Mapping` (dict keys are visited in sorted order, and
rebuilt in the original container's own key order), mapping view, `attrs` class, or
non-string `collections.abc.Sequence` (lists, tuples, namedtuples). Everything else,
`None`, strings, sets and numpy arrays included, is a leaf. With
`expand_composites=True` a composite tensor is structure too: a `tf.SparseTensor` opens
into `(indices, values, dense_shape)`, a `tf.RaggedTensor` into its flat values and row
splits (framework/composite_tensor.py); so does the TypeSpec of one (a
`tf.SparseTensorSpec`, `tf.RaggedTensorSpec`), into its components' TensorSpecs, and
packing into a spec builds the composite value (TF's `_component_specs` /
`_from_components`).

(tf.data keeps its own, narrower rules in `data/structure.py`: there lists are leaves.)
"""

from __future__ import annotations

import collections
import collections.abc as abc

from tensorflux._src.framework.composite_tensor import CompositeTensor
from tensorflux._src.framework.type_spec import TypeSpec

__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure",
           "pack_sequence_as"]


def _is_attrs(value) -> bool:
    return hasattr(type(value), "__attrs_attrs__")


def _is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _is_composite_spec(value) -> bool:
    return isinstance(value, TypeSpec) and hasattr(type(value), "_component_specs")


def is_nested(seq, expand_composites=False) -> bool:
    """True for the containers nest recurses into (see the module docstring)."""
    if expand_composites and (isinstance(seq, CompositeTensor) or _is_composite_spec(seq)):
        return True
    if isinstance(seq, (abc.Mapping, abc.MappingView)) or _is_attrs(seq):
        return True
    return isinstance(seq, abc.Sequence) and not isinstance(seq, (str, bytes, bytearray))


def _sorted_keys(mapping):
    try:
        return sorted(mapping)
    except TypeError:
        raise TypeError("nest only supports dicts with sortable keys.") from None


def _children(value, expand_composites):
    """The direct children of a nested value, in nest's order."""
    if expand_composites and isinstance(value, CompositeTensor):
        return list(value._components())
    if expand_composites and _is_composite_spec(value):
        return list(value._component_specs)
    if isinstance(value, abc.Mapping):
        return [value[key] for key in _sorted_keys(value)]
    if isinstance(value, abc.MappingView):
        return list(value)
    if _is_attrs(value):
        return [getattr(value, a.name) for a in type(value).__attrs_attrs__]
    return list(value)


def _rebuild(instance, children):
    """A container like `instance` holding `children` (in nest's order)."""
    if isinstance(instance, CompositeTensor) or _is_composite_spec(instance):
        return instance._from_components(children)
    if isinstance(instance, abc.Mapping):
        by_key = dict(zip(_sorted_keys(instance), children))
        if isinstance(instance, collections.defaultdict):
            result = collections.defaultdict(instance.default_factory)
            for key in instance:
                result[key] = by_key[key]
            return result
        return type(instance)((key, by_key[key]) for key in instance)
    if isinstance(instance, abc.MappingView):
        return list(children)
    if _is_namedtuple(instance) or _is_attrs(instance):
        return type(instance)(*children)
    if isinstance(instance, (list, tuple)):
        return type(instance)(children)
    return type(instance)(children)


def flatten(structure, expand_composites=False) -> list:
    """The leaves of `structure` in nest's order; a leaf gives `[leaf]`."""
    if not is_nested(structure, expand_composites):
        return [structure]
    return [leaf for child in _children(structure, expand_composites)
            for leaf in flatten(child, expand_composites)]


def _count(structure, expand_composites):
    return len(flatten(structure, expand_composites))


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    """`flat_sequence`'s values put into the shape of `structure`."""
    if not is_nested(flat_sequence):
        raise TypeError(f"Attempted to pack value:\n  {_short(flat_sequence)}\ninto a "
                        f"structure, but found incompatible type `{type(flat_sequence)}` "
                        f"instead.")
    flat = list(flat_sequence)
    if not is_nested(structure, expand_composites):
        if len(flat) != 1:
            raise ValueError(f"The target structure is of type `{type(structure)}`\n  "
                             f"{_short(structure)}\nHowever the input is a sequence "
                             f"({type(flat_sequence)}) of length {len(flat)}.\n  "
                             f"{_short(flat_sequence)}\nnest cannot guarantee that it is "
                             f"safe to map one to the other.")
        return flat[0]
    expected = _count(structure, expand_composites)
    if expected != len(flat):
        raise ValueError(f"Could not pack sequence. Structure had {expected} atoms, but "
                         f"flat_sequence had {len(flat)} items.  Structure: {structure}, "
                         f"flat_sequence: {flat}.")
    leaves = iter(flat)

    def pack(template):
        if not is_nested(template, expand_composites):
            return next(leaves)
        return _rebuild(template, [pack(c) for c in _children(template, expand_composites)])

    return pack(structure)


def _short(value, limit=100):
    text = str(value)
    return text if len(text) <= limit else text[:limit] + " ..."


def _same_type(a, b) -> bool:
    # Namedtuples of the same name and fields count as one type, as in TF.
    if _is_namedtuple(a) and _is_namedtuple(b):
        return type(a).__name__ == type(b).__name__ and a._fields == b._fields
    if isinstance(a, abc.Mapping) and isinstance(b, abc.Mapping):
        return True  # dict vs OrderedDict vs defaultdict: TF compares them by keys only
    return type(a) is type(b)


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    """Raises ValueError (or TypeError for container types) unless the two structures
    nest the same way, with the same number of leaves everywhere."""
    n1, n2 = _count(nest1, expand_composites), _count(nest2, expand_composites)
    if n1 != n2:
        raise ValueError(f"The two structures don't have the same number of elements.\n\n"
                         f"First structure ({n1} elements): {nest1}\n\n"
                         f"Second structure ({n2} elements): {nest2}")
    try:
        _assert_same(nest1, nest2, check_types, expand_composites)
    except ValueError as e:
        raise ValueError(f"The two structures don't have the same nested structure.\n\n"
                         f"First structure: {nest1}\n\nSecond structure: {nest2}\n\n"
                         f"More specifically: {e}") from None


def _assert_same(a, b, check_types, expand_composites):
    a_nested, b_nested = is_nested(a, expand_composites), is_nested(b, expand_composites)
    if a_nested != b_nested:
        first, second = (a, b) if a_nested else (b, a)
        raise ValueError(f'Substructure "type={type(first).__name__} str={first}" is a '
                         f'sequence, while substructure "type={type(second).__name__} '
                         f'str={second}" is not')
    if not a_nested:
        return
    if check_types and not _same_type(a, b):
        raise TypeError(f"The two structures don't have the same sequence type. Input "
                        f"structure has type {type(a)}, while shallow structure has type "
                        f"{type(b)}.")
    if isinstance(a, abc.Mapping) and isinstance(b, abc.Mapping) and set(a) != set(b):
        raise ValueError(f"The two dictionaries don't have the same set of keys. First "
                         f"structure has keys {list(a)}, while second structure has keys "
                         f"{list(b)}.")
    ca, cb = _children(a, expand_composites), _children(b, expand_composites)
    if len(ca) != len(cb):
        raise ValueError(f"The two structures don't have the same number of elements. "
                         f"First structure: {a}, second structure: {b}.")
    for x, y in zip(ca, cb):
        _assert_same(x, y, check_types, expand_composites)


def map_structure(func, *structure, **kwargs):
    """`func` applied to the leaves at each position of the structures, packed like the
    first one. Keyword arguments: `check_types` (default True), `expand_composites`."""
    if not callable(func):
        raise TypeError(f"func must be callable, got: {func}")
    if not structure:
        raise ValueError("Must provide at least one structure")
    check_types = kwargs.pop("check_types", True)
    expand_composites = kwargs.pop("expand_composites", False)
    if kwargs:
        raise ValueError(f"Only valid keyword arguments are `check_types` and "
                         f"`expand_composites`, not: `{', '.join(kwargs)}`")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types,
                              expand_composites=expand_composites)
    flats = [flatten(s, expand_composites) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flats)],
                            expand_composites=expand_composites)
