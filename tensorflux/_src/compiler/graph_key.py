"""A fingerprint of a compiled cluster computed from its graph, without tracing it.

JAX's persistent cache is keyed by the lowered HLO, so even a warm process traces and
lowers every cluster before it can look an executable up: for a ResNet-50 training step
that is over a second of the first step. This key describes the same thing from what the
traced function is made of: the cluster's ops (names, types, attributes, wiring,
devices, static shapes), the values compiled in, its variable plan, the compiler options
tried, the device, and the versions of everything that turns a graph into HLO (this
tensorflux's source files, jax, jaxlib, XLA_FLAGS). Two clusters with the same key trace
to the same function; the arguments' shapes are added by the caller (persistent.py).

A cluster holding something this key cannot describe faithfully (an attribute of an
unknown type, such as a control-flow construct's body) has no key, and is traced as
before.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os

import jax
import numpy as np

from tensorflux._src.framework.dtypes import DType
from tensorflux._src.framework.operation import Operation, Tensor
from tensorflux._src.framework.tensor_shape import TensorShape


class Unkeyable(Exception):
    """The cluster holds a value whose meaning its text would not capture."""


def _value_text(value, op_ref=lambda op: None):
    """Text that identifies an attribute or static value (equal text, equal meaning).

    An op (or its output) is named by `op_ref` only when it is one of the cluster's own,
    whose contents the key describes too: a gradient op pointing at a forward loop
    elsewhere would otherwise stand for a body the key never saw."""
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            body = repr(value.tolist()).encode()
        else:
            body = np.ascontiguousarray(value).tobytes()
        return f"nd:{value.dtype.str}:{value.shape}:{hashlib.sha256(body).hexdigest()}"
    if isinstance(value, np.generic):
        return f"np:{value.dtype.str}:{value!r}"
    if isinstance(value, DType):
        return f"dtype:{value.name}"
    if isinstance(value, TensorShape):
        return f"shape:{value.as_list() if value.rank is not None else None}"
    if isinstance(value, (list, tuple)):
        return (f"{type(value).__name__}["
                + ",".join(_value_text(v, op_ref) for v in value) + "]")
    if isinstance(value, dict):
        return "dict{" + ",".join(f"{_value_text(k, op_ref)}={_value_text(v, op_ref)}"
                                  for k, v in sorted(value.items(), key=lambda kv: str(kv[0])))\
            + "}"
    if isinstance(value, (Operation, Tensor)):
        op = value if isinstance(value, Operation) else value.op
        ref = op_ref(op)
        if ref is not None:
            return ref if isinstance(value, Operation) else f"{ref}:{value.value_index}"
    raise Unkeyable(type(value).__name__)


# JAX settings that change what a lowering traces to (types, PRNG bits, precision).
_JAX_SETTINGS = ("jax_enable_x64", "jax_default_matmul_precision", "jax_default_prng_impl",
                 "jax_threefry_partitionable", "jax_numpy_rank_promotion",
                 "jax_numpy_dtype_promotion")


@functools.lru_cache(maxsize=1)
def _source_version():
    """tensorflux's own source files, by their sizes and modification times (any edit
    changes it), and the jax/jaxlib versions: read once per process."""
    h = hashlib.sha256()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                stat = os.stat(os.path.join(folder, name))
                h.update(f"{os.path.relpath(os.path.join(folder, name), root)}:"
                         f"{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    import jaxlib
    h.update(f"jax {jax.__version__} jaxlib {jaxlib.__version__}\n".encode())
    return h.hexdigest()


def toolchain_version():
    """What else turns a graph into an executable: the source and versions above, and
    (read at each call, as they may change within a process) XLA_FLAGS and the JAX
    settings lowerings depend on."""
    h = hashlib.sha256(_source_version().encode())
    h.update(f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')}\n".encode())
    for name in _JAX_SETTINGS:
        h.update(f"{name}={getattr(jax.config, name, None)}\n".encode())
    return h.hexdigest()


def cluster_key(cluster):
    """The cluster's fingerprint (hex text), or None when it cannot have one.

    Ops are referred to by their position in the cluster and its inputs by their
    argument position, not by name: renaming ops (another name scope, one more layer
    built elsewhere in the graph) leaves the key, like the HLO, unchanged."""
    h = hashlib.sha256(toolchain_version().encode())

    def put(*parts):
        h.update("\x1f".join(parts).encode())
        h.update(b"\x1e")

    canonical, static = cluster._canonical, cluster._static
    position = {op: f"#{i}" for i, op in enumerate(cluster.ops)}
    arg = {t: f"in{i}" for i, t in enumerate(cluster.inputs)}
    op_ref = position.get

    def tensor(t):
        t = canonical.get(t, t)
        if t in static:  # compiled in (or a constant argument): its value counts
            return _value_text(static[t])
        if t in arg:
            return arg[t]
        ref = op_ref(t.op)
        if ref is None:
            raise Unkeyable(f"a value from outside the cluster: {t.name}")
        return f"{ref}:{t.value_index}"

    def op_at(op, i=None):
        ref = op_ref(op)
        if ref is None:
            raise Unkeyable(f"an op outside the cluster: {op.name}")
        return ref if i is None else f"{ref}:{i}"

    try:
        for op in cluster.ops:
            put("op", op.type, op.device,
                *(f"{k}={_value_text(v, op_ref)}" for k, v in sorted(op._attrs.items())))
            put("in", *(tensor(t) for t in op.inputs))
            put("ctl", *(op_at(c) if c in position else "outside" for c in op._control_inputs))
            put("out", *(f"{t.dtype.name}{t.shape}" for t in op.outputs))
        plan = cluster.state
        put("inputs", *(f"{t.dtype.name}{t.shape}" for t in cluster.inputs))
        put("exports", *(tensor(t) for t in cluster.exports))
        put("reads", *(f"{op_at(op, i)}<-{op_at(w) if w is not None else ''}"
                       for (op, i), w in plan.reads.items()))
        put("read_vars", *(f"{op_at(op, i)}={op_at(v)}" for (op, i), v in plan.read_vars.items()))
        put("start", *(op_at(v) for v in plan.start_vars))
        put("final", *(f"{op_at(v)}<-{op_at(w)}" for v, w in plan.final_writer.items()))
        put("checked", *(op_at(v) for v in plan.checked_vars))
        put("strict", *sorted(op_at(v) for v in plan.strict_vars))
        put("by_run", *sorted(op_at(op, i) for op, i in plan.initialized_by_run))
        put("donated", *(op_at(v) for v in cluster.donated))
        put("consts", *(tensor(t) for t in cluster._const_args))
    except Unkeyable:
        return None
    device = cluster.device
    put("device", device.platform, getattr(device, "device_kind", ""), str(device.id))
    put("options", json.dumps(cluster._options_tried, sort_keys=True, default=str))
    return h.hexdigest()
