"""Native kernels that XLA calls through its FFI (C++ sources built on first use).

Only what XLA:CPU lacks at speed lives here: oneDNN's convolutions (onednn.py,
onednn_conv.cc). Each is optional: without a C++ compiler or the library, the feature
reports itself unavailable and the ops keep their XLA lowerings.
"""
