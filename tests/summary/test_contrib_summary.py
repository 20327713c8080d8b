"""tf.contrib.summary (TF 1.15's eager-compatible summary writers): graph mode here,
eager mode in a program (eager execution is process-wide). Event files are read back
with tf.train.summary_iterator and checked against NumPy."""

import glob
import io

import numpy as np
import pytest

import tensorflux as tf
from tests.eager.test_eager import run


def events(logdir):
    (path,) = glob.glob(f"{logdir}/events.out.tfevents.*")
    assert path.endswith(".v2")  # TF's default filename_suffix
    out = list(tf.train.summary_iterator(path))
    assert out[0].file_version == "brain.Event:2"
    return [(e.step, v) for e in out[1:] for v in e.summary.value]


def by_tag(logdir):
    table = {}
    for step, value in events(logdir):
        table.setdefault(value.tag, []).append((step, value))
    return table


def expected_histogram_counts(values):
    """TF's default buckets: 1e-12 * 1.1^k, mirrored, 0 in the middle; a value goes to
    the first limit greater than it."""
    positive, v = [], 1.0e-12
    while v < 1.0e20:
        positive.append(v)
        v *= 1.1
    positive.append(np.finfo(np.float64).max)
    limits = np.array([-x for x in reversed(positive)] + [0.0] + positive)
    counts = {}
    for x in values.astype(np.float64):
        limit = limits[np.argmax(limits > x)]
        counts[limit] = counts.get(limit, 0) + 1
    return counts


def decode_png(data):
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(data)))


def test_contrib_summary_eager_writes_at_once(tmp_path):
    out = run("contrib_summary.py", str(tmp_path))
    assert out["no_writer"] == "False"
    assert out["default_off"] == "False"  # contrib records only inside a record context
    assert out["recorded"] == "True" and out["never"] == "False"
    assert out["init_op_error"] == ("tf.contrib.summary.summary_writer_initializer_op is "
                                    "only supported in graph mode.")
    assert out["all_summary_ops"] == "None"
    # as_default() flushed on exit, before close(): the file has the events already.
    assert out["file_before_flush_close"] == "3"  # event file + the two .npy files
    tags = by_tag(tmp_path)
    assert set(tags) == {"loss", "opt/opt/lr", "weights", "img/image/0", "img/image/1",
                         "every3"}
    assert [(s, v.simple_value) for s, v in tags["loss"]] == [(0, 1.5)]
    assert [(s, v.simple_value) for s, v in tags["opt/opt/lr"]] == [(7, 0.25)]
    # record_summaries_every_n_global_steps(3): steps 0, 3, 6 of 0..6.
    assert [(s, v.simple_value) for s, v in tags["every3"]] == [(0, 0.0), (3, 30.0),
                                                                 (6, 60.0)]
    hist_values = np.load(tmp_path / "hist.npy")
    [(step, hist)] = tags["weights"]
    assert step == 3
    assert hist.histo.num == 50 and np.isclose(hist.histo.sum, hist_values.sum(), rtol=1e-5)
    assert hist.histo.min == hist_values.min() and hist.histo.max == hist_values.max()
    got = {lim: c for lim, c in zip(hist.histo.bucket_limit, hist.histo.bucket) if c}
    assert got == expected_histogram_counts(hist_values)
    pixels = np.load(tmp_path / "image.npy")
    for i in range(2):  # batch 2 < max_images 3
        [(step, value)] = tags[f"img/image/{i}"]
        assert step == 5
        assert (value.image.height, value.image.width, value.image.colorspace) == (3, 4, 3)
        # Non-negative floats: scaled so the largest value is 255 (truncated).
        expected = (pixels[i] * (np.float32(255) / pixels[i].max())).astype(np.uint8)
        np.testing.assert_array_equal(decode_png(value.image.encoded_image_string), expected)


def test_contrib_summary_graph_mode_ops_run_by_session(tmp_path):
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        increment = tf.assign_add(step, 1)
        writer = tf.contrib.summary.create_file_writer(str(tmp_path), flush_millis=60000)
        x = tf.placeholder(tf.float32, [None])
        with writer.as_default():
            with tf.contrib.summary.record_summaries_every_n_global_steps(2):
                tf.contrib.summary.scalar("avg", tf.reduce_mean(x))
            with tf.contrib.summary.always_record_summaries():
                tf.contrib.summary.histogram("x", x, step=step * 10)
                tf.contrib.summary.generic("raw", tf.constant([1, 2], tf.int64), step=1)
                tf.contrib.summary.audio("clip", tf.zeros([1, 4]), 8000, 1, step=2)
        ops = tf.contrib.summary.all_summary_ops()
        assert len(ops) == 4 and all(op.dtype == tf.bool for op in ops)
        assert len(tf.contrib.summary.summary_writer_initializer_op()) == 1
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.contrib.summary.summary_writer_initializer_op())
            recorded = []
            for i in range(4):
                recorded.append(sess.run(ops[0], {x: [i, i + 1.0]}))
                sess.run(ops[1:], {x: [i, i + 1.0]})
                sess.run(increment)
            sess.run(writer.flush())
            assert recorded == [True, False, True, False]
            sess.run(writer.close())
    tags = by_tag(tmp_path)
    assert [(s, v.simple_value) for s, v in tags["avg"]] == [(0, 0.5), (2, 2.5)]
    assert [s for s, _ in tags["x"]] == [0, 10, 20, 30]
    assert [v.histo.sum for _, v in tags["x"]] == [1.0, 3.0, 5.0, 7.0]
    raw = tags["raw"][0][1]
    assert tf.make_ndarray(raw.tensor).tolist() == [1, 2]
    clip = tags["clip/audio"][0][1].audio
    assert (clip.sample_rate, clip.num_channels, clip.length_frames) == (8000, 1, 4)
    assert clip.encoded_audio_string[:4] == b"RIFF"


def test_contrib_summary_without_writer_or_init(tmp_path):
    with tf.Graph().as_default():
        assert tf.contrib.summary.scalar("x", 1.0).type == "NoOp"  # no default writer
        assert tf.contrib.summary.create_file_writer(None).as_default() is not None
        writer = tf.contrib.summary.create_file_writer(str(tmp_path), name="w")
        with writer.as_default(), tf.contrib.summary.always_record_summaries():
            op = tf.contrib.summary.scalar("x", 1.0, step=0)
        with tf.Session() as sess, pytest.raises(tf.errors.NotFoundError,
                                                 match="does not exist"):
            sess.run(op)  # the writer's init op has not run


def test_tensorboard_reads_contrib_scalars(tmp_path):
    accumulator = pytest.importorskip(
        "tensorboard.backend.event_processing.event_accumulator")
    with tf.Graph().as_default():
        writer = tf.contrib.summary.create_file_writer(str(tmp_path))
        with writer.as_default(), tf.contrib.summary.always_record_summaries():
            value, step = tf.placeholder(tf.float32, []), tf.placeholder(tf.int64, [])
            op = tf.contrib.summary.scalar("loss", value, step=step)
        with tf.Session() as sess:
            sess.run(tf.contrib.summary.summary_writer_initializer_op())
            for s, v in ((1, 0.5), (2, 0.25)):
                sess.run(op, {step: s, value: v})
            sess.run(writer.close())
    acc = accumulator.EventAccumulator(str(tmp_path))
    acc.Reload()
    assert [(e.step, e.value) for e in acc.Scalars("loss")] == [(1, 0.5), (2, 0.25)]


def test_summary_initialize_runs_writer_init_and_writes_graph(tmp_path):
    with tf.Graph().as_default() as graph:
        tf.constant(1.0, name="c")
        writer = tf.contrib.summary.create_file_writer(str(tmp_path))
        with writer.as_default(), tf.contrib.summary.always_record_summaries():
            op = tf.contrib.summary.scalar("x", 2.0, step=3)
            with tf.Session() as sess:
                tf.summary.initialize(graph=graph, session=sess)
                sess.run(op)
                sess.run(writer.close())
    (path,) = glob.glob(f"{tmp_path}/events.out.tfevents.*")
    records = list(tf.train.summary_iterator(path))[1:]
    graph_def = tf.GraphDef.FromString(records[0].graph_def)
    assert records[0].step == 0 and "c" in [n.name for n in graph_def.node]
    assert records[1].step == 3 and records[1].summary.value[0].simple_value == 2.0
