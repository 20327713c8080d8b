"""`tf.resource_loader`: paths of data files beside a script or in the package."""

from tensorflux._src.platform.resource_loader import (  # noqa: F401
    get_data_files_path, get_path_to_datafile, get_root_dir_with_all_resources,
    load_resource, readahead_file_path,
)

__all__ = ["get_data_files_path", "get_path_to_datafile", "get_root_dir_with_all_resources",
           "load_resource", "readahead_file_path"]
