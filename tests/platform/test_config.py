"""tf.config (on a fresh settings context per test), resource_loader, version constants."""

import os

import jax
import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.runtime import tf_config as config_impl
from tensorflux._src.runtime import config as runtime_config


@pytest.fixture(autouse=True)
def fresh_config(monkeypatch):
    monkeypatch.setattr(config_impl, "_context", config_impl._Context())
    monkeypatch.setattr(runtime_config, "session_defaults", {})


def test_devices():
    cpus = jax.devices("cpu")
    physical = tf.config.list_physical_devices("CPU")
    assert physical == [tf.config.PhysicalDevice(f"/physical_device:CPU:{i}", "CPU")
                        for i in range(len(cpus))]
    assert physical[0].name == "/physical_device:CPU:0" and physical[0].device_type == "CPU"
    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    assert len(tf.config.list_physical_devices("GPU")) == len(gpus)
    assert tf.config.experimental.list_physical_devices is tf.config.list_physical_devices
    assert tf.config.get_visible_devices() == tf.config.list_physical_devices()

    with pytest.raises(ValueError, match="^Unrecognized device: PhysicalDevice"):
        tf.config.set_visible_devices([tf.config.PhysicalDevice("/physical_device:XPU:0", "XPU")])
    with pytest.raises(ValueError, match="Unrecognized device"):
        tf.config.set_visible_devices(physical[0], "GPU")  # a CPU given as GPU
    tf.config.set_visible_devices([], "GPU")
    assert tf.config.get_visible_devices("CPU") == physical
    assert tf.config.get_visible_devices("GPU") == []

    with pytest.raises(ValueError, match="^Cannot set memory growth on non-GPU devices$"):
        tf.config.experimental.set_memory_growth(physical[0], True)
    assert tf.config.experimental.get_memory_growth(physical[0]) is False
    with pytest.raises(ValueError, match="^Setting memory limit on CPU virtual devices"):
        tf.config.set_logical_device_configuration(
            physical[0], [tf.config.LogicalDeviceConfiguration(memory_limit=10)])
    two = [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()]
    assert tf.config.get_logical_device_configuration(physical[0]) is None
    tf.config.experimental.set_virtual_device_configuration(physical[0], two)
    assert tf.config.get_logical_device_configuration(physical[0]) == two
    assert tf.config.experimental.VirtualDeviceConfiguration is \
        tf.config.LogicalDeviceConfiguration
    assert tf.config.experimental.get_device_details(physical[0]) == {}
    with pytest.raises(ValueError):
        tf.config.experimental.get_memory_info("CPU:0")

    logical = tf.config.list_logical_devices("CPU")  # initializes the runtime
    assert logical[0] == tf.config.LogicalDevice(
        "/job:localhost/replica:0/task:0/device:CPU:0", "CPU")
    assert len(logical) == len(cpus)
    with pytest.raises(RuntimeError,
                       match="^Visible devices cannot be modified after being initialized$"):
        tf.config.set_visible_devices([], "CPU")
    tf.config.set_visible_devices([], "GPU")  # no change: allowed
    with pytest.raises(RuntimeError, match="^Virtual devices cannot be modified"):
        tf.config.set_logical_device_configuration(physical[0], two[:1])
    with pytest.raises(RuntimeError, match="^Intra op parallelism cannot be modified"):
        tf.config.threading.set_intra_op_parallelism_threads(3)


def test_session_defaults_follow_config():
    assert tf.config.get_soft_device_placement() is True  # tensorflux's default
    tf.config.threading.set_intra_op_parallelism_threads(2)
    tf.config.threading.set_inter_op_parallelism_threads(5)
    tf.config.optimizer.set_jit(True)
    assert tf.config.threading.get_intra_op_parallelism_threads() == 2
    assert tf.config.threading.get_inter_op_parallelism_threads() == 5
    assert tf.config.optimizer.get_jit() is True
    with tf.Graph().as_default():
        with tf.Session() as sess:
            cfg = sess._config
            assert (cfg.intra_op_parallelism_threads, cfg.inter_op_parallelism_threads) == (2, 5)
            assert cfg.graph_options.optimizer_options.global_jit_level == 1
        with tf.Session(config=tf.ConfigProto()) as sess:  # an explicit config wins
            assert sess._config.intra_op_parallelism_threads == 0

        with tf.device("/device:CPU:7"):  # no such CPU here
            x = tf.constant([1.0, 2.0]) * 2.0
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(x), [2.0, 4.0])  # soft placement
        tf.config.set_soft_device_placement(False)
        assert tf.config.get_soft_device_placement() is False
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot assign a device"):
                sess.run(x)


def test_other_settings():
    assert tf.config.optimizer.get_experimental_options() == {}
    tf.config.optimizer.set_experimental_options({"constant_folding": False})
    assert tf.config.optimizer.get_experimental_options() == {"constant_folding": False}
    assert tf.config.experimental.get_device_policy() == "silent"
    tf.config.experimental.set_device_policy("explicit")
    assert tf.config.experimental.get_device_policy() == "explicit"
    with pytest.raises(ValueError, match="^Not a valid device policy: 'loud'$"):
        tf.config.experimental.set_device_policy("loud")
    assert tf.config.experimental.get_synchronous_execution() is True
    tf.config.experimental.set_synchronous_execution(False)
    assert tf.config.experimental.get_synchronous_execution() is False
    assert tf.config.functions_run_eagerly() is False
    tf.config.run_functions_eagerly(True)
    assert tf.config.experimental_functions_run_eagerly() is True
    tf.config.experimental.enable_mlir_bridge()
    tf.config.experimental.disable_mlir_bridge()
    assert tf.config.experimental.tensor_float_32_execution_enabled() is True
    try:
        tf.config.experimental.enable_tensor_float_32_execution(False)
        assert jax.config.jax_default_matmul_precision == "float32"
        assert tf.config.experimental.tensor_float_32_execution_enabled() is False
    finally:
        tf.config.experimental.enable_tensor_float_32_execution(True)
    assert jax.config.jax_default_matmul_precision is None

    filters = tf.config.experimental.ClusterDeviceFilters()
    filters.set_device_filters("worker", 0, ["/job:ps"])
    tf.config.experimental_connect_to_cluster(
        tf.train.ClusterSpec({"worker": ["localhost:2222"]}), cluster_device_filters=filters)
    with pytest.raises(ValueError, match="must be a `ClusterSpec` or a `ClusterResolver`"):
        tf.config.experimental_connect_to_cluster({"worker": ["a:1"]})
    with pytest.raises(ValueError, match="^Must provide at least one remote_host$"):
        tf.config.experimental_connect_to_host()
    tf.config.experimental_connect_to_host("grpc://localhost:2223")


def test_versions():
    assert tf.VERSION == "1.15.0" and tf.VERSION.startswith("1.")
    assert "tensorflux" in tf.GIT_VERSION and isinstance(tf.COMPILER_VERSION, str)
    assert (tf.GRAPH_DEF_VERSION, tf.GRAPH_DEF_VERSION_MIN_CONSUMER,
            tf.GRAPH_DEF_VERSION_MIN_PRODUCER) == (134, 0, 0)
    assert (tf.CXX11_ABI_FLAG, tf.MONOLITHIC_BUILD) == (0, 0)
    assert isinstance(tf.CXX_VERSION, int)
    assert tf.compat.v1.VERSION == tf.VERSION and tf.compat.v1.gfile is tf.gfile


def test_resource_loader():
    here = os.path.dirname(os.path.abspath(__file__))
    assert tf.resource_loader.get_data_files_path() == here
    assert tf.resource_loader.get_root_dir_with_all_resources() == here
    assert tf.resource_loader.get_path_to_datafile("x.txt") == os.path.join(here, "x.txt")
    attribution = os.path.join(os.path.dirname(tf.__file__), "datasets", "data",
                               "ATTRIBUTION.md")
    with open(attribution, "rb") as f:
        assert tf.resource_loader.load_resource("datasets/data/ATTRIBUTION.md") == f.read()
    with pytest.raises(OSError):
        tf.resource_loader.load_resource("no/such/file")
    assert tf.resource_loader.readahead_file_path("/a/b") == "/a/b"
