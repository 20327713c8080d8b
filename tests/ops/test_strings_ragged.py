"""tf.strings' RaggedTensor results and inputs (unicode_decode/split, bytes_split,
split with result_type="RaggedTensor", ngrams, unicode_encode, reduce_join) against
Python's str/bytes functions and TF's documented examples, written here as nested lists.
"""

import numpy as np
import pytest

import tensorflux as tf

WORDS = ["Göödnight", "😊", ""]
GRID = [["ab", "ΩЖ"], ["", "c d"]]
NESTED = [["ab", "c"], [], ["déf"]]  # a ragged input


def _codes(s):
    return [ord(c) for c in s]


def _offsets(s):
    out, pos = [], 0
    for c in s:
        out.append(pos)
        pos += len(c.encode())
    return out


def _chars(s):
    return [c.encode() for c in s]


def _map(fn, nested):
    return [_map(fn, x) for x in nested] if isinstance(nested, list) else fn(nested)


def _lists(value):
    return value.to_list() if isinstance(value, tf.ragged.RaggedTensorValue) else value.tolist()


def test_decode_and_split_give_ragged_tensors():
    rt = tf.ragged.constant(NESTED)
    results = {
        "decode": tf.strings.unicode_decode(WORDS, "UTF-8"),
        "decode_offsets": tf.strings.unicode_decode_with_offsets(WORDS, "UTF-8"),
        "split": tf.strings.unicode_split(WORDS, "UTF-8"),
        "split_offsets": tf.strings.unicode_split_with_offsets(WORDS, "UTF-8"),
        "decode_grid": tf.strings.unicode_decode(GRID, "UTF-8"),
        "split_grid": tf.strings.unicode_split(GRID, "UTF-8"),
        "decode_ragged": tf.strings.unicode_decode(rt, "UTF-8"),
        "bytes": tf.strings.bytes_split(["hello", "123"]),
        "bytes_grid": tf.strings.bytes_split(GRID),
        "bytes_ragged": tf.strings.bytes_split(rt),
        "utf16": tf.strings.unicode_split([s.encode("utf-16-be") for s in WORDS],
                                          "UTF-16-BE"),
    }
    static = {k: (v if isinstance(v, tuple) else (v,)) for k, v in results.items()}
    for key, parts in static.items():
        for part in parts:
            assert isinstance(part, tf.RaggedTensor), key
    assert results["decode"].dtype == tf.int32 and results["decode"].shape.as_list() == [3, None]
    assert results["decode_grid"].shape.as_list() == [2, None, None]
    assert results["decode_grid"].ragged_rank == 2
    assert results["decode_offsets"][1].dtype == tf.int64
    assert results["split"].dtype == tf.string
    with tf.Session() as sess:
        got = sess.run(results)
    assert _lists(got["decode"]) == [_codes(s) for s in WORDS]
    codes, offsets = got["decode_offsets"]
    assert _lists(codes) == [_codes(s) for s in WORDS]
    assert _lists(offsets) == [_offsets(s) for s in WORDS]
    assert _lists(got["split"]) == [_chars(s) for s in WORDS]
    chars, offsets = got["split_offsets"]
    assert _lists(chars) == [_chars(s) for s in WORDS]
    assert _lists(offsets) == [_offsets(s) for s in WORDS]
    assert _lists(got["decode_grid"]) == _map(_codes, GRID)
    assert _lists(got["split_grid"]) == _map(_chars, GRID)
    assert _lists(got["decode_ragged"]) == _map(_codes, NESTED)
    assert _lists(got["bytes"]) == [[b"h", b"e", b"l", b"l", b"o"], [b"1", b"2", b"3"]]
    as_bytes = lambda s: [bytes([b]) for b in s.encode()]  # noqa: E731
    assert _lists(got["bytes_grid"]) == _map(as_bytes, GRID)
    assert _lists(got["bytes_ragged"]) == _map(as_bytes, NESTED)
    assert _lists(got["utf16"]) == [[c.encode("utf-16-be") for c in s] for s in WORDS]
    # TF's documented example (unicode_decode_with_offsets).
    assert _lists(offsets)[0] == [0, 1, 3, 5, 6, 7, 8, 9, 10]


def test_ragged_row_splits_dtype_is_kept():
    rt = tf.RaggedTensor.from_row_splits(["ab", "c", "é"], tf.constant([0, 2, 3], tf.int32))
    decoded = tf.strings.unicode_decode(rt, "UTF-8")
    assert decoded.row_splits.dtype == tf.int32 and decoded.values.row_splits.dtype == tf.int32
    with tf.Session() as sess:
        assert sess.run(decoded).to_list() == [[[97, 98], [99]], [[233]]]


def test_unicode_encode_of_ragged_code_points():
    rows = [[71, 246, 246, 100, 110, 105, 103, 104, 116], [128522]]
    nested = [[[72, 105], []], [[0x3A9]]]
    inner = tf.RaggedTensor.from_row_splits(tf.constant([[65, 66], [67, 68], [69, 70]]),
                                            [0, 2, 3])  # flat values [3, 2]
    got = {"rows": tf.strings.unicode_encode(tf.ragged.constant(rows), "UTF-8"),
           "nested": tf.strings.unicode_encode(tf.ragged.constant(nested), "UTF-16-BE"),
           "inner": tf.strings.unicode_encode(inner, "UTF-8"),
           "round_trip": tf.strings.unicode_encode(
               tf.strings.unicode_decode(["ab", "ΩЖ", ""], "UTF-8"), "UTF-8")}
    assert isinstance(got["rows"], tf.Tensor) and isinstance(got["nested"], tf.RaggedTensor)
    with tf.Session() as sess:
        got = sess.run(got)
    as_text = lambda r: "".join(map(chr, r))  # noqa: E731
    # TF's documented example.
    assert got["rows"].tolist() == [b"G\xc3\xb6\xc3\xb6dnight", b"\xf0\x9f\x98\x8a"]
    assert got["nested"].to_list() == [[as_text(r).encode("utf-16-be") for r in rs]
                                       for rs in nested]
    assert got["inner"].to_list() == [[b"AB", b"CD"], [b"EF"]]
    assert got["round_trip"].tolist() == [b"ab", "ΩЖ".encode(), b""]


def test_split_result_type_ragged():
    source = ["hello world", "a b c", ""]
    got = {
        "v1": tf.string_split(source, result_type="RaggedTensor"),
        "v1_sep": tf.string_split(["a,b;c", "d"], sep=",;", result_type="RaggedTensor"),
        "strings": tf.strings.split(["  pigs on  the wing ", "1<>2"], result_type="RaggedTensor"),
        "strings_sep": tf.strings.split(["1<>2<><>3"], sep="<>", result_type="RaggedTensor"),
        "grid": tf.strings.split([["a b", "c"], ["", "d e f"]], result_type="RaggedTensor"),
        "grid_sparse": tf.strings.split([["a b", "c"], ["", "d e f"]]),
        "ragged": tf.strings.split(tf.ragged.constant([["a b"], [], ["c d e", "f"]]),
                                   result_type="RaggedTensor"),
        "scalar": tf.strings.split("x y", result_type="RaggedTensor"),
    }
    assert isinstance(got["grid_sparse"], tf.SparseTensor)
    with tf.Session() as sess:
        got = sess.run(got)
    assert got["v1"].to_list() == [s.encode().split() for s in source]
    assert got["v1_sep"].to_list() == [[b"a", b"b", b"c"], [b"d"]]
    assert got["strings"].to_list() == [b"  pigs on  the wing ".split(), [b"1<>2"]]
    assert got["strings_sep"].to_list() == [b"1<>2<><>3".split(b"<>")]
    grid = [["a b", "c"], ["", "d e f"]]
    assert got["grid"].to_list() == _map(lambda s: s.encode().split(), grid)
    sparse = got["grid_sparse"]
    expected = [(i, j, k, tok) for i, row in enumerate(grid) for j, s in enumerate(row)
                for k, tok in enumerate(s.encode().split())]
    np.testing.assert_array_equal(sparse.indices, [e[:3] for e in expected])
    assert sparse.values.tolist() == [e[3] for e in expected]
    np.testing.assert_array_equal(sparse.dense_shape, [2, 2, 3])
    assert got["ragged"].to_list() == [[[b"a", b"b"]], [], [[b"c", b"d", b"e"], [b"f"]]]
    assert got["scalar"].to_list() == [[b"x", b"y"]]


def _ngrams(seq, width, sep=" "):
    return [sep.join(seq[i:i + width]).encode() for i in range(len(seq) - width + 1)]


def test_ngrams_of_ragged_tensors():
    rows = [["a", "b", "c"], ["d"], []]
    nested = [[["a", "b", "c"], ["d"]], [[]]]
    got = {"rows": tf.strings.ngrams(tf.ragged.constant(rows), 2, separator="-"),
           "nested": tf.strings.ngrams(tf.ragged.constant(nested), [1, 2]),
           "padded": tf.strings.ngrams(tf.ragged.constant(rows), 3, pad_values=("<", ">"),
                                       padding_width=1),
           "dense": tf.strings.ngrams([["a", "b", "c"], ["d", "e", "f"]], 2)}
    assert isinstance(got["rows"], tf.RaggedTensor) and isinstance(got["dense"], tf.Tensor)
    with tf.Session() as sess:
        got = sess.run(got)
    assert got["rows"].to_list() == [_ngrams(r, 2, "-") for r in rows]
    assert got["nested"].to_list() == [[_ngrams(r, 1) + _ngrams(r, 2) for r in rs]
                                       for rs in nested]
    # Each side padded once, then windows of 3: TF's StringNGrams.
    padded = [_ngrams(["<"] + r + [">"], 3) if r else [] for r in rows]
    assert got["padded"].to_list() == padded
    assert got["dense"].tolist() == [_ngrams(r, 2) for r in (["a", "b", "c"],
                                                              ["d", "e", "f"])]


def test_reduce_join_of_ragged_tensors():
    cube = [[["a", "b"], ["c"]], [["d", "e", "f"]], []]
    rt, rt3 = tf.ragged.constant(NESTED), tf.ragged.constant(cube)
    got = {
        "rows": tf.strings.reduce_join(rt, axis=1, separator="+"),
        "columns": tf.strings.reduce_join(rt, axis=0, separator="+"),
        "negative": tf.strings.reduce_join(rt, axis=-1, separator="+"),
        "all": tf.strings.reduce_join(rt, separator="+"),
        "both": tf.strings.reduce_join(rt3, axis=[1, 2], separator="."),
        "axis0": tf.strings.reduce_join(rt3, axis=0, separator="."),
        "axis1": tf.strings.reduce_join(rt3, axis=1, separator="."),
        "axis2": tf.strings.reduce_join(rt3, axis=2, separator="."),
        "keepdims": tf.strings.reduce_join(rt, axis=1, keepdims=True),
        "v1": tf.reduce_join(rt, 1, separator=" "),
    }
    with tf.Session() as sess:
        got = sess.run(got)
    assert got["rows"].tolist() == [b"ab+c", b"", "déf".encode()]
    assert got["columns"].tolist() == ["ab+déf".encode(), b"c"]
    assert got["negative"].tolist() == got["rows"].tolist()
    # TF joins all the flat values without the separator when no axis is given.
    assert got["all"] == "abcdéf".encode()
    assert got["both"].tolist() == [b"a.b.c", b"d.e.f", b""]
    # axis 0 joins the i-th rows of each outer row, position by position.
    assert got["axis0"].to_list() == [[b"a.d", b"b.e", b"f"], [b"c"]]
    assert got["axis1"].to_list() == [[b"a.c", b"b"], [b"d", b"e", b"f"], []]
    assert got["axis2"].to_list() == [[b"a.b", b"c"], [b"d.e.f"], []]
    assert got["keepdims"].tolist() == [[b"abc"], [b""], ["déf".encode()]]
    assert got["v1"].tolist() == [b"ab c", b"", "déf".encode()]


def test_ragged_string_errors():
    with pytest.raises(ValueError, match="Tensor conversion requested dtype string for "
                                         "RaggedTensor with dtype int32"):
        tf.strings.unicode_decode(tf.ragged.constant([[1]]), "UTF-8")
    with pytest.raises(ValueError, match="axis must be known at graph construction time."):
        tf.strings.reduce_join(tf.ragged.constant([["a"]]), axis=tf.placeholder(tf.int32))
    with pytest.raises(ValueError, match="result_type must be 'RaggedTensor' or "
                                         "'SparseTensor'."):
        tf.strings.split(["a"], result_type="list")
    with pytest.raises(TypeError, match="Expected string passed to parameter 'inputs' of op "
                                        "'UnsortedSegmentJoin'"):
        # TF 1.15 has no ragged form of unsorted_segment_join.
        tf.strings.unsorted_segment_join(tf.ragged.constant([["a"]]), [0], 1)


def test_elementwise_string_ops_dispatch_on_ragged_tensors():
    nested = [["a", " B c "], [], ["dé"]]
    rt = tf.ragged.constant(nested)
    got = {
        "length": tf.strings.length(rt), "lower": tf.strings.lower(rt),
        "upper": tf.strings.upper(rt), "strip": tf.strings.strip(rt),
        "substr": tf.strings.substr(rt, 0, 2),
        "full_match": tf.strings.regex_full_match(rt, "[a-z]"),
        "replace": tf.strings.regex_replace(rt, " ", "_"),
        "base64": tf.io.decode_base64(tf.io.encode_base64(rt)),
        "join": tf.strings.join([rt, "!", rt], separator="-"),
        "to_number": tf.strings.to_number(tf.ragged.constant([["1.5", "-2"], []])),
        "as_string": tf.strings.as_string(tf.ragged.constant([[1, 22], []])),
        "script": tf.strings.unicode_script(tf.ragged.constant([[ord("A"), 0x3A9], []])),
    }
    for value in got.values():
        assert isinstance(value, tf.RaggedTensor)
    with tf.Session() as sess:
        got = {k: v.to_list() for k, v in sess.run(got).items()}
    b = _map(str.encode, nested)
    assert got["length"] == _map(len, b)
    assert got["lower"] == _map(bytes.lower, b) and got["upper"] == _map(bytes.upper, b)
    assert got["strip"] == _map(bytes.strip, b)
    assert got["substr"] == _map(lambda s: s[:2], b)
    assert got["full_match"] == _map(lambda s: s in (b"a", b"b", b"c"), b)
    assert got["replace"] == _map(lambda s: s.replace(b" ", b"_"), b)
    assert got["base64"] == b
    assert got["join"] == _map(lambda s: b"-".join([s, b"!", s]), b)
    assert got["to_number"] == [[1.5, -2.0], []]
    assert got["as_string"] == [[b"1", b"22"], []]
    assert got["script"] == [[25, 14], []]  # ICU's USCRIPT_LATIN, USCRIPT_GREEK
