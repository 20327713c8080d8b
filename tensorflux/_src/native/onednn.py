"""oneDNN's convolutions as an XLA FFI target ("tensorflux_onednn_conv" on CPU).

onednn_conv.cc is compiled on first use, once per machine, against jaxlib's FFI headers
and the libdnnl.so.3 of the `onednn-cpu-gomp` wheel (a dependency on x86-64 Linux):

    available() ──► built before? (<cache root>/native/onednn_conv-<hash>.so) ──no──► c++
        │                                  └──yes──┐                                │
        └──────────────── load it, register the FFI target ◄────────────────────────┘

The hash covers the source, jaxlib's version, the library's path and the compiler, so
a changed toolchain builds again; the file is written atomically, so processes building
at once cannot see half a library. Anything missing (the wheel, a compiler, a writable
directory) makes available() False with a reason in `unavailable_reason()`, and the
convolutions keep their XLA lowerings. TENSORFLUX_ONEDNN=0 turns it off.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
import threading

import jax
import jaxlib

from tensorflux._src.platform import env_switch

TARGET = "tensorflux_onednn_conv"
SOURCE = os.path.join(os.path.dirname(__file__), "onednn_conv.cc")
LIBRARY = "libdnnl.so.3"

_lock = threading.Lock()
_state = {"decided": False, "lib": None, "reason": None}


def library_path():
    """Where the wheel put libdnnl.so.3 (its data files go to <prefix>/lib), or None;
    $TENSORFLUX_ONEDNN_LIBRARY names another."""
    explicit = os.environ.get("TENSORFLUX_ONEDNN_LIBRARY")
    if explicit:
        return explicit if os.path.exists(explicit) else None
    prefixes = [sysconfig.get_path("data"), sys.prefix, site.USER_BASE]
    for prefix in dict.fromkeys(p for p in prefixes if p):
        path = os.path.join(prefix, "lib", LIBRARY)
        if os.path.exists(path):
            return path
    return None


def _build_dir():
    """<cache root>/native; with the compilation cache turned off, which writes nothing
    there, or unwritable, a per-user directory under the system's temp directory. Only
    a directory this user owns: a library found there is loaded into the process."""
    from tensorflux._src.compiler import compile_cache  # lazy: compiler imports ops

    roots = [os.path.join(tempfile.gettempdir(), f"tensorflux-{os.getuid()}")]
    if not compile_cache.disabled_by_env():
        roots.insert(0, compile_cache.default_dir())
    for root in roots:
        path = os.path.join(root, "native")
        try:
            os.makedirs(path, exist_ok=True)
        except OSError:
            continue
        if os.stat(path).st_uid == os.getuid() and os.access(path, os.W_OK):
            return path
    return None


def _fingerprint(library, compiler):
    h = hashlib.sha256()
    with open(SOURCE, "rb") as f:
        h.update(f.read())
    for part in (jaxlib.__version__, library, compiler):
        h.update(b"\0" + part.encode())
    return h.hexdigest()[:16]


def _build(library):
    """The built shared library's path, or (None, why not)."""
    compiler = shutil.which(os.environ.get("CXX", "c++"))
    if compiler is None:
        return None, "no C++ compiler (c++ or $CXX) to build the oneDNN convolution kernel"
    out_dir = _build_dir()
    if out_dir is None:
        return None, "no writable directory to build the oneDNN convolution kernel in"
    target = os.path.join(out_dir, f"onednn_conv-{_fingerprint(library, compiler)}.so")
    if os.path.exists(target):
        return target, None
    fd, partial = tempfile.mkstemp(dir=out_dir, prefix=".onednn_conv-", suffix=".so")
    os.close(fd)
    command = [compiler, "-O2", "-std=c++17", "-shared", "-fPIC", "-w",
               f"-I{jax.ffi.include_dir()}", SOURCE, "-o", partial, library,
               f"-Wl,-rpath,{os.path.dirname(library)}"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return None, f"building {SOURCE} failed:\n{done.stderr[-2000:]}"
        os.replace(partial, target)
        return target, None
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def _load():
    if env_switch.is_off("TENSORFLUX_ONEDNN"):
        return None, "turned off by TENSORFLUX_ONEDNN"
    if not sys.platform.startswith("linux"):
        return None, "the oneDNN convolution kernel is built for Linux only"
    library = library_path()
    if library is None:
        return None, (f"{LIBRARY} not found: `pip install onednn-cpu-gomp` (x86-64 Linux) "
                      "or set TENSORFLUX_ONEDNN_LIBRARY")
    try:
        path, reason = _build(library)
        if path is None:
            return None, reason
        lib = ctypes.CDLL(path)  # fails without the system's libgomp, for one
        lib.tfx_onednn_conv_plan.restype = ctypes.c_int
        jax.ffi.register_ffi_target(TARGET, jax.ffi.pycapsule(lib.TfxOnednnConv),
                                    platform="cpu")
    except (OSError, RuntimeError, AttributeError) as exc:
        # A kernel that cannot be built or loaded only loses the alternative.
        return None, f"the oneDNN convolution kernel could not be loaded: {exc}"
    return lib, None


def _decide():
    if not _state["decided"]:
        with _lock:
            if not _state["decided"]:
                _state["lib"], _state["reason"] = _load()
                _state["decided"] = True
    return _state["lib"]


def available() -> bool:
    """Whether the FFI target is registered (building and loading it the first time)."""
    return _decide() is not None


def unavailable_reason():
    _decide()
    return _state["reason"]


def plan(kind, nchw, x, w, y, strides, dilations, pad_l, pad_r):
    """(ok, info): whether oneDNN has a convolution for this spec, and the name of the
    implementation it picked (or why it has none). Dims as onednn_conv.cc's ConvSpec:
    x and y as N,H,W,C, w as kh,kw,in,out."""
    lib = _decide()
    if lib is None:
        return False, _state["reason"]

    def longs(values):
        return (ctypes.c_int64 * len(values))(*values)

    info = ctypes.create_string_buffer(256)
    status = lib.tfx_onednn_conv_plan(
        ctypes.c_int64(kind), ctypes.c_int64(nchw), longs(x), longs(w), longs(y),
        longs(strides), longs(dilations), longs(pad_l), longs(pad_r), info,
        ctypes.c_size_t(len(info)))
    return status == 0, info.value.decode()
