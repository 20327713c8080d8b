"""`tf.logging`: TF1's logging functions (logger "tensorflux").

(This module shadows nothing: code inside tensorflux imports the standard library's
`logging` absolutely.)
"""

from tensorflux._src.platform.tf_logging import (  # noqa: F401
    DEBUG, ERROR, FATAL, INFO, WARN, TaskLevelStatusMessage, debug, error, fatal, flush,
    get_verbosity, info, log, log_every_n, log_first_n, log_if, set_verbosity, vlog, warn,
    warning,
)

__all__ = ["DEBUG", "ERROR", "FATAL", "INFO", "WARN", "TaskLevelStatusMessage", "debug",
           "error", "fatal", "flush", "get_verbosity", "info", "log", "log_every_n",
           "log_first_n", "log_if", "set_verbosity", "vlog", "warn", "warning"]
