"""tf.strings Unicode ops against Python's codecs (whose UTF-8 decoder replaces each
maximal ill-formed subpart, as ICU does) and ICU's script numbers from uscript.h."""

import numpy as np
import pytest

import tensorflux as tf
from tests.helpers import run

InvalidArgumentError = tf.errors.InvalidArgumentError

TEXT = "Göödnight 😊 ΩЖ中"
BAD = b"G\xc3\xb6\xe2\x82x\xff\xed\xa0\x80y\xf0\x9f"  # cut sequences, a surrogate, a stray byte


def _offsets(chars, encoding):
    out, pos = [], 0
    for c in chars:
        out.append(pos)
        pos += len(c.encode(encoding))
    return out


def test_decode_against_python():
    got = run({
        "plain": tf.strings.unicode_decode(TEXT, "UTF-8"),
        "offsets": tf.strings.unicode_decode_with_offsets(TEXT, "UTF-8"),
        "replace": tf.strings.unicode_decode(BAD, "UTF-8"),
        "replace_offsets": tf.strings.unicode_decode_with_offsets(BAD, "UTF-8",
                                                                  replacement_char=ord("?")),
        "ignore": tf.strings.unicode_decode(BAD, "UTF-8", errors="ignore"),
        "utf16": tf.strings.unicode_decode(TEXT.encode("utf-16-be"), "UTF-16-BE"),
        "utf32": tf.strings.unicode_decode_with_offsets(TEXT.encode("utf-32-be"), "UTF-32-BE"),
        "latin1": tf.strings.unicode_decode("café".encode("latin-1"), "ISO-8859-1"),
        "control": tf.strings.unicode_decode("a\x01\tb", "UTF-8",
                                             replace_control_characters=True),
    })
    assert got["plain"].dtype == np.int32 and got["plain"].tolist() == [ord(c) for c in TEXT]
    chars, offsets = got["offsets"]
    assert chars.tolist() == [ord(c) for c in TEXT]
    assert offsets.dtype == np.int64 and offsets.tolist() == _offsets(TEXT, "utf-8")
    assert got["replace"].tolist() == [ord(c) for c in BAD.decode("utf-8", "replace")]
    chars, offsets = got["replace_offsets"]
    assert chars.tolist() == [ord(c) if c != "\ufffd" else ord("?")
                              for c in BAD.decode("utf-8", "replace")]
    # The ill-formed parts start at 3 (e2 82), 6 (ff), 7, 8, 9 (ed a0 80) and 11 (f0 9f).
    assert offsets.tolist() == [0, 1, 3, 5, 6, 7, 8, 9, 10, 11]
    assert got["ignore"].tolist() == [ord(c) for c in BAD.decode("utf-8", "ignore")]
    assert got["utf16"].tolist() == [ord(c) for c in TEXT]
    chars, offsets = got["utf32"]
    assert chars.tolist() == [ord(c) for c in TEXT] and offsets.tolist() == list(
        range(0, 4 * len(TEXT), 4))
    assert got["latin1"].tolist() == [ord(c) for c in "café"]
    assert got["control"].tolist() == [ord("a"), 0xFFFD, 0xFFFD, ord("b")]


def test_decode_errors():
    with pytest.raises(InvalidArgumentError, match="Invalid formatting on input string"):
        run(tf.strings.unicode_decode(BAD, "UTF-8", errors="strict"))
    with pytest.raises(InvalidArgumentError, match="Could not create converter for input "
                                                   "encoding: NOPE-8"):
        run(tf.strings.unicode_decode("a", "NOPE-8"))
    with pytest.raises(InvalidArgumentError, match="replacement_char out of unicode codepoint "
                                                   "range"):
        run(tf.strings.unicode_decode("a", "UTF-8", replacement_char=0x110000))
    with pytest.raises(ValueError, match="Attr 'errors' of 'UnicodeDecode' Op passed string "
                                         "'lenient' not in"):
        tf.strings.unicode_decode("a", "UTF-8", errors="lenient")
    with pytest.raises(ValueError, match="Rank of `input` must be statically known."):
        tf.strings.unicode_decode(tf.placeholder(tf.string), "UTF-8")


def test_encode_dense_inputs():
    rows = [[71, 246, 246, 100], [128522, 0, 65, 66]]
    got = run({"vector": tf.strings.unicode_encode([71, 246, 128522], "UTF-8"),
               "nul": tf.strings.unicode_encode([65, 0], "UTF-16-BE"),
               "matrix": tf.strings.unicode_encode(rows, "UTF-16-BE"),
               "cube": tf.strings.unicode_encode([rows, rows[::-1]], "UTF-32-BE"),
               "bad_replace": tf.strings.unicode_encode([65, -1, 0x110000], "UTF-8"),
               "bad_ignore": tf.strings.unicode_encode([65, -1, 66], "UTF-8", errors="ignore")})
    assert got["vector"] == "Gö😊".encode()
    assert got["nul"] == b"\x00A\x00\x00"  # a trailing NUL byte survives
    assert got["matrix"].tolist() == ["".join(map(chr, r)).encode("utf-16-be") for r in rows]
    assert got["cube"].shape == (2, 2)
    assert got["cube"].tolist() == [["".join(map(chr, r)).encode("utf-32-be") for r in rs]
                                    for rs in (rows, rows[::-1])]
    assert got["bad_replace"] == "A\ufffd\ufffd".encode()
    assert got["bad_ignore"] == b"AB"
    with pytest.raises(InvalidArgumentError, match="Code point value out of valid Unicode "
                                                   "range."):
        run(tf.strings.unicode_encode([65, -1], "UTF-8", errors="strict"))
    with pytest.raises(ValueError, match="input_tensor's rank must be at least 1."):
        tf.strings.unicode_encode(65, "UTF-8")
    with pytest.raises(ValueError, match="Attr 'output_encoding' of 'UnicodeEncode' Op passed "
                                         "string 'UTF-16' not in"):
        tf.strings.unicode_encode([65], "UTF-16")


def test_transcode_and_split():
    words = ["Hello", "TensorFlow", "2.x", "ünï"]
    got = run({"utf16": tf.strings.unicode_transcode(words, "UTF-8", "UTF-16-BE"),
               "from_latin1": tf.strings.unicode_transcode([w.encode("latin-1") for w in words],
                                                           "latin1", "UTF-8"),
               "bad": tf.strings.unicode_transcode([BAD], "UTF-8", "UTF-8"),
               "control": tf.strings.unicode_transcode(["a\x02b"], "UTF-8", "UTF-8",
                                                       errors="ignore",
                                                       replace_control_characters=True),
               "split": tf.strings.unicode_split(TEXT, "UTF-8"),
               "split_offsets": tf.strings.unicode_split_with_offsets(TEXT, "UTF-8")})
    assert got["utf16"].tolist() == [w.encode("utf-16-be") for w in words]
    assert got["from_latin1"].tolist() == [w.encode() for w in words]
    assert got["bad"].tolist() == [BAD.decode("utf-8", "replace").encode()]
    assert got["control"].tolist() == [b"ab"]
    assert got["split"].tolist() == [c.encode() for c in TEXT]
    chars, offsets = got["split_offsets"]
    assert chars.tolist() == [c.encode() for c in TEXT]
    assert offsets.tolist() == _offsets(TEXT, "utf-8")
    with pytest.raises(InvalidArgumentError, match="Invalid formatting on input string"):
        run(tf.strings.unicode_transcode([BAD], "UTF-8", "UTF-8", errors="strict"))


def test_unicode_script_numbers():
    # ICU's uscript.h: COMMON 0, INHERITED 1, ARABIC 2, CYRILLIC 8, GREEK 14, HAN 17,
    # HANGUL 18, HIRAGANA 20, KATAKANA 22, LATIN 25; -1 for non-code points.
    chars = ["1", "\u0301", "ب", "Ж", "Ω", "中", "한", "あ", "ア", "a"]
    codes = tf.placeholder(tf.int32, [None])
    got = run(tf.strings.unicode_script(codes), {codes: [ord(c) for c in chars] + [-1, 0x110000]})
    assert got.dtype == np.int32
    assert got.tolist() == [0, 1, 2, 8, 14, 17, 18, 20, 22, 25, -1, -1]
    assert run(tf.strings.unicode_script([1, 31, 38])).tolist() == [0, 0, 0]  # TF's doc example
