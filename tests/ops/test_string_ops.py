"""String tensors and the string ops (host NumPy kernels), and tf.SparseTensor fetches.

Expectations are written here by hand (TF1.15's documented results) or with Python's
own string functions; never computed with tensorflux.
"""

import numpy as np
import pytest

import tensorflux as tf
from tests.helpers import run

InvalidArgumentError = tf.errors.InvalidArgumentError


# -- string constants and feeds ---------------------------------------------------------------
def test_string_constants_and_placeholders_give_bytes():
    a = tf.constant("a")
    xy = tf.constant([b"x", "y"])
    p = tf.placeholder(tf.string, [None])
    assert a.dtype == tf.string and xy.shape.as_list() == [2]
    with tf.Session() as sess:
        got_a, got_xy = sess.run([a, xy])
        got_p = sess.run(p, {p: ["hé", b"raw"]})
    assert got_a == b"a" and isinstance(got_a, bytes)
    assert got_xy.dtype == object and got_xy.tolist() == [b"x", b"y"]
    assert got_p.tolist() == ["hé".encode(), b"raw"]


def test_string_feed_beside_a_compiled_part():
    p = tf.placeholder(tf.string, [None])
    x = tf.placeholder(tf.float32, [None])
    lengths, doubled = run([tf.strings.length(p), x * 2.0], {p: ["ab", "c"], x: [1.0, 2.0]})
    np.testing.assert_array_equal(lengths, [2, 1])
    np.testing.assert_array_equal(doubled, [2.0, 4.0])


# -- join -------------------------------------------------------------------------------------
def test_join_broadcasts_scalars():
    words = tf.placeholder(tf.string, [2])
    joined = tf.strings.join([words, "-", tf.constant(["x", "y"])], separator="|")
    assert joined.dtype == tf.string and joined.shape.as_list() == [2]
    assert joined.op.type == "StringJoin" and joined.op.name == "StringJoin"
    got = run(joined, {words: ["a", "b"]})
    assert got.tolist() == [b"a|-|x", b"b|-|y"]
    assert tf.string_join is tf.strings.join


def test_join_of_scalars_and_shapes():
    scalar = tf.string_join(["a", "b", "c"])
    assert scalar.shape.as_list() == []
    assert run(scalar) == b"abc"
    unknown = tf.string_join([tf.placeholder(tf.string), tf.constant([["1", "2"]])])
    assert unknown.shape.as_list() == [1, 2]
    with pytest.raises(ValueError, match=r"Dimension 0 in both shapes must be equal, but are "
                                         r"2 and 3"):
        tf.string_join([tf.constant(["a", "b"]), tf.constant(["a", "b", "c"])])
    a, b = tf.placeholder(tf.string, [None]), tf.placeholder(tf.string, [None])
    with pytest.raises(InvalidArgumentError, match=r"Input shapes do not match: \[2\] vs. \[3\]"):
        run(tf.string_join([a, b]), {a: ["1", "2"], b: ["1", "2", "3"]})


# -- split ------------------------------------------------------------------------------------
def test_string_split_returns_a_sparse_tensor():
    sp = tf.string_split(["hello world", "a b c"])
    assert isinstance(sp, tf.SparseTensor)
    assert sp.indices.shape.as_list() == [None, 2] and sp.indices.dtype == tf.int64
    assert sp.values.shape.as_list() == [None] and sp.values.dtype == tf.string
    assert sp.dense_shape.shape.as_list() == [2] and sp.shape.as_list() == [None, None]
    assert sp.values.op.name == "StringSplit/StringSplit"
    got = run(sp)
    assert isinstance(got, tf.SparseTensorValue)
    np.testing.assert_array_equal(got.indices, [[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]])
    assert got.indices.dtype == np.int64
    assert got.values.tolist() == [b"hello", b"world", b"a", b"b", b"c"]
    np.testing.assert_array_equal(got.dense_shape, [2, 3])


def test_string_split_delimiter_rules():
    # Every byte of the delimiter splits; empty tokens are skipped unless asked for.
    got = run(tf.string_split(["#a", "b#", "#c#"], "#", skip_empty=False))
    assert got.values.tolist() == [b"", b"a", b"b", b"", b"", b"c", b""]
    np.testing.assert_array_equal(got.dense_shape, [3, 3])
    got = run(tf.string_split(["a,b;c", "d"], delimiter=",;"))
    assert got.values.tolist() == [b"a", b"b", b"c", b"d"]
    np.testing.assert_array_equal(got.indices, [[0, 0], [0, 1], [0, 2], [1, 0]])
    # An empty delimiter splits into single bytes.
    got = run(tf.string_split(["ab", ""], sep=""))
    assert got.values.tolist() == [b"a", b"b"]
    np.testing.assert_array_equal(got.dense_shape, [2, 2])


def test_string_split_errors():
    with pytest.raises(ValueError, match="Cannot specify both 'sep' and 'delimiter'"):
        tf.string_split(["a"], sep=",", delimiter=";")
    with pytest.raises(ValueError, match="result_type must be 'RaggedTensor' or 'SparseTensor'."):
        tf.string_split(["a"], result_type="dense")
    with pytest.raises(ValueError, match=r"Shape must be rank 1 but is rank 0"):
        tf.string_split("a b")
    p = tf.placeholder(tf.string)
    with pytest.raises(InvalidArgumentError, match=r"input must be a vector, got shape: \[\]"):
        run(tf.string_split(p), {p: "a b"})


def test_strings_split_is_python_str_split():
    source = ["  pigs on  the wing ", "animals"]
    got = run(tf.strings.split(source))
    assert got.values.tolist() == [b"pigs", b"on", b"the", b"wing", b"animals"]
    np.testing.assert_array_equal(got.dense_shape, [2, 4])
    multi = ["1<>2<>3", "<><>4<>5<><>6<>"]
    got = run(tf.strings.split(multi, sep="<>"))
    want = [s.encode().split(b"<>") for s in multi]
    assert got.values.tolist() == [t for row in want for t in row]
    np.testing.assert_array_equal(got.dense_shape, [2, max(map(len, want))])
    got = run(tf.strings.split(["a,b,c,d"], sep=",", maxsplit=2))
    assert got.values.tolist() == b"a,b,c,d".split(b",", 2)
    got = run(tf.strings.split(input=["", "x"], sep=","))  # "" splits into one empty token
    assert got.values.tolist() == [b"", b"x"]
    got = run(tf.strings.split(source=["", "  "]))  # but into none on whitespace
    assert got.values.tolist() == [] and got.dense_shape.tolist() == [2, 0]


# -- as_string --------------------------------------------------------------------------------
def test_as_string_formats_like_printf():
    floats = tf.constant([1.5, -0.25, 3.0])
    assert tf.as_string is tf.strings.as_string
    got = run([tf.as_string(floats), tf.as_string(floats, precision=2),
               tf.as_string(floats, scientific=True), tf.as_string(floats, shortest=True),
               tf.as_string(tf.constant([7, -42]), width=5, fill="0"),
               tf.as_string(tf.constant([7], tf.int64), width=4),
               tf.as_string(tf.constant([7], tf.int8), width=3, fill="-"),
               tf.as_string(tf.constant([True, False])),
               tf.as_string(tf.constant([1.5 - 2j], tf.complex64))])
    assert got[0].tolist() == [b"1.500000", b"-0.250000", b"3.000000"]
    assert got[1].tolist() == [b"1.50", b"-0.25", b"3.00"]
    assert got[2].tolist() == [b"1.500000e+00", b"-2.500000e-01", b"3.000000e+00"]
    assert got[3].tolist() == [b"1.5", b"-0.25", b"3"]
    assert got[4].tolist() == [b"00007", b"-0042"]
    assert got[5].tolist() == [b"   7"]
    assert got[6].tolist() == [b"7  "]
    assert got[7].tolist() == [b"true", b"false"]
    assert got[8].tolist() == [b"(1.500000,-2.000000)"]


def test_as_string_shape_and_errors():
    x = tf.placeholder(tf.int32, [None, 2])
    assert tf.as_string(x).shape.as_list() == [None, 2]
    with pytest.raises(InvalidArgumentError,
                       match="scientific and shortest format not supported for datatype int32"):
        run(tf.as_string(tf.constant([1]), shortest=True))
    with pytest.raises(InvalidArgumentError, match="precision not supported for datatype int32"):
        run(tf.as_string(tf.constant([1]), precision=2))
    with pytest.raises(InvalidArgumentError, match="Fill string must be one or fewer characters"):
        run(tf.as_string(tf.constant([1]), width=3, fill="ab"))
    with pytest.raises(InvalidArgumentError, match="AsString: fill 'x' is not one of the "
                                                   "printf flags"):
        run(tf.as_string(tf.constant([1]), width=3, fill="x"))
    assert run(tf.as_string(tf.constant(1), fill="x")) == b"1"  # no width: fill unused
    with pytest.raises(InvalidArgumentError,
                       match="Cannot select both scientific and shortest notation"):
        run(tf.as_string(tf.constant([1.0]), scientific=True, shortest=True))
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.as_string(tf.constant(["a"]))


# -- string_to_number -------------------------------------------------------------------------
def test_string_to_number():
    s = tf.placeholder(tf.string, [None])
    number = tf.string_to_number(s)
    assert number.dtype == tf.float32 and number.shape.as_list() == [None]
    got = run(number, {s: ["1.5", " -2e3 ", ".25", "0x10", "INF", "+7"]})
    np.testing.assert_array_equal(got, np.array([1.5, -2000.0, 0.25, 16.0, np.inf, 7.0],
                                                np.float32))
    assert np.isnan(run(tf.strings.to_number(["nan"], tf.float64))[0])
    ints = tf.strings.to_number(["12", " -3 ", "2147483647"], out_type=tf.int32)
    got = run(ints)
    assert got.dtype == np.int32 and got.tolist() == [12, -3, 2147483647]
    assert run(tf.string_to_number(["9000000000"], tf.int64)).tolist() == [9000000000]


@pytest.mark.parametrize("text,out_type", [("abc", tf.float32), ("1.5x", tf.float32),
                                           ("infinity", tf.float32), ("1.5", tf.int32),
                                           ("+5", tf.int32), ("2147483648", tf.int32),
                                           ("", tf.float64)])
def test_string_to_number_error(text, out_type):
    with pytest.raises(InvalidArgumentError) as info:
        run(tf.string_to_number([text], out_type))
    assert info.value.message.splitlines()[0] == (
        f"StringToNumberOp could not correctly convert string: {text}")


def test_string_math_feeds_compiled_math():
    s = tf.placeholder(tf.string, [None])
    x = tf.placeholder(tf.float32, [None])
    total = tf.reduce_sum(tf.string_to_number(s) * x)  # host op, then compiled math
    assert run(total, {s: ["1.5", "2"], x: [2.0, 10.0]}) == pytest.approx(23.0)
    sizes = tf.reduce_sum(tf.strings.length(tf.string_join([s, "!"])))
    assert run(sizes, {s: ["ab", "cde"]}) == 7


# -- length, upper, lower ---------------------------------------------------------------------
def test_length_upper_lower():
    words = ["héllo", "ABc", ""]
    t = tf.constant(words)
    got = run([tf.strings.length(t), tf.strings.length(t, unit="UTF8_CHAR"),
               tf.strings.upper(t), tf.strings.lower(t),
               tf.strings.upper(t, encoding="utf-8")])
    assert got[0].dtype == np.int32 and got[0].tolist() == [len(w.encode()) for w in words]
    assert got[1].tolist() == [len(w) for w in words]
    assert got[2].tolist() == [w.encode().upper() for w in words]  # ASCII letters only
    assert got[3].tolist() == [w.encode().lower() for w in words]
    assert got[4].tolist() == [w.upper().encode() for w in words]
    with pytest.raises(ValueError, match="Attr 'unit' of 'StringLength' Op passed string 'CHAR' "
                                         "not in: \"BYTE\", \"UTF8_CHAR\"."):
        tf.strings.length(t, unit="CHAR")
    with pytest.raises(InvalidArgumentError, match=r"only utf-8 or '' \(no encoding\) is "
                                                   r"supported, received latin-1"):
        run(tf.strings.lower(t, encoding="latin-1"))


# -- SparseTensor -----------------------------------------------------------------------------
def test_sparse_tensor_construction_and_fetch_structures():
    sp = tf.SparseTensor(indices=[[0, 1], [2, 0]], values=[1.5, 2.5], dense_shape=[3, 2])
    assert sp.dtype == tf.float32 and sp.indices.dtype == tf.int64
    assert sp.shape.as_list() == [3, 2] and sp.get_shape().as_list() == [3, 2]
    assert sp.op is sp.values.op and sp.graph is tf.get_default_graph()
    with tf.Session() as sess:
        fetched = sess.run({"sparse": sp, "both": [sp.values, sp]})
        evaluated = sp.eval()
    value = fetched["sparse"]
    assert isinstance(value, tf.SparseTensorValue)
    np.testing.assert_array_equal(value.indices, [[0, 1], [2, 0]])
    np.testing.assert_array_equal(value.values, [1.5, 2.5])
    np.testing.assert_array_equal(value.dense_shape, [3, 2])
    np.testing.assert_array_equal(fetched["both"][0], [1.5, 2.5])
    np.testing.assert_array_equal(fetched["both"][1].indices, value.indices)
    np.testing.assert_array_equal(evaluated.dense_shape, [3, 2])
    again = tf.SparseTensor.from_value(value)
    assert run(again).values.tolist() == [1.5, 2.5]


def test_sparse_tensor_checks_its_parts():
    with pytest.raises(ValueError):
        tf.SparseTensor(indices=[[0, 1]], values=[1.0, 2.0], dense_shape=[3, 2])
    with pytest.raises(ValueError):
        tf.SparseTensor(indices=[[0, 1]], values=[1.0], dense_shape=[3, 2, 1])
    dense_shape = tf.placeholder(tf.int64, [2])
    assert tf.SparseTensor([[0, 0]], [1], dense_shape).shape.as_list() == [None, None]
