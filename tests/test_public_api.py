import subprocess
import sys

import numpy as np

import tensorflux as tf
import tensorflux.compat.v1 as tf1


def test_compat_v1_is_the_same_surface():
    assert tf1.constant is tf.constant and tf1.Session is tf.Session
    assert set(tf.__all__) <= set(dir(tf1))
    assert tf.compat.v1.placeholder is tf.placeholder


def test_x64_is_enabled():
    with tf.Session() as sess:
        got = sess.run(tf.constant(np.array([2 ** 40], np.int64)) + 1)
    assert got.dtype == np.int64 and got[0] == 2 ** 40 + 1


def test_example_prints_tf1_output():
    out = subprocess.run([sys.executable, "examples/classic.py"], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert out[0] == 'Tensor("add:0", shape=(2,), dtype=int32)'
    assert out[1] == "[2 4 6 8]"


def test_math_and_random_namespaces():
    assert tf.math.add is tf.add and tf.math.reduce_sum is tf.reduce_sum
    assert tf.math.log_sigmoid is not None and tf.math.top_k is tf.nn.top_k
    tf.random.set_random_seed(3)
    draws = tf.random.normal([1000], mean=1.0)
    labels = tf.random.categorical(tf.constant([[0.0, 10.0]]), 5)
    with tf.Session() as sess:
        values, picked = sess.run([draws, labels])
    assert abs(values.mean() - 1.0) < 0.15
    assert picked.shape == (1, 5) and (picked == 1).all()  # class 1 has ~all the mass


def test_debugging_namespace_and_tf1_top_level_names():
    assert tf.debugging.assert_less is tf.assert_less and tf.debugging.Assert is tf.Assert
    assert tf.debugging.assert_all_finite is tf.verify_tensor_all_finite
    assert not hasattr(tf, "assert_all_finite")  # TF1 has it under tf.debugging only
    for name in ("Assert", "Print", "print", "py_func", "numpy_function", "check_numerics",
                 "add_check_numerics_ops", "assert_rank", "assert_scalar"):
        assert name in tf.__all__ and getattr(tf1, name) is getattr(tf, name)


def test_strings_namespace_and_host_op_top_level_names():
    assert tf.strings.join is tf.string_join and tf.strings.to_number is tf.string_to_number
    assert tf.strings.as_string is tf.as_string and tf.strings.split is not tf.string_split
    for name in ("unique", "unique_with_counts", "setdiff1d", "dynamic_partition",
                 "dynamic_stitch", "boolean_mask", "string_join", "string_split", "as_string",
                 "string_to_number", "SparseTensor", "SparseTensorValue"):
        assert name in tf.__all__ and getattr(tf1, name) is getattr(tf, name)
    assert not hasattr(tf, "where_indices")  # tf.where(condition) is TF1's spelling


def test_example_parsing_names():
    for name in ("FixedLenFeature", "VarLenFeature", "FixedLenSequenceFeature", "parse_example",
                 "parse_single_example", "decode_raw", "parse_tensor", "serialize_tensor"):
        assert name in tf.__all__ and getattr(tf1, name) is getattr(tf, name)
        assert getattr(tf.io, name) is getattr(tf, name)
    for name in ("Example", "SequenceExample", "Features", "Feature", "FeatureList",
                 "FeatureLists", "Int64List", "FloatList", "BytesList"):
        assert getattr(tf.train, name).__name__ == name


def test_issue_19_aliases_across_namespaces():
    # TF1 exports these under several names; each must be the same object.
    assert tf.debugging.is_non_decreasing is tf.math.is_non_decreasing
    assert tf.debugging.is_strictly_increasing is tf.math.is_strictly_increasing
    assert tf.nn.approx_max_k is tf.math.approx_max_k
    assert tf.nn.approx_min_k is tf.math.approx_min_k
    assert tf.spectral.fft is tf.signal.fft is tf.fft
    assert tf.manip.roll is tf.roll
    versions = tf.get_default_graph().graph_def_versions
    assert (versions.producer, versions.min_consumer) == (134, 0)  # TF 1.15.0's GraphDef


def test_import_leaves_heavy_libraries_unloaded():
    # scipy.stats (sobol_sample) and unittest/absltest (tf.test) cost half a second and
    # tens of MB; programs that never use them should not pay for them.
    code = ("import sys, tensorflux\n"
            "print(sorted(m for m in ('scipy.stats', 'unittest.mock', 'absl.testing',"
            " 'matplotlib', 'farmhash') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"
