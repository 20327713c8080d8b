"""`tf.gfile`: TF1's file API (local paths and fsspec URLs such as memory://, gs://)."""

from tensorflux._src.platform.gfile import (  # noqa: F401
    Copy, DeleteRecursively, Exists, FastGFile, GFile, Glob, IsDirectory, ListDirectory,
    MakeDirs, MkDir, Open, Remove, Rename, Stat, Walk,
)

__all__ = ["Copy", "DeleteRecursively", "Exists", "FastGFile", "GFile", "Glob",
           "IsDirectory", "ListDirectory", "MakeDirs", "MkDir", "Open", "Remove", "Rename",
           "Stat", "Walk"]
