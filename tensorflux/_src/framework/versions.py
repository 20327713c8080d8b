"""Version constants a TF1 program may check (`tf.VERSION`, `tf.GRAPH_DEF_VERSION`, ...).

`VERSION` is the TF API level tensorflux implements, so `tf.VERSION.startswith("1.")`
style checks take TF1 paths; `GIT_VERSION` names tensorflux itself. The GraphDef versions
are TF 1.15.0's.
"""

from __future__ import annotations

import jaxlib

__all__ = ["VERSION", "GIT_VERSION", "COMPILER_VERSION", "CXX_VERSION", "CXX11_ABI_FLAG",
           "MONOLITHIC_BUILD", "GRAPH_DEF_VERSION", "GRAPH_DEF_VERSION_MIN_CONSUMER",
           "GRAPH_DEF_VERSION_MIN_PRODUCER"]

TENSORFLUX_VERSION = "0.1.0"

VERSION = "1.15.0"
GIT_VERSION = f"tensorflux-v{TENSORFLUX_VERSION}"
# What compiles the kernels here: XLA, shipped in jaxlib.
COMPILER_VERSION = f"XLA (jaxlib {jaxlib.__version__})"
CXX_VERSION = 201703  # jaxlib is built as C++17
CXX11_ABI_FLAG = 0
MONOLITHIC_BUILD = 0

GRAPH_DEF_VERSION = 134
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0
