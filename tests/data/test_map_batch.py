"""map followed by batch: a group of elements goes through the function at once
(host ops per element, the compiled part vectorized). The stream must be exactly the
one of element-by-element mapping."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.compiler import cluster as cluster_module
from tests.data.test_dataset import drain


@pytest.fixture
def vectorized_calls(monkeypatch):
    """Counts calls of the vectorized cluster path, so tests know it was taken."""
    calls = []
    original = cluster_module.Cluster.call_batched

    def counting(self, *args, **kwargs):
        calls.append(args[-1])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cluster_module.Cluster, "call_batched", counting)
    return calls


def _example(image, label):
    return tf.train.Example(features=tf.train.Features(feature={
        "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image.tobytes()])),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
    })).SerializeToString()


@pytest.mark.parametrize("parallel_calls", [None, 2])
def test_parsed_records_through_map_and_batch(tmp_path, vectorized_calls, parallel_calls):
    rng = np.random.default_rng(3)
    images = rng.integers(0, 256, size=(11, 4, 4, 3), dtype=np.uint8)
    labels = rng.integers(0, 10, size=11)
    path = str(tmp_path / "r.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for image, label in zip(images, labels):
            writer.write(_example(image, int(label)))

    def parse(record):
        features = tf.parse_single_example(record, {
            "image": tf.FixedLenFeature([], tf.string),
            "label": tf.FixedLenFeature([], tf.int64)})
        image = tf.reshape(tf.decode_raw(features["image"], tf.uint8), [4, 4, 3])
        image = tf.cast(image, tf.float32)
        image = image / 255.0 - tf.reduce_mean(image) / 255.0
        return {"image": tf.image.flip_left_right(image), "label": features["label"] + 1}

    dataset = tf.data.TFRecordDataset(path).map(parse, parallel_calls).batch(4)
    batches = drain(dataset)
    assert [len(b["label"]) for b in batches] == [4, 4, 3]
    floats = images.astype(np.float32)
    expected = (floats / 255.0 - floats.mean(axis=(1, 2, 3), keepdims=True) / 255.0)[:, :, ::-1]
    np.testing.assert_allclose(np.concatenate([b["image"] for b in batches]), expected,
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(np.concatenate([b["label"] for b in batches]), labels + 1)
    assert vectorized_calls and set(vectorized_calls) <= {4, 3}  # groups after the first


def test_random_map_gives_the_same_stream_fused_or_not(vectorized_calls):
    def jitter(x):
        return tf.cast(x, tf.float32) + tf.random_uniform([2], seed=7)

    def stream(fused):
        dataset = tf.data.Dataset.range(10).map(jitter)
        if not fused:
            dataset = dataset.prefetch(1)  # anything between map and batch
        return np.concatenate(drain(dataset.batch(3)))

    tf.set_random_seed(5)
    separate = stream(fused=False)
    assert not vectorized_calls
    tf.set_random_seed(5)
    fused = stream(fused=True)
    assert vectorized_calls
    np.testing.assert_array_equal(fused, separate)
    offsets = separate - np.arange(10)[:, None]
    assert np.all((offsets >= 0) & (offsets < 1)) and len(np.unique(offsets)) == 20


def test_elements_of_different_shapes_in_a_later_batch_are_an_error():
    words = tf.data.Dataset.from_tensor_slices(np.array([b"ab", b"cd", b"ef", b"ghi"], object))
    dataset = words.map(lambda w: tf.cast(tf.decode_raw(w, tf.uint8), tf.int32) * 2).batch(2)
    iterator = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(iterator), [[97 * 2, 98 * 2], [99 * 2, 100 * 2]])
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"different shapes in component 0. First element had shape "
                                 r"\[2\] and element 1 had shape \[3\]"):
            sess.run(iterator)


def test_a_function_with_an_assert_is_mapped_element_by_element():
    def checked(x):
        with tf.control_dependencies([tf.assert_less(x, tf.constant(5, tf.int64))]):
            return x * 10

    iterator = tf.data.Dataset.range(8).map(checked).batch(3).make_one_shot_iterator()
    batch = iterator.get_next()
    with tf.Session() as sess:
        assert sess.run(batch).tolist() == [0, 10, 20]
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(batch)  # element 5 fails its check
