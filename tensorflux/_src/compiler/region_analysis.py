"""XLA:CPU's region-based copy insertion, for the compiled programs without loops.

A training step updates each donated variable in place, but the backward pass also reads
the variable's old value. XLA's default copy insertion cannot prove that the update
runs after that last read, so it copies the variable (and often its optimizer slots)
every step: 714 copies per step in the Transformer LM. Its region analysis
(`xla_cpu_copy_insertion_use_region_analysis`) proves the order and drops them.
Measured per step, alternating processes: Transformer LM 1134 -> 1102 and 1138 -> 1094
ms, ResNet-50 (64x64, batch 16) 133 -> 129 and 136 -> 128 ms, MobileNet v2 31 -> 30
and 31 -> 29 ms, the small CNN of benchmarks/train_step.py unchanged; losses
bit-identical, compile time unchanged.

With this jaxlib, though, region analysis miscompiles while loops: MatrixSquareRoot and
MatrixLogarithm (whose lowerings iterate) and nested tf.while_loop computed wrong values
(tests/ops/test_registry.py, tests/control_flow/test_loops.py). So the option is used
only for programs without a loop: `jit` wraps a candidate in `Gated`, which traces it
first and picks the executable compiled with or without the option. JAX keeps that
trace, so the call that follows does not trace again. (A gated cluster's
`compiler_options` still list the option: they are what it was offered.)
"""

from __future__ import annotations

import jax.extend.core as jax_core

from tensorflux._src.runtime import devices

KEY = "xla_cpu_copy_insertion_use_region_analysis"
# Primitives that lower to XLA while loops or conditionals (the regions the analysis
# reasons about).
_REGIONS = frozenset({"while", "scan", "cond"})


def _sub_jaxprs(params):
    for value in params.values():
        for item in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(item, jax_core.ClosedJaxpr):
                yield item.jaxpr
            elif isinstance(item, jax_core.Jaxpr):
                yield item


def has_regions(jaxpr) -> bool:
    """Whether a (closed) jaxpr contains a loop or conditional, at any depth."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    return any(eqn.primitive.name in _REGIONS or any(map(has_regions, _sub_jaxprs(eqn.params)))
               for eqn in jaxpr.eqns)


class Gated:
    """One jitted candidate, compiled with region analysis (`with_analysis`) unless its
    traced program has a loop or conditional (then `without`). Called and lowered like
    the jitted function it picks."""

    def __init__(self, with_analysis, without):
        self._with, self._without = with_analysis, without
        self._picked = None

    def pick(self, *args):
        if self._picked is None:
            trace = getattr(self._with, "trace", None)
            safe = trace is not None and not has_regions(trace(*args).jaxpr)
            self._picked = self._with if safe else self._without
        return self._picked

    def __call__(self, *args):
        return self.pick(*args)(*args)

    def lower(self, *args):
        return self.pick(*args).lower(*args)


def jit(fn, device, xla_options, *args, user_options=None, **kwargs):
    """`devices.jit_on(fn, device, xla_options, ...)`, gated when `xla_options` turn region
    analysis on by default: a session whose own options (`user_options`) set it gets
    what it set."""
    if not xla_options.get(KEY) or KEY in (user_options or {}):
        return devices.jit_on(fn, device, xla_options, *args, **kwargs)
    without = {k: v for k, v in xla_options.items() if k != KEY}
    return Gated(devices.jit_on(fn, device, xla_options, *args, **kwargs),
                 devices.jit_on(fn, device, without, *args, **kwargs))
