"""What `tf.test` takes from TF's googletest: main, temp dirs, StubOutForTesting."""

from __future__ import annotations

import atexit
import inspect
import os
import shutil
import sys
import tempfile

__all__ = ["main", "GetTempDir", "test_src_dir_path", "StubOutForTesting"]

_temp_dir = None


def GetTempDir():  # noqa: N802
    """The process's temporary directory for tests (under $TEST_TMPDIR when set),
    deleted at exit."""
    global _temp_dir
    if not _temp_dir:
        if os.environ.get("TEST_TMPDIR"):
            temp_dir = tempfile.mkdtemp(prefix=os.environ["TEST_TMPDIR"])
        else:
            first_frame = inspect.stack()[-1][0]
            prefix = os.path.join(tempfile.gettempdir(),
                                  os.path.basename(inspect.getfile(first_frame)))
            temp_dir = tempfile.mkdtemp(prefix=prefix.removesuffix(".py"))
        atexit.register(shutil.rmtree, temp_dir, ignore_errors=True)
        _temp_dir = temp_dir
    return _temp_dir


def test_src_dir_path(relative_path):
    """`relative_path` under the tensorflux package directory ($TEST_SRCDIR/tensorflux
    when that is set, as TF's Bazel layout has it)."""
    if os.environ.get("TEST_SRCDIR"):
        return os.path.join(os.environ["TEST_SRCDIR"], "tensorflux", relative_path)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(root, relative_path)


def main(argv=None):
    """Runs the tests of `__main__` through absltest (flags parsed, --benchmarks=REGEX
    runs the matching `tf.test.Benchmark` methods instead)."""
    from absl.testing import absltest
    from tensorflux._src.platform import app, benchmark
    args = sys.argv if argv is None else argv
    benchmark.benchmarks_main(
        true_main=lambda: app.run(main=lambda a: absltest.main(argv=a), argv=args),
        argv=args)


class StubOutForTesting:
    """Replaces attributes for a test and puts them back on `CleanUp()` (or on exit
    of a `with` block): `stubs.Set(os.path, 'exists', lambda p: True)`.

    `SmartSet` stubs at the level that defines the attribute (module, class or
    instance) and keeps staticmethods static.
    """

    def __init__(self):
        self.cache = []
        self.stubs = []

    def __del__(self):
        self.SmartUnsetAll()
        self.UnsetAll()

    def __enter__(self):
        return self

    def __exit__(self, unused_exc_type, unused_exc_value, unused_tb):
        self.CleanUp()

    def CleanUp(self):  # noqa: N802
        """Undoes every Set and SmartSet."""
        self.SmartUnsetAll()
        self.UnsetAll()

    def SmartSet(self, obj, attr_name, new_attr):  # noqa: N802
        """Replaces `obj.attr_name` where it is defined (module, class or instance)."""
        if inspect.ismodule(obj) or (not inspect.isclass(obj) and attr_name in obj.__dict__):
            orig_obj, orig_attr = obj, getattr(obj, attr_name)
        else:
            mro = list(inspect.getmro(obj if inspect.isclass(obj) else obj.__class__))
            orig_obj = None
            for cls in mro:
                if attr_name in cls.__dict__:
                    orig_obj = cls
                    break
            if orig_obj is None:
                raise AttributeError("Attribute not found.")
            orig_attr = orig_obj.__dict__[attr_name]
        old = getattr(orig_obj, "__dict__", {}).get(attr_name)
        if isinstance(old, staticmethod):
            orig_attr = old
        self.stubs.append((orig_obj, attr_name, orig_attr))
        setattr(orig_obj, attr_name, new_attr)

    def SmartUnsetAll(self):  # noqa: N802
        """Undoes every SmartSet, most recent first."""
        for args in reversed(self.stubs):
            setattr(*args)
        self.stubs = []

    def Set(self, parent, child_name, new_child):  # noqa: N802
        """Replaces `parent.child_name` by `new_child`."""
        old_child = getattr(parent, child_name)
        old = getattr(parent, "__dict__", {}).get(child_name)
        if isinstance(old, staticmethod):
            old_child = old
        self.cache.append((parent, old_child, child_name))
        setattr(parent, child_name, new_child)

    def UnsetAll(self):  # noqa: N802
        """Undoes every Set, most recent first."""
        for parent, old_child, child_name in reversed(self.cache):
            setattr(parent, child_name, old_child)
        self.cache = []
