"""`tf.logging`: TF1's logging functions on Python's logging, logger "tensorflux".

Levels are Python's (DEBUG 10, INFO 20, WARN 30, ERROR 40, FATAL 50), as TF's are. The
logger gets TF's handler (stderr, `logging.BASIC_FORMAT`: `INFO:tensorflux:message`;
stdout and INFO in an interactive session) the first time it is used. That handler stays
quiet while the root logger has handlers of its own (`logging.basicConfig`, absl's after
`tf.app.run`), since records propagate there: one line per record, never two. Without a
level set the logger follows the root's, WARN by default, as TF1's did.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import traceback
from logging import DEBUG, ERROR, FATAL, INFO, WARN

__all__ = ["DEBUG", "ERROR", "FATAL", "INFO", "WARN", "TaskLevelStatusMessage", "debug",
           "error", "fatal", "flush", "get_verbosity", "info", "log", "log_every_n",
           "log_first_n", "log_if", "set_verbosity", "vlog", "warn", "warning",
           "get_logger"]

_logger = None
_logger_lock = threading.Lock()
_THIS_FILE = os.path.normcase(__file__)


def _skipped_files():
    files = {_THIS_FILE, os.path.normcase(logging._srcfile)}
    absl_logging = sys.modules.get("absl.logging")  # its logger class adds frames
    if absl_logging is not None:
        files.add(os.path.normcase(absl_logging.__file__))
    return files


def _caller_frame():
    """The innermost frame outside this file and the logging modules (the user's
    call site)."""
    skipped = _skipped_files()
    f = sys._getframe(1)
    while f is not None and os.path.normcase(f.f_code.co_filename) in skipped:
        f = f.f_back
    return f


def _find_caller(stack_info=False, stacklevel=1):
    # Python's Logger.findCaller signature: %(filename)s / %(lineno)d name the line
    # that called tf.logging.
    f = _caller_frame()
    sinfo = "".join(traceback.format_stack(f)) if stack_info and f is not None else None
    if f is None:
        return "(unknown file)", 0, "(unknown function)", sinfo
    return f.f_code.co_filename, f.f_lineno, f.f_code.co_name, sinfo


class _DefaultHandler(logging.StreamHandler):
    """TF's default handler; silent while the root logger has handlers (see module doc).
    Its stream is sys.stderr (sys.stdout when interactive) looked up per record, so a
    redirected stream is honoured."""

    def __init__(self, use_stdout):
        self._use_stdout = use_stdout
        super().__init__()

    @property
    def stream(self):
        return sys.stdout if self._use_stdout else sys.stderr

    @stream.setter
    def stream(self, value):
        pass

    def emit(self, record):
        if logging.getLogger().handlers:
            return
        super().emit(record)


def get_logger():
    """`tf.get_logger()`: the Python logger tf.logging writes to ("tensorflux")."""
    global _logger
    if _logger is not None:
        return _logger
    with _logger_lock:
        if _logger is not None:
            return _logger
        logger = logging.getLogger("tensorflux")
        logger.findCaller = _find_caller
        interactive = bool(getattr(sys, "ps1", None)) or bool(sys.flags.interactive)
        if interactive:
            logger.setLevel(INFO)
        handler = _DefaultHandler(use_stdout=interactive)
        handler.setFormatter(logging.Formatter(logging.BASIC_FORMAT, None))
        logger.addHandler(handler)
        _logger = logger
        return _logger


def log(level, msg, *args, **kwargs):
    get_logger().log(level, msg, *args, **kwargs)


def debug(msg, *args, **kwargs):
    get_logger().debug(msg, *args, **kwargs)


def error(msg, *args, **kwargs):
    get_logger().error(msg, *args, **kwargs)


def fatal(msg, *args, **kwargs):
    get_logger().fatal(msg, *args, **kwargs)


def info(msg, *args, **kwargs):
    get_logger().info(msg, *args, **kwargs)


def warn(msg, *args, **kwargs):
    get_logger().warning(msg, *args, **kwargs)


def warning(msg, *args, **kwargs):
    get_logger().warning(msg, *args, **kwargs)


def TaskLevelStatusMessage(msg):  # noqa: N802  (TF's name)
    error(msg)


def flush():
    """Flushes the logger's handlers (TF1's raised NotImplementedError; flushing is what
    a caller means)."""
    logger = get_logger()
    while logger is not None:
        for handler in logger.handlers:
            handler.flush()
        logger = logger.parent if logger.propagate else None


def vlog(level, msg, *args, **kwargs):
    get_logger().log(level, msg, *args, **kwargs)


_log_counter_per_token = {}
_counter_lock = threading.Lock()


def _next_log_count(token):
    """How often `token` was counted before (0 the first time); thread-safe."""
    with _counter_lock:
        count = _log_counter_per_token.get(token, -1) + 1
        _log_counter_per_token[token] = count
        return count


def _file_and_line():
    f = _caller_frame()
    return ("<unknown>", 0) if f is None else (f.f_code.co_filename, f.f_lineno)


def log_every_n(level, msg, n, *args):
    """Logs 'msg % args' at `level` on the 1st, (n+1)th, (2n+1)th ... call from one line."""
    count = _next_log_count(_file_and_line())
    log_if(level, msg, not count % n, *args)


def log_first_n(level, msg, n, *args):
    """Logs 'msg % args' at `level` on the first `n` calls from one line."""
    count = _next_log_count(_file_and_line())
    log_if(level, msg, count < n, *args)


def log_if(level, msg, condition, *args):
    """Logs 'msg % args' at `level` only if `condition` holds."""
    if condition:
        vlog(level, msg, *args)


def get_verbosity():
    """The logger's effective level: how much output tf.logging produces."""
    return get_logger().getEffectiveLevel()


def set_verbosity(v):
    """Sets the threshold for what messages will be logged."""
    get_logger().setLevel(v)


_level_names = {FATAL: "FATAL", ERROR: "ERROR", WARN: "WARN", INFO: "INFO", DEBUG: "DEBUG"}


def google2_log_prefix(level, timestamp=None, file_and_line=None):
    """TF's glog-style line prefix: `I0102 03:04:05.000006  1234 file.py:7] `."""
    now = timestamp or time.time()
    t = time.localtime(now)
    filename, line = file_and_line or _file_and_line()
    severity = _level_names.get(level, "I")[0]
    return "%c%02d%02d %02d:%02d:%02d.%06d %5d %s:%d] " % (
        severity, t[1], t[2], t[3], t[4], t[5], int(1e6 * (now % 1.0)),
        threading.get_ident() & (2 * sys.maxsize + 1), os.path.basename(filename), line)
