"""Control-flow bodies: the ops a cond branch, loop body or scan function creates.

TF1 builds `tf.cond` and `tf.while_loop` from Switch/Merge/Enter/Exit ops that a
dataflow executor interprets. tensorflux compiles to XLA, whose control flow is
functional (`lax.cond`, `lax.while_loop`, `lax.scan`), so it records each branch or
loop body as a `Body`: the ops created while the body was being built (they live in
the graph with their TF names, `cond/add`, `while/mul`), its parameters (the loop
variables or scanned elements as the body sees them), its results, and what it uses
from outside:

- captures: outside tensors read by the body (computed once, before the construct);
- refs: variables the body reads or assigns through their Ref (threaded through it);
- control inputs: outside ops the body's ops wait for.

One functional op (If, While, Scan) stands for the construct in the enclosing graph;
its inputs are the captures (and refs), so pruning, gradients and the run plan see
only it. TF1's rule that only ops created inside a branch are conditional holds by
construction: everything else is a capture and runs before the construct.
"""

from __future__ import annotations

import contextlib

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_shape import as_shape
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, register

# A body's parameter: a value the construct supplies each time the body runs.
register(OpDef("_BodyParameter", outputs=("output: T",),
               attrs={"T": _dtypes.ALL, "shape": None},
               shape=lambda op: as_shape(op.get_attr("shape")), not_differentiable=True))


class Body:
    """The ops one branch or loop body created, and how they connect to the outside."""

    def __init__(self, graph, kind):
        self.graph = graph
        self.kind = kind  # "cond", "while" or "scan": used in error messages
        self.ops = []
        self.params = []
        self.results = []
        self.captures = []
        self.refs = []  # VariableV2 ops
        self.ref_tensors = {}  # variable -> the outside Ref tensor the body first used
        self.written = []  # the subset of refs the body assigns
        self.control_inputs = []
        self.parent = graph._body_stack[-1] if graph._body_stack else None
        self._controls = None

    # -- building ------------------------------------------------------------------
    def __enter__(self):
        self.graph._body_stack.append(self)
        # Outer control_dependencies blocks apply to the construct's op, not to each op
        # of the body (TF1's control-flow contexts drop them the same way).
        self._controls = self.graph.control_dependencies(None)
        self._controls.__enter__()
        return self

    def __exit__(self, *exc):
        self._controls.__exit__(*exc)
        self.graph._body_stack.pop()

    def add_param(self, dtype, shape, name="Identity"):
        """A tensor standing for a value the construct passes in on each run of the body."""
        shape = as_shape(shape)
        with self:
            param = apply_op("_BodyParameter", name=name, T=dtype,
                             shape=shape.as_list() if shape.ndims is not None else None)
        self.params.append(param)
        return param

    def finish(self, results):
        """Records the body's result tensors and works out its captures and refs."""
        from tensorflux._src.compiler import state
        self.results = list(results)
        mine = set(self.ops)
        captures, refs, written, controls = [], [], [], []

        def use(t):
            if t.op in mine:
                return
            if t.dtype._is_ref_dtype:
                var = state.variable_of(t)
                if var not in refs:
                    refs.append(var)
                    # An assign's output as a ref carries the value after the assign.
                    self.ref_tensors[var] = t
            elif t not in captures:
                captures.append(t)

        for op in self.ops:
            for t in op.inputs:
                use(t)
            for c in op._control_inputs:
                if c not in mine and c not in controls:
                    controls.append(c)
            if op.op_def.functional:
                written.extend(v for v in op._attrs["body_writes"] if v not in written)
            elif op.op_def.writes:
                written.extend(v for v in state.written_variables(op) if v not in written)
        for t in self.results:
            use(t)
        self.captures, self.refs, self.control_inputs = captures, refs, controls
        self.written = written

    # -- checks ----------------------------------------------------------------------
    def contains(self, body):
        """Whether `body` is this body or nested inside it."""
        while body is not None:
            if body is self:
                return True
            body = body.parent
        return False

    def check_visible_from(self, tensor, consumer, consumer_body):
        """Tensors of a body are visible only inside it (and bodies nested in it)."""
        if self.contains(consumer_body):
            return
        place = {"cond": "a cond branch", "while": "a while loop",
                 "scan": "the function of a scan/map_fn/fold"}[self.kind]
        raise ValueError(f"Cannot use '{tensor.op.name}' as input to '{consumer.name}' "
                         f"because '{tensor.op.name}' is in {place}. Return it from the "
                         f"{self.kind} instead.")


@contextlib.contextmanager
def outside_bodies(graph):
    """Ops created here belong to no body (TF1's init_scope leaves control-flow contexts):
    a variable first used inside a loop body is created, and initialized, outside it."""
    saved = list(graph._body_stack)
    del graph._body_stack[:]
    try:
        yield
    finally:
        graph._body_stack[:] = saved


def body_bundle(bodies):
    """Captures, Ref tensors, assigned variables and control inputs of several bodies
    (the branches of one cond), without repeats."""
    captures, refs, written, controls = [], [], [], []
    ref_tensors = {}
    for body in bodies:
        for var, t in body.ref_tensors.items():
            ref_tensors.setdefault(var, t)
        captures.extend(t for t in body.captures if t not in captures)
        refs.extend(v for v in body.refs if v not in refs)
        written.extend(v for v in body.written if v not in written)
        controls.extend(c for c in body.control_inputs if c not in controls)
    return captures, [ref_tensors[v] for v in refs], written, controls
