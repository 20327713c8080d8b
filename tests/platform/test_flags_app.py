"""tf.flags / tf.app.flags (absl's objects, TF's wrappers), tf_decorator, tf.app.run."""

import inspect
import textwrap

import absl.flags
import pytest

import tensorflux as tf
from tensorflux._src.platform.flags import _FlagValuesWrapper

from tests.platform import helpers


def test_namespaces_are_absl_objects():
    assert tf.app.flags is tf.flags
    for name in ("DEFINE_enum", "DEFINE_list", "DEFINE_multi_string", "FlagValues",
                 "UnrecognizedFlagError", "IllegalFlagValueError", "mark_flag_as_required",
                 "register_validator", "text_wrap", "ArgumentParser", "EnumClassFlag"):
        assert getattr(tf.flags, name) is getattr(absl.flags, name), name
    assert tf.flags.DEFINE_bool is tf.flags.DEFINE_boolean
    # The four wrapped DEFINEs keep absl's name and signature.
    assert tf.flags.DEFINE_string is not absl.flags.DEFINE_string
    assert tf.flags.DEFINE_string.__name__ == "DEFINE_string"
    assert inspect.signature(tf.flags.DEFINE_integer) == inspect.signature(
        absl.flags.DEFINE_integer)
    assert tf.flags.FLAGS.__dict__["__wrapped"] is absl.flags.FLAGS


def test_define_parse_values_and_errors():
    fv = tf.flags.FlagValues()
    tf.flags.DEFINE_string("name", "x", "a string", flag_values=fv)
    tf.flags.DEFINE_integer("steps", 10, "an int", lower_bound=0, flag_values=fv)
    tf.flags.DEFINE_float("lr", 0.1, "a float", flag_values=fv)
    tf.flags.DEFINE_boolean("fast", False, "a bool", flag_values=fv)
    tf.flags.DEFINE_enum("mode", "train", ["train", "eval"], "an enum", flag_values=fv)
    tf.flags.DEFINE_list("layers", ["8"], "a list", flag_values=fv)
    # TF1's old keyword names still work on the wrapped DEFINEs.
    tf.flags.DEFINE_string(flag_name="old", default_value="d", docstring="old style",
                           flag_values=fv)
    rest = fv(["prog", "--name=y", "--steps", "3", "--lr=0.5", "--fast", "--mode=eval",
               "--layers=4,2", "positional"])
    assert rest == ["prog", "positional"]
    assert (fv.name, fv.steps, fv.lr, fv.fast, fv.mode, fv.layers, fv.old) == (
        "y", 3, 0.5, True, "eval", ["4", "2"], "d")
    assert fv["steps"].default == 10 and not fv["old"].present

    for argv, error in ((["prog", "--steps=abc"], tf.flags.IllegalFlagValueError),
                        (["prog", "--steps=-1"], tf.flags.IllegalFlagValueError),
                        (["prog", "--mode=test"], tf.flags.IllegalFlagValueError),
                        (["prog", "--nope=1"], tf.flags.UnrecognizedFlagError)):
        with pytest.raises(error):
            fv(argv)
    with pytest.raises(tf.flags.DuplicateFlagError):
        tf.flags.DEFINE_string("name", "z", "again", flag_values=fv)
    # known_only keeps unknown flags for the program (what tf.app.run does).
    assert fv(["prog", "--nope=1", "--steps=4"], known_only=True) == ["prog", "--nope=1"]


def test_flags_wrapper_parses_sys_argv_on_first_read(monkeypatch):
    fv = tf.flags.FlagValues()
    tf.flags.DEFINE_integer("answer", 1, "", flag_values=fv)
    wrapped = _FlagValuesWrapper(fv)
    with pytest.raises(tf.flags.UnparsedFlagAccessError):
        fv.answer  # plain absl refuses
    monkeypatch.setattr("sys.argv", ["prog", "--answer=42"])
    assert wrapped.answer == 42 and fv.is_parsed()
    wrapped.answer = 7  # writes go to absl's object
    assert fv.answer == 7 and "answer" in wrapped and len(wrapped) == len(fv)

    fv2 = tf.flags.FlagValues()
    tf.flags.DEFINE_integer("answer", 1, "", flag_values=fv2)
    monkeypatch.setattr("sys.argv", ["prog", "--unknown_flag=1"])
    with pytest.raises(tf.flags.UnrecognizedFlagError):  # TF1 parses all of sys.argv
        _FlagValuesWrapper(fv2).answer


def test_tf_decorator():
    td = tf.flags.tf_decorator
    assert td.Any is __import__("typing").Any and td.Dict is __import__("typing").Dict

    def target(a, b=2, *args, c, d=4, **kw):
        """Target doc."""
        return a + b + c + d

    def outer(*args, **kwargs):
        return 10 * target(*args, **kwargs)

    dec = td.make_decorator(target, outer, decorator_name="times_ten")
    assert dec is outer and dec.__name__ == "target" and dec.__doc__ == "Target doc."
    assert dec.__wrapped__ is target
    assert str(inspect.signature(dec)) == "(a, b=2, *args, c, d=4, **kw)"
    assert dec(1, c=3) == 100
    decorators, innermost = td.unwrap(dec)
    assert innermost is target and [d.decorator_name for d in decorators] == ["times_ten"]
    assert decorators[0].decorated_target is target and decorators[0](1, c=3) == 10

    def replacement(a, b=2, *args, c, d=4, **kw):
        return -1

    assert td.rewrap(dec, target, replacement) is dec
    assert td.unwrap(dec)[1] is replacement and dec.__wrapped__ is replacement
    assert td.rewrap(target, target, replacement) is replacement  # not decorated

    spec = inspect.getfullargspec(target)
    assert td.fullargspec_to_signature(spec) == inspect.signature(target)
    assert isinstance(decorators[0], td.TFDecorator)


SCRIPT = '''
"""Usage doc of the test program."""
import sys
import tensorflux as tf

tf.flags.DEFINE_string("greeting", "hello", "What to say.")
tf.flags.DEFINE_integer("code", 3, "Exit status.")
FLAGS = tf.flags.FLAGS

def main(argv):
    print("argv=%s" % argv[1:])
    print("%s %s" % (FLAGS.greeting, tf.flags.FLAGS["code"].value))
    return FLAGS.code

if __name__ == "__main__":
    tf.app.run()
'''


TEST_MAIN = '''
import tensorflux as tf

class T(tf.test.TestCase):
    def test_add(self):
        with self.cached_session():
            self.assertAllEqual(self.evaluate(tf.constant([1, 2]) + 1), [2, 3])

    def test_fails(self):
        self.assertAllClose([1.0], [2.0])

if __name__ == "__main__":
    tf.test.main()
'''


def test_app_run_and_test_main_in_subprocesses(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(SCRIPT))
    tests = tmp_path / "some_test.py"
    tests.write_text(TEST_MAIN)
    procs = [helpers.start([str(script), "--greeting=hi", "--undefined=1", "pos"]),
             helpers.start([str(script), "--help"]),
             helpers.start([str(tests)])]
    (rc, out, _), (hrc, hout, _), (trc, _, terr) = map(helpers.finish, procs)
    # tf.test.main runs the module's TestCases (not TestCase's own test_session).
    assert trc == 1 and "Ran 2 tests" in terr and "FAILED (failures=1)" in terr
    assert "not close lhs = [1.]" in terr
    # Unknown flags are handed to main (TF 1.15 parses with known_only); main's return
    # value is the exit status.
    assert rc == 3 and out.splitlines() == ["argv=['--undefined=1', 'pos']", "hi 3"]
    # --help: the main module's docstring and flags, then absl's exit status 1.
    assert hrc == 1 and "Usage doc of the test program." in hout
    assert "--greeting: What to say." in hout and "Try --helpfull" in hout
    assert "--code: Exit status." in hout and "--log_dir" not in hout


def test_app_run_flag_errors_exit_with_absl_message(monkeypatch, capsys):
    from tensorflux._src.platform import app
    fv = tf.flags.FlagValues()
    tf.flags.DEFINE_integer("code", 3, "", flag_values=fv)
    tf.flags.DEFINE_string("needed", None, "", flag_values=fv)
    tf.flags.mark_flag_as_required("needed", flag_values=fv)
    monkeypatch.setattr(app.flags, "FLAGS", fv)
    for argv, message in ((["prog", "--code=x", "--needed=1"],
                           "FATAL Flags parsing error: flag --code=x: invalid literal"),
                          (["prog"], "Flag --needed must have a value other than None")):
        with pytest.raises(SystemExit) as e:
            app._parse_flags_tolerate_undef(argv)
        assert e.value.code == 1 and message in capsys.readouterr().err
    assert app._parse_flags_tolerate_undef(["prog", "--needed=a", "--other=1"]) == [
        "prog", "--other=1"]
