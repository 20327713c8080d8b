"""The op registry: every op is one `OpDef` record, and everything else reads it.

Signatures use TF's OpDef notation, so dtype checking and its error messages come from
one place (`op_builder.apply_op`):

    inputs=("x: T", "y: T")          both inputs share the type attr T
    inputs=("values: N * T",)        a list of N tensors of one type
    inputs=("shape: Tshape",)        type attr with its own allowed set
    inputs=("perm: int32",)          a fixed dtype
    outputs=("z: T",) / ("y: bool",) / ("output: N * T",)
    inputs=("ref: Ref(T)", ...)      a variable reference (TF's l-value input)
    inputs=("input: list(T)",)       tensors of any dtypes; T records them (IdentityN)

`attrs` maps each type attr to its allowed dtypes (a tuple of DTypes) and every other
attr to its default (`REQUIRED` when it has none).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Callable

from tensorflux._src.framework import dtypes as _dtypes


class _Required:
    def __repr__(self):
        return "REQUIRED"


REQUIRED = _Required()


@dataclass(frozen=True)
class ArgSpec:
    """One input or output of an op signature."""

    name: str
    type_attr: str | None = None  # e.g. "T"
    fixed_dtype: _dtypes.DType | None = None  # e.g. int32
    number_attr: str | None = None  # e.g. "N" for "N * T"
    is_ref: bool = False  # "Ref(T)": a reference to a variable's buffer
    type_list_attr: str | None = None  # "list(T)": tensors of possibly different dtypes

    @property
    def is_list(self) -> bool:
        return self.number_attr is not None or self.type_list_attr is not None


def _parse_arg(text: str) -> ArgSpec:
    name, _, type_text = (s.strip() for s in text.partition(":"))
    number_attr = None
    if "*" in type_text:
        number_attr, _, type_text = (s.strip() for s in type_text.partition("*"))
    if type_text.startswith("list(") and type_text.endswith(")"):
        return ArgSpec(name, type_list_attr=type_text[5:-1].strip())
    is_ref = type_text.startswith("Ref(") and type_text.endswith(")")
    if is_ref:
        type_text = type_text[4:-1].strip()
    # Only TF's dtype names are fixed types; anything else (T, U, Tidx...) is a type attr.
    if type_text in _dtypes._BY_NAME:
        fixed = _dtypes.as_dtype(type_text)
        return ArgSpec(name, fixed_dtype=fixed, number_attr=number_attr, is_ref=is_ref)
    return ArgSpec(name, type_attr=type_text, number_attr=number_attr, is_ref=is_ref)


@dataclass(frozen=True, eq=False)
class OpDef:
    """Everything about one op type. See the module docstring for the signature notation.

    shape:    (op) -> TensorShape or list of them; raise ValueError for bad inputs. `op`
              has `inputs` (Tensors with static shapes) and `attrs`, not yet in the graph.
    lower:    (*input_values, **attrs) -> value(s), with jax.numpy/jax.lax. Inputs arrive
              as numpy arrays when statically known, so shape-like inputs stay static.
              Only attrs named in its signature are passed.
    grad:     (op, *output_grads) -> list of input grads (graph Tensors or None). Set
              here when the function needs nothing above the record's module; else the
              family's grads module attaches it with `register_gradient`.
    stateful: never folded, merged (CSE) or cached.

    Variables (see runtime rules in docs/architecture.md):
    is_variable: the op *is* a variable (VariableV2); its ref output is its buffer.
    writes:   names of Ref inputs this op updates. `lower` gets the current values of
              all inputs and returns the new value(s) of these refs, in order; output 0
              (the op's ref output) is the first one's new value.
    overwrites: the written refs' old values are not read (Assign), so `lower` gets
              None for them and an uninitialized variable may be assigned.
    checks_initialized: `lower` gets, for each Ref input, whether it is initialized.
    random:   `lower(key, *inputs)` gets a fresh JAX PRNG key each run, derived from the
              op's (seed, seed2) attrs and how many times the Session ran it.
    functional: a control-flow construct (If, While, Scan) whose bodies are recorded in
              its attrs (ops/control/bodies.py). `lower(op, values, ref_values, key)` returns
              (outputs, new values of the refs it writes); see compiler/functional.py.
    host:     a NumPy kernel `(*inputs, **attrs) -> value(s)` for ops XLA cannot compile
              (data-dependent output shapes, strings). It runs on the host after the
              compiled part of a run, and ops that consume its outputs run there too.
    host_outside_bodies: the op's output is data-dependent (a dynamic TensorArray's
              size): outside control-flow bodies it runs as a host step (its lowering on
              concrete values), so ops using it as a shape compile with it known; inside
              a body it is lowered like any op.
    compiled_handle: the op's `resource` outputs are compiled values (a TensorArray's
              handle, whose array travels in its flow), not host objects such as queue
              keys, so ops using them are not sent to the host for it (run_plan.py).
    uses_session: the host kernel also gets `session_state=`, the Session's
              `SessionState`, for resources that live as long as the Session
              (tf.data iterators, queues).
    strings_by_rank: `lower` only moves, selects, compares or zero-fills the elements of
              its inputs (reshape, gather, concat, equal...). Given string tensors (as
              TF allows for such ops) it runs on the host, on each string's rank in the
              sorted strings of its inputs (b"" ranking 0), and string outputs are mapped
              back: the numeric lowering serves strings too (compiler/lowering.py).
    """

    name: str
    inputs: tuple = ()
    outputs: tuple = ("y: T",)
    attrs: dict = field(default_factory=dict)
    shape: Callable | None = None
    lower: Callable | None = None
    grad: Callable | None = None
    not_differentiable: bool = False
    stateful: bool = False
    is_variable: bool = False
    writes: tuple = ()
    overwrites: bool = False
    checks_initialized: bool = False
    random: bool = False
    host: Callable | None = None
    host_outside_bodies: bool = False
    compiled_handle: bool = False
    uses_session: bool = False
    strings_by_rank: bool = False
    functional: bool = False
    # XLA:CPU compiles this op faster with library (YNN) dot fusion; see compiler/options.py.
    xla_cpu_library_fusion: bool = False
    # Lowering switches (ops/nn/conv_lowering.py keys) whose alternatives the autotuner
    # compiles and times on XLA:CPU, e.g. a depthwise convolution's "shifted" form.
    lowering_choices: tuple = ()
    # Type attrs' defaults (TF's `Tidx: type = DT_INT32`): the preferred dtype for Python
    # values, and the attr's value when nothing else sets it.
    type_defaults: dict = field(default_factory=dict)
    # Parsed forms, filled in by __post_init__.
    input_args: tuple = ()
    output_args: tuple = ()
    type_attrs: dict = field(default_factory=dict)
    default_attrs: dict = field(default_factory=dict)
    lower_attrs: tuple = ()
    _input_names: frozenset = frozenset()

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "input_args", tuple(_parse_arg(a) for a in self.inputs))
        set_(self, "_input_names", frozenset(a.name for a in self.input_args))
        if (self.writes or self.is_variable or self.checks_initialized or self.random
                or self.functional or self.uses_session):
            set_(self, "stateful", True)
        set_(self, "output_args", tuple(_parse_arg(a) for a in self.outputs))
        set_(self, "type_attrs", {k: tuple(v) for k, v in self.attrs.items() if _is_type_set(v)})
        set_(self, "default_attrs",
             {k: v for k, v in self.attrs.items() if k not in self.type_attrs})
        number_attrs = {a.number_attr for a in self.input_args + self.output_args
                        if a.number_attr}
        lower_attrs = _keyword_params(self.lower or self.host, set(self.attrs) | number_attrs)
        set_(self, "lower_attrs", () if self.functional else lower_attrs)

    def __repr__(self):
        return f"OpDef({self.name!r})"


def _is_type_set(value) -> bool:
    return isinstance(value, tuple) and value and all(isinstance(v, _dtypes.DType) for v in value)


def _keyword_params(fn, attr_names) -> tuple:
    if fn is None:
        return ()
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return ()
    return tuple(p for p in params if p in attr_names)


_REGISTRY: dict[str, OpDef] = {}


def register(op_def: OpDef) -> OpDef:
    if op_def.name in _REGISTRY:
        raise KeyError(f"Op type {op_def.name!r} is registered twice")
    _REGISTRY[op_def.name] = op_def
    return op_def


def register_gradient(*op_types: str):
    """Decorator: sets the `grad` of already registered records (TF's
    `@ops.RegisterGradient("Add")` in math_grad.py).

    For gradients built from wrappers that sit above the records' own module: a family's
    grads module imports those wrappers and attaches the functions here, so the record
    stays the one place that holds the op's gradient. `ops/all_grads.py` imports every
    grads module. A record that already has a gradient (or none by declaration) is an
    error, so one op cannot end up with two.
    """

    def attach(fn):
        for op_type in op_types:
            op_def = lookup(op_type)
            if op_def.grad is not None or op_def.not_differentiable:
                raise KeyError(f"Op type {op_type!r} already has a gradient "
                               f"({op_def.grad!r}, not_differentiable="
                               f"{op_def.not_differentiable})")
            object.__setattr__(op_def, "grad", fn)  # records are frozen for everyone else
        return fn

    return attach


def lookup(op_type: str) -> OpDef:
    try:
        return _REGISTRY[op_type]
    except KeyError:
        raise KeyError(f"Op type not registered '{op_type}'") from None


def all_ops() -> dict[str, OpDef]:
    return dict(_REGISTRY)
