"""tf.test: TestCase (run through unittest), gradient checker, helpers."""

import json
import os
import platform
import unittest

import jax
import numpy as np

import tensorflux as tf


def _run(case_class, *names):
    suite = unittest.TestSuite(case_class(name) for name in names)
    result = unittest.TestResult()
    suite.run(result)
    return result


def _make_case():
    class Case(tf.test.TestCase):
        def test_fresh_graph_and_sessions(self):
            a = tf.constant([1.0, 2.0])
            assert a.name == "Const:0"  # each test method starts a new default graph
            with self.cached_session() as sess:
                assert tf.get_default_session() is sess
                self.assertAllClose(self.evaluate(a * 2), [2.0, 4.0])
                with self.cached_session() as again:
                    assert again is sess
                assert "/device:CPU:0" in (a * 3).op.device  # CPU unless use_gpu
            with self.session() as s1:
                assert s1 is not sess and self.evaluate(a + 1)[1] == 3.0
            with self.test_session() as s2:
                assert s2 is sess
            with self.assertRaisesRegex(ValueError, "graph used to get the cached session"):
                with self.cached_session(graph=tf.Graph()):
                    pass
            assert self.evaluate({"x": a, "y": [a[0]]})["y"][0] == 1.0

        def test_second_method_also_fresh(self):
            assert tf.constant(0).name == "Const:0"
            assert tf.get_default_graph().seed == 87654321
            assert os.path.isdir(self.get_temp_dir())

        def test_assertions_that_pass(self):
            self.assertAllClose([1.0, 2.0], np.array([1.0, 2.0 + 1e-7]))
            self.assertAllClose({"a": [1.0], "b": (2.0, [3.0])}, {"a": [1.0], "b": (2.0, [3.0])})
            self.assertAllClose(tf.constant([np.nan, 1.0]), [np.nan, 1.0])
            self.assertAllCloseAccordingToType(np.float16([1.0]), np.float16([1.0005]))
            self.assertNotAllClose([1.0], [2.0])
            self.assertAllEqual(tf.constant([[1, 2]]), [[1, 2]])
            self.assertNotAllEqual([1, 2], [1, 3])
            self.assertAllLess([1, 2], 3)
            self.assertAllLessEqual([1, 3], 3)
            self.assertAllGreater([4, 5], 3)
            self.assertAllGreaterEqual([3, 5], 3)
            self.assertAllInRange([0.0, 0.5, 1.0], 0.0, 1.0)
            self.assertAllInSet([1, 2, 2], {1, 2})
            self.assertArrayNear([1.0, 2.0], [1.05, 1.95], 0.1)
            self.assertNear(1.0, 1.001, 0.01)
            self.assertNDArrayNear(np.ones(3), np.ones(3) + 0.01, 0.1)
            t = tf.placeholder(tf.float32, [None, 3])
            self.assertShapeEqual(np.zeros((2, 3)), tf.zeros([2, 3]))
            with self.assertRaises(AssertionError):
                self.assertShapeEqual(np.zeros((2, 3)), t)  # [None, 3] vs (2, 3)
            self.assertDTypeEqual(np.zeros(2, np.int32), np.int32)
            self.assertStartsWith("tensorflux", "tensor")
            self.assertItemsEqual([1, 2], [2, 1])
            summary = tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=1.5)])
            self.assertProtoEquals("value { tag: 'a' simple_value: 1.5 }", summary)
            self.assertProtoEquals(summary, tf.Summary.FromString(summary.SerializeToString()))
            with self.assertRaisesOpError("You must feed a value for placeholder"):
                self.evaluate(t)
            with self.assertRaisesWithPredicateMatch(ValueError, lambda e: "boom" in str(e)):
                raise ValueError("boom")
            thread = self.checkedThread(target=lambda: None)
            thread.start()
            thread.join()

        def test_fail_all_close(self):
            self.assertAllClose([1.0, 2.0, 3.0], [1.0, 2.5, 3.0])

        def test_fail_shape(self):
            self.assertAllEqual([1, 2], [1, 2, 3])

        def test_fail_range(self):
            self.assertAllInRange([0.5, 2.0, -1.0], 0.0, 1.0, open_upper_bound=True)

        def test_fail_op_error_pattern(self):
            with self.assertRaisesOpError("something else"):
                self.evaluate(tf.placeholder(tf.float32))

        def test_fail_not_raised(self):
            with self.assertRaisesOpError("x"):
                pass

        def test_fail_thread(self):
            def bad():
                raise RuntimeError("in thread")
            thread = self.checkedThread(target=bad)
            thread.start()
            thread.join()

        def test_fail_unjoined_thread(self):
            self.checkedThread(target=lambda: None).start()

        def test_fail_proto(self):
            summary = tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=1.5)])
            self.assertProtoEquals("value { tag: 'b' simple_value: 1.5 }", summary)

    return Case


def test_testcase_methods_through_unittest():
    case = _make_case()
    passing = ["test_fresh_graph_and_sessions", "test_second_method_also_fresh",
               "test_assertions_that_pass"]
    result = _run(case, *passing)
    assert result.wasSuccessful(), result.errors + result.failures
    failing = sorted(n for n in dir(case) if n.startswith("test_fail"))
    result = _run(case, *failing)
    messages = {test.id().rsplit(".", 1)[1]: text for test, text in result.failures}
    assert sorted(messages) == failing and not result.errors
    assert "not close where = (array([1])" in messages["test_fail_all_close"]
    assert "not close lhs = [2.]" in messages["test_fail_all_close"]
    assert "Shape mismatch: expected (2,), got (3,)" in messages["test_fail_shape"]
    assert ("2 of the 3 element(s) are outside the range [0.0, 1.0). "
            in messages["test_fail_range"])
    assert "[1] : 2.0" in messages["test_fail_range"] and "[2] : -1.0" in messages["test_fail_range"]
    assert "InvalidArgumentError" in messages["test_fail_op_error_pattern"]
    assert "OpError not raised" in messages["test_fail_not_raised"]
    assert "Error in checkedThread: in thread" in messages["test_fail_thread"]
    assert "A checked thread was not joined." in messages["test_fail_unjoined_thread"]
    assert "tag: 'b'" in messages["test_fail_proto"]


def test_compute_gradient_against_finite_differences():
    x_value = np.array([[0.3, -1.2, 2.0], [0.5, 0.1, -0.7]])
    with tf.Graph().as_default(), tf.Session():
        x = tf.constant(x_value, dtype=tf.float64)
        y = tf.reduce_sum(tf.sin(x) * x, axis=0)  # y_j = sum_i sin(x_ij) x_ij
        jacob_t, jacob_n = tf.test.compute_gradient(x, [2, 3], y, [3], x_init_value=x_value)
        # Independent expectation: d y_j / d x_ij = cos(x) x + sin(x), laid out
        # (x_size, y_size) with x flattened row-major.
        expected = np.zeros((6, 3))
        for i in range(2):
            for j in range(3):
                v = x_value[i, j]
                expected[i * 3 + j, j] = np.cos(v) * v + np.sin(v)
        assert jacob_t.shape == jacob_n.shape == (6, 3)
        np.testing.assert_allclose(jacob_t, expected, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(jacob_n, expected, rtol=1e-5, atol=1e-6)
        assert tf.test.compute_gradient_error(x, [2, 3], y, [3], x_init_value=x_value) < 1e-6

        # A list of inputs: one (theoretical, numeric) pair per input.
        # Each input is fed in turn; the other keeps its value.
        a = tf.constant([1.0, 2.0], tf.float64)
        b = tf.constant([3.0, 4.0], tf.float64)
        z = a * b
        pairs = tf.test.compute_gradient([a, b], [[2], [2]], z, [2],
                                         x_init_value=[np.array([1.0, 2.0]),
                                                       np.array([3.0, 4.0])])
        assert len(pairs) == 2
        np.testing.assert_allclose(pairs[0][0], np.diag([3.0, 4.0]))
        np.testing.assert_allclose(pairs[1][1], np.diag([1.0, 2.0]), atol=1e-8)

        # A wrong gradient is caught.
        @tf.RegisterGradient("ScaffoldWrongSquareGrad")
        def _wrong(op, grad):
            return [grad * 3.0 * op.inputs[0]]

        w = tf.placeholder(tf.float64, [3])
        with tf.get_default_graph().gradient_override_map({"Square": "ScaffoldWrongSquareGrad"}):
            sq = tf.square(w)
        error = tf.test.compute_gradient_error(w, [3], sq, [3],
                                               x_init_value=np.array([1.0, 2.0, 3.0]))
        np.testing.assert_allclose(error, 3.0, rtol=1e-6)  # 3x vs 2x at x = 3


def test_helpers(tmp_path, monkeypatch):
    has_gpu = any(d.platform == "gpu" for d in jax.devices())
    assert tf.test.is_gpu_available() == has_gpu
    assert tf.test.gpu_device_name() == ("/device:GPU:0" if has_gpu else "")
    assert tf.test.is_built_with_xla() is True
    assert tf.test.is_built_with_gpu_support() == (tf.test.is_built_with_cuda()
                                                   or tf.test.is_built_with_rocm())
    machine = platform.machine().lower()
    assert tf.test.is_cpu_target_available(machine)
    assert not tf.test.is_cpu_target_available("not_a_cpu_feature")
    assert os.path.isdir(tf.test.get_temp_dir())
    assert tf.test.test_src_dir_path("datasets") == os.path.join(
        os.path.dirname(tf.__file__), "datasets")
    assert tf.test.with_eager_op_as_function(int) is int
    tf.test.experimental.sync_devices()

    class Holder:
        value = 1

        @staticmethod
        def static():
            return "orig"

    with tf.test.StubOutForTesting() as stubs:
        stubs.Set(Holder, "value", 2)
        stubs.SmartSet(Holder, "static", staticmethod(lambda: "stub"))
        assert Holder.value == 2 and Holder().static() == "stub"
    assert Holder.value == 1 and Holder().static() == "orig"

    class Case(tf.test.TestCase):
        @tf.test.disable_with_predicate(lambda: True, "skipped by predicate")
        def test_skipped(self):
            raise AssertionError("ran")

    result = _run(Case, "test_skipped")
    assert [reason for _, reason in result.skipped] == ["skipped by predicate"]

    # Benchmarks: run_op_benchmark times runs and reports them (to a file when asked).
    monkeypatch.setenv("TEST_REPORT_FILE_PREFIX", str(tmp_path / "bench_"))

    class AddBenchmark(tf.test.Benchmark):
        def benchmark_add(self):
            with tf.Graph().as_default(), tf.Session(config=tf.test.benchmark_config()) as sess:
                return self.run_op_benchmark(sess, tf.constant(1.0) + 2.0, min_iters=3,
                                             burn_iters=1, extras={"k": 1})

    values = AddBenchmark().benchmark_add()
    assert values["iters"] == 3 and values["wall_time"] > 0 and values["extras"] == {"k": 1}
    report = json.loads((tmp_path / "bench_AddBenchmark.benchmark_add").read_text())
    assert report["entry"][0]["name"] == "AddBenchmark.benchmark_add"
    assert report["entry"][0]["iters"] == 3

    workers, ps = tf.test.create_local_cluster(2, 1)
    try:
        assert len(workers) == 2 and len(ps) == 1
        assert all(s.target.startswith("grpc://localhost:") for s in workers + ps)
        assert len({s.target for s in workers + ps}) == 3
    finally:
        for s in workers + ps:
            s.stop()
