"""tf.feature_column's columns: TF 1.15's constructor checks and messages, names, parse
specs and sizes, and each column's ids or dense values against hand-computed ones (hash
buckets through pyfarmhash and TF's FingerprintCat64 written here)."""

import re

import farmhash
import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.feature_column.utils import _LazyBuilder
from tests.feature_column.helpers import run_init, sparse
from tests.helpers import run

fc = tf.feature_column
MASK = (1 << 64) - 1


def fp64(text):
    return farmhash.fingerprint64(text.encode() if isinstance(text, str) else text)


def cat64(fp1, fp2):
    """TF's FingerprintCat64 (core/platform/fingerprint.h), as SparseCross chains it."""
    mul = 0xC6A4A7935BD1E995

    def shift_mix(v):
        return v ^ (v >> 47)

    result = fp1 ^ mul
    result ^= (shift_mix((fp2 * mul) & MASK) * mul) & MASK
    result = (result * mul) & MASK
    result = (shift_mix(result) * mul) & MASK
    return shift_mix(result)


def cross_bucket(features, size, key=0xDECAFCAFFE):
    """SparseCrossHashed of one combination: strings by Fingerprint64, ints as they are."""
    h = key
    for f in features:
        h = cat64(h, fp64(f) if isinstance(f, str) else f & MASK)
    return h % size


def ids_by_row(value):
    """A fetched SparseTensorValue as {row: [values]}."""
    out = {}
    for (row, _), v in zip(value.indices.tolist(), value.values.tolist()):
        out.setdefault(row, []).append(v)
    return out


CONSTRUCTOR_ERRORS = [
    (lambda: fc.numeric_column("a", shape=(2, 0)), ValueError,
     "shape dimensions must be greater than 0. shape: (2, 0), key: a"),
    (lambda: fc.numeric_column("a", shape=1.5), TypeError,
     "shape dimensions must be integer. shape: (1.5,), key: a"),
    (lambda: fc.numeric_column("a", dtype=tf.string), ValueError,
     "dtype must be convertible to float. dtype: <dtype: 'string'>, key: a"),
    (lambda: fc.numeric_column("a", shape=(2,), default_value=[1.]), ValueError,
     "The shape of default_value must be equal to given shape. default_value: [1.0], "
     "shape: (2,), key: a"),
    (lambda: fc.numeric_column("a", dtype=tf.int32, default_value=1.5), TypeError,
     "default_value must be compatible with dtype. default_value: 1.5, dtype: "
     "<dtype: 'int32'>, key: a"),
    (lambda: fc.numeric_column("a", normalizer_fn=3), TypeError,
     "normalizer_fn must be a callable. Given: 3"),
    (lambda: fc.numeric_column(3), ValueError,
     "key must be a string. Got: type <class 'int'>. Given key: 3."),
    (lambda: fc.bucketized_column("a", [1.]), ValueError,
     "source_column must be a column generated with numeric_column(). Given: a"),
    (lambda: fc.bucketized_column(fc.numeric_column("a", shape=(2, 2)), [1.]), ValueError,
     "source_column must be one-dimensional column. Given: NumericColumn(key='a', "
     "shape=(2, 2), default_value=None, dtype=tf.float32, normalizer_fn=None)"),
    (lambda: fc.bucketized_column(fc.numeric_column("a"), [1., 1.]), ValueError,
     "boundaries must be a sorted list."),
    (lambda: fc.bucketized_column(fc.numeric_column("a"), []), ValueError,
     "boundaries must be a sorted list."),
    (lambda: fc.categorical_column_with_hash_bucket("a", None), ValueError,
     "hash_bucket_size must be set. key: a"),
    (lambda: fc.categorical_column_with_hash_bucket("a", 0), ValueError,
     "hash_bucket_size must be at least 1. hash_bucket_size: 0, key: a"),
    (lambda: fc.categorical_column_with_hash_bucket("a", 3, dtype=tf.float32), ValueError,
     "column_name: a dtype must be string or integer. dtype: <dtype: 'float32'>."),
    (lambda: fc.categorical_column_with_vocabulary_list("a", []), ValueError,
     "vocabulary_list [] must be non-empty, column_name: a"),
    (lambda: fc.categorical_column_with_vocabulary_list("a", ["x", "x"]), ValueError,
     "Duplicate keys in vocabulary_list ['x', 'x'], column_name: a"),
    (lambda: fc.categorical_column_with_vocabulary_list("a", ["x"], default_value=0,
                                                        num_oov_buckets=1), ValueError,
     "Can't specify both num_oov_buckets and default_value in a."),
    (lambda: fc.categorical_column_with_vocabulary_list("a", ["x"], num_oov_buckets=-1),
     ValueError, "Invalid num_oov_buckets -1 in a."),
    (lambda: fc.categorical_column_with_vocabulary_list("a", ["x"], dtype=tf.int64),
     ValueError, "dtype <dtype: 'int64'> and vocabulary dtype <dtype: 'string'> do not "
     "match, column_name: a"),
    (lambda: fc.categorical_column_with_vocabulary_list("a", [1.5, 2.5]), ValueError,
     "column_name: a vocabulary dtype must be string or integer. dtype: "
     "<dtype: 'float64'>."),
    (lambda: fc.categorical_column_with_vocabulary_file("a", ""), ValueError,
     "Missing vocabulary_file in a."),
    (lambda: fc.categorical_column_with_vocabulary_file("a", "/no/such/vocab"), ValueError,
     "vocabulary_file in a does not exist."),
    (lambda: fc.categorical_column_with_vocabulary_file("a", "v.txt", 0), ValueError,
     "Invalid vocabulary_size in a."),
    (lambda: fc.categorical_column_with_vocabulary_file("a", "v.txt", 3, num_oov_buckets=2,
                                                        default_value=0), ValueError,
     "Can't specify both num_oov_buckets and default_value in a."),
    (lambda: fc.categorical_column_with_identity("a", 0), ValueError,
     "num_buckets 0 < 1, column_name a"),
    (lambda: fc.categorical_column_with_identity("a", 3, default_value=5), ValueError,
     "default_value 5 not in range [0, 3), column_name a"),
    (lambda: fc.weighted_categorical_column(fc.categorical_column_with_identity("a", 3), "w",
                                            dtype=tf.string), ValueError,
     "dtype <dtype: 'string'> is not convertible to float."),
    (lambda: fc.crossed_column(["a", "b"], 0), ValueError,
     "hash_bucket_size must be > 1. hash_bucket_size: 0"),
    (lambda: fc.crossed_column(["a"], 5), ValueError,
     "keys must be a list with length > 1. Given: ['a']"),
    (lambda: fc.crossed_column(["a", 3], 5), ValueError,
     "Unsupported key type. All keys must be either string, or categorical column except "
     "HashedCategoricalColumn. Given: 3"),
    (lambda: fc.crossed_column(["a", fc.categorical_column_with_hash_bucket("b", 4)], 5),
     ValueError, "categorical_column_with_hash_bucket is not supported for crossing."),
    (lambda: fc.embedding_column(fc.categorical_column_with_identity("a", 3), 0), ValueError,
     "Invalid dimension 0."),
    (lambda: fc.embedding_column(fc.categorical_column_with_identity("a", 3), 2,
                                 ckpt_to_load_from="c"), ValueError,
     "Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or none of them."),
    (lambda: fc.embedding_column(fc.categorical_column_with_identity("a", 3), 2,
                                 initializer=1.0), ValueError,
     "initializer must be callable if specified. Embedding of column_name: a"),
    (lambda: fc.shared_embedding_columns([fc.categorical_column_with_identity("a", 3),
                                          fc.categorical_column_with_hash_bucket("b", 3)], 2),
     ValueError, "To use shared_embedding_column, all categorical_columns must have the "
                 "same type"),
    (lambda: fc.shared_embedding_columns([fc.categorical_column_with_identity("a", 3),
                                          fc.categorical_column_with_identity("b", 4)], 2),
     ValueError, "all categorical_columns must have the same number of buckets. Given "
                 "column: IdentityCategoricalColumn(key='a', number_buckets=3, "
                 "default_value=None) with buckets: 3"),
    (lambda: fc.indicator_column("a"), ValueError,
     "Unsupported input type. Input must be a CategoricalColumn. Given: a"),
    (lambda: fc.sequence_numeric_column("a", dtype=tf.string), ValueError,
     "dtype must be convertible to float. dtype: <dtype: 'string'>, key: a"),
    (lambda: fc.make_parse_example_spec([fc.numeric_column("a"), "b"]), ValueError,
     "All feature_columns must be _FeatureColumn instances. Given: b"),
    (lambda: fc.make_parse_example_spec([fc.numeric_column("a"),
                                         fc.numeric_column("a", shape=2)]), ValueError,
     "feature_columns contain different parse_spec for key a. Given FixedLenFeature("
     "shape=(2,), dtype=tf.float32, default_value=None) and FixedLenFeature(shape=(1,), "
     "dtype=tf.float32, default_value=None)"),
]


@pytest.mark.parametrize("make,error,message", CONSTRUCTOR_ERRORS,
                         ids=[str(i) for i in range(len(CONSTRUCTOR_ERRORS))])
def test_constructor_errors(make, error, message):
    with pytest.raises(error, match=re.escape(message)):
        make()


def test_names_specs_sizes_and_defaults():
    price = fc.numeric_column("price", shape=2, default_value=[1, 2])
    assert price == fc.numeric_column("price", shape=[2], default_value=np.array([1, 2]))
    assert price.default_value == (1, 2) and price.shape == (2,)
    grid = fc.numeric_column("g", shape=(2, 3), default_value=0.5, dtype=tf.float64)
    assert grid.default_value == ((0.5,) * 3,) * 2
    assert repr(fc.numeric_column("a")) == ("NumericColumn(key='a', shape=(1,), default_value="
                                            "None, dtype=tf.float32, normalizer_fn=None)")
    age = fc.bucketized_column(fc.numeric_column("age", shape=2), [18, 40, 65])
    words = fc.categorical_column_with_hash_bucket("words", 100)
    color = fc.categorical_column_with_vocabulary_list("color", ["R", "G"], num_oov_buckets=3)
    ints = fc.categorical_column_with_vocabulary_list("ints", [4, 7, 9])
    ident = fc.categorical_column_with_identity("id", 10)
    weighted = fc.weighted_categorical_column(ident, "id_weight")
    cross = fc.crossed_column(["words", age, fc.crossed_column([color, "z"], 9)], 50)
    emb = fc.embedding_column(words, 8)
    ind = fc.indicator_column(color)
    shared = fc.shared_embedding_columns([ident, fc.categorical_column_with_identity("b", 10)],
                                         4)
    assert [c.name for c in (age, weighted, cross, emb, ind, *shared)] == [
        "age_bucketized", "id_weighted_by_id_weight", "age_bucketized_X_color_X_words_X_z",
        "words_embedding", "color_indicator", "id_shared_embedding", "b_shared_embedding"]
    assert shared[0]._var_scope_name == "b_id_shared_embedding"  # sorted names, joined
    assert [age._num_buckets, words._num_buckets, color._num_buckets, ints._num_buckets,
            weighted._num_buckets, cross._num_buckets] == [8, 100, 5, 3, 10, 50]
    assert ints.dtype == tf.int64 and color.dtype == tf.string
    assert age._variable_shape.as_list() == [2, 4]
    assert emb._variable_shape.as_list() == [8] and ind._variable_shape.as_list() == [1, 5]
    # The default embedding initializer: truncated normal, stddev 1/sqrt(dimension).
    assert emb.initializer.stddev == pytest.approx(1 / np.sqrt(8)) and emb.combiner == "mean"
    spec = fc.make_parse_example_spec([price, age, weighted, cross, emb])
    assert spec == {
        "price": tf.FixedLenFeature((2,), tf.float32, (1, 2)),
        "age": tf.FixedLenFeature((2,), tf.float32, None),
        "id": tf.VarLenFeature(tf.int64), "id_weight": tf.VarLenFeature(tf.float32),
        "words": tf.VarLenFeature(tf.string), "color": tf.VarLenFeature(tf.string),
        "z": tf.VarLenFeature(tf.string)}
    # Columns of different kinds never compare equal, even with equal fields.
    assert fc.indicator_column(ident) != fc.sequence_categorical_column_with_identity("id", 10)
    assert len({fc.numeric_column("a"), fc.numeric_column("a")}) == 1


def test_ids_of_each_categorical_column(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("apple\nbanana\ncherry\n")
    price = fc.numeric_column("price", shape=2)
    buckets = fc.bucketized_column(price, [0., 10., 100.])
    words = fc.categorical_column_with_hash_bucket("words", 7)
    numbers = fc.categorical_column_with_hash_bucket("numbers", 5, dtype=tf.int64)
    color = fc.categorical_column_with_vocabulary_list("color", ["R", "G", "B"],
                                                       num_oov_buckets=2)
    color_default = fc.categorical_column_with_vocabulary_list("color2", ["R", "G", "B"],
                                                               default_value=0)
    small = fc.categorical_column_with_vocabulary_list("small", [10, 20, 30], dtype=tf.int32)
    fruit = fc.categorical_column_with_vocabulary_file("fruit", str(vocab), num_oov_buckets=3)
    fruit_two = fc.categorical_column_with_vocabulary_file("fruit2", str(vocab), 2)
    ident = fc.categorical_column_with_identity("id", 4, default_value=3)
    weighted = fc.weighted_categorical_column(fc.categorical_column_with_identity("wid", 5),
                                              "w")
    cross = fc.crossed_column(["words", buckets], 11, hash_key=None)
    features = {
        "price": [[-5., 10000.], [150., 10.], [5., 100.]],
        "words": sparse([["a"], ["b", "c"], ["d"]]),
        "numbers": [[12, -1], [-1, -1], [7, 300]],  # -1: missing in a dense int feature
        "color": [["R", ""], ["Z", "B"], ["purple", "G"]],  # '': missing
        "color2": sparse([["B"], ["Z"], ["G", "R"]]),
        "small": [[20], [30], [40]],
        "fruit": sparse([["cherry", "kiwi"], ["apple"], ["fig"]]),
        "fruit2": sparse([["cherry"], ["banana"], ["apple"]]),
        "id": sparse([[0, 9], [-3], [2]], tf.int64),
        "wid": sparse([[1, 4], [2], [0]], tf.int64),
        "w": sparse([[0.5, 2.0], [-1.0], [3.0]], tf.float32),
    }
    builder = _LazyBuilder(features)
    columns = [buckets, words, numbers, color, color_default, small, fruit, fruit_two, ident,
               weighted, cross]
    pairs = [c._get_sparse_tensors(builder) for c in columns]
    assert all(p.weight_tensor is None for i, p in enumerate(pairs) if columns[i] != weighted)
    got = run_init({c.name: (p.id_tensor, p.weight_tensor) if p.weight_tensor is not None
               else p.id_tensor for c, p in zip(columns, pairs)}
              | {"bucket_ids": builder.get(buckets), "dense": buckets._get_dense_tensor(builder)})

    np.testing.assert_array_equal(got["bucket_ids"], [[0, 3], [3, 2], [1, 3]])
    np.testing.assert_array_equal(got["dense"], np.eye(4)[[[0, 3], [3, 2], [1, 3]]])
    # As ids, dimension i's buckets come after those of the dimensions before it.
    assert ids_by_row(got["price_bucketized"]) == {0: [0, 7], 1: [3, 6], 2: [1, 7]}
    assert ids_by_row(got["words"]) == {0: [fp64("a") % 7], 1: [fp64("b") % 7, fp64("c") % 7],
                                        2: [fp64("d") % 7]}
    # Integers hash as their decimal text; the dense -1 cells are dropped.
    assert ids_by_row(got["numbers"]) == {0: [fp64("12") % 5],
                                          2: [fp64("7") % 5, fp64("300") % 5]}
    assert got["numbers"].indices.tolist() == [[0, 0], [2, 0], [2, 1]]
    assert ids_by_row(got["color"]) == {0: [0], 1: [3 + fp64("Z") % 2, 2],
                                        2: [3 + fp64("purple") % 2, 1]}
    assert ids_by_row(got["color2"]) == {0: [2], 1: [0], 2: [1, 0]}
    assert ids_by_row(got["small"]) == {0: [1], 1: [2], 2: [-1]}
    assert ids_by_row(got["fruit"]) == {0: [2, 3 + fp64("kiwi") % 3], 1: [0],
                                        2: [3 + fp64("fig") % 3]}
    # vocabulary_size=2 keeps the file's first two lines only.
    assert ids_by_row(got["fruit2"]) == {0: [-1], 1: [1], 2: [0]}
    assert ids_by_row(got["id"]) == {0: [0, 3], 1: [3], 2: [2]}
    wids, weights = got["wid_weighted_by_w"]
    assert ids_by_row(wids) == {0: [1, 4], 1: [2], 2: [0]}
    assert ids_by_row(weights) == {0: [0.5, 2.0], 1: [-1.0], 2: [3.0]}
    # Crosses: each word with each bucket id of the row, in the keys' order.
    assert ids_by_row(got["price_bucketized_X_words"]) == {
        0: [cross_bucket(["a", 0], 11), cross_bucket(["a", 7], 11)],
        1: [cross_bucket(c, 11) for c in (["b", 3], ["b", 6], ["c", 3], ["c", 6])],
        2: [cross_bucket(["d", 1], 11), cross_bucket(["d", 7], 11)]}


def test_hash_buckets_match_tfs_documented_values():
    # TF's docs: tf.strings.to_hash_bucket_fast(["Hello", "TensorFlow", "2.x"], 3) is
    # [0, 2, 2]; the column hashes the same way, and so does the fingerprint used above.
    assert [fp64(s) % 3 for s in ("Hello", "TensorFlow", "2.x")] == [0, 2, 2]
    column = fc.categorical_column_with_hash_bucket("s", 3)
    ids = column._get_sparse_tensors(_LazyBuilder({"s": [["Hello"], ["TensorFlow"], ["2.x"]]}))
    assert run_init(ids.id_tensor).values.tolist() == [0, 2, 2]


def test_identity_column_fails_out_of_range_and_weighted_dtype_checks():
    ident = fc.categorical_column_with_identity("id", 3)
    ids = ident._get_sparse_tensors(_LazyBuilder({"id": sparse([[1], [3]], tf.int64)}))
    # TF's asserts print the data they are given: the values and num_buckets.
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=re.escape("assertion failed: [1 3] [3]")):
        run(ids.id_tensor)
    neg = ident._get_sparse_tensors(_LazyBuilder({"id": sparse([[1], [-2]], tf.int64)}))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=re.escape("assertion failed: [1 -2]")):
        run(neg.id_tensor)
    with pytest.raises(ValueError, match=re.escape("Invalid input, not integer. key: id dtype: "
                                                   "<dtype: 'string'>")):
        ident._get_sparse_tensors(_LazyBuilder({"id": sparse([["a"]])}))
    weighted = fc.weighted_categorical_column(ident, "w")
    with pytest.raises(ValueError, match=re.escape(
            "Bad dtype, expected <dtype: 'float32'>, but got <dtype: 'int32'>.")):
        weighted._get_sparse_tensors(_LazyBuilder({"id": sparse([[1]], tf.int64),
                                                   "w": sparse([[1]], tf.int32)}))
    words = fc.categorical_column_with_hash_bucket("words", 5)
    with pytest.raises(ValueError, match=re.escape(
            "Column dtype and SparseTensors dtype must be compatible. key: words, column "
            "dtype: <dtype: 'string'>, tensor dtype: <dtype: 'int64'>")):
        words._get_sparse_tensors(_LazyBuilder({"words": sparse([[1]], tf.int64)}))
    with pytest.raises(ValueError, match=re.escape("Feature (key: words) cannot have rank 0.")):
        words._get_sparse_tensors(_LazyBuilder({"words": tf.constant("a")}))
    with pytest.raises(ValueError, match="Feature nope is not in features dictionary."):
        _LazyBuilder({}).get("nope")
    with pytest.raises(ValueError, match=re.escape(
            "The corresponding Tensor of numerical column must be a Tensor. SparseTensor is "
            "not supported. key: a")):
        _LazyBuilder({"a": sparse([[1.0]], tf.float32)}).get(fc.numeric_column("a"))
