"""Compiles one of this package's C++ XLA FFI kernels on first use, once per machine.

    build("onednn_conv", source, what, link=[libdnnl, rpath])
        built before? (<cache root>/native/<stem>-<hash>.so) ──yes──► its path
            └──no──► c++ -O2 -shared ... ► written atomically ► its path

The hash covers the source, jaxlib's version (the FFI headers it is compiled against),
the link arguments and the compiler, so a changed toolchain builds again; the file is
written atomically, so processes building at once cannot see half a library. A missing
compiler or writable directory gives (None, why) instead of a path, and the caller
keeps its pure-XLA path.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading

import jax
import jaxlib


def build_dir():
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


def _fingerprint(source, link, compiler):
    h = hashlib.sha256()
    with open(source, "rb") as f:
        h.update(f.read())
    for part in (jaxlib.__version__, *link, compiler):
        h.update(b"\0" + part.encode())
    return h.hexdigest()[:16]


def build(stem, source, what, link=()):
    """(path of the built shared library, None), or (None, why not). `what` names the
    kernel in those reasons; `link` is appended to the compiler's command line."""
    compiler = shutil.which(os.environ.get("CXX", "c++"))
    if compiler is None:
        return None, f"no C++ compiler (c++ or $CXX) to build {what}"
    out_dir = build_dir()
    if out_dir is None:
        return None, f"no writable directory to build {what} in"
    target = os.path.join(out_dir, f"{stem}-{_fingerprint(source, link, compiler)}.so")
    if os.path.exists(target):
        return target, None
    fd, partial = tempfile.mkstemp(dir=out_dir, prefix=f".{stem}-", suffix=".so")
    os.close(fd)
    command = [compiler, "-O2", "-std=c++17", "-shared", "-fPIC", "-w",
               f"-I{jax.ffi.include_dir()}", source, "-o", partial, *link]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return None, f"building {source} failed:\n{done.stderr[-2000:]}"
        os.replace(partial, target)
        return target, None
    except OSError as exc:  # the compiler could not be run
        return None, f"building {source} failed: {exc}"
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def register(path, what, handlers, setup=None):
    """Loads the built library at `path` and registers each of its FFI handler symbols
    as an XLA:CPU custom-call target (`handlers`: {target: symbol}): (library, None), or
    (None, why not). `setup` (library) runs first, to declare other entry points."""
    try:
        lib = ctypes.CDLL(path)  # fails when a library it links is missing, for one
        if setup is not None:
            setup(lib)
        for target, symbol in handlers.items():
            jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(getattr(lib, symbol)),
                                        platform="cpu")
    except (OSError, RuntimeError, AttributeError) as exc:
        # A kernel that cannot be loaded only loses what it offers.
        return None, f"{what} could not be loaded: {exc}"
    return lib, None


class Once:
    """`load() -> (library or None, reason)` run once per process, whichever thread asks
    first; `library()` and `reason()` give what it returned."""

    def __init__(self, load):
        self._load = load
        self._lock = threading.Lock()
        self._result = None

    def library(self):
        if self._result is None:
            with self._lock:
                if self._result is None:
                    self._result = self._load()
        return self._result[0]

    def available(self) -> bool:
        return self.library() is not None

    def reason(self):
        self.library()
        return self._result[1]
