"""tf.logging: TF's levels and line format, verbosity, log_every_n / log_first_n."""

import logging
import threading

import pytest

import tensorflux as tf

from tests.platform import helpers


@pytest.fixture
def tf_logger(caplog):
    logger = tf.get_logger()
    level = logger.level
    caplog.set_level(logging.DEBUG)  # the root's handler sees what the logger passes on
    logger.setLevel(logging.NOTSET)
    yield logger
    logger.setLevel(level)


def _messages(caplog):
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "tensorflux"]


def test_levels_and_names():
    assert (tf.logging.DEBUG, tf.logging.INFO, tf.logging.WARN, tf.logging.ERROR,
            tf.logging.FATAL) == (10, 20, 30, 40, 50)
    assert tf.get_logger() is logging.getLogger("tensorflux")
    assert tf.get_logger().handlers[0].formatter._fmt == "%(levelname)s:%(name)s:%(message)s"


def test_functions_and_verbosity(tf_logger, caplog):
    tf.logging.set_verbosity(tf.logging.ERROR)
    assert tf.logging.get_verbosity() == 40
    tf.logging.warn("dropped")
    tf.logging.error("kept %s", "e")
    tf.logging.set_verbosity(tf.logging.DEBUG)
    tf.logging.debug("d%d", 1)
    tf.logging.info("i")
    tf.logging.warning("w")
    tf.logging.log(tf.logging.INFO, "l")
    tf.logging.vlog(15, "v")
    tf.logging.log_if(tf.logging.INFO, "if-%s", True, "yes")
    tf.logging.log_if(tf.logging.INFO, "if-%s", False, "no")
    tf.logging.TaskLevelStatusMessage("status")
    tf.logging.fatal("f")
    tf.logging.flush()
    assert _messages(caplog) == [(40, "kept e"), (10, "d1"), (20, "i"), (30, "w"), (20, "l"),
                                 (15, "v"), (20, "if-yes"), (40, "status"), (50, "f")]
    # The record names the caller's file, not tf_logging's.
    assert {r.filename for r in caplog.records} == {"test_logging.py"}


def test_log_every_n_and_first_n(tf_logger, caplog):
    tf.logging.set_verbosity(tf.logging.INFO)
    for i in range(7):
        tf.logging.log_every_n(tf.logging.INFO, "every %d", 3, i)
    for i in range(7):
        tf.logging.log_first_n(tf.logging.INFO, "first %d", 2, i)
    assert [m for _, m in _messages(caplog)] == ["every 0", "every 3", "every 6", "first 0",
                                                 "first 1"]
    caplog.clear()

    # One call site shared by threads: the count is exact (log_every_n is thread-safe).
    def work():
        for _ in range(250):
            tf.logging.log_every_n(tf.logging.INFO, "tick", 10)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(_messages(caplog)) == 100


def test_default_format_and_verbosity_in_a_fresh_process():
    code = ("import tensorflux as tf\n"
            "tf.logging.warn('careful %d', 1)\n"
            "tf.logging.info('hidden')\n"
            "print(tf.logging.get_verbosity())\n"
            "tf.logging.set_verbosity(tf.logging.INFO)\n"
            "tf.logging.info('shown')\n"
            "tf.logging.error('bad')\n")
    rc, out, err = helpers.run(["-c", code])
    assert rc == 0 and out.strip() == "30"  # TF1's default: WARN
    assert err.splitlines() == ["WARNING:tensorflux:careful 1", "INFO:tensorflux:shown",
                                "ERROR:tensorflux:bad"]
