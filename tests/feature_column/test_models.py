"""input_layer and linear_model over feature columns: TF1's variable names, shapes and
collections, the columns' order, embedding combiners, indicators and linear weighted sums
against NumPy, shared embeddings, sequence columns, the v2 column protocol, parsing
tf.Examples with make_parse_example_spec, and embeddings restored from a checkpoint."""

import re

import farmhash
import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.feature_column.models import _StateManagerImpl
from tensorflux._src.feature_column.utils import FeatureTransformationCache, _LazyBuilder
from tests.feature_column.helpers import run_init, sparse

fc = tf.feature_column
W = np.arange(10, dtype=np.float32).reshape(5, 2) / 4 - 1  # 5 ids, dimension 2


def combine(rows, weights, combiner, table=W):
    """Per row, the `combiner` of the rows' embeddings weighted by `weights`."""
    out = []
    for ids, ws in zip(rows, weights):
        emb = sum((w * table[i] for i, w in zip(ids, ws)), np.zeros(table.shape[1]))
        if combiner == "mean" and ids:
            emb = emb / sum(ws)
        elif combiner == "sqrtn" and ids:
            emb = emb / np.sqrt(sum(w * w for w in ws))
        out.append(emb)
    return np.array(out, np.float32)


def test_embedding_combiners_weights_max_norm_and_indicators():
    ids = [[0, 2, 2], [4], []]  # row 2 has no ids: zeros
    features = {"ids": sparse(ids, tf.int64, width=3),
                "wids": sparse([[0, 2], [4], [1]], tf.int64),
                "w": sparse([[1.0, 3.0], [2.0], [-1.0]], tf.float32)}
    ident = fc.categorical_column_with_identity("ids", 5)
    weighted = fc.weighted_categorical_column(fc.categorical_column_with_identity("wids", 5),
                                              "w")
    init = tf.constant_initializer(W)
    outputs = {}
    for combiner in ("mean", "sqrtn", "sum"):
        outputs[combiner] = fc.input_layer(features, [fc.embedding_column(
            ident, 2, combiner=combiner, initializer=init)])
        outputs["weighted_" + combiner] = fc.input_layer(features, [fc.embedding_column(
            weighted, 2, combiner=combiner, initializer=init)])
    outputs["max_norm"] = fc.input_layer(features, [fc.embedding_column(
        ident, 2, combiner="sum", initializer=init, max_norm=1.0)])
    outputs["indicators"] = fc.input_layer(features, [fc.indicator_column(ident),
                                                      fc.indicator_column(weighted)])
    got = run_init(outputs)
    for combiner in ("mean", "sqrtn", "sum"):
        np.testing.assert_allclose(got[combiner],
                                   combine(ids, [[1.0] * len(r) for r in ids], combiner),
                                   rtol=1e-6)
    # Non-positive weights are dropped unless the combiner is "sum" (TF's safe lookup).
    np.testing.assert_allclose(got["weighted_mean"],
                               combine([[0, 2], [4], []], [[1, 3], [2], []], "mean"), 1e-6)
    np.testing.assert_allclose(got["weighted_sqrtn"],
                               combine([[0, 2], [4], []], [[1, 3], [2], []], "sqrtn"), 1e-6)
    np.testing.assert_allclose(got["weighted_sum"],
                               combine([[0, 2], [4], [1]], [[1, 3], [2], [-1]], "sum"), 1e-6)
    norms = np.linalg.norm(W, axis=1, keepdims=True)
    clipped = W * np.minimum(1.0, 1.0 / norms)
    np.testing.assert_allclose(got["max_norm"], combine(ids, [[1] * 3, [1], []], "sum",
                                                        clipped), rtol=1e-5)
    # Indicators, ordered by name: counts of each id, then the weights summed per id.
    np.testing.assert_array_equal(got["indicators"], [
        [1, 0, 2, 0, 0, 1, 0, 3, 0, 0], [0, 0, 0, 0, 1, 0, 0, 0, 0, 2],
        [0, 0, 0, 0, 0, 0, -1, 0, 0, 0]])


def test_unknown_words_are_skipped_and_gradients_reach_used_rows():
    # Out-of-vocabulary words get id -1, which TF's lookup drops; a row left without ids
    # gives zeros. The table's gradient of the outputs' sum: 1/count for each id of a
    # "mean" row, nothing for the dropped ones.
    words = fc.categorical_column_with_vocabulary_list("w", ["a", "b", "c", "d", "e"])
    column = fc.embedding_column(words, 2, initializer=tf.constant_initializer(W))
    features = {"w": sparse([["a", "zz", "c"], ["zz"], ["e"]])}
    cols_to_vars = {}
    out = fc.input_layer(features, [column], cols_to_vars=cols_to_vars)
    table = cols_to_vars[column][0]
    grad = tf.convert_to_tensor(tf.gradients(tf.reduce_sum(out), table)[0])
    got, got_grad = run_init([out, grad])
    np.testing.assert_allclose(got, [(W[0] + W[2]) / 2, [0, 0], W[4]], rtol=1e-6)
    np.testing.assert_allclose(got_grad, [[0.5] * 2, [0] * 2, [0.5] * 2, [0] * 2, [1] * 2])


def test_input_layer_variables_order_and_collections():
    price = fc.numeric_column("price", shape=2)
    age = fc.bucketized_column(fc.numeric_column("age"), [18., 40.])
    words = fc.categorical_column_with_hash_bucket("words", 20)
    color = fc.categorical_column_with_vocabulary_list("color", ["R", "G", "B"])
    words_emb = fc.embedding_column(words, 3)
    color_emb = fc.embedding_column(color, 4, trainable=False)
    features = {"price": [[1., 2.], [3., 4.]], "age": [10., 50.],  # rank 1: one per example
                "words": sparse([["x"], ["y", "z"]]), "color": [["G"], ["B"]]}
    cols_to_vars, cols_to_outputs = {}, {}
    with tf.variable_scope("dnn"):
        net = fc.input_layer(features, [words_emb, price, color_emb, age],
                             weight_collections=["my_weights"], cols_to_vars=cols_to_vars,
                             cols_to_output_tensors=cols_to_outputs)
    again = fc.input_layer(features, [price, fc.indicator_column(color)], trainable=False)
    assert net.shape.as_list() == [2, 3 + 4 + 2 + 3] and net.dtype == tf.float32
    assert again.shape.as_list() == [2, 2 + 3]
    names = {v.name: v.shape.as_list() for v in tf.global_variables()}
    assert names == {"dnn/input_layer/words_embedding/embedding_weights:0": [20, 3],
                     "dnn/input_layer/color_embedding/embedding_weights:0": [3, 4]}
    assert [v.name for v in tf.trainable_variables()] == [
        "dnn/input_layer/words_embedding/embedding_weights:0"]
    assert len(tf.get_collection(tf.GraphKeys.MODEL_VARIABLES)) == 2
    assert len(tf.get_collection("my_weights")) == 2
    assert {c.name: [v.name for v in vs] for c, vs in cols_to_vars.items()} == {
        "age_bucketized": [], "color_embedding": [
            "dnn/input_layer/color_embedding/embedding_weights:0"],
        "price": [], "words_embedding": ["dnn/input_layer/words_embedding/embedding_weights:0"]}
    assert {c.name: t.shape.as_list() for c, t in cols_to_outputs.items()} == {
        "age_bucketized": [2, 3], "color_embedding": [2, 4], "price": [2, 2],
        "words_embedding": [2, 3]}
    tables = {v.name.split("/")[2]: v for v in tf.global_variables()}
    got, parts, emb = run_init([again, cols_to_outputs, tables])
    # Sorted by name: age_bucketized, color_embedding, price, words_embedding.
    np.testing.assert_array_equal(got, [[0, 1, 0, 1, 2], [0, 0, 1, 3, 4]])
    order = [parts[c] for c in sorted(parts, key=lambda c: c.name)]
    np.testing.assert_array_equal(order[0], [[1, 0, 0], [0, 0, 1]])
    np.testing.assert_allclose(order[1], emb["color_embedding"][[1, 2]])
    words_table = emb["words_embedding"]
    rows = [[farmhash.fingerprint64(b"x") % 20],
            [farmhash.fingerprint64(w) % 20 for w in (b"y", b"z")]]
    np.testing.assert_allclose(order[3], [words_table[r].mean(0) for r in rows], rtol=1e-6)
    with pytest.raises(ValueError, match=re.escape(
            "Items of feature_columns must be a _DenseColumn. You can wrap a categorical "
            "column with an embedding_column or indicator_column. Given: HashedCategorical")):
        fc.input_layer(features, [words])
    with pytest.raises(ValueError, match="Duplicate feature column name found for columns"):
        fc.input_layer(features, [price, fc.numeric_column("price")])
    with pytest.raises(ValueError, match="feature_columns must not be empty."):
        fc.input_layer(features, [])
    with pytest.raises(ValueError, match="Expected feature_columns to be iterable, found dict."):
        fc.input_layer(features, {"a": price})
    with pytest.raises(ValueError, match=re.escape(
            "Batch size (first dimension) of each feature must be same. Batch size of columns "
            "(age, price): (2, 3)")):
        fc.input_layer({"price": [[1., 2.]] * 3, "age": [[1.], [2.]]},
                       [price, fc.numeric_column("age")])


def test_shared_embeddings_use_one_variable():
    a = fc.categorical_column_with_identity("a", 5)
    b = fc.categorical_column_with_identity("b", 5)
    shared = fc.shared_embedding_columns([b, a], 2, combiner="sum",
                                         initializer=tf.constant_initializer(W))
    features = {"a": sparse([[1], [3, 4]], tf.int64), "b": sparse([[0, 0], [2]], tf.int64)}
    cols_to_vars = {}
    out = fc.input_layer(features, shared, cols_to_vars=cols_to_vars)
    out2 = fc.input_layer(features, shared[1:])  # reuses the collection's variable
    assert [(v.name, v.shape.as_list()) for v in tf.global_variables()] == [
        ("input_layer/a_b_shared_embedding/embedding_weights:0", [5, 2])]
    assert tf.get_collection("a_b_shared_embedding") == tf.global_variables()
    assert {c.name: len(v) for c, v in cols_to_vars.items()} == {
        "a_shared_embedding": 1, "b_shared_embedding": 0}
    got, got2 = run_init([out, out2])
    np.testing.assert_allclose(got, np.hstack([[W[1], W[3] + W[4]], [2 * W[0], W[2]]]))
    np.testing.assert_allclose(got2, [W[1], W[3] + W[4]])
    named = fc.shared_embedding_columns([a, b], 2, shared_embedding_collection_name="mine")
    fc.input_layer(features, named)
    assert tf.global_variables()[-1].name == "input_layer_2/mine/embedding_weights:0"


def test_linear_model_weighted_sums_names_and_combiners():
    price = fc.numeric_column("price", shape=2)
    age = fc.bucketized_column(fc.numeric_column("age"), [18., 40.])
    words = fc.categorical_column_with_vocabulary_list("words", ["a", "b", "c", "d"])
    weighted = fc.weighted_categorical_column(fc.categorical_column_with_identity("t", 3), "tw")
    cross = fc.crossed_column(["words", age], 5)
    features = {"price": [[1., 2.], [-1., 0.5], [0., 0.]], "age": [[10.], [30.], [50.]],
                "words": sparse([["a", "c", "c"], ["d"], ["zzz"]]),
                "t": sparse([[0, 2], [1], [2]], tf.int64),
                "tw": sparse([[2.0, 0.5], [4.0], [1.0]], tf.float32)}
    columns = [words, price, weighted, age]
    preds, vars_ = {}, {}
    for combiner in ("sum", "mean", "sqrtn"):
        vars_[combiner] = {}
        preds[combiner] = fc.linear_model(features, columns, units=2,
                                          sparse_combiner=combiner,
                                          cols_to_vars=vars_[combiner])
    cross_pred = fc.linear_model(features, [cross])
    assert preds["sum"].shape.as_list() == [3, 2]
    assert {v.name: v.shape.as_list() for v in tf.global_variables()[:5]} == {
        "linear_model/age_bucketized/weights:0": [3, 2],
        "linear_model/price/weights:0": [2, 2],
        "linear_model/t_weighted_by_tw/weights:0": [3, 2],
        "linear_model/words/weights:0": [4, 2], "linear_model/bias_weights:0": [2]}
    assert [v.name for v in tf.global_variables()[-2:]] == [
        "linear_model_3/age_bucketized_X_words/weights:0", "linear_model_3/bias_weights:0"]
    assert {(k if isinstance(k, str) else k.name): [v.name for v in vs]
            for k, vs in vars_["mean"].items()} == {
        "age_bucketized": ["linear_model_1/age_bucketized/weights:0"],
        "price": ["linear_model_1/price/weights:0"],
        "t_weighted_by_tw": ["linear_model_1/t_weighted_by_tw/weights:0"],
        "words": ["linear_model_1/words/weights:0"], "bias": ["linear_model_1/bias_weights:0"]}
    assert len(tf.get_collection(tf.GraphKeys.MODEL_VARIABLES)) == 17
    rng = np.random.default_rng(0)
    values = {name: rng.normal(size=shape).astype(np.float32) for name, shape in
              [("age_bucketized", (3, 2)), ("price", (2, 2)), ("t_weighted_by_tw", (3, 2)),
               ("words", (4, 2)), ("bias", (2,))]}
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        zero = sess.run(preds["sum"])  # weights start at zero
        for combiner in ("sum", "mean", "sqrtn"):
            for column, vs in vars_[combiner].items():
                name = column if isinstance(column, str) else column.name
                vs[0].load(values[name], sess)
        got = sess.run(preds)
        crossed = sess.run(cross_pred)
    np.testing.assert_array_equal(zero, np.zeros((3, 2)))
    np.testing.assert_array_equal(crossed, np.zeros((3, 1)))
    v = values
    dense = np.array([[1., 2.], [-1., 0.5], [0., 0.]]) @ v["price"]
    age_part = v["age_bucketized"][[0, 1, 2]]
    word_rows, weight_rows = [[0, 2, 2], [3], []], [[0, 2], [1], [2]]
    tws = [[2.0, 0.5], [4.0], [1.0]]
    for combiner in ("sum", "mean", "sqrtn"):
        words_part = combine(word_rows, [[1.0] * len(r) for r in word_rows], combiner,
                             v["words"])
        t_part = combine(weight_rows, tws, combiner, v["t_weighted_by_tw"])
        want = dense + age_part + words_part + t_part + v["bias"]
        np.testing.assert_allclose(got[combiner], want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match=re.escape(
            "Items of feature_columns must be either a _DenseColumn or _CategoricalColumn. "
            "Given: SequenceNumericColumn")):
        fc.linear_model(features, [fc.sequence_numeric_column("price")])


def test_sequence_columns_and_the_v2_protocol():
    steps = fc.sequence_numeric_column("steps")
    pairs = fc.sequence_numeric_column("pairs", shape=(2,), default_value=-1.)
    tokens = fc.sequence_categorical_column_with_identity("tokens", 5)
    words = fc.sequence_categorical_column_with_vocabulary_list("words", ["a", "b"])
    features = {"steps": sparse([[1., 2., 3.], [4.]], tf.float32),
                "pairs": sparse([[1., 2., 3., 4.], [5., 6.]], tf.float32),
                "tokens": sparse([[1, 2], [0], []], tf.int64, width=2),
                "words": sparse([["b", "a", "b"], ["a"]])}
    cache = FeatureTransformationCache(features)
    manager = _StateManagerImpl()
    got_steps = steps.get_sequence_dense_tensor(cache, None)
    got_pairs = pairs.get_sequence_dense_tensor(cache, None)
    indicator = fc.indicator_column(words)
    got_ind = indicator.get_sequence_dense_tensor(cache, manager)
    emb = fc.embedding_column(tokens, 2, initializer=tf.constant_initializer(W))
    with tf.variable_scope("seq"):
        got_emb = emb._get_sequence_dense_tensor(_LazyBuilder(features))
    plain = fc.embedding_column(fc.categorical_column_with_identity("tokens", 5), 2,
                                initializer=tf.constant_initializer(W))
    with tf.variable_scope("v2"):
        plain.create_state(manager)
    got_plain = plain.get_dense_tensor(cache, manager)
    assert manager.get_variable(plain, "embedding_weights").name == "v2/embedding_weights:0"
    assert got_emb.dense_tensor.shape.as_list()[-1] == 2
    got = run_init([got_steps, got_pairs, got_ind, got_emb, got_plain])
    np.testing.assert_array_equal(got[0].dense_tensor[..., 0], [[1, 2, 3], [4, 0, 0]])
    np.testing.assert_array_equal(got[0].sequence_length, [3, 1])
    np.testing.assert_array_equal(got[1].dense_tensor,
                                  [[[1, 2], [3, 4]], [[5, 6], [-1, -1]]])
    np.testing.assert_array_equal(got[1].sequence_length, [2, 1])
    np.testing.assert_array_equal(got[2].dense_tensor, [[[0, 1], [1, 0], [0, 1]],
                                                        [[1, 0], [0, 0], [0, 0]]])
    np.testing.assert_array_equal(got[2].sequence_length, [3, 1])
    np.testing.assert_allclose(got[3].dense_tensor, [[W[1], W[2]], [W[0], 0 * W[0]],
                                                     [0 * W[0], 0 * W[0]]])
    np.testing.assert_array_equal(got[3].sequence_length, [2, 1, 0])
    np.testing.assert_allclose(got[4], [W[[1, 2]].mean(0), W[0], [0, 0]])
    assert fc.make_parse_example_spec([emb, steps]) == {
        "tokens": tf.VarLenFeature(tf.int64), "steps": tf.VarLenFeature(tf.float32)}
    with pytest.raises(ValueError, match=re.escape(
            "In embedding_column: tokens_embedding. categorical_column must not be of type "
            "_SequenceCategoricalColumn.")):
        fc.input_layer(features, [emb])
    with pytest.raises(ValueError, match=re.escape(
            "In indicator_column: tokens_indicator. categorical_column must be of type "
            "_SequenceCategoricalColumn to use sequence_input_layer.")):
        fc.indicator_column(fc.categorical_column_with_identity("tokens", 5)) \
            ._get_sequence_dense_tensor(_LazyBuilder(features))


def test_parsed_examples_and_embeddings_from_a_checkpoint(tmp_path):
    table = np.arange(8, dtype=np.float32).reshape(4, 2)
    saved = tf.Variable(table, name="pretrained")
    with tf.Session() as sess:
        sess.run(saved.initializer)
        path = tf.train.Saver([saved]).save(sess, str(tmp_path / "model.ckpt"))
    tf.reset_default_graph()
    color = fc.categorical_column_with_vocabulary_list("color", ["R", "G", "B", "Y"])
    columns = [fc.numeric_column("x", shape=2, default_value=[0.5, -0.5]),
               fc.embedding_column(color, 2, ckpt_to_load_from=path,
                                   tensor_name_in_ckpt="pretrained"),
               fc.bucketized_column(fc.numeric_column("x2"), [0.])]
    spec = fc.make_parse_example_spec(columns)

    def example(**features):
        def feature(v):
            if isinstance(v[0], str):
                return tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[s.encode() for s in v]))
            return tf.train.Feature(float_list=tf.train.FloatList(value=v))
        return tf.train.Example(features=tf.train.Features(
            feature={k: feature(v) for k, v in features.items()})).SerializeToString()

    serialized = [example(x=[1., 2.], color=["G", "Y"], x2=[-3.]),
                  example(color=["R"], x2=[3.])]  # x missing: its default
    parsed = tf.parse_example(serialized, spec)
    net = fc.input_layer(parsed, columns)
    got = run_init(net)
    # color_embedding (mean of the checkpoint's rows), x, x2_bucketized.
    np.testing.assert_allclose(got, [[*(table[1] + table[3]) / 2, 1., 2., 1., 0.],
                                     [*table[0], 0.5, -0.5, 0., 1.]])


def test_partitioned_embedding_and_linear_weights():
    # A partitioner on the enclosing scope splits the tables as TF1 does ("part_i",
    # rows 0-2 and 3-5 for 6 ids in 2 parts); lookups span the parts.
    ids = fc.categorical_column_with_identity("a", 6)
    column = fc.embedding_column(ids, 2, combiner="sum", initializer=tf.ones_initializer())
    features = {"a": sparse([[1], [4, 5]], tf.int64)}
    with tf.variable_scope("s", partitioner=tf.fixed_size_partitioner(2)):
        out = fc.input_layer(features, [column])
        linear = fc.linear_model(features, [ids])
    assert {v.name: v.shape.as_list() for v in tf.global_variables()} == {
        "s/input_layer/a_embedding/embedding_weights/part_0:0": [3, 2],
        "s/input_layer/a_embedding/embedding_weights/part_1:0": [3, 2],
        "s/linear_model/a/weights/part_0:0": [3, 1],
        "s/linear_model/a/weights/part_1:0": [3, 1],
        "s/linear_model/bias_weights/part_0:0": [1]}
    parts = tf.global_variables()[:2]
    grads = tf.gradients(tf.reduce_sum(out * [[1., 2.], [3., 4.]]), parts)
    got, g0, g1 = run_init([out, tf.convert_to_tensor(grads[0]),
                            tf.convert_to_tensor(grads[1])])
    np.testing.assert_array_equal(got, [[1, 1], [2, 2]])
    np.testing.assert_array_equal(g0, [[0, 0], [1, 2], [0, 0]])  # id 1 in row 0
    np.testing.assert_array_equal(g1, [[0, 0], [3, 4], [3, 4]])  # ids 4, 5 in row 1
