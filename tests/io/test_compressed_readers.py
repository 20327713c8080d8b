"""Compressed record files through every TF1 reader: TFRecordWriter options read back by
tf_record_iterator, TFRecordDataset and TFRecordReader, and FixedLengthRecordReader's
`encoding` (files compressed here with zlib and gzip)."""

import gzip
import zlib

import pytest

import tensorflux as tf


def _drain(sess, fetch):
    out = []
    with pytest.raises(tf.errors.OutOfRangeError):
        while True:
            out.append(sess.run(fetch))
    return out


@pytest.mark.parametrize("kind", ["ZLIB", "GZIP"])
def test_compressed_files_through_all_readers(tmp_path, kind):
    records = [b"first", b"", b"x" * 1000]
    tfrecord = str(tmp_path / "data.tfrecord")
    options = tf.io.TFRecordOptions(compression_type=kind, compression_level=9)
    with tf.io.TFRecordWriter(tfrecord, options) as writer:
        for r in records:
            writer.write(r)
    fixed = tmp_path / "fixed.bin"
    body = b"HEAD" + bytes(range(12)) + b"FT"
    fixed.write_bytes(zlib.compress(body) if kind == "ZLIB" else gzip.compress(body))

    assert list(tf.io.tf_record_iterator(tfrecord, options)) == records
    dataset_next = tf.data.TFRecordDataset(tfrecord, compression_type=kind) \
        .make_one_shot_iterator().get_next()
    queue = tf.FIFOQueue(4, tf.string, shapes=[[]])
    fill = [queue.enqueue_many([[tfrecord.encode(), str(fixed).encode()]]), queue.close()]
    _, tf_value = tf.TFRecordReader(options=tf.io.TFRecordOptions(kind)).read(queue)
    fixed_queue = tf.FIFOQueue(4, tf.string, shapes=[[]])
    fixed_fill = [fixed_queue.enqueue(str(fixed).encode()), fixed_queue.close()]
    _, fixed_value = tf.FixedLengthRecordReader(record_bytes=4, header_bytes=4, footer_bytes=2,
                                                encoding=kind).read(fixed_queue)
    with tf.Session() as sess:
        assert _drain(sess, dataset_next) == records
        sess.run(fill)
        assert [sess.run(tf_value) for _ in records] == records
        sess.run(fixed_fill)
        assert _drain(sess, fixed_value) == [bytes(range(i, i + 4)) for i in (0, 4, 8)]
    with pytest.raises(ValueError, match="encoding must be"):
        tf.FixedLengthRecordReader(record_bytes=4, encoding="BZIP2")
