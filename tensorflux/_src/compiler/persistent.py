"""Executables kept on disk by their cluster's graph: a warm process neither traces nor
lowers a cluster it ran before.

JAX's persistent cache (compile_cache.py) saves compiling, but finding its entry takes
the cluster's HLO, so every process still traces and lowers each cluster (over a second
of a ResNet-50 step's first run). Here the chosen executable is stored under
graph_key.cluster_key (the graph, the compiler options tried, the toolchain) plus the
arguments' shapes and dtypes, and a later process deserializes it directly:

    first call ──► key ──► stored? ──yes──► deserialize, call it (no trace)
                              └──no──► the autotuner (or the one jitted function) as
                                       usual; once its choice is made, the chosen
                                       executable is serialized under the key

The autotuner's remembered choice is keyed the same way, so it needs no trace either.
Only clusters whose effects are checks are stored: a check's message is rebuilt by
tracing when (and only when) one fails (see Cluster.loaded_untraced). Clusters that
print or call back to the host, and a broken entry (read as a miss, then rewritten),
go the usual way. Entries live in <cache root>/executables/, written atomically.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile

import jax
from jax.experimental import serialize_executable

from tensorflux._src.compiler import compile_cache


def arg_specs(args):
    """Shape, dtype and weak type of each argument (what jit specializes on)."""
    specs = []
    for a in args:
        aval = jax.typeof(a)
        specs.append(jax.ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=aval.weak_type))
    return specs


def specs_text(specs):
    return ";".join(f"{s.dtype}{list(s.shape)}{'w' if s.weak_type else ''}" for s in specs)


def _path(key):
    root = compile_cache.directory()
    return os.path.join(root, "executables", key + ".bin") if root else None


def load(key, device):
    """The executable stored under `key`, loaded on `device`; None if there is none or
    it cannot be read (it is then compiled and stored again)."""
    path = _path(key)
    if path is None or not os.path.exists(path):
        return None
    try:
        with open(path, "rb") as f:
            payload, in_tree, out_tree = pickle.load(f)
        return serialize_executable.deserialize_and_load(
            payload, in_tree, out_tree, backend=device.client, execution_devices=[device])
    except Exception:  # noqa: BLE001 - a truncated or foreign entry is only a miss
        return None


def save(key, compiled):
    path = _path(key)
    if path is None:
        return
    try:
        blob = pickle.dumps(serialize_executable.serialize(compiled))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        # Written then renamed, so a concurrent reader never sees half a file.
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, path)
    except (OSError, ValueError, NotImplementedError):
        pass  # not serializable here, or no room: the next process compiles again


class Persistent:
    """Calls a cluster's executable: one stored by an earlier process if there is one,
    else `inner` (the jitted function, or the Autotuner over `candidates`), storing the
    chosen one once it is known.

    graph_key: a callable giving the cluster's key (or None: nothing is stored);
    storable: a callable saying whether the traced cluster may be stored (no host
    callbacks); on_load: called when an executable was loaded instead of traced.
    """

    def __init__(self, inner, candidates, option_sets, device, graph_key, storable, on_load):
        self.inner = inner
        self._candidates, self._option_sets = candidates, option_sets
        self._device, self._graph_key = device, graph_key
        self._storable, self._on_load = storable, on_load
        self._loaded = None
        self._key = None  # graph + argument shapes, once the first call saw them
        self.specs = None
        self._stored = False
        self.loaded = False  # this cluster's executable came from the store

    @property
    def tuner(self):
        return self.inner if len(self._candidates) > 1 else None

    def _chosen(self):
        tuner = self.tuner
        return 0 if tuner is None else tuner.chosen

    def _entry(self, chosen):
        return hashlib.sha256(f"{self._key}|{chosen}".encode()).hexdigest()

    def _first_call(self, args):
        graph_key = self._graph_key()
        if graph_key is None:
            self._stored = True  # nothing to key it by: never stored
            return
        self.specs = arg_specs(args)
        self._key = hashlib.sha256(f"{graph_key}|{specs_text(self.specs)}".encode()).hexdigest()
        if self.tuner is not None:
            self.tuner.recall(self._key)
        chosen = self._chosen()
        if chosen is None:
            return
        loaded = load(self._entry(chosen), self._device)
        if loaded is not None:
            self._loaded, self.loaded, self._stored = loaded, True, True
            self._on_load()

    def _store(self):
        chosen = self._chosen()
        if chosen is None:
            return  # still tuning
        self._stored = True
        if self._storable():
            # Served from jit's in-memory caches: the chosen function was just called
            # with arguments of these shapes.
            compiled = self._candidates[chosen].lower(*self.specs).compile()
            save(self._entry(chosen), compiled)

    def __call__(self, *args):
        if self._loaded is not None:
            return self._loaded(*args)
        if self._key is None and not self._stored:
            self._first_call(args)
            if self._loaded is not None:
                return self._loaded(*args)
        outs = self.inner(*args)
        if not self._stored:
            self._store()
        return outs
