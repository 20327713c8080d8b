"""Native kernels that XLA calls through its FFI (C++ sources built on first use by
build.py).

Only what XLA:CPU lacks lives here: oneDNN's convolutions (onednn.py, onednn_conv.cc)
and a fusion barrier (fusion_barrier.py, .cc). Each is optional: without a C++ compiler
or the library, the feature reports itself unavailable and the ops keep their XLA
lowerings.
"""
