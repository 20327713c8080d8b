"""RE2 patterns for Python's `re`: TF's regex ops (RegexReplace, RegexFullMatch) use
RE2's syntax and its leftmost-first (Perl) semantics, which `re` shares for the common
subset. This module translates a pattern, and rejects what RE2 rejects, with RE2's
error text, so a TF1 program sees TF's results and errors.

Text is matched as str: UTF-8 decoded with `surrogateescape`, so every invalid byte is
one character (RE2 also steps over an invalid byte as one character).

What maps (RE2 -> re):
- literals, `.`, `[...]`, `|`, groups `(...)`, `(?:...)`, `(?P<name>...)` and
  `(?<name>...)`, repetitions `* + ? {n} {n,} {n,m}` (up to 1000, RE2's limit) and
  their lazy forms, `^`, `\\A`, `\\z` (re's `\\Z`), flags `i m s` as `(?flags)` (also in
  the middle of a pattern, where they apply to the rest of the group) and `(?flags:...)`;
- `$` without `m` is the end of the text only (re's `$` would also match before a
  final newline), so it becomes `\\Z`;
- Perl classes `\\d \\s \\w \\D \\S \\W` and `\\b \\B` are ASCII in RE2 (re's are Unicode),
  so they become explicit ASCII sets; POSIX classes `[[:alpha:]]`, `[[:^digit:]]`...;
- Unicode classes `\\pL`, `\\p{Lu}`, `\\PN`, `\\p{^Greek}`: general categories from
  `unicodedata`, scripts (`\\p{Greek}`, `\\p{Han}`) from fontTools' Unicode data;
- escapes `\\a \\f \\t \\n \\r \\v`, octal `\\123`, hex `\\x7F` and `\\x{10FFFF}`, `\\Q...\\E`;
- a `{` that does not start a repetition is a literal, as in RE2.

What raises, as RE2 does ("Invalid pattern: ..., error: ..."): backreferences `\\1`,
lookaround `(?=...)` `(?!...)` `(?<=...)` `(?<!...)`, atomic groups, conditionals,
`\\Z`, `\\G`, unknown escapes, possessive or doubled repetitions (`a**`, `a*+`),
repetition counts over 1000, reversed ranges, unbalanced parentheses or brackets.
Also raised, although RE2 accepts them: `\\C` (one byte) and the `U` (ungreedy) flag,
which `re` cannot express.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata

_MAX_REPEAT = 1000  # RE2's kMaxRepeat

# RE2's Perl classes are ASCII.
_DIGIT = [(0x30, 0x39)]
_SPACE = [(0x09, 0x0A), (0x0C, 0x0D), (0x20, 0x20)]  # \t \n \f \r space (no \v)
_WORD = [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]
_PERL = {"d": _DIGIT, "s": _SPACE, "w": _WORD}
_WORD_SET = "[0-9A-Za-z_]"
_POSIX = {
    "alnum": [(0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A)],
    "alpha": [(0x41, 0x5A), (0x61, 0x7A)],
    "ascii": [(0x00, 0x7F)],
    "blank": [(0x09, 0x09), (0x20, 0x20)],
    "cntrl": [(0x00, 0x1F), (0x7F, 0x7F)],
    "digit": _DIGIT,
    "graph": [(0x21, 0x7E)],
    "lower": [(0x61, 0x7A)],
    "print": [(0x20, 0x7E)],
    "punct": [(0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)],
    "space": [(0x09, 0x0D), (0x20, 0x20)],
    "upper": [(0x41, 0x5A)],
    "word": _WORD,
    "xdigit": [(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)],
}
_SIMPLE_ESCAPES = {"a": "\a", "f": "\f", "t": "\t", "n": "\n", "r": "\r", "v": "\v"}
_MAX_CHAR = sys.maxunicode


class RE2Error(ValueError):
    """A pattern RE2 rejects (or that this translation cannot express); str() is RE2's
    error text, e.g. "invalid escape sequence: \\1"."""


# -- character sets as sorted, merged (lo, hi) code point ranges -------------------------------
def _merge(ranges):
    out = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _complement(ranges):
    out, start = [], 0
    for lo, hi in _merge(ranges):
        if lo > start:
            out.append((start, lo - 1))
        start = hi + 1
    if start <= _MAX_CHAR:
        out.append((start, _MAX_CHAR))
    return out


def _set_text(ranges) -> str:
    """The inside of a re character set for `ranges`."""
    parts = []
    for lo, hi in _merge(ranges):
        parts.append(_class_char(lo) if lo == hi else f"{_class_char(lo)}-{_class_char(hi)}")
    return "".join(parts)


def _class_char(cp: int) -> str:
    ch = chr(cp)
    if ch.isalnum() and cp < 0x80:
        return ch
    return f"\\U{cp:08x}" if cp > 0xFFFF else f"\\u{cp:04x}" if cp > 0x7F else f"\\x{cp:02x}"


@functools.lru_cache(maxsize=None)
def _category_ranges(name: str):
    """Code point ranges of a Unicode general category ("Lu") or group ("L")."""
    ranges, start, previous = [], None, None
    for cp in range(_MAX_CHAR + 1):
        inside = unicodedata.category(chr(cp)).startswith(name)
        if inside and start is None:
            start = cp
        elif not inside and start is not None:
            ranges.append((start, cp - 1))
            start = None
        previous = cp
    if start is not None:
        ranges.append((start, previous))
    return tuple(ranges)


_CATEGORIES = {"C", "Cc", "Cf", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc",
               "Me", "Mn", "N", "Nd", "Nl", "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po",
               "Ps", "S", "Sc", "Sk", "Sm", "So", "Z", "Zl", "Zp", "Zs"}


@functools.lru_cache(maxsize=None)
def _script_ranges(name: str):
    """Code point ranges of a Unicode script by its long name (Greek, Latin, Han...)."""
    from fontTools.unicodedata import Scripts  # Unicode's Scripts.txt, imported on first use
    codes = [code for code, long_name in Scripts.NAMES.items()
             if long_name.replace(" ", "_") == name]
    if not codes:
        return None
    starts, values, ranges = Scripts.RANGES, Scripts.VALUES, []
    for i, value in enumerate(values):
        if value == codes[0]:
            hi = starts[i + 1] - 1 if i + 1 < len(starts) else _MAX_CHAR
            ranges.append((starts[i], hi))
    return tuple(ranges)


def _unicode_class(name: str, negated: bool, text: str):
    if name.startswith("^"):
        name, negated = name[1:], not negated
    if name == "Any":
        ranges = [(0, _MAX_CHAR)]
    elif name in _CATEGORIES:
        ranges = list(_category_ranges(name))
    else:
        script = _script_ranges(name)
        if script is None:
            raise RE2Error(f"invalid character class range: {text}")
        ranges = list(script)
    return _complement(ranges) if negated else ranges


# -- the translator ------------------------------------------------------------------------
class _Group:
    def __init__(self, flags):
        self.flags = set(flags)  # active i/m/s flags inside this group
        self.scoped = []  # openers of the scoped groups a mid-group (?flags) started


class _Translator:
    def __init__(self, pattern: str):
        self.p = pattern
        self.i = 0
        self.out = []
        self.groups = [_Group(())]
        self.can_repeat = False  # the last thing emitted may take a repetition
        self.just_repeated = False

    # helpers
    def _peek(self, k=0):
        j = self.i + k
        return self.p[j] if j < len(self.p) else None

    def _emit_atom(self, text):
        self.out.append(text)
        self.can_repeat, self.just_repeated = True, False

    def _emit_non_atom(self, text):
        self.out.append(text)
        self.can_repeat, self.just_repeated = False, False

    @property
    def _flags(self):
        return self.groups[-1].flags

    def translate(self) -> str:
        while self.i < len(self.p):
            c = self.p[self.i]
            if c == "\\":
                self._escape()
            elif c == "[":
                self._emit_atom("[" + self._char_class() + "]")
            elif c == "(":
                self._open_group()
            elif c == ")":
                self._close_group()
            elif c in "*+?":
                self._repeat(c)
            elif c == "{":
                self._brace()
            elif c == "|":
                # A mid-group (?flags) still applies after `|`: close its scoped groups
                # around the bar and open them again.
                self.i += 1
                scoped = self.groups[-1].scoped
                self._emit_non_atom(")" * len(scoped) + "|" + "".join(scoped))
            elif c == "^":
                self.i += 1
                self._emit_non_atom("^")
            elif c == "$":
                self.i += 1
                self._emit_non_atom("$" if "m" in self._flags else r"\Z")
            elif c == ".":
                self.i += 1
                self._emit_atom(".")
            else:
                self.i += 1
                self._emit_atom(re.escape(c))
        if len(self.groups) > 1:
            raise RE2Error(f"missing ): {self.p}")
        self.out.append(")" * len(self.groups[0].scoped))
        return "".join(self.out)

    # repetitions
    def _repeat(self, op):
        text = op
        self.i += 1
        if not self.can_repeat:
            if self.just_repeated:
                raise RE2Error(f"bad repetition operator: {self.out[-1][-1:]}{op}")
            raise RE2Error(f"no argument for repetition operator: {op}")
        if self._peek() == "?":
            text += "?"
            self.i += 1
        elif self._peek() in ("*", "+", "?") or (self._peek() == "{"
                                                  and self._repeat_braces() is not None):
            raise RE2Error(f"bad repetition operator: {op}{self._peek()}")
        self.out.append(text)
        self.can_repeat, self.just_repeated = False, True

    def _repeat_braces(self):
        """(text, lo, hi) of a {n}, {n,} or {n,m} at the cursor, or None (then `{` is a
        literal, as in RE2)."""
        m = re.compile(r"\{(\d+)(,(\d*))?\}").match(self.p, self.i)
        if m is None:
            return None
        lo = int(m.group(1))
        hi = lo if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
        return m.group(0), lo, hi

    def _brace(self):
        found = self._repeat_braces()
        if found is None:
            self.i += 1
            self._emit_atom(r"\{")
            return
        text, lo, hi = found
        if lo > _MAX_REPEAT or (hi is not None and (hi > _MAX_REPEAT or hi < lo)):
            raise RE2Error(f"invalid repetition size: {text}")
        if not self.can_repeat:
            if self.just_repeated:
                raise RE2Error(f"bad repetition operator: {text}")
            raise RE2Error(f"no argument for repetition operator: {text}")
        self.i += len(text)
        if self._peek() == "?":
            text += "?"
            self.i += 1
        elif self._peek() in ("*", "+"):
            raise RE2Error(f"bad repetition operator: {text}{self._peek()}")
        self.out.append(text)
        self.can_repeat, self.just_repeated = False, True

    # groups
    def _open_group(self):
        flags = self._flags
        if self._peek(1) != "?":
            self.i += 1
            self.groups.append(_Group(flags))
            self._emit_non_atom("(")
            return
        rest = self.p[self.i:]
        named = re.match(r"\(\?P?<([A-Za-z0-9_]+)>", rest)
        if named:
            self.i += len(named.group(0))
            self.groups.append(_Group(flags))
            self._emit_non_atom(f"(?P<{named.group(1)}>")
            return
        if rest.startswith(("(?P<", "(?<", "(?P=", "(?P>")) and not rest.startswith(
                ("(?<=", "(?<!")):
            end = rest.find(">")
            raise RE2Error(f"invalid named capture group: {rest[:end + 1] if end > 0 else rest}")
        flag_group = re.match(r"\(\?([imsU]*)(?:-([imsU]*))?([:)])", rest)
        if flag_group is None:
            raise RE2Error(f"invalid perl operator: {rest[:3]}")
        on, off, end = flag_group.group(1), flag_group.group(2), flag_group.group(3)
        if off is not None and not off:
            raise RE2Error(f"invalid perl operator: {flag_group.group(0)}")
        if "U" in on + (off or ""):
            raise RE2Error(f"the U (ungreedy) flag of {flag_group.group(0)} has no "
                           f"equivalent in Python's re")
        self.i += len(flag_group.group(0))
        new_flags = (set(flags) | set(on)) - set(off or "")
        spec = "".join(sorted(set(on) & {"i", "s"}))
        unset = "".join(sorted(set(off or "") & {"i", "s"}))
        # `m` only decides how `$` and `^` translate; re's own multiline flag is set
        # on the group for `^` (its `$` is translated here).
        if "m" in new_flags and "m" not in flags:
            spec += "m"
        elif "m" not in new_flags and "m" in flags:
            unset += "m"
        opener = "(?" + spec + (("-" + unset) if unset else "") + ":" if spec or unset \
            else "(?:"
        if end == ":":
            group = _Group(new_flags)
            self.groups.append(group)
            self._emit_non_atom(opener)
        else:
            # (?flags) applies to the rest of the current group: open a scoped group
            # that closes with it.
            self.groups[-1].flags = new_flags
            self.groups[-1].scoped.append(opener)
            self._emit_non_atom(opener)

    def _close_group(self):
        if len(self.groups) == 1:
            raise RE2Error(f"missing ): {self.p}")
        group = self.groups.pop()
        self.i += 1
        self._emit_atom(")" * len(group.scoped) + ")")

    # escapes outside classes
    def _escape(self):
        ranges, literal, special = self._escape_item(in_class=False)
        if special is not None:
            if special in ("A", "z"):
                self._emit_non_atom(r"\A" if special == "A" else r"\Z")
            elif special == "b":
                self._emit_non_atom(f"(?:(?<={_WORD_SET})(?!{_WORD_SET})|"
                                    f"(?<!{_WORD_SET})(?={_WORD_SET}))")
            elif special == "B":
                self._emit_non_atom(f"(?:(?<={_WORD_SET})(?={_WORD_SET})|"
                                    f"(?<!{_WORD_SET})(?!{_WORD_SET}))")
            elif special == "Q":
                self._quoted()
            return
        if ranges is not None:
            self._emit_atom("[" + _set_text(ranges) + "]")
        else:
            self._emit_atom(re.escape(chr(literal)))

    def _quoted(self):
        end = self.p.find("\\E", self.i)
        text = self.p[self.i:] if end < 0 else self.p[self.i:end]
        self.i = len(self.p) if end < 0 else end + 2
        for ch in text:
            self._emit_atom(re.escape(ch))

    def _escape_item(self, in_class):
        """Reads one escape at the cursor: (ranges, None, None) for a class,
        (None, code point, None) for a literal, (None, None, letter) for \\A \\z \\b \\B \\Q."""
        start = self.i
        self.i += 1
        c = self._peek()
        if c is None:
            raise RE2Error("trailing \\")
        self.i += 1
        nxt = self._peek()
        if c in "1234567" and (nxt is None or nxt not in "01234567"):
            # A lone digit is a backreference, which RE2 does not have.
            raise RE2Error(f"invalid escape sequence: \\{c}")
        if c in "01234567":
            digits = c
            while len(digits) < 3 and self._peek() is not None and self._peek() in "01234567":
                digits += self._peek()
                self.i += 1
            return None, int(digits, 8), None
        if c in "89":
            raise RE2Error(f"invalid escape sequence: \\{c}")
        if c == "x":
            if self._peek() == "{":
                end = self.p.find("}", self.i)
                digits = self.p[self.i + 1:end] if end > 0 else ""
                if end < 0 or not re.fullmatch(r"[0-9A-Fa-f]+", digits) or \
                        int(digits, 16) > _MAX_CHAR:
                    raise RE2Error(f"invalid escape sequence: {self.p[start:end + 1]}")
                self.i = end + 1
                return None, int(digits, 16), None
            digits = self.p[self.i:self.i + 2]
            if not re.fullmatch(r"[0-9A-Fa-f]{2}", digits):
                raise RE2Error(f"invalid escape sequence: {self.p[start:self.i + 2]}")
            self.i += 2
            return None, int(digits, 16), None
        if c in _SIMPLE_ESCAPES:
            return None, ord(_SIMPLE_ESCAPES[c]), None
        if c.lower() in _PERL:
            ranges = _PERL[c.lower()]
            return (_complement(ranges) if c.isupper() else list(ranges)), None, None
        if c in "pP":
            if self._peek() == "{":
                end = self.p.find("}", self.i)
                if end < 0:
                    raise RE2Error(f"invalid character class range: {self.p[start:]}")
                name = self.p[self.i + 1:end]
                self.i = end + 1
            else:
                name = self._peek() or ""
                self.i += 1
            return _unicode_class(name, c == "P", self.p[start:self.i]), None, None
        if not in_class and c in "AzbBQ":
            return None, None, c
        if c == "C":
            raise RE2Error("\\C (any byte) has no equivalent in Python's re")
        if ord(c) < 0x80 and not c.isalnum() and c != "_":
            return None, ord(c), None  # an escaped punctuation character is itself
        raise RE2Error(f"invalid escape sequence: \\{c}")

    # character classes
    def _char_class(self) -> str:
        start = self.i
        self.i += 1
        negated = self._peek() == "^"
        if negated:
            self.i += 1
        ranges = []
        first = True
        while True:
            c = self._peek()
            if c is None:
                raise RE2Error(f"missing ]: {self.p[start:]}")
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            posix = re.compile(r"\[:(\^?)([a-z]+):\]").match(self.p, self.i)
            if posix:
                if posix.group(2) not in _POSIX:
                    raise RE2Error(f"invalid character class range: {posix.group(0)}")
                cls = _POSIX[posix.group(2)]
                ranges += _complement(cls) if posix.group(1) else cls
                self.i += len(posix.group(0))
                continue
            lo_ranges, lo = self._class_atom()
            if lo_ranges is not None:
                ranges += lo_ranges
                continue
            if self._peek() == "-" and self._peek(1) not in ("]", None):
                self.i += 1
                hi_ranges, hi = self._class_atom()
                if hi_ranges is not None or hi < lo:
                    raise RE2Error(f"invalid character class range: "
                                   f"{self.p[self.i - 1 - len(chr(lo)) - 1:self.i]}")
                ranges.append((lo, hi))
            else:
                ranges.append((lo, lo))
        if not ranges:
            return "^\\x00-\\U0010ffff" if not negated else "\\x00-\\U0010ffff"
        ranges = _merge(ranges)
        if negated:
            ranges = _complement(ranges)
            if not ranges:  # [^\x00-\x{10FFFF}] matches nothing
                return "^\\x00-\\U0010ffff"
        return _set_text(ranges)

    def _class_atom(self):
        c = self._peek()
        if c == "\\":
            ranges, literal, _ = self._escape_item(in_class=True)
            return ranges, literal
        self.i += 1
        return None, ord(c)


@functools.lru_cache(maxsize=256)
def compile_re2(pattern: bytes):
    """The compiled `re` equivalent of an RE2 pattern (bytes, UTF-8). Raises RE2Error."""
    try:
        text = pattern.decode("utf-8")
    except UnicodeDecodeError:
        raise RE2Error("invalid UTF-8") from None
    translated = _Translator(text).translate()
    try:
        return re.compile(translated)
    except re.error as e:  # a construct the translation let through that re rejects
        raise RE2Error(str(e)) from None


def group_count(compiled) -> int:
    return compiled.groups


# -- rewrites: RE2's \0-\9 and \\ ------------------------------------------------------------
def max_submatch(rewrite: str) -> int:
    """The highest \\N a rewrite refers to (RE2::MaxSubmatch)."""
    best, i = 0, 0
    while i < len(rewrite):
        if rewrite[i] == "\\" and i + 1 < len(rewrite):
            if rewrite[i + 1].isdigit():
                best = max(best, int(rewrite[i + 1]))
            i += 2
            continue
        i += 1
    return best


def expand_rewrite(rewrite: str, match):
    """(text, ok): RE2::Rewrite. ok is False at an invalid escape (text is what was
    written before it, which RE2's GlobalReplace keeps)."""
    out, i = [], 0
    while i < len(rewrite):
        c = rewrite[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = rewrite[i + 1] if i + 1 < len(rewrite) else None
        if nxt is not None and nxt.isdigit():
            out.append(match.group(int(nxt)) or "")
        elif nxt == "\\":
            out.append("\\")
        else:
            return "".join(out), False
        i += 2
    return "".join(out), True


def replace(compiled, text: str, rewrite: str, replace_global: bool) -> str:
    """RE2::Replace / RE2::GlobalReplace on one string."""
    if max_submatch(rewrite) > compiled.groups:
        return text  # RE2 refuses a rewrite naming a group the pattern lacks
    if not replace_global:
        match = compiled.search(text)
        if match is None:
            return text
        expanded, ok = expand_rewrite(rewrite, match)
        return text[:match.start()] + expanded + text[match.end():] if ok else text
    # RE2's loop: an empty match right where the previous match ended is skipped (re's
    # sub would replace it), stepping one character ahead.
    out, pos, last_end, count = [], 0, -1, 0
    while pos <= len(text):
        match = compiled.search(text, pos)
        if match is None:
            break
        out.append(text[pos:match.start()])
        if match.start() == match.end() == last_end:
            if pos < len(text):
                out.append(text[pos])
            pos += 1
            continue
        out.append(expand_rewrite(rewrite, match)[0])
        pos = last_end = match.end()
        count += 1
    if count == 0:
        return text
    out.append(text[pos:])
    return "".join(out)


def full_match(compiled, text: str) -> bool:
    return compiled.fullmatch(text) is not None

