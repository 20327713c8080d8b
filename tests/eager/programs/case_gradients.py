"""GradientTape over the op registry's NumPy cases (tests/ops/cases_*.py): for every case
with a gradient check, the tape's gradient of sum(w * op(x)), computed eagerly, must match
central differences of the case's NumPy expectation (the same check tests/ops runs on
tf.gradients in graph mode). Prints one line, "walk <json>": ops and cases covered, failures."""
import json
import sys
import time

import numpy as np

import tensorflux as tf

tf.enable_eager_execution()

from tests.ops import harness  # after enabling eager, as TF requires
from tests.ops.test_registry import GRAD_CASES


def tape_gradient_case(case, seed=1, eps=1e-6, tol=1e-6):
    _, arrays, wrt, weights, objective = harness.gradient_setup(case, seed)
    xs = [tf.constant(a) for a in arrays]
    with tf.GradientTape() as tape:
        for i in wrt:
            tape.watch(xs[i])
        built = case.fn(*xs)
        built = list(built) if isinstance(built, (list, tuple)) else [built]
        terms = [tf.reduce_sum(t * tf.constant(w, dtype=t.dtype))
                 for t, w in zip(built, weights) if w is not None]
        loss = tf.add_n(terms) if len(terms) > 1 else terms[0]
    grads = tape.gradient(loss, [xs[i] for i in wrt])
    for i, g in zip(wrt, grads):
        if g is None:
            raise AssertionError(f"the tape gave no gradient for input {i}")
        numeric = harness.numeric_gradient(objective, arrays, i, eps)
        np.testing.assert_allclose(np.asarray(tf.convert_to_tensor(g)), numeric, rtol=tol,
                                   atol=tol, err_msg=f"{case}: gradient of input {i}")


# One case per op keeps the walk fast; argv[1] == "all" runs every case.
cases = GRAD_CASES if sys.argv[1:] == ["all"] else list(
    {case.op: case for case in reversed(GRAD_CASES)}.values())
start = time.time()
passed, failed, graph_only = [], {}, []
for case in cases:
    try:
        tape_gradient_case(case)
        passed.append(case)
    except RuntimeError as exc:
        if "tf.gradients is not supported when eager execution is enabled" not in str(exc):
            raise
        graph_only.append(str(case))       # the case itself calls tf.gradients
    except Exception as exc:  # noqa: BLE001 - every failure is reported, by case
        failed[str(case)] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
print("walk", json.dumps({"cases": len(cases), "passed": len(passed),
                  "ops": sorted({c.op for c in passed}), "failed": failed,
                  "graph_only": graph_only, "seconds": round(time.time() - start, 1)}))
sys.stdout.flush()
