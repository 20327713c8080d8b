"""A persistent compilation cache: a second process running the same program compiles
nothing.

XLA compiles each cluster when it is first called (seconds for a ResNet training step on
CPU). JAX can keep compiled executables on disk, keyed by the lowered HLO, the compile
options (ours included: `compiler_options` are part of the key), the devices and the
jax/jaxlib versions; tensorflux turns that on for every executable it builds.

    TENSORFLUX_CACHE_DIR=/path       where entries go (default: $XDG_CACHE_HOME/tensorflux,
                                     else ~/.cache/tensorflux; executables under xla/)
    TENSORFLUX_COMPILATION_CACHE=0   off (also "false", "off", "no")

The switch is per process (JAX's cache is global): `enable()` runs before the first
compile, and a program that configured `jax_compilation_cache_dir` itself keeps its own
choice. A directory that cannot be created or written turns the cache off with one
warning; an unreadable or corrupt entry is compiled afresh (JAX warns and overwrites it).

The compiler-option autotuner (options.py) also remembers its choice here, in
autotune/, keyed by a fingerprint of the cluster's HLO, so a warm process does not time
two executables again.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import warnings

import jax

from tensorflux._src.framework import errors
from tensorflux._src.platform import env_switch, gfile

_lock = threading.Lock()
_state = {"decided": False, "dir": None}


def default_dir():
    """$TENSORFLUX_CACHE_DIR, else $XDG_CACHE_HOME/tensorflux, else ~/.cache/tensorflux."""
    explicit = os.environ.get("TENSORFLUX_CACHE_DIR")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tensorflux")


def disabled_by_env():
    return env_switch.is_off("TENSORFLUX_COMPILATION_CACHE")


def _writable(path):
    """Creates `path` if needed and proves a file can be written there."""
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".probe-"):
            pass
        return None
    except OSError as exc:
        return exc


def enable():
    """Turns JAX's persistent cache on for this process (once; cheap afterwards).

    Returns the cache's root directory, or None when it is off."""
    if _state["decided"]:
        return _state["dir"]
    with _lock:
        if _state["decided"]:
            return _state["dir"]
        _state["dir"] = _configure()
        _state["decided"] = True
        return _state["dir"]


def _configure():
    if disabled_by_env():
        return None
    if jax.config.jax_compilation_cache_dir:
        # The program set up JAX's cache itself: use its directory, and keep our
        # autotuner's choices beside it.
        return os.path.dirname(os.path.abspath(jax.config.jax_compilation_cache_dir))
    root = default_dir()
    xla_dir = os.path.join(root, "xla")
    problem = _writable(xla_dir)
    if problem is not None:
        warnings.warn(f"tensorflux: compilation cache disabled, cannot write {xla_dir!r} "
                      f"({problem}); every process will compile its executables. Set "
                      "TENSORFLUX_CACHE_DIR to a writable directory, or "
                      "TENSORFLUX_COMPILATION_CACHE=0 to silence this.", stacklevel=3)
        return None
    jax.config.update("jax_compilation_cache_dir", xla_dir)
    # JAX by default caches only executables that took over a second to compile; ours
    # are many small clusters as well as big training steps, and reading an entry is
    # far cheaper than compiling even a small one.
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return root


def directory():
    """The cache's root directory if it is on (without turning it on)."""
    return _state["dir"] if _state["decided"] else None


# -- the autotuner's choices ----------------------------------------------------------------------
def fingerprint(hlo_text, options, device):
    """A key for a cluster's autotuning: its HLO, the candidate option sets, the device
    and the JAX version (a new XLA may rank the candidates differently)."""
    h = hashlib.sha256()
    for part in (hlo_text, json.dumps(options, sort_keys=True, default=str),
                 f"{device.platform}:{getattr(device, 'device_kind', '')}",
                 jax.__version__):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _choice_path(key):
    root = directory()
    return os.path.join(root, "autotune", key + ".json") if root else None


def load_choice(key):
    """The index of the candidate chosen earlier for `key`, or None."""
    path = _choice_path(key)
    if path is None:
        return None
    try:
        with open(path) as f:
            return int(json.load(f)["chosen"])
    except (OSError, ValueError, KeyError, TypeError):
        return None  # never tuned, or an unreadable entry: tune again


def save_choice(key, chosen, report):
    path = _choice_path(key)
    if path is None:
        return
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        # Written then renamed, so a concurrent reader never sees half a file.
        gfile.atomic_write_string_to_file(path, json.dumps(
            {"chosen": chosen, "seconds": [t for _, t in report],
             "options": [o for o, _ in report]}, default=str))
    except (OSError, errors.OpError):
        pass  # tuning again next time is only slower
