import pytest

import tensorflux as tf
from tensorflux import Dimension, TensorShape


def test_printing_matches_tf1():
    assert str(TensorShape(None)) == "<unknown>"
    assert str(TensorShape([])) == "()"
    assert str(TensorShape([3])) == "(3,)"
    assert str(TensorShape([None, 3])) == "(?, 3)"
    assert repr(TensorShape([None, 3])) == "TensorShape([Dimension(None), Dimension(3)])"
    assert str(Dimension(None)) == "?" and repr(Dimension(4)) == "Dimension(4)"


def test_accessors():
    s = TensorShape([None, 3, 4])
    assert s.ndims == 3 and s.rank == 3
    assert s.as_list() == [None, 3, 4]
    assert s[1].value == 3 and s[0].value is None
    assert s[1:].as_list() == [3, 4]
    assert not s.is_fully_defined() and s.num_elements() is None
    assert TensorShape([2, 3]).num_elements() == 6
    with pytest.raises(ValueError, match="as_list\\(\\) is not defined on an unknown"):
        TensorShape(None).as_list()
    with pytest.raises(ValueError):
        len(TensorShape(None))


def test_compatibility_and_merge():
    a, b = TensorShape([None, 3]), TensorShape([2, None])
    assert a.is_compatible_with(b)
    assert a.merge_with(b).as_list() == [2, 3]
    assert not TensorShape([2]).is_compatible_with(TensorShape([3]))
    assert not TensorShape([2]).is_compatible_with(TensorShape([2, 1]))
    assert TensorShape(None).is_compatible_with([5, 6])
    with pytest.raises(ValueError, match="Shapes \\(2,\\) and \\(3,\\) are not compatible"):
        TensorShape([2]).merge_with([3])
    assert TensorShape([1, 2]).concatenate([3]).as_list() == [1, 2, 3]
    assert TensorShape([None]).with_rank(1).ndims == 1
    with pytest.raises(ValueError):
        TensorShape([1, 2]).with_rank(3)
    assert TensorShape([2, 3]).most_specific_compatible_shape([2, 4]).as_list() == [2, None]


def test_dimension_arithmetic_propagates_unknown():
    assert (Dimension(2) + 3).value == 5
    assert (Dimension(None) * 2).value is None
    assert Dimension(3) == 3 and (Dimension(None) == 3) is None
    assert Dimension(None).is_compatible_with(7)
    with pytest.raises(ValueError):
        Dimension(-1)


def test_equality():
    assert TensorShape([1, 2]) == [1, 2]
    assert TensorShape([1, 2]) != TensorShape([1, 3])
    assert TensorShape(None) == TensorShape(None)
    assert tf.compat.dimension_value(Dimension(4)) == 4
