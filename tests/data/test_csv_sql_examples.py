"""CsvDataset / make_csv_dataset, SqlDataset, parse_example_dataset,
make_batched_features_dataset and TFRecordWriter, on files the tests write."""

import gzip
import os
import sqlite3

import numpy as np
import pytest

import tensorflux as tf
from tests.data.test_dataset import drain


def drain_with_errors(dataset):
    """Elements, with each failed element as ("error", class name, message): iteration
    goes on after an error, as in TF."""
    next_element = dataset.make_one_shot_iterator().get_next()
    out = []
    with tf.Session() as sess:
        while True:
            try:
                out.append(sess.run(next_element))
            except tf.errors.OutOfRangeError:
                return out
            except tf.errors.OpError as e:
                out.append(("error", type(e).__name__, e.message.split("\n")[0]))


def _write(tmp_path, name, text, compress=False):
    path = str(tmp_path / name)
    data = text.encode()
    with (gzip.open(path, "wb") if compress else open(path, "wb")) as f:
        f.write(data)
    return path


def test_csv_dataset_fields_quotes_defaults_and_malformed_rows(tmp_path):
    path = _write(tmp_path, "a.csv", 'a,b,c\n1,2.5,x\n3,,"y,""z"""\r\n4,bad,w\n\n'
                                     '5,6,7,8\n 9 ,1e3,"multi\nline"\n10,NA,"q')
    dataset = tf.data.experimental.CsvDataset(path, [tf.int32, [0.0], tf.string],
                                              header=True, na_value="NA")
    assert dataset.output_types == (tf.int32, tf.float32, tf.string)
    assert [s.as_list() for s in dataset.output_shapes] == [[], [], []]
    got = drain_with_errors(dataset)
    where = f"(file {path}, record"
    assert got[0] == (1, 2.5, b"x")
    assert got[1] == (3, 0.0, b'y,"z"')  # empty field: the default; "" unescaped
    assert got[2] == ("error", "InvalidArgumentError",
                      f"Field 1 in record is not a valid float: bad {where} 2, line 4)")
    assert got[3] == ("error", "InvalidArgumentError",  # the empty line
                      f"Field 0 is required but missing in record! {where} 3, line 5)")
    assert got[4] == ("error", "InvalidArgumentError",
                      f"Expect 3 fields but have more in record {where} 4, line 6)")
    assert got[5] == (9, 1000.0, b"multi\nline")  # spaces around ints; quoted newline
    assert got[6][:2] == ("error", "InvalidArgumentError") and got[6][2].startswith(
        "Reached end of file without closing quoted field in record")
    assert len(got) == 7
    clean = drain(dataset.apply(tf.data.experimental.ignore_errors()))
    assert clean == [got[0], got[1], got[5]]
    # selected columns: fields after the last one are not checked
    selected = tf.data.experimental.CsvDataset(path, [tf.int32, tf.string], header=True,
                                               select_cols=[0, 2])
    assert drain_with_errors(selected)[:3] == [(1, b"x"), (3, b'y,"z"'), (4, b"w")]
    assert drain_with_errors(selected)[4] == (5, b"7")


def test_csv_dataset_options_and_argument_errors(tmp_path):
    path = _write(tmp_path, "b.csv.gz", "1|\"a\"b\n2|c\n", compress=True)
    dataset = tf.data.experimental.CsvDataset(path, [tf.int64, tf.string],
                                              compression_type="GZIP", field_delim="|",
                                              use_quote_delim=False)
    assert drain(dataset) == [(1, b'"a"b'), (2, b"c")]
    quoted = tf.data.experimental.CsvDataset(path, [tf.int64, tf.string],
                                             compression_type="GZIP", field_delim="|")
    assert drain_with_errors(quoted)[0][2].startswith(
        "Quote inside a string has to be escaped by another quote")
    short = _write(tmp_path, "c.csv", "1,2\n3\n")
    got = drain_with_errors(tf.data.experimental.CsvDataset(short, [tf.int32, tf.int32]))
    assert got[0] == (1, 2) and got[1][2].startswith("Expect 2 fields but have 1 in record")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="select_cols should be strictly increasing indices"):
        drain(tf.data.experimental.CsvDataset(short, [tf.int32, tf.int32], select_cols=[1, 0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="field_delim should be only 1"):
        drain(tf.data.experimental.CsvDataset(short, [tf.int32], field_delim=";;"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Can't read header of file"):
        drain(tf.data.experimental.CsvDataset(_write(tmp_path, "e.csv", ""), [tf.int32],
                                              header=True))
    overflow = _write(tmp_path, "d.csv", "3000000000\n")
    assert drain_with_errors(tf.data.experimental.CsvDataset(overflow, [tf.int32]))[0][2] \
        .startswith("Field 0 in record is not a valid int32: 3000000000")


def test_make_csv_dataset_inference_label_and_selection(tmp_path):
    first = _write(tmp_path, "p1.csv", "id,score,name,flag\n1,0.5,ann,1\n2,,bob,0\n")
    _write(tmp_path, "p2.csv", "id,score,name,flag\n3,2.25,,1\n4,3000000000,eve,0\n")
    pattern = str(tmp_path / "p*.csv")
    dataset = tf.data.experimental.make_csv_dataset(pattern, 3, label_name="flag",
                                                    num_epochs=1, shuffle=False)
    features, label = dataset.output_types
    # int32 < int64 < float32 < float64 < string, the least permissive fitting every row
    assert dict(features) == {"id": tf.int32, "score": tf.float32, "name": tf.string}
    assert list(features) == ["id", "score", "name"] and label == tf.int32
    batches = drain(dataset)
    assert [b[0]["id"].tolist() for b in batches] == [[1, 2, 3], [4]]
    assert batches[0][0]["score"].tolist() == [0.5, 0.0, 2.25]
    assert batches[0][0]["name"].tolist() == [b"ann", b"bob", b""]
    assert [b[1].tolist() for b in batches] == [[1, 0, 1], [0]]
    assert batches[1][0]["score"].tolist() == [3e9]
    selected = tf.data.experimental.make_csv_dataset(
        first, 5, select_columns=["name", 0], num_epochs=2, shuffle=False)
    (only,) = drain(selected)
    assert list(only) == ["id", "name"] and only["id"].tolist() == [1, 2, 1, 2]
    repeated = tf.data.experimental.make_csv_dataset(first, 2, shuffle=True, shuffle_seed=1)
    assert repeated.output_shapes["id"].as_list() == [2]  # num_epochs=None: full batches
    with pytest.raises(ValueError, match="`label_name` provided must be one of the columns."):
        tf.data.experimental.make_csv_dataset(first, 2, label_name="nope")
    with pytest.raises(ValueError, match="No files match"):
        tf.data.experimental.make_csv_dataset(str(tmp_path / "none*.csv"), 2)
    with pytest.raises(ValueError, match="Cannot infer column names without a header"):
        tf.data.experimental.make_csv_dataset(first, 2, header=False)


def test_make_csv_dataset_ignore_errors(tmp_path):
    path = _write(tmp_path, "q.csv", "x,y\n1,2\n3,oops\n5,6\n")
    dataset = tf.data.experimental.make_csv_dataset(
        path, 10, column_defaults=[tf.int32, tf.int32], num_epochs=1, shuffle=False,
        ignore_errors=True)
    (batch,) = drain(dataset)
    assert batch["x"].tolist() == [1, 5] and batch["y"].tolist() == [2, 6]


def test_sql_dataset(tmp_path):
    path = str(tmp_path / "db.sqlite")
    connection = sqlite3.connect(path)
    connection.execute("create table people (name text, age int, height real, ok int)")
    connection.executemany("insert into people values (?, ?, ?, ?)",
                           [("ann", 31, 1.7, 1), ("bob", None, 1.8, 0)])
    connection.commit()
    connection.close()
    dataset = tf.data.experimental.SqlDataset(
        "sqlite", path, "select name, age, height, ok from people order by name",
        (tf.string, tf.int32, tf.float64, tf.bool))
    assert dataset.output_types == (tf.string, tf.int32, tf.float64, tf.bool)
    assert drain(dataset) == [(b"ann", 31, 1.7, True), (b"bob", 0, 1.8, False)]
    with pytest.raises(tf.errors.InvalidArgumentError, match="The database type, mysql, is "
                       "not supported by SqlDataset"):
        drain(tf.data.experimental.SqlDataset("mysql", path, "select 1", (tf.int32,)))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"The number of columns in "
                       r"query \(1\) must match the number of elements in output_types \(2\)"):
        drain(tf.data.experimental.SqlDataset("sqlite", path, "select name from people",
                                              (tf.string, tf.int32)))


def _example(tokens, label):
    return tf.train.Example(features=tf.train.Features(feature={
        "tokens": tf.train.Feature(bytes_list=tf.train.BytesList(value=tokens)),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
    })).SerializeToString()


def test_tfrecord_writer_parse_example_dataset_and_batched_features(tmp_path):
    records = [_example([b"a", b"b"], 0), _example([], 1), _example([b"c"], 2)]
    path = str(tmp_path / "ex.tfrecord")
    write = tf.data.experimental.TFRecordWriter(path).write(
        tf.data.Dataset.from_tensor_slices(np.array(records, object)))
    with tf.Session() as sess:
        sess.run(write)
    assert drain(tf.data.TFRecordDataset(path)) == records
    features = {"tokens": tf.VarLenFeature(tf.string),
                "label": tf.FixedLenFeature([], tf.int64, default_value=-1)}
    parsed = tf.data.TFRecordDataset(path).batch(2).apply(
        tf.data.experimental.parse_example_dataset(features))
    first, second = drain(parsed)
    assert first["label"].tolist() == [0, 1] and second["label"].tolist() == [2]
    assert first["tokens"].indices.tolist() == [[0, 0], [0, 1]]
    assert first["tokens"].values.tolist() == [b"a", b"b"]
    assert first["tokens"].dense_shape.tolist() == [2, 2]
    batched = tf.data.experimental.make_batched_features_dataset(
        path, 2, features, label_key="label", num_epochs=1, shuffle=False)
    (f1, l1), (f2, l2) = drain(batched)
    assert l1.tolist() == [0, 1] and l2.tolist() == [2] and "label" not in f1
    assert f2["tokens"].values.tolist() == [b"c"]
    with pytest.raises(TypeError, match="must produce scalar `DT_STRING` tensors"):
        tf.data.experimental.TFRecordWriter(path).write(tf.data.Dataset.range(2))
    with pytest.raises(TypeError, match="Input dataset should be a dataset of vectors of "
                       "strings"):
        tf.data.Dataset.range(2).apply(tf.data.experimental.parse_example_dataset(features))
    gz = str(tmp_path / "ex.tfrecord.gz")
    with tf.Session() as sess:
        sess.run(tf.data.experimental.TFRecordWriter(gz, "GZIP").write(
            tf.data.Dataset.from_tensor_slices(np.array(records, object))))
    assert drain(tf.data.TFRecordDataset(gz, "GZIP")) == records
    assert [n for n in os.listdir(tmp_path) if ".tmp" in n] == []
