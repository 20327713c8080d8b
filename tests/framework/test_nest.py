"""tf.nest against structures and orders worked out by hand from TF's rules."""

import collections

import numpy as np
import pytest

import tensorflux as tf

Point = collections.namedtuple("Point", ["x", "y"])


def test_flatten_orders_dict_keys_and_keeps_sequences_and_leaves():
    structure = {"b": [1, (2, 3)], "a": Point(4, {"z": 5, "y": None}), "c": "text"}
    assert tf.nest.flatten(structure) == [4, None, 5, 1, 2, 3, "text"]
    assert tf.nest.flatten(7) == [7] and tf.nest.flatten(None) == [None]
    array = np.arange(3)
    assert tf.nest.flatten([array])[0] is array  # arrays and sets are leaves
    assert tf.nest.flatten({1, 2}) == [{1, 2}]


def test_is_nested():
    assert tf.nest.is_nested([]) and tf.nest.is_nested({}) and tf.nest.is_nested(Point(1, 2))
    assert not tf.nest.is_nested("abc") and not tf.nest.is_nested(b"x")
    assert not tf.nest.is_nested(np.zeros(3)) and not tf.nest.is_nested(tf.constant(1))


def test_pack_sequence_as_rebuilds_containers_in_their_own_key_order():
    template = collections.OrderedDict([("z", 0), ("a", [0, 0])])
    packed = tf.nest.pack_sequence_as(template, [10, 20, 30])
    # flat order: a's leaves (sorted keys) then z; rebuilt in the OrderedDict's order
    assert list(packed.items()) == [("z", 30), ("a", [10, 20])]
    assert isinstance(packed, collections.OrderedDict)
    point = tf.nest.pack_sequence_as(Point(0, (0, 0)), ["p", "q", "r"])
    assert point == Point("p", ("q", "r")) and type(point) is Point
    assert tf.nest.pack_sequence_as(5, ["only"]) == "only"
    default = tf.nest.pack_sequence_as(collections.defaultdict(list, {"k": 1}), [2])
    assert default["k"] == 2 and default["missing"] == []


def test_pack_sequence_as_errors():
    with pytest.raises(ValueError, match="Structure had 3 atoms, but flat_sequence had 2"):
        tf.nest.pack_sequence_as([1, [2, 3]], [1, 2])
    with pytest.raises(ValueError, match="target structure is of type"):
        tf.nest.pack_sequence_as(1, [1, 2])
    with pytest.raises(TypeError, match="Attempted to pack value"):
        tf.nest.pack_sequence_as([1], 3)


def test_map_structure_over_several_structures():
    got = tf.nest.map_structure(lambda a, b: a * 10 + b, {"u": [1, 2], "v": 3},
                                {"u": [4, 5], "v": 6})
    assert got == {"u": [14, 25], "v": 36}
    with pytest.raises(ValueError, match="Must provide at least one structure"):
        tf.nest.map_structure(lambda: None)
    with pytest.raises(ValueError, match="Only valid keyword arguments"):
        tf.nest.map_structure(lambda a: a, [1], bogus=True)


def test_assert_same_structure():
    tf.nest.assert_same_structure([1, (2, 3)], ["a", ("b", "c")])
    tf.nest.assert_same_structure(Point(1, 2), collections.namedtuple("Point", "x y")(3, 4))
    with pytest.raises(ValueError, match="same number of elements"):
        tf.nest.assert_same_structure([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="is a sequence, while substructure"):
        tf.nest.assert_same_structure([1, [2]], [[1], 2])
    with pytest.raises(TypeError, match="same sequence type"):
        tf.nest.assert_same_structure([1, 2], (1, 2))
    tf.nest.assert_same_structure([1, 2], (1, 2), check_types=False)
    with pytest.raises(ValueError, match="don't have the same set of keys"):
        tf.nest.assert_same_structure({"a": 1}, {"b": 1})
    with pytest.raises(TypeError, match="sortable keys"):
        tf.nest.flatten({1: "x", "a": "y"})


def test_expand_composites_splits_and_rebuilds_sparse_tensors():
    sparse = tf.SparseTensor([[0, 1]], [5.0], [2, 3])
    assert tf.nest.flatten([sparse]) == [sparse]
    parts = tf.nest.flatten([sparse], expand_composites=True)
    assert parts == [sparse.indices, sparse.values, sparse.dense_shape]
    rebuilt = tf.nest.pack_sequence_as([sparse], parts, expand_composites=True)[0]
    with tf.Session() as sess:
        value = sess.run(rebuilt)
    np.testing.assert_array_equal(value.indices, [[0, 1]])
    np.testing.assert_array_equal(value.values, [5.0])
