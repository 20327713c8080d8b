"""Tables filled by an initializer (tf.lookup.StaticHashTable, StaticVocabularyTable,
tf.contrib.lookup's HashTable / IdTableWithHashBuckets / index tables, tables from
datasets): lookups against Python dicts written here, out-of-vocabulary buckets against
FarmHash fingerprints computed here (and TF's published hash values), text files the
tests write, TF's errors and messages.
"""

import farmhash
import numpy as np
import pytest

import tensorflux as tf

FailedPreconditionError = tf.errors.FailedPreconditionError
InvalidArgumentError = tf.errors.InvalidArgumentError


def lookup_dict(table, keys, default):
    return np.vectorize(lambda k: table.get(k, default), otypes=[object])(keys)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return str(path)


def test_static_hash_tables_against_dicts():
    words = {b"brain": 0, b"salad": 1, b"surgery": 2}
    ids = {7: b"seven", -3: b"minus three", 2 ** 40: b"big"}
    floats = {b"pi": 3.25, b"e": 2.5}
    t1 = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(list(words), tf.constant(list(words.values()),
                                                                     tf.int64)), -1)
    t2 = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(list(ids), list(ids.values()), tf.int64,
                                            tf.string), "UNK")
    t3 = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(list(floats), list(floats.values())), -1.0)
    keys1 = np.array([[b"brain", b"tank"], [b"surgery", b""]], dtype=object)
    keys2 = np.array([7, 8, 2 ** 40, -3], dtype=np.int64)
    sparse = tf.SparseTensor([[0, 0], [1, 2]], tf.constant(["salad", "x"]), [2, 3])
    out1 = t1.lookup(tf.constant(keys1))
    out2 = t2.lookup(tf.constant(keys2))
    out3 = t3.lookup(tf.constant([b"e", b"pi", b"tau"]))
    sparse_out = t1.lookup(sparse)
    # TF1's op names, the init op in TABLE_INITIALIZERS, static shapes of the keys.
    assert t1.resource_handle.op.type == "HashTableV2" and t1.name == "hash_table"
    assert t1.initializer.type == "InitializeTableV2" and t1.initializer.name == "key_value_init"
    assert out1.op.type == "LookupTableFindV2" and out1.op.name == "hash_table_Lookup"
    assert out1.shape.as_list() == [2, 2] and out1.dtype == tf.int64
    assert t1.initializer in tf.get_collection(tf.GraphKeys.TABLE_INITIALIZERS)
    assert t1.key_dtype == tf.string and t1.value_dtype == tf.int64 and t3.value_dtype == tf.float32
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        got1, got2, got3, sp, sizes, (ek, ev) = sess.run(
            [out1, out2, out3, sparse_out, [t1.size(), t2.size(), t3.size()], t1.export()])
    np.testing.assert_array_equal(got1, lookup_dict(words, keys1, -1).astype(np.int64))
    assert got2.tolist() == lookup_dict(ids, keys2, b"UNK").tolist()
    np.testing.assert_array_equal(got3, np.array([2.5, 3.25, -1.0], np.float32))
    assert sp.values.tolist() == [1, -1] and sp.indices.tolist() == [[0, 0], [1, 2]]
    assert sizes == [3, 3, 2]
    assert dict(zip(ek.tolist(), ev.tolist())) == words


def test_static_table_errors():
    keys, values = tf.constant(["brain", "salad", "brain"]), tf.constant([0, 1, 2], tf.int64)
    dup = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(keys, values), -1)
    ok = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(["a"], tf.constant([1], tf.int64)), -1)
    out = ok.lookup(tf.constant(["a"]))
    # Two contrib tables sharing one resource, initialized with different data.
    shared_a = tf.contrib.lookup.HashTable(
        tf.lookup.KeyValueTensorInitializer(["x"], tf.constant([1], tf.int64)), -1,
        shared_name="shared")
    shared_b = tf.contrib.lookup.HashTable(
        tf.lookup.KeyValueTensorInitializer(["x", "y"], tf.constant([1, 2], tf.int64)), -1,
        shared_name="shared")
    conflicting = tf.contrib.lookup.HashTable(
        tf.lookup.KeyValueTensorInitializer([1], [1.0], tf.int64, tf.float32), -1.0,
        shared_name="shared")
    with tf.Session() as sess:
        with pytest.raises(FailedPreconditionError, match=r"^Table not initialized\."):
            sess.run(out)
        with pytest.raises(tf.errors.AbortedError, match="HashTable is not initialized."):
            sess.run(ok.export())
        with pytest.raises(FailedPreconditionError,
                           match="HashTable has different value for same key. Key brain has "
                                 "0 and trying to add value 2"):
            sess.run(dup.initializer)
        sess.run(ok.initializer)
        sess.run(ok.initializer)  # the same entries again: accepted, as TF's AreEntriesSame
        assert sess.run(out).tolist() == [1]
        sess.run(shared_a.initializer)
        with pytest.raises(FailedPreconditionError,
                           match="Table was already initialized with different data."):
            sess.run(shared_b.initializer)
        with pytest.raises(InvalidArgumentError,
                           match="Conflicting key/value dtypes int64->float with string-int64 "
                                 "for table shared"):
            sess.run(conflicting.initializer)
    # Construction-time checks.
    with pytest.raises(TypeError, match=r"Signature mismatch. Keys must be dtype "
                                        r"<dtype: 'string'>, got <dtype: 'int32'>."):
        ok.lookup(tf.constant([1]))
    with pytest.raises(ValueError, match=r"Shapes must be equal rank, but are 1 and 2 for "
                                         r"'key_value_init_\d+' \(op: 'InitializeTableV2'\)"):
        tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(["a", "b"], [[1, 2], [3, 4]]), -1)
    with pytest.raises(ValueError, match=r"Dimension 0 in both shapes must be equal"):
        tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(["a", "b", "c"], [1, 2]), -1)
    with pytest.raises(ValueError):
        tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a"], [1]), [1, 2])
    init = tf.lookup.KeyValueTensorInitializer(["a"], tf.constant([1], tf.int64))
    with pytest.raises(TypeError, match="Invalid value dtype, expected <dtype: 'int32'> but "
                                        "got <dtype: 'int64'>."):
        init.initialize(tf.lookup.experimental.MutableHashTable(tf.string, tf.int32, 0))


def test_vocabulary_tables_put_unknown_keys_in_fingerprint_buckets():
    vocab = ["emerson", "lake", "palmer"]
    queries = ["emerson", "lake", "palmer", "king", "crimson", "tarkus", ""]

    def bucket(word, n, offset):
        return farmhash.fingerprint64(word.encode()) % n + offset

    expected = [vocab.index(w) if w in vocab else bucket(w, 5, 3) for w in queries]
    table = tf.lookup.StaticVocabularyTable(
        tf.lookup.KeyValueTensorInitializer(vocab, tf.constant([0, 1, 2], tf.int64)), 5)
    only_buckets = tf.lookup.StaticVocabularyTable(None, 4)
    from_tensor = tf.contrib.lookup.index_table_from_tensor(
        mapping=tf.constant(vocab), num_oov_buckets=2, default_value=-1)
    int_vocab = [42, 7, -1]
    int_table = tf.contrib.lookup.index_table_from_tensor(
        tf.constant(int_vocab, tf.int64), num_oov_buckets=3, dtype=tf.int64)
    int_queries = np.array([7, 99, -1, 123456789], np.int64)
    int_expected = [int_vocab.index(k) if k in int_vocab else bucket(str(k), 3, 3)
                    for k in int_queries.tolist()]
    no_oov = tf.contrib.lookup.index_table_from_tensor(vocab, default_value=-7)
    # TF's published hash values: Hash64("a"/"b"/"c") % 10 = 8, 0, 7 (legacy) and
    # SipHash-2-4 under key [98765, 132] = 4, 2, 8 (strong); none of them in the vocab.
    legacy = tf.contrib.lookup.IdTableWithHashBuckets(
        None, 10, hasher_spec=tf.contrib.lookup.HasherSpec("legacy", None))
    strong = tf.contrib.lookup.IdTableWithHashBuckets(
        None, 10, hasher_spec=tf.contrib.lookup.StrongHashSpec([98765, 132]))
    abc = tf.constant(["a", "b", "c"])
    out = [table.lookup(tf.constant(queries)), only_buckets.lookup(tf.constant(queries)),
           from_tensor.lookup(tf.constant(queries)), int_table.lookup(tf.constant(int_queries)),
           no_oov.lookup(tf.constant(queries)), legacy.lookup(abc), strong.lookup(abc),
           table.size(), only_buckets.size(), from_tensor.size()]
    assert out[0].shape.as_list() == [7] and out[0].dtype == tf.int64
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        got = sess.run(out)
    assert got[0].tolist() == expected
    assert got[1].tolist() == [bucket(w, 4, 0) for w in queries]
    assert got[2].tolist() == [vocab.index(w) if w in vocab else bucket(w, 2, 3)
                               for w in queries]
    assert got[3].tolist() == int_expected
    assert got[4].tolist() == [vocab.index(w) if w in vocab else -7 for w in queries]
    assert got[5].tolist() == [8, 0, 7] and got[6].tolist() == [4, 2, 8]
    assert got[7:] == [8, 4, 5]
    # TF's docstring example: 5 buckets after "emerson", "lake", "palmer".
    assert got[0][:5].tolist() == [0, 1, 2, 6, 7]
    with pytest.raises(ValueError, match="oov_buckets must be > 0."):
        tf.lookup.StaticVocabularyTable(None, 0)
    with pytest.raises(TypeError, match="Invalid value dtype, expected <dtype: 'int64'>"):
        tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(["a"], [1]), 1)
    with pytest.raises(ValueError, match="num_oov_buckets must be greater or equal than 0"):
        tf.contrib.lookup.index_table_from_tensor(vocab, num_oov_buckets=-1)
    with pytest.raises(TypeError, match="Signature mismatch. Keys must be dtype"):
        table.lookup(tf.constant([1, 2], tf.int64))


def test_text_file_initializers(tmp_path):
    vocab = write(tmp_path, "vocab.txt", "emerson\nlake\r\npalmer\ncrimnson")
    columns = write(tmp_path, "cols.txt", "emerson 10\nlake 20\npalmer -30\n")
    by_column = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        columns, tf.string, 0, tf.int64, 1, delimiter=" "), -1)
    by_line = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        columns, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
        tf.lookup.TextFileIndex.LINE_NUMBER), -1)
    truncated = tf.contrib.lookup.index_table_from_file(vocab, vocab_size=2)
    with_oov = tf.lookup.StaticVocabularyTable(tf.lookup.TextFileInitializer(
        vocab, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
        tf.lookup.TextFileIndex.LINE_NUMBER), 3)
    # The same file, index and size: TF shares the resource (one initialization).
    again = tf.contrib.lookup.index_table_from_file(vocab, num_oov_buckets=1)
    to_string = tf.contrib.lookup.index_to_string_table_from_file(vocab, default_value="UNKNOWN")
    words = ["palmer", "crimnson", "king", "tarkus", "black", "moon", "lake"]
    outs = [by_column.lookup(tf.constant(["palmer", "lake", "tarkus"])),
            by_line.lookup(tf.constant(["lake 20", "lake"])),
            truncated.lookup(tf.constant(["emerson", "lake", "palmer"])),
            with_oov.lookup(tf.constant(words)),
            again.lookup(tf.constant(["lake", "and"])),
            to_string.lookup(tf.constant([1, 3, 5], tf.int64))]
    init = by_column.initializer
    assert init.type == "InitializeTableFromTextFileV2" and init.name == "text_file_init"
    assert init.inputs[1].op.name == "text_file_init/asset_filepath"
    assert init.inputs[1] in tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS)
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        got = sess.run(outs)
    assert got[0].tolist() == [-30, 20, -1]
    assert got[1].tolist() == [1, -1]
    assert got[2].tolist() == [0, 1, -1]
    # TF's docstring: vocab of 4 and 3 buckets gives [2, 3, 5, 6, 6, 4].
    assert got[3].tolist() == [2, 3, 5, 6, 6, 4, 1]
    assert got[3][2:6].tolist() == [farmhash.fingerprint64(w.encode()) % 3 + 4
                                    for w in words[2:6]]
    assert got[4].tolist() == [1, 4 + farmhash.fingerprint64(b"and") % 1]
    assert got[5].tolist() == [b"lake", b"crimnson", b"UNKNOWN"]


def test_text_file_errors_name_file_and_line(tmp_path):
    bad_columns = write(tmp_path, "bad_cols.txt", "a\t1\nb\t2\nc\n")
    bad_int = write(tmp_path, "bad_int.txt", "a\t1\nb\tx2\n")
    short = write(tmp_path, "short.txt", "a\nb\n")

    def init(path, **kwargs):
        table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            path, tf.string, 0, tf.int64, 1, **kwargs), -1)
        return table.initializer

    ops = [init(bad_columns), init(bad_int), init(str(tmp_path / "missing.txt")),
           tf.contrib.lookup.index_table_from_file(short, vocab_size=3).initializer]
    with tf.Session() as sess:
        with pytest.raises(InvalidArgumentError,
                           match=f"Invalid number of columns in {bad_columns} line 2 \\(c\\) : "
                                 f"expected at least 2 got 1"):
            sess.run(ops[0])
        with pytest.raises(InvalidArgumentError, match="Field x2 in line 1 is not a valid int64."):
            sess.run(ops[1])
        with pytest.raises(tf.errors.NotFoundError, match="missing.txt"):
            sess.run(ops[2])
        with pytest.raises(InvalidArgumentError,
                           match=f"Invalid vocab_size in {short}: expected 3 but got 2"):
            sess.run(ops[3])
    with pytest.raises(ValueError, match="Invalid vocab_size 0."):
        tf.lookup.TextFileInitializer(short, tf.string, 0, tf.int64, 1, vocab_size=0)
    with pytest.raises(ValueError, match="Signature mismatch. Values must be dtype "
                                         "<dtype: 'int64'>, got <dtype: 'string'>."):
        tf.lookup.TextFileInitializer(short, tf.string, 0, tf.string,
                                      tf.lookup.TextFileIndex.LINE_NUMBER)
    with pytest.raises(ValueError, match="vocabulary_file must be specified"):
        tf.contrib.lookup.index_table_from_file("")


def test_tables_from_datasets_and_lookups_inside_dataset_functions():
    keys = tf.data.Dataset.from_tensor_slices(tf.constant(["a", "b", "c"]))
    pairs = tf.data.Dataset.zip((keys, tf.data.Dataset.from_tensor_slices(
        tf.constant([1.5, 2.5, 3.5]))))
    table = tf.data.experimental.table_from_dataset(pairs)
    index = tf.data.experimental.index_table_from_dataset(keys, num_oov_buckets=2)
    too_few = tf.data.experimental.table_from_dataset(pairs, vocab_size=4)
    words = tf.constant(["c", "zz", "a"])
    mapped = tf.data.Dataset.from_tensor_slices(words).map(index.lookup)
    next_id = mapped.make_initializable_iterator()
    with tf.Session() as sess:
        sess.run([table.initializer, index.initializer, next_id.initializer])
        got = sess.run([table.lookup(words), index.lookup(words)])
        streamed = [sess.run(next_id.get_next()) for _ in range(3)]
        with pytest.raises(FailedPreconditionError,
                           match="Input dataset was expected to contain 4 elements but "
                                 "contained only 3 elements."):
            sess.run(too_few.initializer)
    assert got[0].tolist() == [3.5, -1.0, 1.5]
    zz = 3 + farmhash.fingerprint64(b"zz") % 2
    assert got[1].tolist() == [2, zz, 0] and streamed == [2, zz, 0]
    with pytest.raises(ValueError, match="produce elements in the form \\(key, value\\)"):
        tf.data.experimental.table_from_dataset(keys)


def test_contrib_lookup_names():
    lookup = tf.contrib.lookup
    assert lookup.MutableDenseHashTable is tf.lookup.experimental.DenseHashTable
    assert lookup.MutableHashTable is tf.lookup.experimental.MutableHashTable
    assert lookup.KeyValueTensorInitializer is tf.lookup.KeyValueTensorInitializer
    assert lookup.TextFileIndex.WHOLE_LINE == -2 and lookup.TextFileIndex.LINE_NUMBER == -1
    assert tf.initialize_all_tables().name == "init_all_tables"
    ids = lookup.string_to_index(tf.constant(["b", "q"]), mapping=tf.constant(["a", "b"]))
    names = lookup.index_to_string(tf.constant([1, 4], tf.int64), mapping=["x", "y"])
    with tf.Session() as sess:
        sess.run(tf.initializers.tables_initializer())
        assert sess.run(ids).tolist() == [1, -1]
        assert sess.run(names).tolist() == [b"y", b"UNK"]
