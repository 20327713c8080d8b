"""`tf.config`: devices, threading, soft placement and optimizer settings."""

from tensorflux._src.runtime.tf_config import (  # noqa: F401
    LogicalDevice, LogicalDeviceConfiguration, PhysicalDevice,
    experimental_connect_to_cluster, experimental_connect_to_host,
    experimental_functions_run_eagerly, experimental_run_functions_eagerly,
    functions_run_eagerly, get_logical_device_configuration, get_soft_device_placement,
    get_visible_devices, list_logical_devices, list_physical_devices, run_functions_eagerly,
    set_logical_device_configuration, set_soft_device_placement, set_visible_devices,
)
from tensorflux.config import experimental, optimizer, threading  # noqa: F401

__all__ = ["LogicalDevice", "LogicalDeviceConfiguration", "PhysicalDevice", "experimental",
           "experimental_connect_to_cluster", "experimental_connect_to_host",
           "experimental_functions_run_eagerly", "experimental_run_functions_eagerly",
           "functions_run_eagerly", "get_logical_device_configuration",
           "get_soft_device_placement", "get_visible_devices", "list_logical_devices",
           "list_physical_devices", "optimizer", "run_functions_eagerly",
           "set_logical_device_configuration", "set_soft_device_placement",
           "set_visible_devices", "threading"]
