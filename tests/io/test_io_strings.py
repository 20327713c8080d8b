"""tf.io string codecs: decode_csv (against the csv module), base64 (against base64),
decode_compressed (zlib, gzip), matching_files (glob on files written here) and
decode_json_example (against protobuf's json_format)."""

import base64
import csv
import glob
import gzip
import io
import os
import zlib

import numpy as np
import pytest

import tensorflux as tf
from tests.helpers import run
from tests.io.test_example_proto import _protobuf_classes

InvalidArgumentError = tf.errors.InvalidArgumentError


# -- decode_csv -------------------------------------------------------------------------------
def test_decode_csv_against_the_csv_module():
    rows = [["1", "a,b", "2.5", "x"], ["-7", 'say "hi"', "", "y"], ["3", "", "1e3", ""]]
    lines = []
    for row in rows:
        buffer = io.StringIO()
        csv.writer(buffer, quoting=csv.QUOTE_MINIMAL, lineterminator="").writerow(row)
        lines.append(buffer.getvalue())
    records = tf.placeholder(tf.string, [None])
    cols = tf.decode_csv(records, [[0], ["missing"], [-1.0], tf.constant([], tf.string)],
                         na_value="")
    assert tf.io.decode_csv is tf.decode_csv
    assert [c.dtype for c in cols] == [tf.int32, tf.string, tf.float32, tf.string]
    assert all(c.shape.as_list() == [None] for c in cols)
    with pytest.raises(InvalidArgumentError, match="Field 3 is required but missing in "
                                                   "record 2!"):
        run(cols, {records: lines})
    got = run(cols, {records: lines[:2]})
    parsed = list(csv.reader(lines[:2]))
    assert got[0].tolist() == [int(r[0]) for r in parsed]
    assert got[1].tolist() == [r[1].encode() or b"missing" for r in parsed]
    np.testing.assert_array_equal(got[2], [float(r[2]) if r[2] else -1.0 for r in parsed])
    assert got[3].tolist() == [r[3].encode() for r in parsed]


def test_decode_csv_options():
    got = run({
        "select": tf.io.decode_csv(["1;2;3;4", "5;6;7;8"], [[0], [0.0]], field_delim=";",
                                   select_cols=[1, 3]),
        "na": tf.io.decode_csv(["NA,4", "2,NA"], [[9], [tf.constant(8, tf.int64)]],
                               na_value="NA"),
        "no_quotes": tf.io.decode_csv(['"a",b'], [[""], [""]], use_quote_delim=False),
        "trailing": tf.io.decode_csv(["a,", "\r\nb,c"], [["x"], ["y"]]),
        "double": tf.io.decode_csv(["0x10, 2.5 "], [[0.0], [tf.constant(0.0, tf.float64)]]),
        "matrix": tf.io.decode_csv([["1,2"], ["3,4"]], [[0], [0]]),
    })
    assert got["select"][0].tolist() == [2, 6] and got["select"][1].tolist() == [4.0, 8.0]
    assert got["na"][0].tolist() == [9, 2] and got["na"][1].tolist() == [4, 8]
    assert got["na"][1].dtype == np.int64
    assert got["no_quotes"][0].tolist() == [b'"a"']
    assert got["trailing"][0].tolist() == [b"a", b"b"]
    assert got["trailing"][1].tolist() == [b"y", b"c"]
    assert got["double"][0].tolist() == [16.0] and got["double"][1].dtype == np.float64
    assert got["matrix"][1].tolist() == [[2], [4]]


@pytest.mark.parametrize("record,defaults,message", [
    ("1,2,3", [[0], [0]], "Expect 2 fields but have 3 in record 0"),
    ("x,2", [[0], [0]], "Field 0 in record 0 is not a valid int32: x"),
    ("1,2.5", [[0], "int64"], "Field 1 in record 0 is not a valid int64: 2.5"),
    ("1,zz", [[0], [0.0]], "Field 1 in record 0 is not a valid float: zz"),
    ('a"b,c', [[""], [""]], "Unquoted fields cannot have quotes/CRLFs inside"),
    ('"a"b",c', [[""], [""]], "Quote inside a string has to be escaped by another quote"),
    ('"abc', [[""]], "Quoted field has to end with quote followed by delim or end"),
])
def test_decode_csv_malformed_records(record, defaults, message):
    records = tf.placeholder(tf.string, [None])
    defaults = [tf.constant([0], tf.int64) if d == "int64" else d for d in defaults]
    with pytest.raises(InvalidArgumentError) as info:
        run(tf.io.decode_csv(records, defaults), {records: [record]})
    assert info.value.message.splitlines()[0] == message


def test_decode_csv_argument_errors():
    with pytest.raises(ValueError, match="select_cols is not strictly increasing."):
        tf.io.decode_csv(["1,2"], [[0], [0]], select_cols=[1, 1])
    with pytest.raises(ValueError, match="select_cols contains negative values."):
        tf.io.decode_csv(["1,2"], [[0], [0]], select_cols=[-1, 1])
    with pytest.raises(ValueError, match="Length of select_cols and record_defaults do not "
                                         "match."):
        tf.io.decode_csv(["1,2"], [[0]], select_cols=[0, 1])
    with pytest.raises(ValueError, match="Shape of a default must be a length-0 or length-1 "
                                         "vector, or a scalar."):
        tf.io.decode_csv(["1,2"], [[0, 1]])
    with pytest.raises(TypeError, match="DataType bool not in list of allowed values"):
        tf.io.decode_csv(["1"], [[True]])
    with pytest.raises(InvalidArgumentError, match="field_delim should be only 1 char"):
        run(tf.io.decode_csv(["1"], [[0]], field_delim="::"))


# -- base64, decode_compressed ----------------------------------------------------------------
def test_base64_web_safe():
    data = [b"", b"f", b"fo", b"foo", bytes(range(256)), "héllo?>>".encode()]
    got = run([tf.io.encode_base64(data), tf.encode_base64(data, pad=True),
               tf.io.decode_base64([base64.urlsafe_b64encode(d).rstrip(b"=") for d in data]),
               tf.decode_base64([base64.urlsafe_b64encode(d) for d in data])])
    assert got[0].tolist() == [base64.urlsafe_b64encode(d).rstrip(b"=") for d in data]
    assert got[1].tolist() == [base64.urlsafe_b64encode(d) for d in data]
    assert got[2].tolist() == data and got[3].tolist() == data
    assert tf.io.encode_base64 is tf.encode_base64
    with pytest.raises(InvalidArgumentError, match="Invalid character found in base64."):
        run(tf.io.decode_base64([base64.b64encode(b"\xfb\xff")]))  # + and / are not web-safe
    with pytest.raises(InvalidArgumentError, match="Base64 string length cannot be 1 modulo 4."):
        run(tf.io.decode_base64(["abcde"]))


def test_decode_compressed():
    texts = [b"", b"hello " * 50, bytes(range(256))]
    got = run([tf.io.decode_compressed([zlib.compress(t) for t in texts], "ZLIB"),
               tf.decode_compressed([gzip.compress(t) for t in texts], compression_type="GZIP"),
               tf.io.decode_compressed(texts)])
    assert got[0].tolist() == texts and got[1].tolist() == texts and got[2].tolist() == texts
    with pytest.raises(tf.errors.DataLossError, match="inflate\\(\\) failed with error -3: "
                                                      "incorrect header check"):
        run(tf.io.decode_compressed([b"not zlib"], "ZLIB"))
    with pytest.raises(InvalidArgumentError, match="Only ZLIB, GZIP or NONE are supported "
                                                   "compressions"):
        run(tf.io.decode_compressed([b"x"], "BZIP2"))


# -- matching_files -----------------------------------------------------------------------------
def test_matching_files_globs_when_run(tmp_path):
    for name in ("b.txt", "a.txt", ".hidden.txt", "c.csv"):
        (tmp_path / name).write_text("x")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "d.txt").write_text("x")
    pattern = tf.placeholder(tf.string)
    files = tf.io.matching_files(pattern)
    assert tf.matching_files is tf.io.matching_files and files.shape.as_list() == [None]
    with tf.Session() as sess:
        one = sess.run(files, {pattern: str(tmp_path / "*.txt")})
        both = sess.run(files, {pattern: [str(tmp_path / "c*"), str(tmp_path / "?.txt")]})
        none = sess.run(files, {pattern: str(tmp_path / "*.nothing")})
        fixed = tf.io.matching_files(str(tmp_path / "*.csv"))
        before = sess.run(fixed)
        (tmp_path / "e.csv").write_text("x")
        after = sess.run(fixed)  # globbed at run time, not folded into a constant
    want = sorted(glob.glob(str(tmp_path / "*.txt"), include_hidden=True))
    assert one.tolist() == [w.encode() for w in want] and len(want) == 3
    assert both.tolist() == sorted(os.path.join(str(tmp_path), n).encode()
                                   for n in ("a.txt", "b.txt", "c.csv"))
    assert none.tolist() == []
    assert len(before) == 1 and len(after) == 2
    with pytest.raises(InvalidArgumentError, match=r"Input patterns tensor must be scalar or "
                                                   r"vector, but had shape: \[1,1\]"):
        run(files, {pattern: [["x"]]})


# -- decode_json_example ------------------------------------------------------------------------
JSON = ('{"features": {"feature": {'
        '"age": {"int64List": {"value": ["35", -2, 9007199254740993]}}, '
        '"name": {"bytes_list": {"value": ["aGk=", "_-8"]}}, '
        '"score": {"floatList": {"value": [0.5, "NaN", "-Infinity", 1e-3]}}, '
        '"empty": {"floatList": {}}}}}')


def test_decode_json_example_against_protobuf():
    from google.protobuf import json_format
    example = _protobuf_classes()["tfxt.Example"]()
    json_format.Parse(JSON, example)
    serialized = tf.io.decode_json_example([JSON, "{}"])
    parsed = tf.io.parse_example(serialized, {
        "age": tf.io.VarLenFeature(tf.int64), "name": tf.io.VarLenFeature(tf.string),
        "score": tf.io.VarLenFeature(tf.float32), "empty": tf.io.VarLenFeature(tf.float32)})
    got_bytes, got = run([serialized, parsed])
    ours = type(example).FromString(got_bytes[0])
    assert ours == example
    assert got_bytes[1] == b""
    features = example.features.feature
    assert got["age"].values.tolist() == list(features["age"].int64_list.value)
    assert got["name"].values.tolist() == [b"hi", b"\xff\xef"]
    np.testing.assert_array_equal(got["score"].values,
                                  np.array(features["score"].float_list.value, np.float32))
    assert got["empty"].values.tolist() == []
    assert tf.decode_json_example is tf.io.decode_json_example


@pytest.mark.parametrize("text,message", [
    ('{"feature": {}}', "Cannot find field: feature in message tensorflow.Example"),
    ('{"features": {"feature": {"a": {"int64List": {"value": [1.5]}}}}}',
     "Invalid value for int64: 1.5"),
    ('{"features": {"feature": {"a": {"int64List": {}, "floatList": {}}}}}',
     "oneof field 'kind' is already set. Cannot set 'floatList'"),
    ('{"features": ', "Expecting value at line 1 column 14"),
])
def test_decode_json_example_errors(text, message):
    with pytest.raises(InvalidArgumentError) as info:
        run(tf.io.decode_json_example(text))
    assert info.value.message.splitlines()[0] == f"Error while parsing JSON: {message}"
