"""SessionManager, Supervisor, basic_train_loop, LooperThread, checkpoints_iterator,
GlobalStepWaiterHook, ProfilerHook, MonitoredSession.StepContext, summary_iterator,
assert_global_step, tf.train.queue_runner."""

import json
import os
import threading
import time

import numpy as np
import pytest

import tensorflux as tf


def _model():
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(1.0, name="w")
    train = tf.group(tf.assign_add(w, 1.0), tf.assign_add(step, 1))
    return step, w, train


def test_session_manager_prepare_recover_and_wait(tmp_path):
    step, w, train = _model()
    ready = tf.report_uninitialized_variables()
    saver = tf.train.Saver()
    sm = tf.train.SessionManager(ready_op=ready, recovery_wait_secs=0.05)
    with pytest.raises(RuntimeError, match="no init_op or init_fn or local_init_op"):
        sm.prepare_session("")
    with pytest.raises(RuntimeError, match="Init operations did not make model ready.*"
                                           "Variables not initialized: global_step, w"):
        sm.prepare_session("", init_fn=lambda sess: None)
    sess = sm.prepare_session("", init_op=tf.global_variables_initializer(), saver=saver,
                              checkpoint_dir=str(tmp_path))
    sess.run(train)
    saver.save(sess, str(tmp_path / "model"), global_step=step)
    sess.close()
    sess, restored = sm.recover_session("", saver=saver, checkpoint_dir=str(tmp_path))
    assert restored and sess.run([w, step]) == [2.0, 1]
    sess2, restored = sm.recover_session("", saver=saver, checkpoint_dir=str(tmp_path / "no"))
    assert not restored
    # A new in-process Session holds no variables, so it never becomes ready.
    start = time.time()
    with pytest.raises(tf.errors.DeadlineExceededError,
                       match="Session was not ready after waiting 0.2 secs"):
        sm.wait_for_session("", max_wait_secs=0.2)
    assert time.time() - start < 5
    local = tf.Variable(3.0, name="local", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    ok = tf.train.SessionManager(local_init_op=local.initializer,
                                 ready_op=tf.report_uninitialized_variables([local]))
    assert ok.wait_for_session("").run(local) == 3.0
    with pytest.raises(ValueError, match="you must also pass a local_init_op"):
        tf.train.SessionManager(ready_for_local_init_op=ready)


def test_supervisor_checkpoints_summaries_and_restore(tmp_path):
    step, w, train = _model()
    tf.summary.scalar("w_value", w)
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=600,
                             save_summaries_secs=600)
    assert sv.is_chief and sv.saver is not None and sv.global_step is not None
    assert tf.get_default_graph().finalized
    with sv.managed_session() as sess:
        for _ in range(3):
            sess.run(train)
    # The checkpoint thread saved once, right away, at step 0 (TF1's Supervisor).
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-0")
    events = [f for f in os.listdir(tmp_path) if f.startswith("events.out.tfevents")]
    kinds = [e.WhichOneof("what") for e in tf.train.summary_iterator(
        str(tmp_path / events[0]))]
    assert kinds[0] == "file_version" and "graph_def" in kinds and "summary" in kinds
    logs = [e.session_log.status for e in tf.train.summary_iterator(str(tmp_path / events[0]))
            if e.WhichOneof("what") == "session_log"]
    assert logs == [tf.SessionLog.START, tf.SessionLog.CHECKPOINT, tf.SessionLog.STOP]
    tf.reset_default_graph()
    step, w, train = _model()
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=0)
    with sv.managed_session() as sess:
        assert sess.run([w, step]) == [1.0, 0]  # restored from model.ckpt-0
        raise tf.errors.OutOfRangeError(None, None, "input done")  # a clean stop
    tf.reset_default_graph()
    _model()
    sv = tf.train.Supervisor(logdir=None)
    with pytest.raises(ZeroDivisionError):
        with sv.managed_session():
            1 / 0  # noqa: B018 - re-raised by stop()


def test_basic_train_loop_and_looper_thread():
    step, w, train = _model()
    sv = tf.train.Supervisor(logdir=None)
    calls = []

    def step_fn(sess, scale):
        calls.append(sess.run(train))
        if len(calls) == 4 * scale:
            sv.request_stop()

    tf.train.basic_train_loop(sv, step_fn, args=(1,))
    assert len(calls) == 4
    coord = tf.train.Coordinator()
    ticks = []
    looper = tf.train.LooperThread.loop(coord, 0.02, ticks.append, args=(1,))
    time.sleep(0.15)
    coord.request_stop()
    coord.join([looper])
    assert 2 <= len(ticks) <= 12  # the first call is at once, then one per interval
    with pytest.raises(ValueError, match="require that you also pass 'target'"):
        tf.train.LooperThread(coord, 1, args=(1,))
    with pytest.raises(ValueError, match="must be a Coordinator"):
        tf.train.LooperThread(None, 1)
    failing = tf.train.Coordinator()
    tf.train.LooperThread.loop(failing, None, lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        failing.join()


def test_checkpoints_iterator(tmp_path):
    v = tf.Variable(1.0)
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(v.initializer)
        first = saver.save(sess, str(tmp_path / "m"), global_step=1)
        seen = []
        timeouts = []

        def timeout_fn():
            timeouts.append(1)
            if len(timeouts) == 1:
                saver.save(sess, str(tmp_path / "m"), global_step=2)
                return False  # more may come: keep waiting
            return True

        for path in tf.train.checkpoints_iterator(str(tmp_path), timeout=0.3,
                                                  timeout_fn=timeout_fn):
            seen.append(path)
    assert seen == [first, str(tmp_path / "m-2")] and len(timeouts) == 2
    assert list(tf.train.checkpoints_iterator(str(tmp_path / "none"), timeout=0.1)) == []


def test_global_step_waiter_and_profiler_hooks(tmp_path):
    step, w, train = _model()
    waiter = tf.train.GlobalStepWaiterHook(wait_until_step=2)
    profiler = tf.train.ProfilerHook(save_steps=2, output_dir=str(tmp_path))
    with tf.train.SingularMonitoredSession(hooks=[profiler]) as sess:
        for _ in range(5):
            sess.run(train)
    # Traced runs: the steps where the timer fired (2 and 4), as TF's hook counts them.
    timelines = sorted(f for f in os.listdir(tmp_path) if f.startswith("timeline-"))
    assert timelines == ["timeline-2.json", "timeline-4.json"]
    trace = json.loads((tmp_path / "timeline-2.json").read_text())["traceEvents"]
    names = {e["args"]["name"] for e in trace if e.get("ph") == "X"}
    assert {"w", "AssignAdd", "global_step"} <= names
    assert any(e.get("ph") == "M" and e["name"] == "process_name" for e in trace)
    tf.summary.FileWriterCache.get(str(tmp_path)).flush()
    events = [f for f in os.listdir(tmp_path) if f.startswith("events")]
    tags = [e.tagged_run_metadata.tag for e in tf.train.summary_iterator(
        str(tmp_path / events[0])) if e.WhichOneof("what") == "tagged_run_metadata"]
    assert tags == ["step_2", "step_4"]
    tf.reset_default_graph()
    step, w, train = _model()
    waiter = tf.train.GlobalStepWaiterHook(wait_until_step=2)
    sess = tf.train.SingularMonitoredSession(hooks=[waiter])
    raw = sess.raw_session()
    bump = tf.get_default_graph().get_operation_by_name("AssignAdd_1")  # step += 1
    t = threading.Thread(target=lambda: (time.sleep(0.3), raw.run(bump), raw.run(bump)))
    t.start()
    start = time.time()
    sess.run(w)  # waits (polling every 0.5 s) until another worker reached step 2
    assert time.time() - start >= 0.3 and raw.run(step) == 2
    t.join()
    sess.close()
    with pytest.raises(RuntimeError, match="Global step should be created"):
        tf.reset_default_graph()
        tf.train.ProfilerHook(save_steps=1, output_dir=str(tmp_path)).begin()


def test_monitored_session_step_context():
    c = tf.placeholder(tf.float32)
    v = c + 4.0
    counted = []

    class Counter(tf.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            counted.append(run_values.run_metadata is not None)

    assert tf.train.MonitoredSession.StepContext is not None
    with tf.train.MonitoredSession(hooks=[Counter()]) as session:
        def step_fn(step_context):
            assert step_context.session.run(v, {c: 0.5}) == 4.5  # no hooks
            return step_context.run_with_hooks(v, feed_dict={c: 1.0})

        assert session.run_step_fn(step_fn) == 5.0
        assert counted == [True]

        def stopping(step_context):
            step_context.request_stop()

        with pytest.raises(ValueError, match="`step_fn` may either have one `step_context` "
                                             "argument"):
            session.run_step_fn(lambda ctx: None)
        session.run_step_fn(stopping)
    assert session.should_stop()


def test_summary_iterator_reads_events_and_assert_global_step(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path))
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="loss", simple_value=0.5)]), 7)
    writer.close()
    (path,) = [str(tmp_path / f) for f in os.listdir(tmp_path)]
    events = list(tf.train.summary_iterator(path))
    assert events[0].file_version == "brain.Event:2"
    assert events[1].step == 7 and events[1].summary.value[0].tag == "loss"
    assert events[1].summary.value[0].simple_value == 0.5
    tf.train.assert_global_step(tf.Variable(0, name="ok"))
    tf.train.assert_global_step(tf.placeholder(tf.int64, [None]))  # not fully defined: ok
    with pytest.raises(TypeError, match='Existing "global_step" does not have integer type'):
        tf.train.assert_global_step(tf.Variable(0.0))
    with pytest.raises(TypeError, match='Existing "global_step" is not scalar: \\(2,\\)'):
        tf.train.assert_global_step(tf.constant([1, 2]))
    with pytest.raises(TypeError, match='must be a Variable or Tensor'):
        tf.train.assert_global_step(3)
    assert tf.contrib.framework.assert_global_step is tf.train.assert_global_step
    assert tf.train.queue_runner.QueueRunner is tf.train.QueueRunner
    assert tf.train.queue_runner.add_queue_runner is tf.train.add_queue_runner
    assert tf.train.queue_runner.start_queue_runners is tf.train.start_queue_runners
    np.testing.assert_equal(len(events), 2)
