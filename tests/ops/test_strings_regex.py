"""tf.strings.regex_replace / regex_full_match: RE2 patterns, checked against Python's re
where the two agree and against RE2's rules (written out here) where they differ."""

import re

import numpy as np
import pytest

import tensorflux as tf
from tests.helpers import run

InvalidArgumentError = tf.errors.InvalidArgumentError

TEXTS = ["alice@example.com, bob@test.com", "  padded  ", "Hello World", "no digits", "a1b22c333",
         "ünïcödé words"]

# Patterns whose meaning is the same in RE2 and Python's re (on these texts).
SAME = [(r"(\w+)@(\w+)\.com", r"\2 at \1", r"\g<2> at \g<1>"),
        (r"^\s+|\s+$", "", ""),
        (r"\d+", "#", "#"),
        (r"[aeiou]", r"<\0>", r"<\g<0>>"),
        (r"(?i)hello", "bye", "bye"),
        (r"o(\w)", r"\1\1", r"\1\1"),
        (r"\\", "/", "/")]


def test_regex_replace_matches_python_re_where_re2_agrees():
    static = [tf.strings.regex_replace(TEXTS, pattern, rewrite)
              for pattern, rewrite, _ in SAME]
    first = [tf.strings.regex_replace(TEXTS, pattern, rewrite, replace_global=False)
             for pattern, rewrite, _ in SAME]
    p = tf.placeholder(tf.string, [])
    r = tf.placeholder(tf.string, [])
    dynamic = tf.regex_replace(TEXTS, p, r)
    assert {t.op.type for t in static} == {"StaticRegexReplace"}
    assert dynamic.op.type == "RegexReplace"
    assert tf.regex_replace is tf.strings.regex_replace
    with tf.Session() as sess:
        got_static, got_first = sess.run([static, first])
        got_dynamic = [sess.run(dynamic, {p: pattern, r: rewrite})
                       for pattern, rewrite, _ in SAME]
    for (pattern, _, py_rewrite), a, b, c in zip(SAME, got_static, got_first, got_dynamic):
        want = [re.sub(pattern, py_rewrite, t, flags=re.ASCII).encode() for t in TEXTS]
        want_first = [re.sub(pattern, py_rewrite, t, count=1, flags=re.ASCII).encode()
                      for t in TEXTS]
        assert a.tolist() == want, pattern
        assert c.tolist() == want, pattern
        assert b.tolist() == want_first, pattern


def test_tf_documented_example():
    got = run(tf.strings.regex_replace("Text with tags.<br /><b>contains html</b>", "<[^>]+>",
                                       " "))
    assert got == b"Text with tags.  contains html "


def test_re2_rules_that_differ_from_python_re():
    cases = {
        # An empty match right after a match is skipped (re.sub would replace it).
        "empty": tf.strings.regex_replace("abxd", "x*", "-"),
        # $ is the end of the text only, not before a final newline.
        "dollar": tf.strings.regex_replace("a\n", "a$", "b"),
        "dollar_m": tf.strings.regex_replace("a\nc", "(?m)a$", "b"),
        # Perl classes and \b are ASCII in RE2.
        "digits": tf.strings.regex_full_match(["123", "١٢٣"], r"\d+"),
        "word_boundary": tf.strings.regex_replace("é a", r"\b", "|"),
        # A mid-pattern flag applies to the rest of its group, across alternatives.
        "flags": tf.strings.regex_full_match(["aB", "AB", "C", "ac"], "a(?i)b|c"),
        # \Q...\E quotes, \x{...} and octal escapes, POSIX classes.
        "quoted": tf.strings.regex_replace("a.b*c", r"\Q.b*\E", "!"),
        "hex": tf.strings.regex_replace("☺ ok", r"\x{263a}", ":)"),
        "octal": tf.strings.regex_replace("abc", r"\142", "B"),
        "posix": tf.strings.regex_replace("ab12;CD", "[[:alpha:]]+", "w"),
        "posix_not": tf.strings.regex_replace("ab12;CD", "[[:^alnum:]]", "_"),
        # A { that is no repetition is a literal.
        "brace": tf.strings.regex_full_match("a{,2}", "a{,2}"),
        # A rewrite naming a group the pattern lacks leaves the string alone.
        "no_group": tf.strings.regex_replace("abc", "(b)", r"\2"),
        "backslash": tf.strings.regex_replace("abc", "b", r"\\"),
    }
    got = run(cases)
    assert got["empty"] == b"-a-b-d-"
    assert got["dollar"] == b"a\n"
    assert got["dollar_m"] == b"b\nc"
    assert got["digits"].tolist() == [True, False]
    assert got["word_boundary"] == "é |a|".encode()
    assert got["flags"].tolist() == [True, False, True, False]
    assert got["quoted"] == b"a!c"
    assert got["hex"] == b":) ok"
    assert got["octal"] == b"aBc"
    assert got["posix"] == b"w12;w"
    assert got["posix_not"] == b"ab12_CD"
    assert got["brace"]
    assert got["no_group"] == b"abc"
    assert got["backslash"] == b"a\\c"


def test_unicode_classes_against_python():
    text = "Ωmega, ἀλφα and 漢字 – 42"
    got = run([tf.strings.regex_replace(text, r"\pL", "L"),
               tf.strings.regex_replace(text, r"\p{Greek}+", "G"),
               tf.strings.regex_replace(text, r"[^\p{Han}\s]", ""),
               tf.strings.regex_full_match(["x", "é", "1"], r"\p{Ll}")])
    assert got[0] == "".join("L" if c.isalpha() else c for c in text).encode()
    assert got[1] == "Gmega, G and 漢字 – 42".encode()
    assert got[2] == "   漢字  ".encode()
    assert got[3].tolist() == [True, True, False]


def test_full_match_is_whole_string_and_keeps_shape():
    x = tf.placeholder(tf.string, [None, 2])
    matched = tf.strings.regex_full_match(x, "[a-c]+")
    assert matched.dtype == tf.bool and matched.shape.as_list() == [None, 2]
    assert matched.op.type == "StaticRegexFullMatch"
    dynamic = tf.strings.regex_full_match(x, tf.constant("a.*"))
    assert dynamic.op.type == "RegexFullMatch"
    got = run([matched, dynamic], {x: [["abc", "abcd"], ["", "ca"]]})
    np.testing.assert_array_equal(got[0], [[True, False], [False, True]])
    np.testing.assert_array_equal(got[1], [[True, True], [False, False]])


@pytest.mark.parametrize("pattern,error", [
    ("(a", "missing ): (a"), ("a)", "missing ): a)"), (r"a\1", r"invalid escape sequence: \1"),
    ("(?=a)", "invalid perl operator: (?="), ("(?<!a)b", "invalid perl operator: (?<"),
    ("a**", "bad repetition operator: **"), ("*a", "no argument for repetition operator: *"),
    ("a{1001}", "invalid repetition size: {1001}"), ("[z-a]", "invalid character class range: z-a"),
    ("[ab", "missing ]: [ab"), (r"\Z", r"invalid escape sequence: \Z"), ("a\\", "trailing \\"),
    (r"\p{Klingon}", r"invalid character class range: \p{Klingon}"),
])
def test_invalid_patterns_raise_re2_errors(pattern, error):
    with pytest.raises(InvalidArgumentError) as info:
        run(tf.strings.regex_replace("x", pattern, "y"))
    assert info.value.message.splitlines()[0] == f"Invalid pattern: {pattern}, error: {error}"


def test_scalar_checks():
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        tf.strings.regex_replace("x", tf.constant(["a", "b"]), "y")
    p = tf.placeholder(tf.string)
    with pytest.raises(InvalidArgumentError, match=r"Pattern must be scalar, but received \[2\]"):
        run(tf.strings.regex_full_match("x", p), {p: ["a", "b"]})
    with pytest.raises(InvalidArgumentError, match=r"Rewrite must be scalar, but received \[1\]"):
        run(tf.strings.regex_replace("x", tf.constant("x"), p), {p: ["y"]})
