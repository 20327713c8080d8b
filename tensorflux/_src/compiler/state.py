"""Which variable value each op of a run sees, and which values the run writes back.

TF1's rules, for ref variables:

- A read sees the variable's value as of the start of the run, unless a data or control
  dependency orders it after an update of that variable; it then sees the latest such
  update (that update, and every update serialized before it).
- Every update of the run applies. Updates not ordered among themselves run one after
  the other in some order (TF's kernels update the buffer in place, use_locking or not),
  so each reads the value the previous update of the run left. Here that order is the
  run's topological order, so `group(assign_add(w, 1), assign_add(w, 100))` adds 101.
- A ref variable's reads alias its buffer: `v/read` (an Identity of the Ref) and any
  Identity of it forward the buffer rather than copy it, so an op consuming such a
  tensor reads the buffer when *it* runs. `with control_dependencies([assign_add(v,
  1)]): tf.identity(v)` or `v * 2` therefore see the update even though `v/read` itself
  is ordered before nothing. These inputs are *fresh reads*: read like a Ref input, at
  the consuming op (`fresh_reads`). Only those that need it are marked (the consumer is
  ordered after an update the aliased tensor is not), so ordinary reads stay plain data.

The pass walks the ops in topological order, carrying for each op the last writer of
every variable among its ancestors (through data and control edges), and records where
each Ref input's (and fresh read's) value comes from:

    reads[(op, i)] = None          the value at the start (a compiled input)
    reads[(op, i)] = writer_op     the value `writer_op` wrote

A variable's final value is the one written by its last writer in the run. The same
planning runs for control-flow bodies (compiler/functional.py), where "the start" is the
value at the start of the iteration (or branch), and where a tensor captured from
outside that aliases a variable the body writes is always a fresh read: a loop body
reading `v` sees what earlier iterations assigned.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def variable_of(tensor):
    """The VariableV2 op a Ref tensor refers to (Assign-like ops forward their ref)."""
    op = tensor.op
    while not op.op_def.is_variable:
        if not op.op_def.writes:
            raise TypeError(f"Cannot tell which variable the ref tensor {tensor.name} refers "
                            f"to: it is produced by a {op.type} op.")
        op = written_inputs(op)[0].op
    return op


def written_inputs(op):
    """The Ref inputs `op` assigns (a control-flow op: those its bodies assign)."""
    if op.op_def.functional:
        written = op._attrs["body_writes"]
        return [t for t in op.inputs if t.dtype._is_ref_dtype and variable_of(t) in written]
    # A list argument (SdcaShrinkL1's `weights: num_features * Ref(float)`) names all
    # of its tensors.
    written, start = [], 0
    for arg in op.op_def.input_args:
        count = 1
        if arg.number_attr is not None:
            count = op._attrs[arg.number_attr]
        elif arg.type_list_attr is not None:
            count = len(op._attrs[arg.type_list_attr])
        if arg.name in op.op_def.writes:
            written.extend(op.inputs[start:start + count])
        start += count
    return written


def written_variables(op):
    return [variable_of(t) for t in written_inputs(op)]


def writes_variables(op) -> bool:
    return bool(op.op_def.writes) or (op.op_def.functional and bool(op._attrs["body_writes"]))


# TF's Identity kernel forwards its input buffer; on a Ref input it forwards the
# variable's buffer itself (that is what `v/read` is).
_FORWARDS_BUFFER = frozenset({"Identity"})


def aliased_variable(tensor, canonical=None):
    """The variable whose buffer a non-Ref `tensor` aliases (an Identity chain ending at a
    Ref), with the op where the chain's value was last taken; (None, None) otherwise."""
    canonical = canonical or {}
    t = canonical.get(tensor, tensor)
    first = t.op
    while t.op.type in _FORWARDS_BUFFER and not t.dtype._is_ref_dtype:
        src = t.op.inputs[0]
        if src.dtype._is_ref_dtype:
            try:
                return variable_of(src), first
            except TypeError:
                return None, None
        t = canonical.get(src, src)
    return None, None


def _merged_writers(op, deps, last_writers, position, empty):
    writers = empty
    for dep in deps:
        theirs = last_writers.get(dep, empty)
        if theirs and theirs is not writers:
            if not writers:
                writers = theirs
                continue
            writers = dict(writers)
            for var, w in theirs.items():
                if var not in writers or position[w] > position[writers[var]]:
                    writers[var] = w
    return writers


def _deps(op, canonical):
    return [canonical.get(t, t).op for t in op.inputs] + list(op._control_inputs)


def fresh_reads(ops, canonical=None, carried=()):
    """{(op, i): variable} for the non-Ref inputs of `ops` to read as the variable's
    current value rather than as the aliased tensor's (see the module docstring).

    An input qualifies when its tensor aliases a variable and the consuming op is
    ordered after a write of it that the tensor's producer is not; or, with `carried`
    (the variables a control-flow body writes), when the tensor comes from outside
    `ops` and aliases one of those (its value predates the body's iterations).
    Work this out over a whole run, so orderings that cross its clusters count.
    """
    canonical = canonical or {}
    position = {op: i for i, op in enumerate(ops)}
    carried = set(carried)
    last_writers, empty, fresh = {}, {}, {}
    for op in ops:
        writers = _merged_writers(op, _deps(op, canonical), last_writers, position, empty)
        for i, t in enumerate(op.inputs):
            if t.dtype._is_ref_dtype:
                continue
            var, origin = aliased_variable(t, canonical)
            if var is None:
                continue
            if origin in position:
                if writers.get(var) is not last_writers.get(origin, empty).get(var):
                    fresh[(op, i)] = var
            elif var in carried:
                fresh[(op, i)] = var
        if writes_variables(op):
            writers = dict(writers)
            for var in written_variables(op):
                writers[var] = op
        last_writers[op] = writers
    return fresh


@dataclass
class StatePlan:
    reads: dict = field(default_factory=dict)  # (op, input index) -> writer op | None
    read_vars: dict = field(default_factory=dict)  # (op, input index) -> variable
    start_vars: list = field(default_factory=list)  # variables read at their start value
    first_reader: dict = field(default_factory=dict)  # variable -> op (for error messages)
    final_writer: dict = field(default_factory=dict)  # variable -> last op writing it
    checked_vars: list = field(default_factory=list)  # variables IsVariableInitialized asks
    # Start values read by an op that is not a control-flow construct (or fetched): these
    # must exist. One only a construct reads may be missing: the branch reading it may
    # not run (`cond(is_variable_initialized(v), v.read_value, ...)`), see Uninitialized.
    strict_vars: set = field(default_factory=set)
    # (op, input index) of IsVariableInitialized ops ordered after a write of the variable
    # in this run: true whatever the store says.
    initialized_by_run: set = field(default_factory=set)

    @property
    def written_vars(self):
        return list(self.final_writer)


def plan_state(ops, fetch_tensors, fresh=None, canonical=None, carried=()) -> StatePlan:
    """The state plan of `ops` (topologically ordered). fresh: from `fresh_reads` over
    the whole run (None: work it out over `ops`, with `carried` for a body)."""
    canonical = canonical or {}
    if fresh is None:
        fresh = fresh_reads(ops, canonical, carried)
    plan = StatePlan()
    position = {op: i for i, op in enumerate(ops)}
    last_writers = {}  # op -> {variable: writer}, shared when unchanged
    latest = {}  # variable -> the run's latest writer so far (unordered ones included)
    empty = {}

    def need_start(var, reader):
        if var not in plan.first_reader:
            plan.first_reader[var] = reader
            plan.start_vars.append(var)

    def read(op, i, var, writer):
        plan.reads[(op, i)] = writer
        plan.read_vars[(op, i)] = var
        if writer is None:
            need_start(var, op)
            if not op.op_def.functional:
                plan.strict_vars.add(var)

    for op in ops:
        writers = _merged_writers(op, _deps(op, canonical), last_writers, position, empty)
        written = written_variables(op) if writes_variables(op) else []
        for i, t in enumerate(op.inputs):
            if not t.dtype._is_ref_dtype:
                var = fresh.get((op, i))
                if var is not None:
                    read(op, i, var, writers.get(var))
                continue
            var = variable_of(t)
            if op.op_def.checks_initialized:
                if writers.get(var) is not None:
                    plan.initialized_by_run.add((op, i))
                elif var not in plan.checked_vars:
                    plan.checked_vars.append(var)
            elif op.op_def.overwrites and var in written:
                continue  # the old value is not read
            elif var in written:
                # An update applies to what the previous update of the run left, ordered
                # before it or not (both of two unordered assign_adds apply).
                read(op, i, var, latest.get(var))
            else:
                read(op, i, var, writers.get(var))
        if written:
            writers = dict(writers)
            for var in written:
                writers[var] = op
                latest[var] = op
                plan.final_writer.pop(var, None)
                plan.final_writer[var] = op
        last_writers[op] = writers
    for t in fetch_tensors:  # fetching a variable itself reads its start value
        if t.op.op_def.is_variable:
            need_start(t.op, t.op)
            plan.strict_vars.add(t.op)
    return plan


class Uninitialized:
    """The start value of a variable missing from the session's store, in a trace where
    only control-flow constructs read it (compiled knowing which variables are missing,
    with IsVariableInitialized folded to constants, so `tf.cond(is_variable_initialized(v),
    v.read_value, lambda: v.initial_value)` builds only its initial-value branch). An op
    that still gets one raises TF's FailedPreconditionError (`check_initialized`)."""

    def __init__(self, var):
        self.var = var


def check_initialized(op, values):
    """Raises TF's error when one of `op`'s input values is an uninitialized variable's."""
    from tensorflux._src.framework import errors
    missing = next((v for v in values if isinstance(v, Uninitialized)), None)
    if missing is not None:
        raise errors.FailedPreconditionError(
            None, op, f"Attempting to use uninitialized value {missing.var.name}\n\t "
            f"[[{{{{node {op.name}}}}}]]")


def input_value(plan, op, i, start, written):
    """The value of input `i` of `op` the plan says comes from a variable."""
    writer = plan.reads[(op, i)]
    var = plan.read_vars[(op, i)]
    return start[var] if writer is None else written[(writer, var)]
