"""`tf.flags` / `tf.app.flags`: absl-py's flags, as TF1 itself re-exported them.

Every name is absl.flags's own object except four DEFINE functions, which also take
TF's old keyword names (`flag_name`, `default_value`, `docstring`), and `FLAGS`, a
wrapper that parses `sys.argv` on the first read of a flag value when nothing has parsed
the flags yet (absl raises UnparsedFlagAccessError there; TF1 programs rely on it).
"""

from __future__ import annotations

import logging
import sys

from absl import flags as _absl_flags
from absl.flags import *  # noqa: F401,F403
from absl.flags import (  # noqa: F401  (names the wrappers below use)
    DEFINE_boolean as _absl_DEFINE_boolean, DEFINE_float as _absl_DEFINE_float,
    DEFINE_integer as _absl_DEFINE_integer, DEFINE_string as _absl_DEFINE_string,
    disclaim_key_flags,
)

from tensorflux._src.platform import tf_decorator  # noqa: F401  (tf.flags.tf_decorator)

__all__ = sorted({name for name in dir(_absl_flags) if not name.startswith("_")}
                 - {"sys"} | {"tf_decorator"})

# The DEFINE wrappers live here, so absl must attribute the flags they define to their
# caller's module (what `--help` lists as the main module's flags), not to this one.
disclaim_key_flags()

_RENAMED_ARGUMENTS = {"flag_name": "name", "default_value": "default", "docstring": "help"}


def _wrap_define_function(original_function):
    """absl's DEFINE_* with TF's old keyword names accepted (and warned about)."""

    def wrapper(*args, **kwargs):
        renamed = False
        for old, new in _RENAMED_ARGUMENTS.items():
            if old in kwargs:
                renamed = True
                kwargs[new] = kwargs.pop(old)
        if renamed:
            logging.warning("Use of the keyword argument names (flag_name, default_value, "
                            "docstring) is deprecated, please use (name, default, help) "
                            "instead.")
        return original_function(*args, **kwargs)

    return tf_decorator.make_decorator(original_function, wrapper)


DEFINE_string = _wrap_define_function(_absl_DEFINE_string)
DEFINE_boolean = _wrap_define_function(_absl_DEFINE_boolean)
DEFINE_bool = DEFINE_boolean
DEFINE_float = _wrap_define_function(_absl_DEFINE_float)
DEFINE_integer = _wrap_define_function(_absl_DEFINE_integer)


class _FlagValuesWrapper:
    """absl's `FLAGS`, parsing `sys.argv` when a flag is read before any parse (TF1)."""

    def __init__(self, flags_object):
        self.__dict__["__wrapped"] = flags_object

    def __getattribute__(self, name):
        if name == "__dict__":
            return super().__getattribute__(name)
        return self.__dict__["__wrapped"].__getattribute__(name)

    def __getattr__(self, name):
        wrapped = self.__dict__["__wrapped"]
        if not wrapped.is_parsed():
            wrapped(sys.argv)
        return wrapped.__getattr__(name)

    def __setattr__(self, name, value):
        return self.__dict__["__wrapped"].__setattr__(name, value)

    def __delattr__(self, name):
        return self.__dict__["__wrapped"].__delattr__(name)

    def __dir__(self):
        return self.__dict__["__wrapped"].__dir__()

    def __getitem__(self, name):
        return self.__dict__["__wrapped"].__getitem__(name)

    def __setitem__(self, name, flag):
        return self.__dict__["__wrapped"].__setitem__(name, flag)

    def __contains__(self, name):
        return self.__dict__["__wrapped"].__contains__(name)

    def __len__(self):
        return self.__dict__["__wrapped"].__len__()

    def __iter__(self):
        return self.__dict__["__wrapped"].__iter__()

    def __str__(self):
        return self.__dict__["__wrapped"].__str__()

    def __call__(self, *args, **kwargs):
        return self.__dict__["__wrapped"].__call__(*args, **kwargs)


FLAGS = _FlagValuesWrapper(_absl_flags.FLAGS)
