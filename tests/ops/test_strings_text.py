"""tf.strings strip / substr / reduce_join / unsorted_segment_join / format / ngrams /
bytes_split, against Python's str and bytes methods and TF's documented results."""

import numpy as np
import pytest

import tensorflux as tf
from tests.helpers import run

InvalidArgumentError = tf.errors.InvalidArgumentError


def test_strip_is_ascii_whitespace():
    words = [" \t a b \n", "\x0b\x0cx\r", "", "  ", "\u00a0y\u00a0"]
    got = run(tf.strings.strip(words))
    assert tf.string_strip is tf.strings.strip
    assert got.tolist() == [w.encode().strip(b" \t\n\v\f\r") for w in words]


def test_substr_bytes_and_utf8_chars_against_slicing():
    text = "héllo wörld"
    data = text.encode()
    positions = list(range(-len(data), len(data) + 1))
    chars = list(range(-len(text), len(text) + 1))
    byte_ops = [tf.strings.substr(data, p, 3) for p in positions]
    char_ops = [tf.strings.substr(text, p, 3, unit="UTF8_CHAR") for p in chars]
    rest = [tf.substr(data, 2, -1), tf.strings.substr(text, 2, -1, unit="UTF8_CHAR"),
            tf.strings.substr(text, 1, 100, unit="UTF8_CHAR")]
    got_bytes, got_chars, got_rest = run([byte_ops, char_ops, rest])
    for p, g in zip(positions, got_bytes):
        start = p % len(data) if p < 0 else p
        assert g == data[start:start + 3], p
    for p, g in zip(chars, got_chars):
        start = p % len(text) if p < 0 else p
        assert g == text[start:start + 3].encode(), p
    # A negative length takes the rest in bytes; TF's UTF8_CHAR kernel counts no
    # characters for it and gives "".
    assert got_rest == [data[2:], b"", text[1:].encode()]


def test_substr_broadcasting_tf_documented_examples():
    words = [[b"ten", b"eleven", b"twelve"], [b"thirteen", b"fourteen", b"fifteen"],
             [b"sixteen", b"seventeen", b"eighteen"]]
    same = tf.strings.substr(words, [[1, 2, 3]] * 3, [[2, 3, 4], [4, 3, 2], [5, 5, 5]])
    rows = tf.strings.substr(words + [[b"nineteen", b"twenty", b"twentyone"]], [1, 2, 3],
                             [1, 2, 3])
    scalar_input = tf.strings.substr(b"thirteen", [1, 5, 7], [3, 2, 1])
    assert rows.shape.as_list() == [4, 3] and scalar_input.shape.as_list() == [3]
    got = run([same, rows, scalar_input])
    assert got[0].tolist() == [[b"en", b"eve", b"lve"], [b"hirt", b"urt", b"te"],
                               [b"ixtee", b"vente", b"hteen"]]
    assert got[1].tolist() == [[b"e", b"ev", b"lve"], [b"h", b"ur", b"tee"],
                               [b"i", b"ve", b"hte"], [b"i", b"en", b"nty"]]
    assert got[2].tolist() == [b"hir", b"ee", b"n"]


def test_substr_errors():
    with pytest.raises(InvalidArgumentError) as info:
        run(tf.strings.substr([b"hi", b"hello"], 4, 1))
    assert info.value.message.splitlines()[0] == "pos 4 out of range for string b'hi' at index 0"
    with pytest.raises(InvalidArgumentError, match=r"pos -3 out of range for string b'hi' at "
                                                   r"index \(1, 0\)"):
        run(tf.strings.substr([[b"abc"], [b"hi"]], [[-3, -1]], [[1, 1]]))
    with pytest.raises(InvalidArgumentError, match="pos 2 out of range for string at index 1"):
        run(tf.strings.substr(["ab", "é"], 2, 1, unit="UTF8_CHAR"))
    with pytest.raises(ValueError, match=r"pos and len shapes must match: \[2\] vs. \[3\]"):
        tf.strings.substr(["ab", "cd"], [0, 1], [1, 1, 1])
    with pytest.raises(ValueError, match="Attr 'unit' of 'Substr' Op passed string 'CHAR' not "
                                         "in: \"BYTE\", \"UTF8_CHAR\"."):
        tf.strings.substr("ab", 0, 1, unit="CHAR")
    with pytest.raises(tf.errors.UnimplementedError,
                       match="Substr broadcast not implemented for 3 dimensions"):
        run(tf.strings.substr([[["abc"]]], [[[0]], [[1]]], [[[1]], [[1]]]))


def test_reduce_join_orders_and_shapes():
    words = np.array([["a", "b", "c"], ["d", "e", "f"]], object)
    cube = np.array([[["a", "b"], ["c", "d"]], [["e", "f"], ["g", "h"]]], object)
    unknown = tf.placeholder(tf.string)
    got = run({"all": tf.strings.reduce_join(words),
               "last": tf.reduce_join(words, axis=-1, separator=" "),
               "rows_keep": tf.strings.reduce_join(words, 0, keep_dims=True, separator=","),
               "both": tf.strings.reduce_join(words, [0, 1]),
               "both_rev": tf.strings.reduce_join(words, [1, 0]),
               "none": tf.strings.reduce_join(words, []),
               "cube": tf.strings.reduce_join(cube, [2, 0], keepdims=True),
               "unknown": tf.strings.reduce_join(unknown)},
              {unknown: words})
    assert got["all"] == b"abcdef"
    assert got["last"].tolist() == [b"a b c", b"d e f"]
    assert got["rows_keep"].tolist() == [[b"a,d", b"b,e", b"c,f"]]
    # With several axes the first listed varies fastest (TF's kernel).
    assert got["both"] == b"adbecf"
    assert got["both_rev"] == b"abcdef"
    assert got["none"].tolist() == [[b"a", b"b", b"c"], [b"d", b"e", b"f"]]
    # axis=[2, 0]: axis 2 varies fastest.
    want = [["".join(cube[i, j, k] for i in range(2) for k in range(2)) for j in range(2)]]
    assert got["cube"].reshape(-1).tolist() == [w.encode() for w in want[0]]
    assert got["cube"].shape == (1, 2, 1)
    assert got["unknown"] == b"abcdef"
    assert tf.reduce_join(words, 1).shape.as_list() == [2]
    assert tf.reduce_join(words, 1, keepdims=True).shape.as_list() == [2, 1]


def test_reduce_join_errors():
    with pytest.raises(ValueError, match="Invalid reduction dimension 2 for input with 2 "
                                         "dimensions."):
        tf.strings.reduce_join([["a"]], 2)
    axes = tf.placeholder(tf.int32, [None])
    with pytest.raises(InvalidArgumentError, match="Duplicate reduction dimension -1"):
        run(tf.strings.reduce_join([["a"]], axes), {axes: [1, -1]})
    with pytest.raises(tf.errors.OutOfRangeError, match=r"Invalid reduction dimension 3 for "
                                                        r"input with 2 dimension\(s\)"):
        run(tf.strings.reduce_join([["a"]], axes), {axes: [3]})
    with pytest.raises(ValueError, match="Cannot specify both 'keep_dims' and 'keepdims'"):
        tf.strings.reduce_join([["a"]], keep_dims=True, keepdims=True)


def test_unsorted_segment_join():
    inputs = [["Y", "q", "c"], ["Y", "6", "6"], ["p", "G", "a"]]
    got = run([tf.strings.unsorted_segment_join(inputs, [1, 0, 1], 2, separator=":"),
               tf.strings.unsorted_segment_join(["", "a", "", "b"], [0, 0, 0, 2], 3,
                                                separator=","),
               tf.strings.unsorted_segment_join([["a", "b"], ["c", "d"]], [[0, 1], [1, 1]],
                                                tf.constant(2, tf.int64))])
    want = {}
    for row, segment in zip(inputs, [1, 0, 1]):
        want.setdefault(segment, []).append(row)
    assert got[0].tolist() == [[":".join(c).encode() for c in zip(*want[s])] for s in (0, 1)]
    # TF adds the separator only when the joined string so far is non-empty.
    assert got[1].tolist() == [b"a,", b"", b"b"]
    assert got[2].tolist() == [b"a", b"bcd"]
    ids = tf.placeholder(tf.int32, [None])
    with pytest.raises(InvalidArgumentError, match="segment_ids are not allowed to exceed "
                                                   "num_segments or to have negative values."):
        run(tf.strings.unsorted_segment_join(["a", "b"], ids, 2), {ids: [0, 2]})
    assert tf.strings.unsorted_segment_join(tf.placeholder(tf.string, [None, 4]), ids,
                                            5).shape.as_list() == [5, 4]


def test_format_tf_documented_examples():
    single = tf.strings.format("tensor: {}, suffix", tf.range(10))
    multi = tf.strings.format("first: {}, second: {}, suffix",
                              (tf.reshape(tf.range(100), [10, 10]), tf.range(10)))
    custom = tf.strings.format("a=%s b=%s", [tf.constant([1.5, 2.0]), tf.constant(["x", "y"])],
                               placeholder="%s", summarize=-1)
    assert single.shape.as_list() == [] and single.op.type == "StringFormat"
    got = run([single, multi, custom])
    assert got[0] == b"tensor: [0 1 2 ... 7 8 9], suffix"
    assert got[1] == (b"first: [[0 1 2 ... 7 8 9]\n"
                      b" [10 11 12 ... 17 18 19]\n"
                      b" [20 21 22 ... 27 28 29]\n"
                      b" ...\n"
                      b" [70 71 72 ... 77 78 79]\n"
                      b" [80 81 82 ... 87 88 89]\n"
                      b" [90 91 92 ... 97 98 99]], second: [0 1 2 ... 7 8 9], suffix")
    assert got[2] == b'a=[1.5 2] b=["x" "y"]'
    with pytest.raises(ValueError, match=r"2 placeholder\(s\) in template does not match 1 "
                                         r"tensor\(s\) provided as input"):
        tf.strings.format("{} {}", tf.range(2))


def test_ngrams():
    got = run([tf.strings.ngrams(["A", "B", "C", "D"], 2),
               tf.strings.ngrams(["TF", "and", "keras"], 1),
               tf.strings.ngrams(["a", "b"], 3, pad_values=("LP", "RP")),
               tf.strings.ngrams(["a", "b"], 5, pad_values=("LP", "RP"), padding_width=1,
                                 preserve_short_sequences=True),
               tf.strings.ngrams([["a", "b", "c"], ["d", "e", "f"]], [1, 3], separator="_"),
               tf.strings.ngrams(["a", "b"], 3)])
    assert got[0].tolist() == [b"A B", b"B C", b"C D"]
    assert got[1].tolist() == [b"TF", b"and", b"keras"]
    assert got[2].tolist() == [b"LP LP a", b"LP a b", b"a b RP", b"b RP RP"]
    assert got[3].tolist() == [b"LP a b RP"]
    assert got[4].tolist() == [[b"a", b"b", b"c", b"a_b_c"], [b"d", b"e", b"f", b"d_e_f"]]
    assert got[5].tolist() == []
    with pytest.raises(ValueError, match="padding_width must be greater than 0."):
        tf.strings.ngrams(["a"], 2, pad_values="x", padding_width=0)
    with pytest.raises(ValueError, match="pad_values must be provided if padding_width is set."):
        tf.strings.ngrams(["a"], 2, padding_width=1)
    with pytest.raises(TypeError, match="pad_values must be a string, tuple of strings, or "
                                        "None."):
        tf.strings.ngrams(["a"], 2, pad_values=3)
    with pytest.raises(ValueError, match="Data must have rank>0"):
        tf.strings.ngrams("a", 2)


def test_bytes_split():
    got = run(tf.strings.bytes_split("héllo"))
    assert got.tolist() == [bytes([b]) for b in "héllo".encode()]
    assert run(tf.strings.bytes_split("")).tolist() == []
    with pytest.raises(ValueError, match="input must have a statically-known rank."):
        tf.strings.bytes_split(tf.placeholder(tf.string))
