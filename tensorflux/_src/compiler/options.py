"""XLA compiler options and lowering choices, chosen per compiled run (cluster) by
measuring.

XLA:CPU's options change speed a lot and not in one direction. Measured on this
project's 2-core AVX2 machine (benchmarks/nn_ops.py): library (YNN) dot fusion makes
a 3x3 64->64 conv's forward+backward ~7x faster (272 vs 1780 ms) but its forward
alone ~1.4x slower (90 vs 65 ms), and depthwise conv slower; on an AVX-512 machine it
halved conv forward time while slowing a plain MLP step ~9%. Likewise some ops can be
lowered in several equivalent ways (ops/nn/conv_lowering.py: depthwise convolution as
XLA's grouped convolution or as shifted multiply-adds, Conv2D as XLA's convolution or
as im2col dots) whose speed depends on shapes and machine. No fixed rule is right
everywhere, so on CPU a cluster is compiled with the alternatives of each choice it has
(`candidate_axes`: library fusion for clusters with an op marked
`xla_cpu_library_fusion`, and each lowering switch its ops list) and the `Autotuner`
keeps the fastest after a few timed runs, one axis at a time. Other clusters use XLA's
defaults, but for what every CPU cluster gets (`CPU_DEFAULTS`). The choice is kept in
the persistent compilation cache (compile_cache.py), keyed by the cluster's HLO, so a
later process running the same program uses it without timing again (its first steps
then run on the chosen executable only, so their rounding can differ from a tuning
process's).

A session's compiler options (`runtime/config.py: compiler_options_config`, kept in
its ConfigProto) are applied on top and win; setting a key yourself (a value, or None
to remove it) turns autotuning of that axis off.
"""

from __future__ import annotations

import functools
import itertools
import time

import jax
import numpy as np

from tensorflux._src.compiler import compile_cache, region_analysis
from tensorflux._src.ops.nn import conv_lowering

LIBRARY_FUSION_KEY = "xla_cpu_experimental_ynn_fusion_type"
# Dots (with their fused producers and epilogues) *and* reductions go to the library.
# The field is a list: naming DOT alone drops the reductions that XLA's defaults send
# there, and XLA:CPU's own reduction (rewritten into a reduce-window over 32-element
# windows) is ~18x slower for a bias gradient, (128, 32, 32, 32) summed to (32,): 9.1 ms
# vs 0.5 ms. Measured per training step (same-process A/B, 64x64 batch 16 unless noted):
# small CNN of benchmarks/train_step.py 84 -> 68 ms, ResNet-50 455 -> 383 ms, MobileNet
# v2 175 -> 90 ms against DOT alone (XLA's defaults: 135, 392, 92 ms).
LIBRARY_DOT_FUSION = {LIBRARY_FUSION_KEY: "LIBRARY_FUSION_TYPE_DOT,LIBRARY_FUSION_TYPE_REDUCE"}

# Every XLA:CPU candidate compiles with these (not tuned; a session's options still win):
# in-place variable updates without a copy per step, for programs without loops
# (region_analysis.py).
CPU_DEFAULTS = {region_analysis.KEY: True}


def _apply_user(options, user_options):
    options = dict(options)
    for key, value in (user_options or {}).items():
        if value is None:
            options.pop(key, None)
        else:
            options[key] = value
    return options


def _switches(op):
    choices = op.op_def.lowering_choices
    return choices(op) if callable(choices) else choices


def candidate_axes(ops, device, user_options=None) -> list:
    """The independent choices worth trying for a cluster: one list of option dicts per
    axis (each lowering switch an op of the cluster has; library dot fusion or not). On
    XLA:CPU only; what the user set is not tuned."""
    user_options = user_options or {}
    for key, value in user_options.items():
        if conv_lowering.is_switch(key) and value is not None:
            conv_lowering.check(key, value)
    if device.platform != "cpu":
        return []
    # Lowering switches first, library fusion last: the autotuner varies one axis at a
    # time from the first choices, and the lowering decides which kernels there are to
    # fuse (a small CNN's conv is fastest as XLA's conv with library fusion, but im2col
    # without it beats im2col with it: comparing library fusion first, at im2col, would
    # have dropped the best pair).
    axes = []
    switches = sorted({key for op in ops for key in _switches(op)} - set(user_options))
    for key in switches:
        axes.append([{key: value} for value in conv_lowering.alternatives(key)])
    if (LIBRARY_FUSION_KEY not in user_options
            and any(op.op_def.xla_cpu_library_fusion for op in ops)):
        axes.append([LIBRARY_DOT_FUSION, {}])
    return axes


def defaults(device) -> dict:
    """The options every candidate on `device` starts from."""
    return dict(CPU_DEFAULTS) if device.platform == "cpu" else {}


def combine(axes, user_options=None, base=None) -> list:
    """Every combination of one choice per axis (itertools.product order) over `base`,
    with the user's options on top; [base + user options] without axes."""
    return [_apply_user({**(base or {}), **{k: v for part in combo for k, v in part.items()}},
                        user_options)
            for combo in itertools.product(*axes)]


def candidates(ops, device, user_options=None) -> list:
    """Option sets worth trying for a cluster, most promising first (one = no tuning):
    the combinations of `candidate_axes`, over the device's defaults."""
    return combine(candidate_axes(ops, device, user_options), user_options, defaults(device))


def bind(fn, options, device):
    """(the function to jit, `device`, XLA's options) of one candidate, as
    devices.jit_on takes them: our lowering switches are taken out of the options and
    made current while `fn` is traced. Off CPU, a session's choice of a CPU-only
    lowering (oneDNN's kernels) is dropped: its ops get their default lowering."""
    xla_options, choices = conv_lowering.split(options)
    if device.platform != "cpu":
        choices = {k: v for k, v in choices.items() if v not in conv_lowering.CPU_ONLY}
    if not choices:
        return fn, device, xla_options

    @functools.wraps(fn)
    def traced(*args):
        with conv_lowering.use(choices):
            return fn(*args)

    return traced, device, xla_options


class Autotuner:
    """Calls candidate executables in turn for a few runs, then keeps the fastest.

    The first runs compile and warm each candidate (twice: a first execution also pays
    for page faults), then timed calls alternate; the minimum time per candidate
    decides. The state threaded through runs (variables, PRNG counts) is the same
    whichever executable computes a step, so tuning changes only speed.

    With `shape` (the number of choices per axis; the candidates are their product in
    itertools.product order) the search goes one axis at a time: the choices of the
    first axis are compared with the others at their first choice, the winner is kept,
    then the next axis is varied, and so on (coordinate descent). That compiles
    1 + sum(n - 1) candidates instead of their product (4 instead of 8 for three
    two-way choices); only the compared ones are ever compiled.
    """

    WARMUP, TIMED = 2, 3  # calls per candidate

    def __init__(self, jitted, options, device=None, shape=None):
        self._jitted, self._options = list(jitted), list(options)
        self._shape = tuple(shape) if shape else (len(self._jitted),)
        if int(np.prod(self._shape)) != len(self._jitted):
            raise ValueError(f"shape {self._shape} does not match {len(self._jitted)} "
                             f"candidates")
        self._best = [0] * len(self._shape)  # the choice per axis so far
        self._axis = -1
        self._stage = []  # the candidates being compared now
        self._times = {}
        self._calls = 0
        self._device = device
        self._key = None  # the cluster's fingerprint once known (compile_cache)
        self.chosen = None
        self.report = []  # (options, best seconds) of every candidate timed
        self.remembered = False  # chosen from an earlier process's measurement
        self._next_stage()

    def _index(self, choices):
        return int(np.ravel_multi_index(tuple(choices), self._shape))

    def _next_stage(self):
        """Moves to the next axis with more than one choice; False when none is left."""
        while self._axis + 1 < len(self._shape):
            self._axis += 1
            n = self._shape[self._axis]
            if n > 1:
                self._stage = []
                for choice in range(n):
                    choices = list(self._best)
                    choices[self._axis] = choice
                    self._stage.append(self._index(choices))
                self._times = {i: [] for i in self._stage}
                self._calls = 0
                return True
        return False

    def recall(self, key):
        """Uses the choice an earlier process stored under `key` (a fingerprint of the
        cluster and its arguments, persistent.py), if any; a choice made here is stored
        under it. Call before the first call."""
        self._key = key
        chosen = compile_cache.load_choice(key)
        if chosen is not None and 0 <= chosen < len(self._jitted):
            self._keep(chosen)
            self.remembered = True

    def _recall(self, args):
        """Without a key given: looks for an earlier process's choice for this cluster
        in the persistent cache, keyed by the HLO (lowering now costs little: jit
        reuses the trace and the lowering for the call that follows)."""
        if compile_cache.directory() is None or self._device is None:
            return
        lower = getattr(self._jitted[0], "lower", None)
        if lower is None:
            return  # SPMD replicas wrap the jitted function; they tune every time
        try:
            hlo = lower(*args).as_text()
        except Exception:  # noqa: BLE001 - the call below reports real errors itself
            return
        self.recall(compile_cache.fingerprint(hlo, self._options, self._device))

    def _keep(self, chosen):
        self.chosen = chosen
        self._jitted = [self._jitted[chosen] if i == chosen else None
                        for i in range(len(self._jitted))]  # free the others

    @property
    def options(self):
        if self.chosen is not None:
            return self._options[self.chosen]
        return self._options[self._index(self._best)]

    def __call__(self, *args):
        if self._calls == 0 and self._axis == 0 and self.chosen is None and self._key is None:
            self._recall(args)
        if self.chosen is not None:
            return self._jitted[self.chosen](*args)
        stage = self._stage
        index = stage[self._calls % len(stage)]
        timed = self._calls >= self.WARMUP * len(stage)
        start = time.perf_counter()
        outs = self._jitted[index](*args)
        if timed:
            jax.block_until_ready(outs)
            self._times[index].append(time.perf_counter() - start)
        self._calls += 1
        if all(len(t) >= self.TIMED for t in self._times.values()):
            best = {i: min(t) for i, t in self._times.items()}
            self.report.extend((self._options[i], best[i]) for i in stage)
            winner = min(stage, key=best.get)
            self._best = list(np.unravel_index(winner, self._shape))
            self._best = [int(b) for b in self._best]
            for i in stage:  # free the losers' executables
                if i != winner:
                    self._jitted[i] = None
            if not self._next_stage():
                self._keep(winner)
                if self._key is not None:
                    compile_cache.save_choice(self._key, self.chosen, self.report)
        return outs
