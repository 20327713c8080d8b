"""Readers over a filename queue, and tf.read_file / tf.write_file."""

import gzip

import numpy as np
import pytest

import tensorflux as tf


def _filename_queue(paths):
    q = tf.FIFOQueue(10, tf.string, shapes=[[]])
    return q, q.enqueue_many([[str(p).encode() for p in paths]]), q.close()


def _read_all(sess, fetch):
    out = []
    with pytest.raises(tf.errors.OutOfRangeError, match="is closed and has insufficient"):
        while True:
            out.append(sess.run(fetch))
    return out


def test_text_line_reader_keys_and_header_lines(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_bytes(b"h1\nh2\nx,1\r\ny,2\n")
    b.write_bytes(b"h\nh\nz,3")  # no final newline
    q, enq, close = _filename_queue([a, b])
    key, value = tf.TextLineReader(skip_header_lines=2).read(q)
    with tf.Session() as sess:
        sess.run([enq])
        sess.run(close)
        got = _read_all(sess, [key, value])
    assert got == [[f"{a}:3".encode(), b"x,1"], [f"{a}:4".encode(), b"y,2"],
                   [f"{b}:3".encode(), b"z,3"]]


def test_fixed_length_record_reader_header_footer(tmp_path):
    path = tmp_path / "records.bin"
    path.write_bytes(b"HDR" + bytes(range(12)) + b"FT")
    q, enq, close = _filename_queue([path])
    reader = tf.FixedLengthRecordReader(record_bytes=4, header_bytes=3, footer_bytes=2)
    key, value = reader.read(q)
    produced = reader.num_records_produced()
    with tf.Session() as sess:
        sess.run(enq)
        sess.run(close)
        got = _read_all(sess, [key, value])
        assert sess.run(produced) == 3
    assert [k for k, _ in got] == [f"{path}:{i}".encode() for i in range(3)]
    assert [np.frombuffer(v, np.uint8).tolist() for _, v in got] == \
        [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]


def test_tfrecord_reader_offsets_and_read_up_to(tmp_path):
    path = str(tmp_path / "data.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        for record in (b"one", b"three", b"x"):
            w.write(record)
    zipped = str(tmp_path / "data.tfrecord.gz")
    with open(path, "rb") as src, gzip.open(zipped, "wb") as dst:
        dst.write(src.read())
    q, enq, close = _filename_queue([path])
    key, value = tf.TFRecordReader().read(q)
    with tf.Session() as sess:
        sess.run(enq)
        sess.run(close)
        got = _read_all(sess, [key, value])
    # Each record takes 8 + 4 + len + 4 bytes.
    assert got == [[f"{path}:0".encode(), b"one"], [f"{path}:19".encode(), b"three"],
                   [f"{path}:40".encode(), b"x"]]
    tf.reset_default_graph()
    q, enq, close = _filename_queue([zipped])
    reader = tf.TFRecordReader(options=tf.io.TFRecordOptions(
        tf.io.TFRecordCompressionType.GZIP))
    keys, values = reader.read_up_to(q, 2)
    with tf.Session() as sess:
        sess.run(enq)
        sess.run(close)
        assert list(sess.run(values)) == [b"one", b"three"]
        assert list(sess.run(values)) == [b"x"]  # what is left of the file


def test_whole_file_reader_with_string_input_producer(tmp_path):
    paths = []
    for i in range(3):
        p = tmp_path / f"f{i}.txt"
        p.write_bytes(f"content {i}".encode())
        paths.append(str(p))
    producer = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False)
    key, value = tf.WholeFileReader().read(producer)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        got = _read_all(sess, [key, value])
        coord.request_stop()
        coord.join(threads)
    assert got == [[p.encode(), f"content {i}".encode()] for i, p in enumerate(paths)]


def test_read_and_write_file(tmp_path):
    path = str(tmp_path / "sub" / "out.bin")
    write = tf.write_file(path, tf.constant(b"\x00bytes"))
    read = tf.io.read_file(path)
    with tf.Session() as sess:
        sess.run(write)
        assert sess.run(read) == b"\x00bytes"
        with pytest.raises(tf.errors.NotFoundError):
            sess.run(tf.read_file(str(tmp_path / "missing")))
