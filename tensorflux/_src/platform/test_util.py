"""`tf.test.TestCase` and the helpers of TF1's test_util.

TestCase is absltest's TestCase (a unittest.TestCase) with TF1's graph-mode API: every
test method starts in a fresh default graph with TF's test seeds, `session()` /
`cached_session()` / `test_session()` open Sessions pinned to the CPU unless `use_gpu`,
`evaluate` runs tensors in the default (or a cached) session, and the array assertions
report mismatches the way TF's do.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import random
import re
import socket
import tempfile
import threading

import jax
import numpy as np
from absl.testing import absltest

from tensorflux._src.framework import errors, random_seed
from tensorflux._src.framework import graph as ops
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.platform import googletest
from tensorflux._src.platform import tf_logging as logging
from tensorflux._src.framework import default_session
from tensorflux._src.runtime.config import default_config
from tensorflux._src.runtime.session import Session

__all__ = ["TestCase", "is_gpu_available", "gpu_device_name", "create_local_cluster",
           "is_built_with_cuda", "is_built_with_rocm", "is_built_with_gpu_support",
           "is_built_with_xla", "is_cpu_target_available", "disable_with_predicate",
           "with_eager_op_as_function"]


def _gpus():
    try:
        return jax.devices("gpu")
    except RuntimeError:
        return []


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    """True if JAX sees a GPU (a CUDA one with `cuda_only`; of compute capability >=
    `min_cuda_compute_capability`, a (major, minor) tuple, when given)."""
    for d in _gpus():
        if cuda_only and "rocm" in _platform_version(d):
            continue
        if min_cuda_compute_capability is None:
            return True
        cc = getattr(d, "compute_capability", None)
        if cc and (tuple(int(x) for x in str(cc).split(".")[:2])
                   >= tuple(min_cuda_compute_capability)):
            return True
    return False


def _platform_version(d):
    return str(getattr(d.client, "platform_version", "")).lower()


def gpu_device_name():
    """'/device:GPU:0' when a GPU is available, else ''."""
    return "/device:GPU:0" if _gpus() else ""


def is_built_with_cuda():
    """True when the installed jaxlib has a CUDA backend (a GPU need not be present)."""
    return _has_plugin("cuda")


def is_built_with_rocm():
    """True when the installed jaxlib has a ROCm backend."""
    return _has_plugin("rocm")


def is_built_with_gpu_support():
    """True when built with CUDA or ROCm."""
    return is_built_with_cuda() or is_built_with_rocm()


def is_built_with_xla():
    """True: every graph here is compiled by XLA."""
    return True


def _has_plugin(name):
    if any(name in _platform_version(d) for d in _gpus()):
        return True
    import importlib.util
    for module in (f"jax_{name}12_plugin", f"jax_{name}13_plugin", f"jax_{name}_plugin",
                   f"jax_plugins.xla_{name}12", f"jax_plugins.xla_{name}13"):
        try:
            if importlib.util.find_spec(module) is not None:
                return True
        except ImportError:  # the parent package is not there
            continue
    return False


def is_cpu_target_available(target):
    """Whether this CPU supports `target` (e.g. 'avx', 'avx2', 'avx512f', 'aarch64')."""
    import platform
    target = target.lower()
    machine = platform.machine().lower()
    if target in ("aarch64", "arm64", "x86_64", "x86", "amd64"):
        return target in machine or (target == "arm64" and machine == "aarch64") or \
            (target == "amd64" and machine == "x86_64")
    try:
        with open("/proc/cpuinfo") as f:
            flags = set(re.findall(r"\w+", next(
                (line for line in f if line.startswith(("flags", "Features"))), "")))
    except OSError:
        return False
    return target in flags


def disable_with_predicate(pred, skip_message):
    """Decorates a test method to skip with `skip_message` when `pred()` is true."""

    def decorator(func):
        import functools

        @functools.wraps(func)
        def wrapper(self, *args, **kwargs):
            if pred():
                self.skipTest(skip_message)
            return func(self, *args, **kwargs)

        return wrapper

    return decorator


def with_eager_op_as_function(cls=None, only_as_function=False):  # noqa: ARG001
    """Returns the class unchanged (there is no eager mode to vary)."""
    return cls if cls is not None else (lambda c: c)


def _free_port():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def create_local_cluster(num_workers, num_ps, protocol="grpc", worker_config=None,
                         ps_config=None):
    """Starts `num_workers` worker and `num_ps` ps `tf.train.Server`s on free localhost
    ports; returns `(workers, ps_servers)`."""
    from tensorflux._src.train.server_lib import ClusterSpec, Server
    cs = ClusterSpec({"worker": [f"localhost:{_free_port()}" for _ in range(num_workers)],
                      "ps": [f"localhost:{_free_port()}" for _ in range(num_ps)]})
    workers = [Server(cs, job_name="worker", protocol=protocol, task_index=i,
                      config=worker_config, start=True) for i in range(num_workers)]
    ps_servers = [Server(cs, job_name="ps", protocol=protocol, task_index=i,
                         config=ps_config, start=True) for i in range(num_ps)]
    return workers, ps_servers


class _CheckedThread:
    """A thread whose exception fails the test when joined."""

    def __init__(self, testcase, target, args=None, kwargs=None):
        self._testcase = testcase
        self._target = target
        self._args = () if args is None else args
        self._kwargs = {} if kwargs is None else kwargs
        self._thread = threading.Thread(target=self._protected_run)
        self._exception = None
        self._is_thread_joined = False

    def _protected_run(self):
        try:
            self._target(*self._args, **self._kwargs)
        except Exception as e:  # noqa: BLE001  (reported in join)
            self._exception = e

    def start(self):
        self._thread.start()

    def join(self):
        self._thread.join()
        self._is_thread_joined = True
        if self._exception is not None:
            self._testcase.fail(f"Error in checkedThread: {self._exception}")

    def is_alive(self):
        return self._thread.is_alive()

    def check_termination(self):
        if self._is_thread_joined:
            if self.is_alive():
                raise RuntimeError("Thread was not joined with main thread, and is still "
                                   "running when the test finished.")
        else:
            self._testcase.fail("A checked thread was not joined.")


def _proto_tokens(text):
    """Text-format tokens, so spacing, ':' separators, quote style and number spelling
    do not matter when comparing."""
    tokens = re.findall(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|[{}<>\[\]]'
                        r'|[^\s{}<>\[\]:,;]+', text)
    out = []
    for t in tokens:
        if t[0] in "\"'":
            out.append(("str", t[1:-1]))
            continue
        t = {"<": "{", ">": "}"}.get(t, t)
        try:
            out.append(float(t.rstrip("fF")) if t[0] in "+-.0123456789" or t in ("inf", "nan")
                       else t)
        except ValueError:
            out.append(t)
    return out


class TestCase(absltest.TestCase):
    """TF1's `tf.test.TestCase`."""

    def __init__(self, methodName="runTest"):  # noqa: N803  (unittest's name)
        super().__init__(methodName)
        self._threads = []
        self._tempdir = None
        self._cached_session = None
        self._cached_graph = None
        self._cached_config = None
        self._cached_force_gpu = False

    def setUp(self):
        self._ClearCachedSession()
        random.seed(random_seed.DEFAULT_GRAPH_SEED)
        np.random.seed(random_seed.DEFAULT_GRAPH_SEED)
        ops.reset_default_graph()
        random_seed.set_random_seed(random_seed.DEFAULT_GRAPH_SEED)

    def tearDown(self):
        for thread in self._threads:
            thread.check_termination()
        self._ClearCachedSession()

    def _ClearCachedSession(self):  # noqa: N802
        if self._cached_session is not None:
            self._cached_session.close()
            self._cached_session = None

    def get_temp_dir(self):
        """A temporary directory for this test, under `tf.test.get_temp_dir()`."""
        if not self._tempdir:
            self._tempdir = tempfile.mkdtemp(dir=googletest.GetTempDir())
        return self._tempdir

    # -- sessions ----------------------------------------------------------------------
    def _create_session(self, graph, config, force_gpu):
        if config is None:
            config = default_config()
            config.allow_soft_placement = not force_gpu
        elif force_gpu and config.allow_soft_placement:
            import copy
            config = copy.deepcopy(config)
            config.allow_soft_placement = False
        return Session(graph=graph, config=config)

    @contextlib.contextmanager
    def _constrain_devices_and_set_default(self, sess, use_gpu, force_gpu):
        with sess.graph.as_default(), sess.as_default():
            if force_gpu:
                with sess.graph.device(gpu_device_name() or "/device:GPU:0"):
                    yield sess
            elif use_gpu:
                yield sess
            else:
                with sess.graph.device("/device:CPU:0"):
                    yield sess

    def _get_cached_session(self, graph=None, config=None, force_gpu=False,
                            crash_if_inconsistent_args=True):
        if self._cached_session is None:
            self._cached_session = self._create_session(graph, config, force_gpu)
            self._cached_graph, self._cached_config = graph, config
            self._cached_force_gpu = force_gpu
            return self._cached_session
        if crash_if_inconsistent_args:
            for what, cached, given in (("graph", self._cached_graph, graph),
                                        ("config", self._cached_config, config),
                                        ("force_gpu value", self._cached_force_gpu,
                                         force_gpu)):
                if cached is not given:
                    raise ValueError(
                        f"The {what} used to get the cached session is different than the "
                        "one that was used to create the session. Maybe create a new "
                        "session with self.session()")
        return self._cached_session

    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """A new Session (closed on exit), default for the block, on the CPU unless
        `use_gpu`; `force_gpu` pins to the GPU with soft placement off."""
        with self._create_session(graph, config, force_gpu) as sess:
            with self._constrain_devices_and_set_default(sess, use_gpu, force_gpu):
                yield sess

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """The test's one Session (created on first use, closed in tearDown)."""
        sess = self._get_cached_session(graph, config, force_gpu)
        with self._constrain_devices_and_set_default(sess, use_gpu, force_gpu) as cached:
            yield cached

    @contextlib.contextmanager
    def _test_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """Deprecated: `cached_session()` without a graph, `session(graph)` with one."""
        if graph is None:
            sess = self._get_cached_session(graph, config, force_gpu,
                                            crash_if_inconsistent_args=False)
            with self._constrain_devices_and_set_default(sess, use_gpu, force_gpu) as c:
                yield c
        else:
            with self.session(graph, config, use_gpu, force_gpu) as sess:
                yield sess

    # A property, so unittest's loader (which collects callables named test*) does not
    # take `self.test_session()` for a test.
    test_session = property(lambda self: self._test_session,
                            doc="Deprecated: `cached_session()` without a graph, "
                                "`session(graph)` with one.")

    def evaluate(self, tensors):
        """The values of `tensors` (any fetch structure) in the default session."""
        sess = default_session.get_default_session()
        if sess is None:
            with self.test_session() as sess:
                return sess.run(tensors)
        return sess.run(tensors)

    def checkedThread(self, target, args=None, kwargs=None):  # noqa: N802
        """A thread whose exception fails the test on join(); tearDown checks every
        checked thread was joined."""
        thread = _CheckedThread(self, target, args, kwargs)
        self._threads.append(thread)
        return thread

    # -- assertions --------------------------------------------------------------------
    def _GetNdArray(self, a):  # noqa: N802
        if isinstance(a, Tensor):
            a = self.evaluate(a)
        if not isinstance(a, np.ndarray):
            return np.array(a)
        return a

    def assertNear(self, f1, f2, err, msg=None):  # noqa: N802
        """|f1 - f2| <= err."""
        self.assertTrue(f1 == f2 or math.fabs(f1 - f2) <= err,
                        "%f != %f +/- %f%s" % (f1, f2, err,
                                               " (%s)" % msg if msg is not None else ""))

    def assertArrayNear(self, farray1, farray2, err, msg=None):  # noqa: N802
        """Element-wise assertNear of two equal-length lists."""
        self.assertEqual(len(farray1), len(farray2), msg=msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg=msg)

    def assertNDArrayNear(self, ndarray1, ndarray2, err, msg=None):  # noqa: N802
        """||ndarray1 - ndarray2|| < err."""
        self.assertTrue(np.linalg.norm(ndarray1 - ndarray2) < err, msg=msg)

    def _assertArrayLikeAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        a, b = self._GetNdArray(a), self._GetNdArray(b)
        if a.shape != b.shape and (b.ndim <= 3 or b.size < 500):
            mismatch = ("Shape mismatch: expected %s, got %s with contents %s."
                        % (a.shape, b.shape, b))
        else:
            mismatch = "Shape mismatch: expected %s, got %s." % (a.shape, b.shape)
        self.assertEqual(a.shape, b.shape, mismatch)
        msgs = [msg]
        a32, b32 = _as_comparable(a), _as_comparable(b)
        if not np.allclose(a32, b32, rtol=rtol, atol=atol):
            cond = np.logical_or(np.abs(a32 - b32) > atol + rtol * np.abs(b32),
                                 np.isnan(a32) != np.isnan(b32))
            if a.ndim:
                x, y = a32[np.where(cond)], b32[np.where(cond)]
                msgs.append("not close where = {}".format(np.where(cond)))
            else:
                x, y = a32, b32
            msgs.append("not close lhs = {}".format(x))
            msgs.append("not close rhs = {}".format(y))
            msgs.append("not close dif = {}".format(np.abs(x - y)))
            msgs.append("not close tol = {}".format(atol + rtol * np.abs(y)))
            msgs.append("dtype = {}, shape = {}".format(a.dtype, a.shape))
            np.testing.assert_allclose(a32, b32, rtol=rtol, atol=atol,
                                       err_msg="\n".join(str(m) for m in msgs),
                                       equal_nan=True)

    def _assertAllCloseRecursive(self, a, b, rtol, atol, path, msg):  # noqa: N802
        path_str = (("[" + "][".join(str(p) for p in path) + "]") if path else "")
        msg = msg if msg else ""
        if isinstance(a, dict) or isinstance(b, dict):
            self.assertIsInstance(a, dict, "Mismatched type: a%s is a dict, b%s is %s. %s"
                                  % (path_str, path_str, type(b), msg))
            self.assertIsInstance(b, dict, "Mismatched type: a%s is %s, b%s is a dict. %s"
                                  % (path_str, type(a), path_str, msg))
            self.assertItemsEqual(a.keys(), b.keys(),
                                  "mismatched keys: a%s has keys %s, but b%s has keys %s. %s"
                                  % (path_str, a.keys(), path_str, b.keys(), msg))
            for k in a:
                self._assertAllCloseRecursive(a[k], b[k], rtol, atol, path + [k], msg)
        elif isinstance(a, (list, tuple)) and not _is_array_like_leaf(a):
            b_as_seq = list(b) if isinstance(b, (list, tuple)) else None
            if b_as_seq is None or len(a) != len(b_as_seq):
                raise AssertionError("Mismatched length: a%s has %d items, but b%s has %s "
                                     "items. %s" % (path_str, len(a), path_str,
                                                    len(b) if hasattr(b, "__len__") else "no",
                                                    msg))
            for idx, (a_ele, b_ele) in enumerate(zip(a, b_as_seq)):
                self._assertAllCloseRecursive(a_ele, b_ele, rtol, atol, path + [idx], msg)
        else:
            try:
                self._assertArrayLikeAllClose(
                    a, b, rtol=rtol, atol=atol,
                    msg="Mismatched value: a%s is different from b%s. %s"
                        % (path_str, path_str, msg))
            except TypeError as e:
                raise type(e)("Error: a%s has %s, but b%s has %s. %s"
                              % (path_str, type(a), path_str, type(b), msg)) from e

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        """`a` and `b` (arrays, tensors, or nested lists/tuples/dicts of them) are equal
        within `atol + rtol * |b|` element-wise; NaNs must match."""
        self._assertAllCloseRecursive(a, b, rtol=rtol, atol=atol, path=[], msg=msg)

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6,  # noqa: N802
                                      float_rtol=1e-6, float_atol=1e-6, half_rtol=1e-3,
                                      half_atol=1e-3, bfloat16_rtol=1e-2,
                                      bfloat16_atol=1e-2, msg=None):
        """assertAllClose with tolerances loosened for the lowest precision involved."""
        a, b = self._GetNdArray(a), self._GetNdArray(b)
        dtypes_ = {a.dtype, b.dtype}
        import ml_dtypes
        if dtypes_ & {np.dtype(np.float32), np.dtype(np.complex64)}:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        if np.dtype(np.float16) in dtypes_:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        if np.dtype(ml_dtypes.bfloat16) in dtypes_:
            rtol, atol = max(rtol, bfloat16_rtol), max(atol, bfloat16_atol)
        self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertNotAllClose(self, a, b, **kwargs):  # noqa: N802
        """Fails if `a` and `b` are close everywhere."""
        try:
            self.assertAllClose(a, b, **kwargs)
        except AssertionError:
            return
        raise AssertionError("The two values are close at all elements")

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802
        """`a` and `b` have the same shape and elements (NaN equals NaN for floats)."""
        msg = msg if msg else ""
        a, b = self._GetNdArray(a), self._GetNdArray(b)
        if b.ndim <= 3 or b.size < 500:
            self.assertEqual(a.shape, b.shape, "Shape mismatch: expected %s, got %s. "
                             "Contents: %r. \n%s." % (a.shape, b.shape, b, msg))
        else:
            self.assertEqual(a.shape, b.shape, "Shape mismatch: expected %s, got %s. %s"
                             % (a.shape, b.shape, msg))
        same = a == b
        if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
            same = np.logical_or(same, np.logical_and(np.isnan(_as_comparable(a)),
                                                      np.isnan(_as_comparable(b))))
        if not np.all(same):
            msgs = [msg]
            diff = np.logical_not(same)
            if a.ndim:
                x, y = a[np.where(diff)], b[np.where(diff)]
                msgs.append("not equal where = {}".format(np.where(diff)))
            else:
                x, y = a, b
            msgs.append("not equal lhs = {}".format(x))
            msgs.append("not equal rhs = {}".format(y))
            np.testing.assert_array_equal(a, b, err_msg="\n".join(msgs))

    def assertNotAllEqual(self, a, b, msg=None):  # noqa: N802
        """Fails if `a` and `b` are equal everywhere."""
        try:
            self.assertAllEqual(a, b)
        except AssertionError:
            return
        raise AssertionError("The two values are equal at all elements. %s" % (msg or ""))

    def assertAllGreater(self, a, comparison_target):  # noqa: N802
        """Every element of `a` > comparison_target."""
        self.assertGreater(np.min(self._GetNdArray(a)), comparison_target)

    def assertAllLess(self, a, comparison_target):  # noqa: N802
        """Every element of `a` < comparison_target."""
        self.assertLess(np.max(self._GetNdArray(a)), comparison_target)

    def assertAllGreaterEqual(self, a, comparison_target):  # noqa: N802
        """Every element of `a` >= comparison_target."""
        self.assertGreaterEqual(np.min(self._GetNdArray(a)), comparison_target)

    def assertAllLessEqual(self, a, comparison_target):  # noqa: N802
        """Every element of `a` <= comparison_target."""
        self.assertLessEqual(np.max(self._GetNdArray(a)), comparison_target)

    def _format_subscripts(self, subscripts, value, limit=10, indent=2):
        lines = []
        subscripts = np.transpose(subscripts)
        prefix = " " * indent
        for subscript in itertools.islice(subscripts, limit):
            lines.append(prefix + str(subscript) + " : " + str(value[tuple(subscript)]))
        if len(subscripts) > limit:
            lines.append(prefix + "...")
        return lines

    def assertAllInRange(self, target, lower_bound, upper_bound,  # noqa: N802
                         open_lower_bound=False, open_upper_bound=False):
        """Every element of `target` is in [lower, upper] (or open at either end)."""
        target = self._GetNdArray(target)
        if not (np.issubdtype(target.dtype, np.floating)
                or np.issubdtype(target.dtype, np.integer)):
            raise AssertionError("The value of %s does not have an ordered numeric type, "
                                 "instead it has type: %s" % (target, target.dtype))
        nan_subscripts = np.where(np.isnan(target))
        if np.size(nan_subscripts):
            raise AssertionError(
                "%d of the %d element(s) are NaN. Subscripts(s) and value(s) of the NaN "
                "element(s):\n" % (len(nan_subscripts[0]), np.size(target))
                + "\n".join(self._format_subscripts(nan_subscripts, target)))
        range_str = (("(" if open_lower_bound else "[") + str(lower_bound) + ", "
                     + str(upper_bound) + (")" if open_upper_bound else "]"))
        violations = (np.less_equal(target, lower_bound) if open_lower_bound
                      else np.less(target, lower_bound))
        violations = np.logical_or(violations, np.greater_equal(target, upper_bound)
                                   if open_upper_bound else np.greater(target, upper_bound))
        violation_subscripts = np.where(violations)
        if np.size(violation_subscripts):
            raise AssertionError(
                "%d of the %d element(s) are outside the range %s. "
                % (len(violation_subscripts[0]), np.size(target), range_str)
                + "Subscript(s) and value(s) of the offending elements:\n"
                + "\n".join(self._format_subscripts(violation_subscripts, target)))

    def assertAllInSet(self, target, expected_set):  # noqa: N802
        """Every element of `target` is in `expected_set`."""
        target = self._GetNdArray(target)
        diff = np.setdiff1d(target.flatten(), list(expected_set))
        if np.size(diff):
            raise AssertionError("%d unique element(s) are not in the set %s: %s"
                                 % (np.size(diff), expected_set, diff))

    def assertDTypeEqual(self, target, expected_dtype):  # noqa: N802
        """`target` (array or list of arrays) has numpy dtype `expected_dtype`."""
        arrays = target if isinstance(target, list) else [target]
        for arr in arrays:
            self.assertEqual(self._GetNdArray(arr).dtype, expected_dtype)

    def assertShapeEqual(self, np_array, tf_tensor, msg=None):  # noqa: N802
        """The numpy array's shape equals the tensor's static shape."""
        if not isinstance(np_array, (np.ndarray, np.generic)):
            raise TypeError("np_array must be a Numpy ndarray or Numpy scalar")
        if not isinstance(tf_tensor, Tensor):
            raise TypeError("tf_tensor must be a Tensor")
        self.assertAllEqual(np_array.shape, tf_tensor.get_shape().as_list(), msg=msg)

    def assertDeviceEqual(self, device1, device2, msg=None):  # noqa: N802
        """Two device strings name the same device."""
        from tensorflux._src.framework import device as pydev
        d1 = pydev.canonical_name(device1) if hasattr(pydev, "canonical_name") else device1
        d2 = pydev.canonical_name(device2) if hasattr(pydev, "canonical_name") else device2
        self.assertEqual(d1, d2, "Devices %s and %s are not equal. %s" % (d1, d2, msg or ""))

    def assertStartsWith(self, actual, expected_start, msg=None):  # noqa: N802
        """`actual` starts with `expected_start`."""
        if not actual.startswith(expected_start):
            fail_msg = "%r does not start with %r" % (actual, expected_start)
            fail_msg += " : %r" % msg if msg else ""
            self.fail(fail_msg)

    def assertProtoEquals(self, expected_message_maybe_ascii, message, msg=None):  # noqa: N802
        """`message` equals the expected message, given as a message or as text format
        (compared token by token: whitespace, ':' and number spelling do not matter)."""
        if isinstance(expected_message_maybe_ascii, str):
            got = _proto_tokens(str(message))
            want = _proto_tokens(expected_message_maybe_ascii)
            if got != want:
                self.fail("%s\n!=\n%s%s" % (str(message), expected_message_maybe_ascii,
                                            "\n" + msg if msg else ""))
        elif expected_message_maybe_ascii != message:
            self.assertMultiLineEqual(str(expected_message_maybe_ascii), str(message), msg)

    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(self, exception_type,  # noqa: N802
                                       expected_err_re_or_predicate):
        """The block raises `exception_type` whose message matches the regex (or which
        the predicate accepts); an OpError's message includes its op's name."""
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:
            def predicate(e):
                err_str = e.message if isinstance(e, errors.OpError) else str(e)
                op = e.op if isinstance(e, errors.OpError) else None
                while op is not None:
                    err_str += "\nCaused by: " + op.name
                    op = getattr(op, "_original_op", None)
                logging.info("Searching within error strings: '%s' within '%s'",
                             expected_err_re_or_predicate, err_str)
                return re.search(expected_err_re_or_predicate, err_str)
        try:
            yield
            self.fail(exception_type.__name__ + " not raised")
        except Exception as e:  # noqa: BLE001
            if not isinstance(e, exception_type) or not predicate(e):
                raise AssertionError("Exception of type %s: %s" % (str(type(e)), str(e))) \
                    from e

    def assertRaisesOpError(self, expected_err_re_or_predicate):  # noqa: N802
        """assertRaisesWithPredicateMatch for `tf.errors.OpError`."""
        return self.assertRaisesWithPredicateMatch(errors.OpError,
                                                   expected_err_re_or_predicate)

    assertItemsEqual = absltest.TestCase.assertCountEqual


def _is_array_like_leaf(a):
    # A list of numbers is compared as one array (TF converts it with np.array).
    try:
        arr = np.asarray(a)
    except (ValueError, TypeError):
        return False
    return arr.dtype != object


def _as_comparable(a):
    """float64/complex values for the tolerance arithmetic (bfloat16 has no isnan)."""
    if a.dtype.kind in "fc" or a.dtype.name == "bfloat16":
        return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    return a
