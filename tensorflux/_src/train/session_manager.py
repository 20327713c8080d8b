"""`tf.train.SessionManager`: creates a Session and makes its model ready (TF1's rules).

- `prepare_session` restores the latest checkpoint of `checkpoint_dir` (or a given file,
  optionally waiting for one), else runs `init_op` / `init_fn`; then `local_init_op`
  (once `ready_for_local_init_op` reports nothing missing) and checks `ready_op`.
- `recover_session` only restores: it returns `(sess, False)` when there was no
  checkpoint or the model is not ready after restoring.
- `wait_for_session` opens Sessions until one is ready, sleeping `recovery_wait_secs`
  between tries, and raises DeadlineExceededError after `max_wait_secs`. (Sessions of
  one process do not share variables here, so only a model whose ready_op is satisfied
  by local initialization becomes ready.)

A ready op is ready when it returns an empty 1-D tensor (the names of uninitialized
variables, `tf.report_uninitialized_variables()`), None, or an int32 value.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.train import checkpoint_management

__all__ = ["SessionManager"]

_log = logging.getLogger("tensorflux")


def _maybe_name(obj):
    if obj is None:
        return "None"
    if hasattr(obj, "name"):
        return obj.name
    return f"<no name for {type(obj)}>"


class SessionManager:
    """Session creation with TF1's checkpoint recovery and readiness checks."""

    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None,
                 graph=None, recovery_wait_secs=30, local_init_run_options=None):
        if graph is None:
            graph = _graph.get_default_graph()
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph
        self._recovery_wait_secs = recovery_wait_secs
        self._target = None
        self._local_init_run_options = local_init_run_options
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError(f"If you pass a ready_for_local_init_op you must also pass a "
                             f"local_init_op , ready_for_local_init_op "
                             f"[{ready_for_local_init_op}]")

    def _restore_checkpoint(self, master, saver=None, checkpoint_dir=None,
                            checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                            max_wait_secs=7200, config=None):
        from tensorflux._src.runtime.session import Session
        self._target = master
        sess = Session(self._target, graph=self._graph, config=config)
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and "
                             "checkpoint_filename_with_path.")
        if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        if checkpoint_filename_with_path:
            saver.restore(sess, checkpoint_filename_with_path)
            return sess, True
        wait_time = 0
        ckpt = checkpoint_management.get_checkpoint_state(checkpoint_dir)
        while not ckpt or not ckpt.model_checkpoint_path:
            if wait_for_checkpoint and wait_time < max_wait_secs:
                _log.info("Waiting for checkpoint to be available.")
                time.sleep(self._recovery_wait_secs)
                wait_time += self._recovery_wait_secs
                ckpt = checkpoint_management.get_checkpoint_state(checkpoint_dir)
            else:
                return sess, False
        saver.restore(sess, ckpt.model_checkpoint_path)
        saver.recover_last_checkpoints(list(ckpt.all_model_checkpoint_paths))
        return sess, True

    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None, init_feed_dict=None, init_fn=None):
        """A Session whose model is restored or initialized, and ready."""
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs,
            config=config)
        if not restored:
            if init_op is None and not init_fn and self._local_init_op is None:
                raise RuntimeError("Model is not initialized and no init_op or init_fn or "
                                   "local_init_op was given")
            if init_op is not None:
                sess.run(init_op, feed_dict=init_feed_dict)
            if init_fn:
                init_fn(sess)
        ok, msg = self._try_run_local_init_op(sess)
        if not ok:
            raise RuntimeError(f"Init operations did not make model ready for local_init.  "
                               f"Init op: {_maybe_name(init_op)}, init fn: {init_fn}, "
                               f"error: {msg}")
        ready, msg = self._model_ready(sess)
        if not ready:
            raise RuntimeError(f"Init operations did not make model ready.  Init op: "
                               f"{_maybe_name(init_op)}, init fn: {init_fn}, local_init_op: "
                               f"{self._local_init_op}, error: {msg}")
        return sess

    def recover_session(self, master, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None):
        """(sess, True) when a checkpoint was restored and the model is ready, else
        (sess, False)."""
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs,
            config=config)
        ok, msg = self._try_run_local_init_op(sess)
        if not restored:
            return sess, False
        restoring_file = checkpoint_dir or checkpoint_filename_with_path
        if not ok:
            _log.info("Restoring model from %s did not make model ready for local init: %s",
                      restoring_file, msg)
            return sess, False
        ready, msg = self._model_ready(sess)
        if not ready:
            _log.info("Restoring model from %s did not make model ready: %s", restoring_file,
                      msg)
            return sess, False
        _log.info("Restored model from %s", restoring_file)
        return sess, True

    def wait_for_session(self, master, config=None, max_wait_secs=float("Inf")):
        """A Session whose model is ready; retries until `max_wait_secs` have passed."""
        from tensorflux._src.runtime.session import Session
        self._target = master
        if max_wait_secs is None:
            max_wait_secs = float("Inf")
        deadline = time.time() + max_wait_secs
        while True:
            sess = Session(self._target, graph=self._graph, config=config)
            not_ready_msg = None
            ok, not_ready_local_msg = self._try_run_local_init_op(sess)
            if ok:
                ready, not_ready_msg = self._model_ready(sess)
                if ready:
                    return sess
            self._safe_close(sess)
            if max(0.0, deadline - time.time()) - self._recovery_wait_secs < 0:
                raise errors.DeadlineExceededError(
                    None, None, f"Session was not ready after waiting {max_wait_secs:g} secs.")
            _log.info("Waiting for model to be ready.  Ready_for_local_init_op:  %s, ready: "
                      "%s", not_ready_local_msg, not_ready_msg)
            time.sleep(self._recovery_wait_secs)

    @staticmethod
    def _safe_close(sess):
        try:
            sess.close()
        except Exception:  # noqa: BLE001 - as TF: ignored
            pass

    def _model_ready(self, sess):
        return _ready(self._ready_op, sess, "Model not ready")

    def _model_ready_for_local_init(self, sess):
        return _ready(self._ready_for_local_init_op, sess, "Model not ready for local init")

    def _try_run_local_init_op(self, sess):
        if self._local_init_op is None:
            return True, None
        ready, msg = self._model_ready_for_local_init(sess)
        if not ready:
            return False, msg
        _log.info("Running local_init_op.")
        sess.run(self._local_init_op, options=self._local_init_run_options)
        _log.info("Done running local_init_op.")
        return True, None


def _ready(op, sess, msg):
    """(True, None) when `op` reports nothing missing, else (False, why)."""
    if op is None:
        return True, None
    try:
        value = sess.run(op)
        if value is None or np.asarray(value).dtype == np.int32 or np.size(value) == 0:
            return True, None
        names = ", ".join(n.decode("utf-8") if isinstance(n, bytes) else str(n)
                          for n in np.reshape(value, -1))
        return False, "Variables not initialized: " + names
    except errors.FailedPreconditionError as e:
        if "uninitialized" not in str(e):
            _log.warning("%s : error [%s]", msg, e)
            raise
        return False, str(e)
