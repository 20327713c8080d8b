"""TensorArrays as dataset elements (TF 1.15's TensorArraySpec components): returned by
map functions or given to from_tensors, consumed as TensorArrays; no batching."""

import warnings

import numpy as np
import pytest

import tensorflux as tf


def test_map_returns_tensor_array_and_consumers_get_one():
    rows = np.arange(8, dtype=np.float32).reshape(4, 2)

    def scaled_copies(x):
        ta = tf.TensorArray(tf.float32, size=3, element_shape=[2])
        for i in range(3):
            ta = ta.write(i, x * float(i + 1))
        return ta

    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_tensor_slices(rows).map(scaled_copies)
        spec = ds.element_spec
        assert spec == tf.TensorArraySpec([2], tf.float32, dynamic_size=False, infer_shape=True)
        # TF1's legacy views: the class is TensorArray, the shape carries
        # [dynamic_size, infer_shape] before the element shape.
        assert ds.output_classes is tf.TensorArray
        assert ds.output_types == tf.float32
        assert ds.output_shapes.as_list() == [0, 1, 2]

        ta = tf.data.make_one_shot_iterator(ds).get_next()
        assert isinstance(ta, tf.TensorArray) and ta.dtype == tf.float32
        assert ta.element_shape.as_list() == [2]
        # A function of the next stage receives a TensorArray too.
        doubled = tf.data.make_one_shot_iterator(
            ds.map(lambda t: t.read(2) - t.read(0))).get_next()
        with tf.Session() as sess:
            for r in rows[:2]:
                stacked, second, size = sess.run([ta.stack(), ta.read(1), ta.size()])
                np.testing.assert_allclose(stacked, np.stack([r, 2 * r, 3 * r]))
                np.testing.assert_allclose(second, 2 * r)
                assert size == 3
            for r in rows:
                np.testing.assert_allclose(sess.run(doubled), 2 * r)
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(doubled)


def test_from_tensors_and_reinitializable_iterator_of_tensor_arrays():
    with tf.Graph().as_default():
        given = tf.TensorArray(tf.int32, size=2).unstack([[1, 2], [3, 4]])
        ds = tf.data.Dataset.from_tensors(given)
        assert ds.element_spec == tf.TensorArraySpec([2], tf.int32)

        pairs = tf.data.Dataset.range(3).map(
            lambda i: tf.TensorArray(tf.int64, size=2, dynamic_size=True).unstack(
                tf.stack([i, i * 10])))
        assert pairs.element_spec == tf.TensorArraySpec([], tf.int64, dynamic_size=True)
        # Rebuilt from TF1's legacy (types, shapes, classes) triple.
        it = tf.data.Iterator.from_structure(pairs.output_types, pairs.output_shapes,
                                             output_classes=pairs.output_classes)
        assert it.element_spec == pairs.element_spec
        init, nxt = it.make_initializer(pairs), it.get_next().stack()
        with tf.Session() as sess:
            np.testing.assert_array_equal(
                sess.run(tf.data.make_one_shot_iterator(ds).get_next().stack()),
                [[1, 2], [3, 4]])
            sess.run(init)
            got = [sess.run(nxt) for _ in range(3)]
        np.testing.assert_array_equal(got, [[0, 0], [1, 10], [2, 20]])


def test_dynamic_arrays_of_varying_size_from_a_loop_in_map():
    def squares(n):  # [0, 1, 4, ..., (n-1)^2], written by a while_loop
        ta = tf.TensorArray(tf.int64, size=0, dynamic_size=True)
        _, ta = tf.while_loop(lambda i, ta: i < n,
                              lambda i, ta: (i + 1, ta.write(tf.cast(i, tf.int32), i * i)),
                              (tf.constant(0, tf.int64), ta))
        return ta

    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(1, 5).map(squares)
        assert ds.element_spec == tf.TensorArraySpec([], tf.int64, dynamic_size=True)
        ta = tf.data.make_one_shot_iterator(ds).get_next()
        padded = tf.data.make_one_shot_iterator(
            ds.map(lambda t: t.stack()).padded_batch(2, [None])).get_next()
        with tf.Session() as sess:
            for n in range(1, 5):
                stacked, size = sess.run([ta.stack(), ta.size()])
                np.testing.assert_array_equal(stacked, np.arange(n) ** 2)
                assert size == n
            np.testing.assert_array_equal(sess.run(padded), [[0, 0], [0, 1]])
            np.testing.assert_array_equal(sess.run(padded), [[0, 1, 4, 0], [0, 1, 4, 9]])


def test_tensor_array_elements_do_not_batch_or_slice():
    # TF 1.15's TensorArraySpec has no batching rules.
    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(3).map(
            lambda i: tf.TensorArray(tf.int64, size=1).write(0, i))
        with pytest.raises(NotImplementedError, match="does not support batching"):
            ds.batch(2)
        given = tf.TensorArray(tf.int32, size=2).unstack([[1, 2], [3, 4]])
        with pytest.raises(NotImplementedError, match="does not support batching"):
            tf.data.Dataset.from_tensor_slices(given)


def test_tensor_array_structure_is_the_deprecated_spec_constructor():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = tf.data.experimental.TensorArrayStructure(tf.float64, [None, 3], True, False)
    assert type(spec) is tf.TensorArraySpec
    assert spec == tf.TensorArraySpec([None, 3], tf.float64, dynamic_size=True,
                                      infer_shape=False)
    assert spec._to_legacy_output_shapes().as_list() == [1, 0, None, 3]
    assert tf.compat.v1.data.experimental.TensorArrayStructure is \
        tf.data.experimental.TensorArrayStructure
