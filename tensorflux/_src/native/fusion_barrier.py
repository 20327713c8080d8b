"""A fusion barrier for XLA:CPU ("tensorflux_fusion_barrier"): `materialize(x)` is `x`,
computed once into a buffer that later ops read, instead of recomputed inside each.

XLA:CPU fuses a cheap elementwise producer (an add, a multiply) into every consumer and
recomputes it there. That usually saves a pass over memory, but not for sums that later
sums are built from. The gradient flowing back through a Transformer's residual
connections is one: each layer's is the next layer's plus that layer's own terms
(TF1's gradient aggregation, an AddN with several consumers). Fused, each layer's
kernels re-add every term above them, so the work grows with the square of the depth.
In the zoo's 12-layer transformer_lm training step (benchmarks: `tensorflux bench
--model transformer_lm`), the fusions holding that chain took 70 ms; behind barriers,
23 ms, and the step went from 1092-1124 to 1040-1082 ms (four alternating process
pairs, every one faster).

`jax.lax.optimization_barrier` does not stop it: XLA:CPU removes such barriers before it
fuses (the same step took 1185 ms with them). A custom call is opaque to fusion, so the
barrier is one: fusion_barrier.cc's handler returns its operand, aliased, so nothing is
copied. It is built like the oneDNN kernel (build.py). Without it (no compiler,
TENSORFLUX_FUSION_BARRIER=0) `materialize` returns `x` and XLA fuses as before; on
other platforms the primitive lowers to nothing.
"""

from __future__ import annotations

import os

import jax
import jax.extend.core as jex_core
from jax.interpreters import ad, batching, mlir

from tensorflux._src.native import build
from tensorflux._src.platform import env_switch

TARGET = "tensorflux_fusion_barrier"
SOURCE = os.path.join(os.path.dirname(__file__), "fusion_barrier.cc")


def _load():
    if env_switch.is_off("TENSORFLUX_FUSION_BARRIER"):
        return None, "turned off by TENSORFLUX_FUSION_BARRIER"
    path, reason = build.build("fusion_barrier", SOURCE, "the fusion barrier")
    if path is None:
        return None, reason
    return build.register(path, "the fusion barrier", {TARGET: "TfxFusionBarrier"})


_loaded = build.Once(_load)


def available() -> bool:
    """Whether the FFI target is registered (building and loading it the first time)."""
    return _loaded.available()


def unavailable_reason():
    return _loaded.reason()


def _call(x):
    return jax.ffi.ffi_call(TARGET, jax.ShapeDtypeStruct(x.shape, x.dtype),
                            input_output_aliases={0: 0})(x)


# A primitive of its own, lowered to the custom call on CPU and to nothing elsewhere.
# (`lax.platform_dependent` would also choose per platform, but traces a conditional,
# and a program with one is compiled without region analysis: region_analysis.py.)
_barrier = jex_core.Primitive("tensorflux_fusion_barrier")
_barrier.def_impl(lambda x: x)
_barrier.def_abstract_eval(lambda x: x)
mlir.register_lowering(_barrier, lambda ctx, x: [x])
mlir.register_lowering(_barrier, mlir.lower_fun(_call, multiple_results=False),
                       platform="cpu")
# The identity's derivative, and its batching: the tangent and the batch pass through.
ad.primitive_jvps[_barrier] = lambda primals, tangents: (_barrier.bind(*primals), tangents[0])
batching.primitive_batchers[_barrier] = lambda args, dims: (_barrier.bind(*args), dims[0])


def materialize(x):
    """`x`; inside a trace on XLA:CPU, behind the barrier (see above)."""
    if not isinstance(x, jax.core.Tracer) or x.size == 0 or not available():
        return x
    return _barrier.bind(x)
