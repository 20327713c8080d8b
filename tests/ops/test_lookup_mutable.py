"""Mutable tables (tf.lookup.experimental.MutableHashTable / DenseHashTable): contents
against Python dicts written here, DenseHashTable's bucket layout against TF's probing
worked by hand (and TF's published Hash64 values), per-Session tables, Saver round trips
of their contents under TF's checkpoint names, tables_initializer in
MonitoredTrainingSession, TF's errors.
"""

import numpy as np
import pytest

import tensorflux as tf

InvalidArgumentError = tf.errors.InvalidArgumentError


def test_mutable_hash_table_against_a_dict():
    table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, default_value=-1)
    vectors = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, [0.0, -1.0],
                                                      name="vectors")
    reference = {}
    batches = [(["a", "b", "c"], [7, 8, 9]), (["c", "d"], [10, 11])]
    inserts = [table.insert(k, tf.constant(v, tf.int64)) for k, v in batches]
    remove = table.remove(tf.constant(["b", "zz"]))
    queries = np.array([["a", "b"], ["c", "e"]], dtype=object)
    look = table.lookup(tf.constant(queries))
    vec_insert = vectors.insert(tf.constant([3, 5], tf.int64), [[1.0, 2.0], [3.0, 4.0]])
    with tf.control_dependencies([vec_insert]):  # ordered after the insert in one run
        vec_look = vectors.lookup(tf.constant([5, 4, 3], tf.int64))
    assert table.name == "MutableHashTable" and look.shape.as_list() == [2, 2]
    assert vec_look.shape.as_list() == [3, 2] and vectors.resource_handle.op.type == \
        "MutableHashTableOfTensorsV2"
    assert look.op.name == "MutableHashTable_lookup_table_find/LookupTableFindV2"
    with tf.Session() as sess:
        assert sess.run(table.size()) == 0
        for (keys, values), op in zip(batches, inserts):
            sess.run(op)
            reference.update(zip([k.encode() for k in keys], values))
        assert sess.run(look).tolist() == [[reference.get(k.encode(), -1) for k in row]
                                           for row in queries]
        sess.run(remove)
        del reference[b"b"]
        got, size, (keys, values) = sess.run([look, table.size(), table.export()])
        assert got.tolist() == [[reference.get(k.encode(), -1) for k in row] for row in queries]
        assert size == len(reference) and dict(zip(keys.tolist(), values.tolist())) == reference
        np.testing.assert_array_equal(sess.run(vec_look), [[3, 4], [0, -1], [1, 2]])
        with pytest.raises(InvalidArgumentError, match=r"Expected shape \[3\] for value, got "
                                                       r"\[2\]"):
            sess.run(table.insert(["x", "y", "z"], tf.constant([1, 2], tf.int64)))
        with pytest.raises(InvalidArgumentError, match=r"Expected shape \[2,2\] for value, "
                                                       r"got \[2,3\]"):
            sess.run(vectors.insert(tf.constant([1, 2], tf.int64), tf.zeros([2, 3])))
    with pytest.raises(TypeError, match="Signature mismatch. Keys must be dtype "
                                        "<dtype: 'string'>, got <dtype: 'int64'>."):
        table.remove(tf.constant([1], tf.int64))


def test_tables_are_per_session():
    table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.int64, -1)
    insert = table.insert(tf.constant([1], tf.int64), tf.constant([10], tf.int64))
    look = table.lookup(tf.constant([1], tf.int64))
    with tf.Session() as first, tf.Session() as second:
        first.run(insert)
        assert first.run(look).tolist() == [10]
        assert second.run(look).tolist() == [-1]
        assert second.run(table.size()) == 0


def _probe(key_hash, num_buckets, taken):
    """TF's quadratic probing: the first bucket of key_hash's sequence not in `taken`."""
    index, probes = key_hash & (num_buckets - 1), 0
    while index in taken:
        probes += 1
        index = (index + probes) & (num_buckets - 1)
    return index


def test_dense_hash_table_buckets_follow_tf():
    table = tf.lookup.experimental.DenseHashTable(
        tf.int64, tf.int64, default_value=-1, empty_key=0, deleted_key=-1,
        initial_num_buckets=8)
    keys = [3, 11, 19, 4]  # 3, 11 and 19 all hash to bucket 3 of 8: probes 3, 4, 6, 9&7=1
    insert = table.insert(tf.constant(keys, tf.int64), tf.constant([30, 110, 190, 40],
                                                                  tf.int64))
    erase = table.erase(tf.constant([11], tf.int64))
    look = table.lookup(tf.constant([3, 11, 19, 4, 5], tf.int64))
    grow = table.insert(tf.constant([100, 200, 300, 400], tf.int64),
                        tf.constant([1, 2, 3, 4], tf.int64))
    export = table.export()
    assert export[0].shape.as_list() == [None, 1] and look.shape.as_list() == [5]
    taken, layout = set(), {}
    for k in keys:
        layout[k] = _probe(k, 8, taken)
        taken.add(layout[k])
    with tf.Session() as sess:
        sess.run(insert)
        exported_keys, exported_values = sess.run(export)
        assert exported_keys.shape == (8, 1) and exported_values.shape == (8, 1)
        expected = np.zeros(8, np.int64)  # empty buckets hold empty_key (0) and value 0
        expected_values = np.zeros(8, np.int64)
        for k, v in zip(keys, [30, 110, 190, 40]):
            expected[layout[k]], expected_values[layout[k]] = k, v
        np.testing.assert_array_equal(exported_keys[:, 0], expected)
        np.testing.assert_array_equal(exported_values[:, 0], expected_values)
        sess.run(erase)  # its bucket now holds deleted_key; 19 is still found past it
        assert sess.run(look).tolist() == [30, -1, 190, 40, -1]
        assert sess.run(table.size()) == 3
        sess.run(grow)  # 3 + 4 entries > 8 * 0.8: 16 buckets, rehashed without deleted keys
        exported_keys, _ = sess.run(export)
        assert exported_keys.shape == (16, 1)
        # TF re-inserts the old buckets in bucket order, then the new keys.
        kept = sorted([3, 19, 4], key=layout.get)
        taken, expected = set(), np.zeros(16, np.int64)
        for k in kept + [100, 200, 300, 400]:
            index = _probe(k, 16, taken)
            taken.add(index)
            expected[index] = k
        np.testing.assert_array_equal(exported_keys[:, 0], expected)
        with pytest.raises(InvalidArgumentError,
                           match="Using the empty_key as a table key is not allowed"):
            sess.run(table.lookup(tf.constant([0], tf.int64)))
        with pytest.raises(InvalidArgumentError,
                           match="Using the deleted_key as a table key is not allowed"):
            sess.run(table.insert(tf.constant([-1], tf.int64), tf.constant([1], tf.int64)))
        with pytest.raises(InvalidArgumentError, match=r"Expected key shape \[2\] got \[2,3\]"):
            sess.run(table.lookup(tf.constant([[1, 2, 3], [4, 5, 6]], tf.int64)))
        same = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, 5, 5, name="same")
        with pytest.raises(InvalidArgumentError, match="Empty and deleted keys cannot be equal"):
            sess.run(same.size())


def test_dense_hash_table_with_string_keys_uses_tf_hash64():
    # TF's Hash64 of "a", "b", "c" (its string_to_hash_bucket tests): into 8 buckets.
    hashes = {"a": 2996632905371535868, "b": 5795986006276551370, "c": 14899841994519054197}
    table = tf.lookup.experimental.DenseHashTable(
        tf.string, tf.float32, default_value=[0.0, 0.0], empty_key="", deleted_key="$",
        initial_num_buckets=8)
    insert = table.insert(["a", "b", "c"], [[1, 2], [3, 4], [5, 6]])
    look = table.lookup(["c", "x", "a"])
    assert look.shape.as_list() == [3, 2]
    with tf.Session() as sess:
        sess.run(insert)
        np.testing.assert_array_equal(sess.run(look), [[5, 6], [0, 0], [1, 2]])
        keys, values = sess.run(table.export())
    taken, expected = set(), [b""] * 8
    for word in "abc":
        index = _probe(hashes[word], 8, taken)
        taken.add(index)
        expected[index] = word.encode()
    assert keys[:, 0].tolist() == expected and values.shape == (8, 2)


def test_saver_round_trip_of_mutable_tables(tmp_path):
    words = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)
    dense = tf.lookup.experimental.DenseHashTable(tf.int64, tf.float32, 0.0, -1, -2,
                                                  initial_num_buckets=4, name="dense")
    scratch = tf.lookup.experimental.MutableHashTable(tf.int64, tf.int64, 0, name="scratch",
                                                      checkpoint=False)
    empty = tf.lookup.experimental.MutableHashTable(tf.string, tf.string, "?", name="empty")
    w = tf.Variable([1.0, 2.0], name="w")
    fill = [words.insert(["é", "b", ""], tf.constant([5, 6, 7], tf.int64)),
            dense.insert(tf.constant([10, 20], tf.int64), [0.5, 1.5]),
            scratch.insert(tf.constant([1], tf.int64), tf.constant([1], tf.int64))]
    saver = tf.train.Saver()
    prefix = str(tmp_path / "model.ckpt")
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), fill])
        saver.save(sess, prefix)
    names = dict(tf.train.list_variables(prefix))
    assert names == {"MutableHashTable-keys": [3], "MutableHashTable-values": [3],
                     "dense-keys": [4, 1], "dense-values": [4, 1], "empty-keys": [0],
                     "empty-values": [0], "w": [2]}
    reader = tf.train.load_checkpoint(prefix)
    assert sorted(reader.get_tensor("MutableHashTable-keys").tolist()) == [
        b"", b"b", "é".encode()]
    look = [words.lookup(tf.constant(["é", "b", "", "q"])),
            dense.lookup(tf.constant([10, 20, 30], tf.int64)),
            scratch.lookup(tf.constant([1], tf.int64)), words.size(), empty.size()]
    with tf.Session() as sess:
        sess.run(words.insert(["stale"], tf.constant([1], tf.int64)))  # replaced on restore
        saver.restore(sess, prefix)
        got = sess.run(look)
        assert sess.run(w).tolist() == [1.0, 2.0]
        # A table in var_list: only its keys and values.
        only_words = str(tmp_path / "words.ckpt")
        tf.train.Saver([words]).save(sess, only_words)
    assert got[0].tolist() == [5, 6, 7, -1] and got[1].tolist() == [0.5, 1.5, 0.0]
    assert got[2].tolist() == [0] and got[3] == 3 and got[4] == 0
    assert dict(tf.train.list_variables(only_words)) == {"MutableHashTable-keys": [3],
                                                         "MutableHashTable-values": [3]}
    # A checkpoint whose keys have another dtype.
    tf.reset_default_graph()
    other = tf.lookup.experimental.MutableHashTable(tf.int64, tf.int64, -1)
    with tf.Session() as sess:
        with pytest.raises(InvalidArgumentError,
                           match="tensor_name = MutableHashTable-keys; expected dtype int64 "
                                 "does not equal original dtype string"):
            tf.train.Saver([other]).restore(sess, prefix)
    with pytest.raises(ValueError, match="At least two variables have the same name: "
                                         "MutableHashTable-keys"):
        tf.lookup.experimental.MutableHashTable(tf.int64, tf.int64, -1)
        tf.train.Saver()


def test_monitored_session_initializes_tables(tmp_path):
    tf.train.get_or_create_global_step()
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(["x", "y"], tf.constant([1, 2], tf.int64)), -1)
    out = table.lookup(tf.constant(["y", "z"]))
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path)) as sess:
        assert sess.run(out).tolist() == [2, -1]
    assert tf.get_collection(tf.GraphKeys.LOCAL_INIT_OP)
