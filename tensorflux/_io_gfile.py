"""`tf.io.gfile`: the TF2-style names of the file API (same objects as tf.gfile's)."""

from tensorflux._src.platform.gfile import (  # noqa: F401
    GFile, copy_v2 as copy, create_dir_v2 as mkdir, delete_file_v2 as remove,
    delete_recursively_v2 as rmtree, file_exists_v2 as exists,
    get_matching_files_v2 as glob, get_registered_schemes, is_directory_v2 as isdir, join,
    list_directory_v2 as listdir, recursive_create_dir_v2 as makedirs, rename_v2 as rename,
    stat_v2 as stat, walk_v2 as walk,
)

__all__ = ["GFile", "copy", "exists", "get_registered_schemes", "glob", "isdir", "join",
           "listdir", "makedirs", "mkdir", "remove", "rename", "rmtree", "stat", "walk"]
