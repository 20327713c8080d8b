"""The dataflow `Graph`, the default-graph stack, name scopes, devices, control deps."""

from __future__ import annotations

import contextlib
import re
import threading

from tensorflux._src.framework import device as pydev
from tensorflux._src.framework import versions
from tensorflux._src.framework.dtypes import as_dtype as _as_dtype
from tensorflux._src.framework.operation import Operation, Tensor, VALID_OP_NAME
from tensorflux._src.framework.protos import VersionDef

_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\-/>]*$")


class _ControlDependencies:
    """One `control_dependencies` block: its control ops and the ops created inside it."""

    def __init__(self, control_inputs):
        self.control_inputs = control_inputs
        self.created = set()


def _scope_stack(name):
    """A builder stack of the graph (name scope, devices, control dependencies,
    colocation): shared by all threads until `switch_to_thread_local`, then per thread,
    each starting from a copy of the state at the switch."""

    def get(self):
        local = self._thread_local
        if local is None:
            return self.__dict__[name]
        if not hasattr(local, name):
            shared = self.__dict__[name]
            setattr(local, name, list(shared) if isinstance(shared, list) else shared)
        return getattr(local, name)

    def set_(self, value):
        if self._thread_local is None:
            self.__dict__[name] = value
        else:
            setattr(self._thread_local, name, value)

    return property(get, set_)


class Graph:
    """A TensorFlow computation: Operations connected by the Tensors they exchange."""

    _thread_local = None  # a threading.local once `switch_to_thread_local` was called
    _name_stack = _scope_stack("_name_stack")
    _device_stack = _scope_stack("_device_stack")
    _control_stack = _scope_stack("_control_stack")
    _colocation_stack = _scope_stack("_colocation_stack")

    def __init__(self):
        self._nodes_by_name = {}
        self._nodes_in_order = []
        self._names_in_use = {}
        self._name_stack = ""
        self._version = 0  # bumps whenever what a run could compute changes
        self._finalized = False
        self._device_stack = []  # entries: DeviceSpec | callable | None (reset)
        self._control_stack = []
        self._collections = {}
        self._gradient_override_map = {}
        self._unfeedable = set()
        self._unfetchable = set()
        self._body_stack = []  # control-flow bodies (cond branches, loop bodies) being built
        self._seed = None
        self._seed_offset = 0  # op-level seeds drawn from the graph seed, as TF
        self._colocation_stack = []  # ops whose device and group new ops join
        self._container = ""  # resource container of stateful ops (`Graph.container`)
        self._seen_by_new_operations = 0

    # -- structure ------------------------------------------------------------------
    @property
    def version(self) -> int:
        return self._version

    @property
    def seed(self):
        """The graph-level random seed (`tf.set_random_seed`), or None."""
        return self._seed

    @seed.setter
    def seed(self, seed):
        self._seed = seed

    def as_graph_def(self, from_version=None, add_shapes=False):
        """The graph as TF's GraphDef: every op as a NodeDef (name, TF op type, inputs,
        device, attrs under TF's names) and the graph's versions, importable by
        TensorFlow. Attrs with no GraphDef form (control-flow bodies, Python values) are
        left out; `io.graph_def.graph_def(graph, strict=True)` refuses them instead."""
        from tensorflux._src.io.graph_def import graph_def  # formats sit above
        return graph_def(self, add_shapes=add_shapes)

    @property
    def graph_def_versions(self):
        """The GraphDef versions this graph is written with (TF's VersionDef)."""
        return VersionDef(producer=versions.GRAPH_DEF_VERSION,
                          min_consumer=versions.GRAPH_DEF_VERSION_MIN_CONSUMER)

    @property
    def building_function(self) -> bool:
        """True for the graphs of traced functions (tf.data's map functions)."""
        return False

    @property
    def collections(self):
        """The names of the collections this graph holds."""
        return list(self._collections)

    @property
    def operations(self):
        return list(self._nodes_in_order)

    def num_operations(self) -> int:
        return len(self._nodes_in_order)

    def new_operations(self):
        """The ops added since the previous call (all of them on the first)."""
        new = self._nodes_in_order[self._seen_by_new_operations:]
        self._seen_by_new_operations = len(self._nodes_in_order)
        return list(new)

    def op_def_for_type(self, type):  # noqa: A002 - TF's argument name
        """The registry record of an op type (TF returns its OpDef proto)."""
        from tensorflux._src.ops.registry import lookup  # the ops layer sits above
        return lookup(type)

    def create_op(self, op_type, inputs, dtypes=None, input_types=None, name=None,
                  attrs=None, op_def=None, compute_shapes=True, compute_device=True):
        """TF1's low-level constructor: `op_type` applied to `inputs` in signature order.

        `dtypes` (the output types) and `input_types` are checked against what the op's
        record infers; `attrs` are the op's attrs by name.
        """
        from tensorflux._src.ops.op_builder import apply_op
        from tensorflux._src.ops.registry import lookup
        record = lookup(op_type)
        if len(inputs) != len(record.input_args):
            raise ValueError(f"create_op: {op_type} takes {len(record.input_args)} inputs "
                             f"({', '.join(a.name for a in record.input_args)}), got "
                             f"{len(inputs)}")
        kwargs = {a.name: t for a, t in zip(record.input_args, inputs)}
        kwargs.update(attrs or {})
        with self.as_default():
            out = apply_op(op_type, name=name or op_type, **kwargs)
        op = out.op if isinstance(out, Tensor) else (
            out[0].op if isinstance(out, (list, tuple)) and out else out)
        if not isinstance(op, Operation):
            op = self._nodes_in_order[-1]
        if input_types is not None:
            got = [t.dtype for t in op.inputs]
            if [d.base_dtype for d in got] != [_as_dtype(d).base_dtype for d in input_types]:
                raise TypeError(f"In op '{op.name}', input types ({got}) are not compatible "
                                f"with expected types ({list(input_types)})")
        if dtypes is not None:
            got = [t.dtype for t in op.outputs]
            if [d.base_dtype for d in got] != [_as_dtype(d).base_dtype for d in dtypes]:
                raise TypeError(f"create_op: {op_type} outputs {got}, not {list(dtypes)}")
        return op

    def switch_to_thread_local(self):
        """From now on each thread has its own name scope, device, control-dependency
        and colocation stacks (starting from their current state), so threads building
        ops in this graph do not see each other's `with` blocks."""
        if self._thread_local is None:
            self._thread_local = threading.local()

    def Dismantle(self):  # noqa: N802 - TF's name
        """Drops every op and collection, so their memory can be freed."""
        self._check_not_finalized()
        self._nodes_by_name.clear()
        self._nodes_in_order.clear()
        self._names_in_use.clear()
        self._collections.clear()
        self._seen_by_new_operations = 0
        self._version += 1

    @property
    def finalized(self) -> bool:
        return self._finalized

    def finalize(self):
        """Makes the graph read-only: adding an op afterwards raises RuntimeError."""
        self._finalized = True

    def _unsafe_unfinalize(self):
        self._finalized = False

    def _check_not_finalized(self):
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")

    def get_operations(self):
        return list(self._nodes_in_order)

    def _add_op(self, op: Operation):
        self._check_not_finalized()
        if op.name in self._nodes_by_name:
            raise ValueError(f"Cannot add op with name {op.name} as that name is already used")
        body = self._body_stack[-1] if self._body_stack else None
        for t in op.inputs:
            if t.op._body is not None and t.op._body is not body:
                t.op._body.check_visible_from(t, op, body)
        op._id = len(self._nodes_in_order)
        op._body = body
        if body is not None:
            body.ops.append(op)
        self._nodes_by_name[op.name] = op
        self._nodes_in_order.append(op)
        for t in op.inputs:
            t._consumers.append(op)
        for controller in self._control_stack:
            controller.created.add(op)
        self._version += 1

    def as_default(self):
        """Makes this graph the default graph inside a `with` block."""
        return _default_graph_stack.get_controller(self)

    # -- lookup ---------------------------------------------------------------------
    def as_graph_element(self, obj, allow_tensor=True, allow_operation=True):
        types_str = " or ".join(t for t, ok in (("Tensor", allow_tensor),
                                                ("Operation", allow_operation)) if ok)
        if hasattr(obj, "_as_graph_element") and callable(obj._as_graph_element):
            obj = obj._as_graph_element()
        if isinstance(obj, (bytes, str)):
            name = obj.decode() if isinstance(obj, bytes) else obj
            return self._element_by_name(name, allow_tensor, allow_operation, types_str)
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"Operation {obj!r} is not an element of this graph.")
            return obj
        raise TypeError(f"Can not convert a {type(obj).__name__} into a {types_str}.")

    def _element_by_name(self, name, allow_tensor, allow_operation, types_str):
        if ":" in name and allow_tensor:
            op_name, _, index = name.rpartition(":")
            if not index.isdigit():
                raise ValueError(f"The name {name!r} looks a like a Tensor name, but is not a "
                                 f"valid one. Tensor names must be of the form "
                                 f"\"<op_name>:<output_index>\".")
            op = self._nodes_by_name.get(op_name)
            if op is None:
                raise KeyError(f"The name {name!r} refers to a Tensor which does not exist. "
                               f"The operation, {op_name!r}, does not exist in the graph.")
            if int(index) >= len(op.outputs):
                raise KeyError(f"The name {name!r} refers to a Tensor which does not exist. "
                               f"The operation, {op_name!r}, exists but only has "
                               f"{len(op.outputs)} outputs.")
            return op.outputs[int(index)]
        if ":" in name:
            raise ValueError(f"Name {name!r} appears to refer to a Tensor, not a {types_str}.")
        if not allow_operation:
            if name in self._nodes_by_name:
                raise ValueError(f"The name {name!r} refers to an Operation, not a {types_str}. "
                                 f"Tensor names must be of the form "
                                 f"\"<op_name>:<output_index>\".")
            raise ValueError(f"The name {name!r} looks like an (invalid) Operation name, not a "
                             f"{types_str}. Tensor names must be of the form "
                             f"\"<op_name>:<output_index>\".")
        op = self._nodes_by_name.get(name)
        if op is None:
            raise KeyError(f"The name {name!r} refers to an Operation not in the graph.")
        return op

    def get_operation_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings (or similar), not "
                            f"{type(name).__name__}.")
        return self.as_graph_element(name, allow_tensor=False, allow_operation=True)

    def get_tensor_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings (or similar), not {type(name).__name__}.")
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def _get_operation_by_name_unsafe(self, name):
        return self._nodes_by_name[name]

    # -- names ----------------------------------------------------------------------
    def unique_name(self, name, mark_as_used=True) -> str:
        """`name` under the current scope, suffixed `_1`, `_2`... if taken (case-insensitive)."""
        if self._name_stack:
            name = self._name_stack + "/" + name
        key = name.lower()
        count = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = count + 1
        if count > 0:
            base_key = key
            while key in self._names_in_use:  # skip names a user took explicitly, e.g. add_1
                key = f"{base_key}_{count}"
                count += 1
            if mark_as_used:
                self._names_in_use[key] = 1
            name = f"{name}_{count - 1}"
        return name

    def get_name_scope(self) -> str:
        return self._name_stack

    @contextlib.contextmanager
    def name_scope(self, name):
        """Graph-level name scope: nested, absolute with a trailing '/', reset by None/''."""
        if name:
            if not isinstance(name, str):
                name = name.decode() if isinstance(name, bytes) else str(name)
            pattern = _VALID_SCOPE_NAME if self._name_stack else VALID_OP_NAME
            if not pattern.match(name):
                raise ValueError(f"'{name}' is not a valid scope name")
        old_stack = self._name_stack
        if not name:
            new_stack = ""
        elif name[-1] == "/":
            new_stack = name[:-1]
        else:
            new_stack = self.unique_name(name)
        self._name_stack = new_stack
        try:
            yield new_stack + "/" if new_stack else ""
        finally:
            self._name_stack = old_stack

    # -- devices --------------------------------------------------------------------
    @contextlib.contextmanager
    def device(self, device_name_or_function):
        """Sets the device for ops created inside; None clears enclosing device scopes."""
        entry = device_name_or_function
        if entry is not None and not callable(entry):
            entry = pydev.parse(entry)  # validates the string now, as TF does
        self._device_stack.append(entry)
        try:
            yield
        finally:
            self._device_stack.pop()

    def _apply_device_functions(self, op):
        # Innermost first: each outer scope only fills fields that inner ones left unset.
        for entry in reversed(self._device_stack):
            if entry is None:
                break
            if callable(entry):
                op._set_device(entry(op) or "")
            else:
                op._set_device(entry.merge_from(pydev.parse(op.device)).to_string())

    # -- control dependencies ---------------------------------------------------------
    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Ops created inside run after `control_inputs`; None clears enclosing blocks."""
        if control_inputs is None:
            saved, self._control_stack = self._control_stack, []
            try:
                yield
            finally:
                self._control_stack = saved
            return
        ops = []
        for c in control_inputs:
            if hasattr(c, "_as_graph_element") and callable(c._as_graph_element):
                c = c._as_graph_element()
            if isinstance(c, Tensor):
                c = c.op
            elif type(c).__name__ == "IndexedSlices":  # (indexed_slices.py imports this)
                c = c.op  # the op producing its values, as TF1
            if not isinstance(c, Operation):
                raise TypeError(f"Can not convert a {type(c).__name__} into a Operation.")
            if c.graph is not self:
                raise ValueError(f"Control input {c!r} must be from the same graph.")
            if c not in ops:
                ops.append(c)
        self._control_stack.append(_ControlDependencies(ops))
        try:
            yield
        finally:
            self._control_stack.pop()

    def _control_inputs_for(self, input_ops):
        """Control inputs a new op receives; skipped where an input already implies them."""
        result = []
        for controller in self._control_stack:
            if any(op in controller.created for op in input_ops):
                continue
            for c in controller.control_inputs:
                if c not in result and c not in input_ops:
                    result.append(c)
        return result

    # -- collections ------------------------------------------------------------------
    def add_to_collection(self, name, value):
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        names = (names,) if isinstance(names, str) else set(names)
        for name in names:
            self.add_to_collection(name, value)

    def get_collection_ref(self, name):
        return self._collections.setdefault(name, [])

    def get_collection(self, name, scope=None):
        items = self._collections.get(name, [])
        if scope is None:
            return list(items)
        pattern = re.compile(scope)
        return [item for item in items
                if getattr(item, "name", None) is not None and pattern.match(item.name)]

    def get_all_collection_keys(self):
        return [k for k, v in self._collections.items() if v is not None]

    def clear_collection(self, name):
        self._collections.pop(name, None)

    # -- feeding / fetching -------------------------------------------------------------
    def prevent_feeding(self, tensor):
        self._unfeedable.add(tensor)

    def prevent_fetching(self, op):
        self._unfetchable.add(op)

    def is_feedable(self, tensor) -> bool:
        return tensor not in self._unfeedable

    def is_fetchable(self, tensor_or_op) -> bool:
        op = tensor_or_op.op if isinstance(tensor_or_op, Tensor) else tensor_or_op
        return op not in self._unfetchable

    # -- gradients (used by autodiff) -----------------------------------------------------
    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map):
        """Within the block, ops of type K use the gradient registered as op_type_map[K]."""
        saved = dict(self._gradient_override_map)
        self._gradient_override_map.update(op_type_map)
        try:
            yield
        finally:
            self._gradient_override_map = saved

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing=False):
        """Ops created inside run on `op`'s device and join its colocation group
        (`op.colocation_groups()`); `op=None` with `ignore_existing` clears the stack."""
        if op is None and not ignore_existing:
            raise ValueError("Trying to reset colocation (op is None) but ignore_existing "
                             "is not True")
        if op is not None:
            if hasattr(op, "_as_graph_element") and callable(op._as_graph_element):
                op = op._as_graph_element()
            if isinstance(op, Tensor):
                op = op.op
            if not isinstance(op, Operation):
                raise TypeError(f"colocate_with takes an Operation or Tensor, not "
                                f"{type(op).__name__}")
        saved = self._colocation_stack
        self._colocation_stack = ([] if ignore_existing else list(saved)) + (
            [op] if op is not None else [])
        try:
            yield
        finally:
            self._colocation_stack = saved

    def _apply_colocation(self, op):
        if self._colocation_stack:
            anchor = self._colocation_stack[-1]
            op._colocation_groups = sorted({g for o in self._colocation_stack
                                            for g in o.colocation_groups()})
            if anchor.device:
                op._set_device(anchor.device)

    # -- resource containers -------------------------------------------------------------
    @contextlib.contextmanager
    def container(self, container_name):
        """Stateful ops created inside are in resource container `container_name`
        (TF uses it to reset groups of resources on a server with `Session.reset`)."""
        saved, self._container = self._container, container_name
        try:
            yield container_name
        finally:
            self._container = saved


class _DefaultGraphStack(threading.local):
    """Per-thread stack of default graphs over one process-wide global default."""

    _global_default = None
    # What the global default graph is made of: Graph, or the eager context's graph
    # class while eager execution is on (tensorflux/_src/eager/context.py sets it).
    global_graph_class = Graph

    def __init__(self):
        self.stack = []

    def get_default(self) -> Graph:
        if self.stack:
            return self.stack[-1]
        if _DefaultGraphStack._global_default is None:
            _DefaultGraphStack._global_default = _DefaultGraphStack.global_graph_class()
        return _DefaultGraphStack._global_default

    def reset(self):
        if self.stack:
            raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs. "
                                 "If you need a cleared graph, exit the nesting and create a "
                                 "new graph.")
        _DefaultGraphStack._global_default = None

    @contextlib.contextmanager
    def get_controller(self, graph):
        self.stack.append(graph)
        try:
            yield graph
        finally:
            self.stack.remove(graph)


_default_graph_stack = _DefaultGraphStack()


def get_default_graph() -> Graph:
    return _default_graph_stack.get_default()


def reset_default_graph():
    """Clears the default graph stack and resets the global default graph."""
    _default_graph_stack.reset()


def device(device_name_or_function):
    """`tf.device`: a scope on the default graph."""
    return get_default_graph().device(device_name_or_function)


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


class name_scope:  # noqa: N801 - TF1's public name
    """`tf.name_scope(name, default_name=None, values=None)` as a context manager."""

    def __init__(self, name, default_name=None, values=None):
        self._name = default_name if name is None else name
        self._default_name = default_name
        self._values = values
        self._ctx = None

    @property
    def name(self):
        return self._name

    def __enter__(self):
        if self._name is None and self._values is not None:
            raise ValueError(f"At least one of name ({self._name}) and default_name "
                             f"({self._default_name}) must be provided.")
        graph = graph_from_inputs(self._values or [])
        self._ctx = contextlib.ExitStack()
        self._ctx.enter_context(graph.as_default())
        return self._ctx.enter_context(graph.name_scope(self._name))

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


def graph_from_inputs(values) -> Graph:
    """The graph the given tensors/ops live in (the default graph if none)."""
    found = None
    default = get_default_graph()
    outer = getattr(default, "outer_graph", None)  # tracing a function (tf.data)
    for v in values:
        g = getattr(v, "graph", None)
        if outer is not None and isinstance(g, Graph) and g is not default:
            g = default  # an outer tensor: the function captures it (func_graph.py)
        if isinstance(g, Graph):
            if found is not None and g is not found:
                raise ValueError(f"{v!r} must be from the same graph as the other inputs.")
            found = g
    return found or get_default_graph()


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    get_default_graph().add_to_collections(names, value)


def get_collection(key, scope=None):
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    return get_default_graph().get_collection_ref(key)
