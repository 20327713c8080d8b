"""`tf.test`: TF1's TestCase, test main, gradient checker and benchmark helpers."""

from unittest import mock  # noqa: F401  (tf.test.mock)

from tensorflux._src.platform.benchmark import Benchmark, benchmark_config  # noqa: F401
from tensorflux._src.platform.graph_compare import assert_equal_graph_def  # noqa: F401
from tensorflux._src.platform.googletest import (  # noqa: F401
    GetTempDir as get_temp_dir, StubOutForTesting, main, test_src_dir_path,
)
from tensorflux._src.platform.gradient_checker import (  # noqa: F401
    compute_gradient, compute_gradient_error,
)
from tensorflux._src.platform.test_util import (  # noqa: F401
    TestCase, create_local_cluster, disable_with_predicate, gpu_device_name,
    is_built_with_cuda, is_built_with_gpu_support, is_built_with_rocm, is_built_with_xla,
    is_cpu_target_available, is_gpu_available, with_eager_op_as_function,
)
from tensorflux.test import experimental  # noqa: F401

__all__ = ["Benchmark", "StubOutForTesting", "TestCase", "assert_equal_graph_def",
           "benchmark_config",
           "compute_gradient", "compute_gradient_error", "create_local_cluster",
           "disable_with_predicate", "experimental", "get_temp_dir", "gpu_device_name",
           "is_built_with_cuda", "is_built_with_gpu_support", "is_built_with_rocm",
           "is_built_with_xla", "is_cpu_target_available", "is_gpu_available", "main",
           "mock", "test_src_dir_path", "with_eager_op_as_function"]
