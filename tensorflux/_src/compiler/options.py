"""XLA compiler options, chosen per compiled run (cluster).

XLA:CPU's options change speed a lot and not in one direction: on a 2-core AVX-512
machine, library (YNN) fusion of dots roughly halves convolution time but makes a
plain MLP step ~9% slower (benchmarks/train_step.py, benchmarks/nn_ops.py). The rule:
a CPU cluster containing an op whose record sets `xla_cpu_library_fusion` (the
convolutions) is compiled with library dot fusion; every other cluster with XLA's
defaults. A session's `ConfigProto(compiler_options={...})` is applied last and wins;
a value of None removes an option the rule chose.
"""

from __future__ import annotations

LIBRARY_DOT_FUSION = {"xla_cpu_experimental_ynn_fusion_type": "LIBRARY_FUSION_TYPE_DOT"}


def choose(ops, device, user_options=None) -> dict:
    options = {}
    if device.platform == "cpu" and any(op.op_def.xla_cpu_library_fusion for op in ops):
        options.update(LIBRARY_DOT_FUSION)
    for key, value in (user_options or {}).items():
        if value is None:
            options.pop(key, None)
        else:
            options[key] = value
    return options
