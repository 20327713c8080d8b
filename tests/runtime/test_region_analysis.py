"""XLA:CPU's region-based copy insertion: used for loop-free programs, never for loops
(the miscompile it avoids is caught by tests/control_flow/test_loops.py's nested loops
and tests/ops/test_registry.py's MatrixSquareRoot and MatrixLogarithm)."""

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import options, region_analysis

CPU = jax.devices("cpu")[0]
ON = {region_analysis.KEY: True}
X = jax.ShapeDtypeStruct((3,), np.float32)


def _jaxpr(fn):
    return jax.make_jaxpr(fn)(X)


def test_loops_and_conditionals_are_found_at_any_depth():
    assert not region_analysis.has_regions(_jaxpr(lambda x: jnp.sin(x) @ x))
    assert region_analysis.has_regions(_jaxpr(
        lambda x: jax.lax.fori_loop(0, 3, lambda i, v: v * 2, x)))
    assert region_analysis.has_regions(_jaxpr(
        lambda x: jax.lax.cond(x[0] > 0, jnp.sin, jnp.cos, x)))
    # inside a nested jit and a custom derivative rule
    inner = jax.custom_jvp(lambda x: jax.lax.while_loop(lambda v: v[0] < 9, lambda v: v + 1, x))
    inner.defjvp(lambda primals, tangents: (inner(*primals), tangents[0]))
    assert region_analysis.has_regions(_jaxpr(jax.jit(lambda x: inner(x) + 1)))


def _gated(fn):
    gated = region_analysis.jit(fn, CPU, ON)
    out = gated(jnp.arange(3.0))
    return gated, out


def test_a_loop_free_program_compiles_with_region_analysis():
    gated, out = _gated(lambda x: x * 2)
    np.testing.assert_array_equal(out, [0, 2, 4])
    assert gated.pick(jnp.arange(3.0)) is gated._with


def test_a_program_with_a_loop_compiles_without_it():
    gated, out = _gated(lambda x: jax.lax.fori_loop(0, 2, lambda i, v: v * 2, x))
    np.testing.assert_array_equal(out, [0, 4, 8])
    assert gated.pick(jnp.arange(3.0)) is gated._without


def test_options_set_by_the_session_are_not_gated():
    jitted = region_analysis.jit(lambda x: x, CPU, ON, user_options=ON)
    assert not isinstance(jitted, region_analysis.Gated)
    assert not isinstance(region_analysis.jit(lambda x: x, CPU, {}), region_analysis.Gated)


def test_region_analysis_updates_a_donated_weight_without_copying_it():
    """Why CPU_DEFAULTS has it: a step that updates a donated weight whose old value the
    backward pass also reads. XLA's default copy insertion copies the weight first; with
    region analysis the update is proven to follow the read and happens in place."""
    def step(w1, w2, m1, m2, x):
        def loss(w1, w2):
            return jnp.sum(jnp.square(jax.nn.relu(x @ w1) @ w2))
        g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2)
        m1, m2 = 0.9 * m1 + g1, 0.9 * m2 + g2
        return w1 - 0.1 * m1, w2 - 0.1 * m2, m1, m2

    specs = [jax.ShapeDtypeStruct(s, np.float32)
             for s in [(16, 16), (16, 4), (16, 16), (16, 4), (8, 16)]]
    lowered = jax.jit(step, donate_argnums=(0, 1, 2, 3)).lower(*specs)

    def copies(compiler_options):
        text = lowered.compile(compiler_options).as_text()
        return [line for line in text[text.index("ENTRY"):].splitlines() if " copy(" in line]

    assert copies({}) != []
    assert copies(options.CPU_DEFAULTS) == []
