"""`tf.resource_loader`: finding data files next to a script or inside the package.

TF resolves these against Bazel runfiles; here "the package root" is the `tensorflux`
package directory and the data files of a script are the files beside it.
"""

from __future__ import annotations

import inspect
import os
import sys

__all__ = ["get_data_files_path", "get_path_to_datafile", "get_root_dir_with_all_resources",
           "load_resource", "readahead_file_path"]

_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_resource(path):
    """The bytes of the file at `path`, relative to the tensorflux package directory.

    Raises IOError (OSError) if it cannot be read.
    """
    with open(os.path.abspath(os.path.join(_PACKAGE_ROOT, path)), "rb") as f:
        return f.read()


def get_data_files_path():
    """The directory of the script (module) that calls this."""
    return os.path.dirname(inspect.getfile(sys._getframe(1)))


def get_root_dir_with_all_resources():
    """The root directory holding the caller's data files: the directory just below a
    Bazel `*.runfiles` directory above the caller, else the caller's own directory."""
    script_dir = os.path.dirname(inspect.getfile(sys._getframe(1)))
    directories = [script_dir]
    while True:
        candidate = directories[-1]
        if ".runfiles" in os.path.basename(candidate):
            return directories[-2] if len(directories) > 1 else script_dir
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return script_dir
        directories.append(parent)


def get_path_to_datafile(path):
    """`path` relative to the directory of the caller's file."""
    return os.path.join(os.path.dirname(inspect.getfile(sys._getframe(1))), path)


def readahead_file_path(path, readahead="128M"):  # pylint: disable=unused-argument
    """Readahead is not implemented (as in TF); returns `path`."""
    return path
