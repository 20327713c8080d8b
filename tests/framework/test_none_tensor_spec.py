"""tf.NoneTensorSpec: the TypeSpec of None (no components, compatible only with itself)."""

import pytest

import tensorflux as tf


def test_none_tensor_spec():
    s = tf.NoneTensorSpec()
    assert repr(s) == "NoneTensorSpec()"
    assert s == tf.NoneTensorSpec() and hash(s) == hash(tf.NoneTensorSpec())
    assert s != tf.TensorSpec([]) and isinstance(s, tf.TypeSpec)
    assert s.value_type.__name__ == "NoneTensor"
    assert s.is_compatible_with(tf.NoneTensorSpec()) and s.is_compatible_with(None)
    assert not s.is_compatible_with(tf.TensorSpec([], tf.float32))
    assert s.most_specific_compatible_type(tf.NoneTensorSpec()) == s
    with pytest.raises(ValueError, match="No TypeSpec is compatible with both"):
        s.most_specific_compatible_type(tf.TensorSpec([]))
    assert tf.NoneTensorSpec.from_value(None) == s
    assert s._component_specs == [] and s._to_components(None) == []
    assert tf.compat.v1.NoneTensorSpec is tf.NoneTensorSpec


def test_nest_with_expand_composites():
    s = tf.NoneTensorSpec()
    assert tf.nest.flatten(s, expand_composites=True) == []
    assert tf.nest.flatten(s) == [s]  # a leaf without expand_composites
    structure = {"a": s, "b": (tf.TensorSpec([2]), s)}
    flat = tf.nest.flatten(structure, expand_composites=True)
    assert flat == [tf.TensorSpec([2])]
    packed = tf.nest.pack_sequence_as(structure, [7], expand_composites=True)
    assert packed == {"a": None, "b": (7, None)}
    value = s.value_type()
    assert tf.nest.flatten(value, expand_composites=True) == []
    assert value._type_spec == s
