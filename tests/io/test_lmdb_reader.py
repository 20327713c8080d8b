"""tf.LMDBReader over databases written here with the lmdb package (py-lmdb)."""

import pytest

import tensorflux as tf

lmdb = pytest.importorskip("lmdb")


def _write(path, items, subdir=True):
    env = lmdb.open(str(path), subdir=subdir, map_size=1 << 20)
    with env.begin(write=True) as txn:
        for key, value in items.items():
            txn.put(key, value)
    env.close()


def test_reads_keys_in_sorted_order_from_a_queue_runner(tmp_path):
    first = {b"b": b"2", b"a": b"1", b"key\x00bin": b"\xff" * 3, b"aa": b""}
    second = {b"zz": b"last", b"0": b"zero"}
    _write(tmp_path / "db1", first)  # a directory holding data.mdb
    _write(tmp_path / "db2.mdb", second, subdir=False)  # the data file itself
    files = [str(tmp_path / "db1"), str(tmp_path / "db2.mdb")]
    queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
    reader = tf.LMDBReader(name="lmdb")
    key, value = reader.read(queue)
    produced, units = reader.num_records_produced(), reader.num_work_units_completed()
    assert tf.compat.v1.LMDBReader is tf.LMDBReader
    assert isinstance(reader, tf.ReaderBase) and reader.supports_serialize
    assert key.dtype == tf.string and key.shape.as_list() == []
    got = []
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        try:
            while True:
                got.append(tuple(sess.run([key, value])))
        except tf.errors.OutOfRangeError:
            pass
        n, done = sess.run([produced, units])
        coord.request_stop()
        coord.join(threads)
    expected = sorted(first.items()) + sorted(second.items())
    assert got == expected
    assert n == 6 and done == 2


def test_read_up_to_and_errors(tmp_path):
    _write(tmp_path / "db", {bytes([i]): bytes([i]) * 2 for i in range(5)})
    bad = tmp_path / "not_lmdb"
    bad.write_bytes(b"this is not an LMDB file" * 200)
    queue = tf.FIFOQueue(10, tf.string, shapes=[[]])
    enqueue = queue.enqueue_many([[str(tmp_path / "db"), str(tmp_path / "missing"),
                                   str(bad)]])
    keys, values = tf.LMDBReader().read_up_to(queue, 3)
    with tf.Session() as sess:
        sess.run(enqueue)
        k, v = sess.run([keys, values])
        assert k.tolist() == [b"\x00", b"\x01", b"\x02"]
        assert v.tolist() == [b"\x00\x00", b"\x01\x01", b"\x02\x02"]
        assert sess.run(keys).tolist() == [b"\x03", b"\x04"]  # the rest of that file
        with pytest.raises(tf.errors.NotFoundError, match="missing: No such file"):
            sess.run(keys)
        with pytest.raises(tf.errors.DataLossError, match="not_lmdb"):
            sess.run(keys)
