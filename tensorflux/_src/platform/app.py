"""`tf.app.run`: absl's app runner with TF1's tolerant flag parsing.

As in TF 1.15, flags are parsed with `known_only=True`: flags nobody defined stay in the
argv handed to `main` instead of failing the program. `--help`/`--helpshort`/`--helpfull`
print the usage (the main module's docstring and flags) and exit as absl does (status 1;
a bad flag value or a missing required flag too, with absl's one-line message),
`--flagfile` works, and main's return value becomes the exit status.
"""

from __future__ import annotations

import sys

from absl import app as _absl_app

from tensorflux._src.platform import flags

__all__ = ["run", "flags"]


def _parse_flags_tolerate_undef(argv):
    """Parses the flags absl knows; returns argv with the rest left in it.

    A bad value or a missing required flag ends the program with absl's one-line
    message and status 1 (TF 1.15 let the exception's traceback out).
    """
    try:
        return flags.FLAGS(sys.argv if argv is None else argv, known_only=True)
    except flags.Error as error:
        sys.stderr.write("FATAL Flags parsing error: %s\n" % error)
        sys.stderr.write("Pass --helpshort or --helpfull to see help on flags.\n")
        sys.exit(1)


def run(main=None, argv=None):
    """Runs the program with an optional 'main' function and 'argv' list.

    `main` defaults to the `main` function of the `__main__` module; it is called with
    the remaining arguments (program name first) and its return value is passed to
    `sys.exit`.
    """
    main = main or sys.modules["__main__"].main
    _absl_app.run(main=main, argv=argv, flags_parser=_parse_flags_tolerate_undef)
