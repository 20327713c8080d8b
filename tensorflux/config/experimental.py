"""`tf.config.experimental`."""

from tensorflux._src.runtime.tf_config import (  # noqa: F401
    ClusterDeviceFilters, VirtualDeviceConfiguration, disable_mlir_bridge,
    enable_mlir_bridge, enable_tensor_float_32_execution, get_device_details,
    get_device_policy, get_memory_growth, get_memory_info, get_memory_usage,
    get_synchronous_execution, get_virtual_device_configuration, get_visible_devices,
    list_logical_devices, list_physical_devices, reset_memory_stats, set_device_policy,
    set_memory_growth, set_synchronous_execution, set_virtual_device_configuration,
    set_visible_devices, tensor_float_32_execution_enabled,
)

__all__ = ["ClusterDeviceFilters", "VirtualDeviceConfiguration", "disable_mlir_bridge",
           "enable_mlir_bridge", "enable_tensor_float_32_execution", "get_device_details",
           "get_device_policy", "get_memory_growth", "get_memory_info", "get_memory_usage",
           "get_synchronous_execution", "get_virtual_device_configuration",
           "get_visible_devices", "list_logical_devices", "list_physical_devices",
           "reset_memory_stats", "set_device_policy", "set_memory_growth",
           "set_synchronous_execution", "set_virtual_device_configuration",
           "set_visible_devices", "tensor_float_32_execution_enabled"]
