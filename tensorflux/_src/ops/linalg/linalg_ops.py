"""Matrix products: `matmul` (MatMul / BatchMatMulV2), `tensordot`, `einsum` (Einsum), and
`eye` (TF keeps it in linalg_ops too).

Shape errors use the wording of TF's C++ shape functions ("Shape must be rank 2 but is
rank 1", "Dimensions must be equal, but are 3 and 4"), which op_builder completes with
"for 'MatMul' (op: 'MatMul') with input shapes: ...".
"""

from __future__ import annotations

import collections
import re

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.eager.eager_tensor import EagerTensor
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.behaviour import executing_eagerly
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import Dimension, TensorShape, unknown_shape
from tensorflux._src.ops.array import array_ops, gather_ops, generator_ops
from tensorflux._src.ops.constant import constant
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.math.grad_helpers import _broadcast_gradient_args, unbroadcast
from tensorflux._src.ops.math.reduce_ops import reduce_prod, reduce_sum
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import shape_arg
from tensorflux._src.ops.registry import REQUIRED, OpDef, register
from tensorflux._src.ops.shape_fns import broadcast, static_value

_d = _dtypes
MATMUL_TYPES = _d.FLOATS + (_d.int32, _d.int64) + _d.COMPLEX

__all__ = ["einsum", "eye", "matmul", "tensordot"]


# -- shape helpers with the C++ shape-inference wording ---------------------------------------
def _with_rank(shape, rank):
    if shape.ndims is not None and shape.ndims != rank:
        raise ValueError(f"Shape must be rank {rank} but is rank {shape.ndims}")
    return shape if shape.ndims is not None else unknown_shape(rank)


def _with_rank_at_least(shape, rank):
    if shape.ndims is not None and shape.ndims < rank:
        raise ValueError(f"Shape must be at least rank {rank} but is rank {shape.ndims}")
    return shape


def _merge_dims(a, b):
    a, b = Dimension(a.value if isinstance(a, Dimension) else a), \
        Dimension(b.value if isinstance(b, Dimension) else b)
    if not a.is_compatible_with(b):
        raise ValueError(f"Dimensions must be equal, but are {a.value} and {b.value}")
    return a.merge_with(b)


# -- MatMul: rank-2 only, with transposes -----------------------------------------------------
def _matmul_shape(op):
    a = _with_rank(op.inputs[0].shape, 2)
    b = _with_rank(op.inputs[1].shape, 2)
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    rows, inner_a = (a.dims[1], a.dims[0]) if ta else (a.dims[0], a.dims[1])
    inner_b, cols = (b.dims[1], b.dims[0]) if tb else (b.dims[0], b.dims[1])
    _merge_dims(inner_a, inner_b)
    return TensorShape([rows, cols])


def _matmul_grad(op, grad):
    """TF's MatMul gradient for each (transpose_a, transpose_b); complex operands are
    conjugated (the gradient is taken in the conjugate direction)."""
    t_a, t_b = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    a, b = math_ops.conj(op.inputs[0]), math_ops.conj(op.inputs[1])

    def mm(x, y, ta=False, tb=False):
        return apply_op("MatMul", a=x, b=y, transpose_a=ta, transpose_b=tb)

    if not t_a and not t_b:
        return [mm(grad, b, tb=True), mm(a, grad, ta=True)]
    if not t_a and t_b:
        return [mm(grad, b), mm(grad, a, ta=True)]
    if t_a and not t_b:
        return [mm(b, grad, tb=True), mm(a, grad)]
    return [mm(b, grad, ta=True, tb=True), mm(grad, a, ta=True, tb=True)]


register(OpDef(
    "MatMul", inputs=("a: T", "b: T"), outputs=("product: T",),
    attrs={"T": MATMUL_TYPES, "transpose_a": False, "transpose_b": False},
    shape=_matmul_shape,
    lower=lambda a, b, transpose_a, transpose_b: jnp.matmul(a.T if transpose_a else a,
                                                            b.T if transpose_b else b),
    grad=_matmul_grad,
))


# -- BatchMatMulV2: rank >= 2, adjoints, broadcasting batch dimensions -------------------------
def _batch_matmul_shape(op):
    x = _with_rank_at_least(op.inputs[0].shape, 2)
    y = _with_rank_at_least(op.inputs[1].shape, 2)
    if x.ndims is None or y.ndims is None:
        return unknown_shape()  # the batch dimensions are unknown
    adj_x, adj_y = op.get_attr("adj_x"), op.get_attr("adj_y")
    rows = x.dims[-1] if adj_x else x.dims[-2]
    cols = y.dims[-2] if adj_y else y.dims[-1]
    _merge_dims(x.dims[-2] if adj_x else x.dims[-1], y.dims[-1] if adj_y else y.dims[-2])
    batch = broadcast(x[:-2], y[:-2])
    return batch.concatenate([rows, cols])


def _adjoint(m):
    return jnp.conj(jnp.swapaxes(m, -1, -2))


def _batch_matmul_grad(op, grad):
    """TF's BatchMatMulV2 gradient; each operand's gradient is then summed over the batch
    dimensions it was broadcast along (its matrix dimensions match the gradient's)."""
    x, y = op.inputs
    adj_x, adj_y = op.get_attr("adj_x"), op.get_attr("adj_y")
    if not adj_x and not adj_y:
        gx, gy = matmul(grad, y, adjoint_b=True), matmul(x, grad, adjoint_a=True)
    elif not adj_x:
        gx, gy = matmul(grad, y), matmul(grad, x, adjoint_a=True)
    elif not adj_y:
        gx, gy = matmul(y, grad, adjoint_b=True), matmul(x, grad)
    else:
        gx = matmul(y, grad, adjoint_a=True, adjoint_b=True)
        gy = matmul(grad, x, adjoint_a=True, adjoint_b=True)
    return [unbroadcast(gx, x), unbroadcast(gy, y)]


register(OpDef(
    "BatchMatMulV2", inputs=("x: T", "y: T"), outputs=("output: T",),
    attrs={"T": MATMUL_TYPES, "adj_x": False, "adj_y": False},
    shape=_batch_matmul_shape,
    lower=lambda x, y, adj_x, adj_y: jnp.matmul(_adjoint(x) if adj_x else x,
                                                _adjoint(y) if adj_y else y),
    grad=_batch_matmul_grad,
))


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, name=None):
    """The matrix product a @ b over the last two dimensions; leading dimensions broadcast.

    Rank-2 operands give one MatMul op; anything else (or an unknown rank) BatchMatMulV2,
    as TF 1.15 builds it. `adjoint_*` conjugate and transpose; `*_is_sparse` are hints that
    XLA does not need and are ignored.
    """
    del a_is_sparse, b_is_sparse  # a sparse kernel choice in TF; XLA picks its own
    if (type(a) is EagerTensor and type(b) is EagerTensor and not (adjoint_a or adjoint_b)
            and a._shape.ndims == 2 and b._shape.ndims == 2 and executing_eagerly()):
        # Eagerly, two rank-2 eager tensors: no name scope (eager names are not kept) and
        # nothing to convert, so straight to MatMul, which its fast path may run at once
        # (TF's eager wrappers skip the same work).
        return apply_op("MatMul", name=name, a=a, b=b, transpose_a=transpose_a,
                        transpose_b=transpose_b)
    with _graph.name_scope(name, "MatMul", [a, b]) as scope:
        if transpose_a and adjoint_a:
            raise ValueError("Only one of transpose_a and adjoint_a can be True.")
        if transpose_b and adjoint_b:
            raise ValueError("Only one of transpose_b and adjoint_b can be True.")
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b")
        rank_a, rank_b = a.shape.ndims, b.shape.ndims
        if rank_a is None or rank_a > 2 or rank_b is None or rank_b > 2:
            # BatchMatMulV2 has adjoints only: a transpose is the adjoint of the conjugate.
            if transpose_a:
                a, adjoint_a = math_ops.conj(a), True
            if transpose_b:
                b, adjoint_b = math_ops.conj(b), True
            return apply_op("BatchMatMulV2", name=scope, x=a, y=b, adj_x=adjoint_a,
                            adj_y=adjoint_b)
        # MatMul has transposes only: an adjoint is the transpose of the conjugate.
        if adjoint_a:
            a, transpose_a = math_ops.conj(a), True
        if adjoint_b:
            b, transpose_b = math_ops.conj(b), True
        return apply_op("MatMul", name=scope, a=a, b=b, transpose_a=transpose_a,
                        transpose_b=transpose_b)


# -- tensordot: transpose + reshape + MatMul + reshape, as TF composes it ---------------------
def _tensordot_axes(a, axes):
    """The contraction axes of a and b as two lists of ints."""
    if isinstance(axes, np.ndarray):
        axes = axes.tolist()
    if isinstance(axes, Tensor):
        value = static_value(axes)
        if value is None:
            raise ValueError("tensordot needs 'axes' at graph construction time; got a "
                             "tensor whose value is only known at run time.")
        axes = value.tolist()
    if isinstance(axes, (int, np.integer)):
        axes = int(axes)
        if axes < 0:
            raise ValueError("'axes' must be at least 0.")
        if a.shape.ndims is None:
            raise ValueError("tensordot needs the rank of 'a' when 'axes' is an integer.")
        if axes > a.shape.ndims:
            raise ValueError(f"'axes' must not be larger than the number of dimensions of "
                             f"tensor {a}.")
        return list(range(a.shape.ndims - axes, a.shape.ndims)), list(range(axes))
    if isinstance(axes, (list, tuple)):
        if len(axes) != 2:
            raise ValueError("'axes' must be an integer or have length 2.")
        a_axes, b_axes = axes
        if isinstance(a_axes, (int, np.integer)) and isinstance(b_axes, (int, np.integer)):
            a_axes, b_axes = [a_axes], [b_axes]
        a_axes, b_axes = [int(i) for i in a_axes], [int(i) for i in b_axes]
        if len(a_axes) != len(b_axes):
            raise ValueError(f"Different number of contraction axes 'a' and 'b', "
                             f"{len(a_axes)} != {len(b_axes)}.")
        return a_axes, b_axes
    raise TypeError(f"'axes' must be an int, a pair of lists or a tensor, got {axes!r}")


def _tensordot_reshape(x, axes, flipped=False):
    """x transposed and reshaped to a matrix: (free, contracted), or (contracted, free).

    Returns the matrix and the free dimensions (ints, or a shape tensor when some are
    unknown) plus their static values.
    """
    if x.shape.ndims is None:
        raise ValueError("tensordot needs operands of known rank.")
    shape = x.shape.as_list()
    axes = [i + len(shape) if i < 0 else i for i in axes]
    free = [i for i in range(len(shape)) if i not in axes]
    perm = axes + free if flipped else free + axes
    free_static = [shape[i] for i in free]
    transpose, reshape = array_ops.transpose, array_ops.reshape
    if x.shape.is_fully_defined():
        prod_free = int(np.prod(free_static, dtype=np.int64))
        prod_axes = int(np.prod([shape[i] for i in axes], dtype=np.int64))
        new_shape = [prod_axes, prod_free] if flipped else [prod_free, prod_axes]
        return reshape(transpose(x, perm), new_shape), free_static, free_static
    # Some dims are unknown: compute them from tf.shape(x) in the graph.
    gather = gather_ops.gather
    axes_t = convert_to_tensor(axes, dtype=_d.int32, name="axes")
    free_t = convert_to_tensor(free, dtype=_d.int32, name="free")
    shape_x = array_ops.shape(x)
    free_dims = gather(shape_x, free_t)
    prod_free = reduce_prod(free_dims)
    prod_axes = reduce_prod(gather(shape_x, axes_t))
    if flipped:
        perm_t = array_ops.concat([axes_t, free_t], 0)
        new_shape = array_ops.stack([prod_axes, prod_free])
    else:
        perm_t = array_ops.concat([free_t, axes_t], 0)
        new_shape = array_ops.stack([prod_free, prod_axes])
    return reshape(transpose(x, perm_t), new_shape), free_dims, free_static


def tensordot(a, b, axes, name=None):
    """Sum of products over `axes`: an int N (last N of a with first N of b) or a pair of
    axis lists. Like numpy.tensordot; built from transpose, reshape and one MatMul."""
    with _graph.name_scope(name, "Tensordot", [a, b, axes]) as scope:
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b")
        a_axes, b_axes = _tensordot_axes(a, axes)
        a_matrix, a_free, a_free_static = _tensordot_reshape(a, a_axes)
        b_matrix, b_free, b_free_static = _tensordot_reshape(b, b_axes, flipped=True)
        product = matmul(a_matrix, b_matrix)
        reshape = array_ops.reshape
        if isinstance(a_free, list) and isinstance(b_free, list):
            return reshape(product, a_free + b_free, name=scope)
        a_free = convert_to_tensor(a_free, dtype=_d.int32)
        b_free = convert_to_tensor(b_free, dtype=_d.int32)
        result = reshape(product, array_ops.concat([a_free, b_free], 0), name=scope)
        result.set_shape(a_free_static + b_free_static)
        return result


# -- Einsum: one or two operands, equation parsed for shapes ----------------------------------
def _parse_equation(equation):
    parts = equation.split("->")
    if len(parts) != 2:
        raise ValueError(f"Expecting exactly one '->' in einsum equation: {equation}")
    inputs = parts[0].split(",")
    if len(inputs) not in (1, 2):
        raise ValueError(f"Expecting 1 or 2 input subscripts in equation '{equation}' but "
                         f"got: {len(inputs)}")
    return inputs, parts[1]


def _has_ellipsis(subscript):
    periods = subscript.count(".")
    if periods not in (0, 3):
        raise ValueError(f"Expected at most one ellipsis (...), but found {periods} periods "
                         f"(.) in the input subscript: {subscript}")
    if periods == 3 and "..." not in subscript:
        raise ValueError(f"Periods found outside of ellipsis in subscript: {subscript}")
    return periods == 3


def _einsum_shape(op):
    equation = op.get_attr("equation")
    input_labels, output_labels = _parse_equation(equation)
    if len(op.inputs) != len(input_labels):
        raise ValueError(f"Expected {len(input_labels)} inputs for equation {equation} but "
                         f"got: {len(op.inputs)}")
    label_dims = {}
    bcast_shapes = []  # the dims each input's ellipsis stands for
    for i, (labels, tensor) in enumerate(zip(input_labels, op.inputs)):
        shape = tensor.shape
        ellipsis = _has_ellipsis(labels)
        named = labels.replace("...", "")
        context = f"\n\t for {i}th input and equation: {equation}"
        if shape.ndims is not None:
            if ellipsis and shape.ndims < len(named):
                raise ValueError(f"Shape must be at least rank {len(named)} but is rank "
                                 f"{shape.ndims}{context}")
            if not ellipsis and shape.ndims != len(named):
                raise ValueError(f"Shape must be rank {len(named)} but is rank "
                                 f"{shape.ndims}{context}")
        before, _, after = labels.partition("...")
        if shape.ndims is None:
            dims = {label: Dimension(None) for label in named}
            bcast_shapes.append(unknown_shape() if ellipsis else TensorShape([]))
        else:
            all_dims = shape.dims
            tail = all_dims[len(all_dims) - len(after):] if after else []
            dims_seq = list(zip(before, all_dims[:len(before)])) + list(zip(after, tail))
            dims = collections.OrderedDict()
            for label, dim in dims_seq:
                dims[label] = _merge_dims(dims[label], dim) if label in dims else dim
            bcast_shapes.append(TensorShape(all_dims[len(before):len(all_dims) - len(after)])
                                if ellipsis else TensorShape([]))
        for label, dim in dims.items():
            label_dims[label] = _merge_dims(label_dims[label], dim) if label in label_dims \
                else dim
    out_bcast = bcast_shapes[0] if len(bcast_shapes) == 1 else broadcast(*bcast_shapes)
    if _has_ellipsis(output_labels):
        if out_bcast.ndims is None:
            return unknown_shape()
    elif out_bcast.ndims:
        raise ValueError(f"Shape must be at most rank 0 but is rank {out_bcast.ndims}\n\t for "
                         f"einsum equation '{equation}' without ellipsis (...) in the output "
                         f"subscripts where input(s) have non-empty broadcasting shape")
    before, _, after = output_labels.partition("...")
    dims = []
    for label in before + ("." if "..." in output_labels else "") + after:
        if label == ".":
            dims.extend(out_bcast.dims)
            continue
        if label not in label_dims:
            raise ValueError(f"Einsum output subscripts for equation '{equation}' has label "
                             f"'{label}' which is not present in the input subscripts")
        dims.append(label_dims[label])
    return TensorShape(dims)


_ELLIPSIS = "..."


def _tokens(subscripts):
    """Labels of one subscript string, with "..." as one token: "...ij" -> ["...", "i", "j"]."""
    head, ellipsis, tail = subscripts.partition(_ELLIPSIS)
    return list(head) + ([_ELLIPSIS] if ellipsis else []) + list(tail)


def _einsum_lower(*inputs, equation):
    in_subs, out_subs = equation.split("->")
    tokens = _tokens(out_subs)
    unique = list(dict.fromkeys(tokens))
    if len(unique) == len(tokens):
        return jnp.einsum(equation, *inputs)
    # A label repeated in the output writes a diagonal ("i->ii": zeros off it), as TF's
    # kernel allows; the gradient of a trace or a diagonal extraction is such an einsum.
    u = jnp.einsum(f"{in_subs}->{''.join(unique)}", *inputs)
    ellipsis_rank = u.ndim - len(unique) + (_ELLIPSIS in unique)
    dims, axis = {}, 0
    for token in unique:
        n = ellipsis_rank if token == _ELLIPSIS else 1
        dims[token], axis = u.shape[axis:axis + n], axis + n
    full, kept, first, diagonals = [], [], {}, []
    for token in tokens:
        if token in first:
            diagonals.append((first[token], len(full)))
            kept.append(1)
        else:
            first[token] = len(full)
            kept.extend(dims[token])
        full.extend(dims[token])
    on_diagonal = np.ones((), bool)
    for a, b in diagonals:
        on_diagonal = on_diagonal & (jax.lax.broadcasted_iota(np.int32, full, a) ==
                                     jax.lax.broadcasted_iota(np.int32, full, b))
    return jnp.where(on_diagonal, jnp.reshape(u, kept), jnp.zeros((), u.dtype))


def _label_dims(x, subscripts, labels):
    """The sizes of `labels` in x (subscripted by `subscripts`): a list of ints when they
    are static, else a shape tensor."""
    tokens = _tokens(subscripts)
    split = tokens.index(_ELLIPSIS) if _ELLIPSIS in tokens else len(tokens)
    axes = [tokens.index(label) if tokens.index(label) < split
            else tokens.index(label) - len(tokens) for label in labels]  # from the end
    static = [x.shape.dims[a].value if x.shape.ndims is not None else None for a in axes]
    if None not in static:
        return static
    shape_x = array_ops.shape(x)
    return array_ops.stack([shape_x[a] for a in axes])


def _einsum_grad_wrt(grad, other, x, x_subs, other_subs, out_subs):
    """Gradient for the operand x (TF's rule): the einsum with x's subscripts as output;
    labels only x has were summed, so that gradient is constant along them: an einsum
    with ones of their sizes. Broadcast ellipsis dims are summed by the caller."""
    in_others = set(_tokens(out_subs)) | set(_tokens(other_subs)) | {_ELLIPSIS}
    reduced = sorted(set(_tokens(x_subs)) - in_others)
    left = "".join(t for t in _tokens(x_subs) if t not in reduced)
    inputs, subs = [grad], out_subs
    if other is not None:
        inputs, subs = [grad, other], f"{out_subs},{other_subs}"
    if not reduced:
        return apply_op("Einsum", inputs=inputs, equation=f"{subs}->{x_subs}")
    grad_left = apply_op("Einsum", inputs=inputs, equation=f"{subs}->{left}")
    ones = generator_ops.ones(_label_dims(x, x_subs, reduced), dtype=grad.dtype)
    return apply_op("Einsum", inputs=[ones, grad_left],
                    equation=f"{''.join(reduced)},{left}->{x_subs}")


def _ellipsis_range(subs):
    tokens = _tokens(subs)
    if _ELLIPSIS not in tokens:
        return 0, 0
    start = tokens.index(_ELLIPSIS)
    after = len(tokens) - start - 1
    return start, (-after if after else None)


def _einsum_grad(op, grad):
    input_subs, out_subs = op.get_attr("equation").split("->")
    if _ELLIPSIS not in out_subs:
        input_subs = input_subs.replace(_ELLIPSIS, "")  # the ellipses are empty then
    if len(op.inputs) == 1:
        return [_einsum_grad_wrt(grad, None, op.inputs[0], input_subs, "", out_subs)]
    x_subs, y_subs = input_subs.split(",")
    if _ELLIPSIS in out_subs:
        # An operand without "..." has an empty batch shape: its gradient's ellipsis
        # dims (the broadcast ones) are all summed below.
        x_subs += "" if _ELLIPSIS in x_subs else _ELLIPSIS
        y_subs += "" if _ELLIPSIS in y_subs else _ELLIPSIS
    x, y = op.inputs
    cx, cy = math_ops.conj(x), math_ops.conj(y)  # conjugate direction for complex
    gx = _einsum_grad_wrt(grad, cy, x, x_subs, y_subs, out_subs)
    gy = _einsum_grad_wrt(grad, cx, y, y_subs, x_subs, out_subs)
    if _ELLIPSIS not in out_subs:
        return [gx, gy]
    # Sum each gradient over the ellipsis dims its operand was broadcast along.
    (bx, ex), (by, ey) = _ellipsis_range(x_subs), _ellipsis_range(y_subs)
    reshape = array_ops.reshape
    if x.shape.is_fully_defined() and y.shape.is_fully_defined():
        sx, sy = x.shape.as_list(), y.shape.as_list()
        rx, ry = _broadcast_gradient_args(sx[bx:ex], sy[by:ey])
        return [reshape(reduce_sum(gx, bx + rx), sx) if rx.size else gx,
                reshape(reduce_sum(gy, by + ry), sy) if ry.size else gy]
    sx, sy = array_ops.shape(x), array_ops.shape(y)
    rx, ry = apply_op("BroadcastGradientArgs", s0=sx[bx:ex], s1=sy[by:ey])
    return [reshape(reduce_sum(gx, bx + rx), sx), reshape(reduce_sum(gy, by + ry), sy)]


register(OpDef(
    "Einsum", inputs=("inputs: N * T",), outputs=("output: T",),
    attrs={"T": _d.NUMBERS, "equation": REQUIRED},
    shape=_einsum_shape, lower=_einsum_lower, grad=_einsum_grad,
))


def _resolve_equation(equation, num_inputs):
    """TF's Python-side checks; fills in implicit output subscripts (labels seen once)."""
    resolved = equation.replace(" ", "")
    ellipsis_label = None
    if "..." in equation:
        # '0' stands for the ellipsis while parsing, as in TF.
        ellipsis_label = "0"
        if ellipsis_label in resolved:
            raise ValueError(f'Invalid character "{ellipsis_label}" in equation: {equation}.')
        resolved = resolved.replace("...", ellipsis_label)
    allowed = "a-zA-Z" + (ellipsis_label or "")
    match = re.match(f"^([{allowed},]*)(->[{allowed}]*)?$", resolved)
    if not match:
        raise ValueError(f"Subscripts have incorrect format: {resolved}")
    input_labels = match.group(1).split(",")
    output_labels = match.group(2)[2:] if match.group(2) else None
    if num_inputs != len(input_labels):
        raise ValueError(f'Got {num_inputs} inputs for equation "{equation}", expecting '
                         f"{len(input_labels)}")
    if "->" not in resolved:
        counts = collections.Counter(match.group(1))
        output_labels = "".join(x for x in sorted(counts) if x != "," and counts[x] == 1)
        resolved += "->" + output_labels
    if output_labels and len(set(output_labels)) != len(output_labels):
        raise ValueError(f"Output subscripts contain a label appearing more than once: "
                         f"{equation}")
    for label in output_labels:
        if label != ellipsis_label and label not in match.group(1):
            raise ValueError(f"Output subscripts contain the label {label} not present in "
                             f"the input subscripts.")
    if ellipsis_label:
        resolved = resolved.replace(ellipsis_label, "...")
    return resolved


def _pairwise(equation, inputs):
    """Contracts more than two operands two at a time, left to right (TF uses opt_einsum
    to order them; the result is the same). Each step keeps the labels still needed."""
    in_labels, out_labels = equation.split("->")
    subs = in_labels.split(",")
    acc, acc_sub = inputs[0], subs[0]
    for k in range(1, len(inputs)):
        rest = "".join(subs[k + 1:]) + out_labels
        seen = acc_sub + subs[k]
        keep = "".join(dict.fromkeys(c for c in seen.replace("...", "")
                                     if c in rest))
        if "..." in seen:
            keep = "..." + keep
        acc = apply_op("Einsum", inputs=[acc, inputs[k]],
                       equation=f"{acc_sub},{subs[k]}->{keep}")
        acc_sub = keep
    if acc_sub != out_labels:
        acc = apply_op("Einsum", inputs=[acc], equation=f"{acc_sub}->{out_labels}")
    return acc


def einsum(equation, *inputs, **kwargs):
    """Einstein summation: `einsum('ij,jk->ik', a, b)` is a @ b.

    Subscripts are letters with at most one '...' per operand (broadcast dimensions);
    without '->' the output is the labels that appear once, sorted. Two operands or fewer
    give one Einsum op, named "einsum/Einsum" by default, as TF names it.
    """
    name = kwargs.pop("name", None)
    kwargs.pop("optimize", None)
    if kwargs:
        raise TypeError(f"Invalid keyword arguments for einsum: {', '.join(kwargs)}")
    with _graph.name_scope(name, "einsum", [equation, inputs]):
        inputs = [convert_to_tensor(x) for x in inputs]
        resolved = _resolve_equation(equation, len(inputs))
        if len(inputs) <= 2:
            return apply_op("Einsum", inputs=inputs, equation=resolved)
        return _pairwise(resolved, inputs)


# -- eye ------------------------------------------------------------------------------------
def eye(num_rows, num_columns=None, batch_shape=None, dtype=_dtypes.float32, name=None):
    """An identity matrix (or a batch of them) of shape batch_shape + [rows, columns].

    Composed as one_hot(range(rows), columns): row i has its one at column i, and rows
    past the last column are all zero, as a rectangular identity must be.
    """
    with _graph.name_scope(name, "eye", [num_rows, num_columns, batch_shape]):
        num_columns = num_rows if num_columns is None else num_columns
        for n in (num_rows, num_columns):
            if not isinstance(n, Tensor) and (not isinstance(n, (int, np.integer))
                                              or isinstance(n, bool)):
                raise TypeError("num_rows and num_columns must be positive integer values.")
        dtype = _dtypes.as_dtype(dtype).base_dtype
        np_dtype = dtype.as_numpy_dtype
        matrix = gather_ops.one_hot(math_ops.range(num_rows), num_columns,
                                    on_value=constant(np.ones((), np_dtype)),
                                    off_value=constant(np.zeros((), np_dtype)))
        if batch_shape is None or (not isinstance(batch_shape, Tensor)
                                   and len(shape_arg(batch_shape)) == 0):
            return matrix
        if isinstance(batch_shape, Tensor):
            full = array_ops.concat([batch_shape, array_ops.shape(matrix)], 0)
        else:
            full = array_ops.concat([constant(shape_arg(batch_shape), dtype=_dtypes.int32),
                                     array_ops.shape(matrix)], 0)
        return array_ops.broadcast_to(matrix, full)
