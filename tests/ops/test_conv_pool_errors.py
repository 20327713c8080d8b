"""Convolution and pooling: op naming and graph structure as TF1 builds them, static
shape inference (SAME/VALID/EXPLICIT output sizes, unknown dims), TF1's construction
and run-time error messages, and hand-computed values for TF's pooling rules (SAME
averages over valid elements, ties go to the first maximum)."""

import re

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.ops.op_builder import apply_op
from tests.helpers import run


def ph(shape, dtype=tf.float32):
    return tf.placeholder(dtype, shape)


def raises(exc, text):
    return pytest.raises(exc, match=re.escape(text))


# -- naming and graph structure ----------------------------------------------------------------
def test_conv2d_op_names_and_attrs():
    x, w = ph([2, 5, 5, 3]), ph([3, 3, 3, 4])
    y = tf.nn.conv2d(x, w, strides=2, padding="SAME")
    assert y.op.type == "Conv2D" and y.op.name == "Conv2D" and y.name == "Conv2D:0"
    assert y.op.get_attr("strides") == [1, 2, 2, 1]
    assert y.op.get_attr("dilations") == [1, 1, 1, 1]
    assert y.op.get_attr("use_cudnn_on_gpu") is True
    assert tf.nn.conv2d(x, w, [1, 1, 1, 1], "VALID").op.name == "Conv2D_1"
    assert tf.nn.conv2d(x, filters=w, strides=1, padding="SAME", name="c").op.name == "c"
    z = tf.nn.conv2d(ph([2, 3, 5, 5]), w, strides=[2, 1], padding=[[0, 0], [0, 0], [1, 2],
                                                                     [0, 1]],
                     data_format="NCHW", dilations=2)
    assert z.op.get_attr("strides") == [1, 1, 2, 1]
    assert z.op.get_attr("dilations") == [1, 1, 2, 2]
    assert z.op.get_attr("padding") == "EXPLICIT"
    assert z.op.get_attr("explicit_paddings") == [0, 0, 0, 0, 1, 2, 0, 1]


def test_conv1d_is_conv2d_on_expanded_inputs():
    y = tf.nn.conv1d(ph([2, 7, 3]), ph([3, 3, 4]), stride=2, padding="SAME")
    ops = [(op.name, op.type) for op in tf.get_default_graph().get_operations()][2:]
    assert ops == [("conv1d/ExpandDims/dim", "Const"), ("conv1d/ExpandDims", "ExpandDims"),
                   ("conv1d/ExpandDims_1/dim", "Const"), ("conv1d/ExpandDims_1", "ExpandDims"),
                   ("conv1d", "Conv2D"), ("conv1d/Squeeze", "Squeeze")]
    assert y.name == "conv1d/Squeeze:0" and y.shape.as_list() == [2, 4, 4]
    conv = tf.get_default_graph().get_operation_by_name("conv1d")
    assert conv.get_attr("strides") == [1, 1, 2, 1]
    z = tf.nn.conv1d(ph([2, 3, 7]), ph([3, 3, 4]), 1, "VALID", data_format="NCW")
    assert z.op.inputs[0].op.get_attr("data_format") == "NCHW"
    assert z.shape.as_list() == [2, 4, 5]


def test_depthwise_separable_and_transpose_names():
    x = ph([2, 5, 5, 3])
    d = tf.nn.depthwise_conv2d(x, ph([3, 3, 3, 2]), [1, 1, 1, 1], "SAME")
    assert (d.op.name, d.op.type) == ("depthwise", "DepthwiseConv2dNative")
    assert d.shape.as_list() == [2, 5, 5, 6]
    s = tf.nn.separable_conv2d(x, ph([3, 3, 3, 2]), ph([1, 1, 6, 4]), [1, 1, 1, 1], "SAME")
    assert (s.op.name, s.op.type) == ("separable_conv2d", "Conv2D")
    assert s.op.inputs[0].op.name == "separable_conv2d/depthwise"
    assert s.shape.as_list() == [2, 5, 5, 4]
    t = tf.nn.conv2d_transpose(x, ph([3, 3, 2, 3]), [2, 10, 10, 2], [1, 2, 2, 1])
    assert (t.op.name, t.op.type) == ("conv2d_transpose", "Conv2DBackpropInput")
    assert t.op.inputs[0].op.name == "conv2d_transpose/output_shape"
    assert t.shape.as_list() == [2, 10, 10, 2]
    t3 = tf.nn.conv3d_transpose(ph([1, 2, 2, 2, 3]), ph([2, 2, 2, 4, 3]), [1, 4, 4, 4, 4],
                                [1, 2, 2, 2, 1])
    assert (t3.op.name, t3.op.type) == ("conv3d_transpose", "Conv3DBackpropInputV2")
    assert tf.nn.conv3d(ph([1, 4, 4, 4, 2]), ph([2, 2, 2, 2, 3]), [1] * 5, "SAME").op.type \
        == "Conv3D"


def test_convolution_and_atrous_dispatch():
    c2 = tf.nn.convolution(ph([1, 6, 6, 2]), ph([3, 3, 2, 4]), "SAME", dilation_rate=[2, 2])
    assert (c2.op.name, c2.op.type) == ("convolution", "Conv2D")
    assert c2.op.get_attr("dilations") == [1, 2, 2, 1]
    c1 = tf.nn.convolution(ph([1, 6, 2]), ph([3, 2, 4]), "VALID", strides=[2])
    assert c1.name == "convolution_1/Squeeze:0" and c1.shape.as_list() == [1, 2, 4]
    c3 = tf.nn.convolution(ph([1, 2, 5, 5, 5]), ph([2, 2, 2, 2, 3]), "VALID",
                           data_format="NCDHW")
    assert c3.op.type == "Conv3D" and c3.shape.as_list() == [1, 3, 4, 4, 4]
    a = tf.nn.atrous_conv2d(ph([1, 9, 9, 2]), ph([3, 3, 2, 1]), rate=3, padding="VALID")
    assert a.op.type == "Conv2D" and a.op.get_attr("dilations") == [1, 3, 3, 1]
    assert a.shape.as_list() == [1, 3, 3, 1]


def test_pool_names():
    x = ph([2, 6, 6, 3])
    assert tf.nn.max_pool(x, 2, 2, "VALID").op.name == "MaxPool"
    assert tf.nn.avg_pool(x, 2, 2, "VALID").op.name == "AvgPool"
    assert tf.nn.max_pool2d(x, 2, 2, "VALID").op.name == "MaxPool2d"
    assert tf.nn.avg_pool2d(x, 2, 2, "VALID").op.name == "AvgPool_1"
    assert tf.nn.max_pool1d(ph([2, 6, 3]), 2, 2, "VALID").name == "MaxPool1d/Squeeze:0"
    assert tf.nn.avg_pool1d(ph([2, 6, 3]), 2, 2, "VALID").name == "AvgPool1D/Squeeze:0"
    v = ph([1, 4, 4, 4, 2])
    assert tf.nn.max_pool3d(v, 2, 2, "SAME").op.type == "MaxPool3D"
    assert tf.nn.avg_pool3d(v, 2, 2, "SAME").op.name == "AvgPool3D"
    assert tf.nn.max_pool_v2(v, 2, 2, "SAME").op.type == "MaxPool3D"
    assert tf.nn.avg_pool_v2(ph([2, 6, 3]), 2, 2, "SAME").shape.as_list() == [2, 3, 3]
    out, argmax = tf.nn.max_pool_with_argmax(x, 2, 2, "SAME")
    assert (out.name, argmax.name, argmax.dtype) == ("MaxPoolWithArgmax:0",
                                                      "MaxPoolWithArgmax:1", tf.int64)
    assert tf.nn.max_pool_with_argmax(x, 2, 2, "SAME", output_dtype=tf.int32).argmax.dtype \
        == tf.int32
    p = tf.nn.max_pool(ph([2, 3, 5, 5]), [1, 1, 3, 3], [1, 1, 2, 2], "SAME",
                       data_format="NCHW")
    assert p.op.get_attr("data_format") == "NCHW" and p.shape.as_list() == [2, 3, 3, 3]


def test_gradient_ops_are_tfs():
    x, w = ph([1, 5, 5, 2]), ph([3, 3, 2, 3])
    y = tf.nn.conv2d(x, w, 1, "SAME")
    dx, dw = tf.gradients(tf.reduce_sum(y * y), [x, w])
    assert (dx.op.type, dw.op.type) == ("Conv2DBackpropInput", "Conv2DBackpropFilter")
    assert dx.op.name == "gradients/Conv2D_grad/Conv2DBackpropInput"
    # Second order: the backprop ops differentiate into each other and Conv2D.
    ddx = tf.gradients(tf.reduce_sum(dw * dw), x)[0]
    assert ddx is not None and ddx.shape.as_list() == [1, 5, 5, 2]
    p = tf.nn.max_pool(x, 2, 2, "SAME")
    g = tf.gradients(p, x)[0]
    assert g.op.type == "MaxPoolGrad"
    gg = tf.gradients(g, x, grad_ys=tf.ones_like(x))
    assert gg[0] is not None  # zeros: the selection is piecewise constant
    assert tf.gradients(tf.nn.avg_pool(x, 2, 2, "SAME"), x)[0].op.type == "AvgPoolGrad"
    d = tf.nn.depthwise_conv2d(x, ph([3, 3, 2, 2]), [1, 1, 1, 1], "SAME")
    assert [t.op.type for t in tf.gradients(d, [x, d.op.inputs[1]])] == [
        "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter"]


# -- static shapes -------------------------------------------------------------------------------
@pytest.mark.parametrize("size,k,s,d", [(5, 3, 1, 1), (5, 3, 2, 1), (7, 2, 3, 1), (6, 3, 1, 2),
                                       (9, 3, 2, 1), (4, 1, 4, 1), (8, 3, 1, 3)])
def test_same_and_valid_output_sizes(size, k, s, d):
    x, w = ph([1, size, size + 1, 1]), ph([k, k, 1, 1])
    same = tf.nn.conv2d(x, w, s, "SAME", dilations=d if s == 1 else 1)
    valid = tf.nn.conv2d(x, w, s, "VALID", dilations=d if s == 1 else 1)
    eff = (k - 1) * (d if s == 1 else 1) + 1
    assert same.shape.as_list()[1:3] == [-(-size // s), -(-(size + 1) // s)]
    assert valid.shape.as_list()[1:3] == [-(-(size - eff + 1) // s), -(-(size + 2 - eff) // s)]
    pool = tf.nn.max_pool(x, k, s, "VALID")
    assert pool.shape.as_list()[1:3] == [(size - k) // s + 1, (size + 1 - k) // s + 1]


def test_unknown_dims_propagate():
    w = ph([3, 3, 3, 8])
    assert tf.nn.conv2d(ph([None, None, None, 3]), w, 2, "SAME").shape.as_list() == \
        [None, None, None, 8]
    assert tf.nn.conv2d(ph([None, 9, 8, 3]), ph([None, None, 3, 4]), 2, "SAME").shape \
        .as_list() == [None, 5, 4, 4]  # SAME ignores the window size
    assert tf.nn.conv2d(ph([None, 9, 8, 3]), ph([None, 3, 3, 4]), 1, "VALID").shape \
        .as_list() == [None, None, 6, 4]
    assert tf.nn.conv2d(ph(None), w, 1, "SAME").shape.as_list() == [None] * 3 + [8]
    x = ph([None, 4, 4, 3])
    dyn = tf.nn.conv2d_transpose(x, ph([3, 3, 2, 3]), tf.stack([tf.shape(x)[0], 8, 8, 2]),
                                 2)
    assert dyn.shape.as_list() == [None, 8, 8, 2]
    assert tf.nn.depthwise_conv2d(ph([None, 5, 5, None]), ph([3, 3, 2, 4]), [1, 1, 1, 1],
                                  "VALID").shape.as_list() == [None, 3, 3, 8]
    assert tf.nn.max_pool(ph([None, None, 7, 2]), 2, 2, "SAME").shape.as_list() == \
        [None, None, 4, 2]
    assert tf.nn.max_pool(ph([1, 4, 4, 6]), [1, 1, 1, 2], [1, 1, 1, 2], "VALID").shape \
        .as_list() == [1, 4, 4, 3]


# -- construction errors -----------------------------------------------------------------------
def test_conv_channel_errors():
    x = ph([1, 5, 5, 3])
    with raises(ValueError, "Depth of input (3) is not a multiple of input depth of filter (2) "
                            "for 'Conv2D' (op: 'Conv2D') with input shapes: [1,5,5,3], "
                            "[3,3,2,4]."):
        tf.nn.conv2d(x, ph([3, 3, 2, 4]), 1, "SAME")
    with raises(ValueError, "Depth of output (5) is not a multiple of the number of groups "
                            "(3)"):
        tf.nn.conv2d(x, ph([3, 3, 1, 5]), 1, "SAME")
    with raises(ValueError, "Depth of input (4) is not a multiple of input depth of filter "
                            "(3)"):
        tf.nn.conv3d(ph([1, 3, 3, 3, 4]), ph([1, 1, 1, 3, 2]), [1] * 5, "SAME")
    with raises(ValueError, "Dimensions must be equal, but are 3 and 2 for 'depthwise' "
                            "(op: 'DepthwiseConv2dNative')"):
        tf.nn.depthwise_conv2d(x, ph([3, 3, 2, 1]), [1, 1, 1, 1], "SAME")
    with raises(ValueError, "input channels does not match filter's input channels, 3 != 4"):
        tf.nn.conv2d_transpose(x, ph([3, 3, 2, 4]), [1, 5, 5, 2], 1)
    with raises(ValueError, "output_shape does not match filter's output channels, 5 != 2"):
        tf.nn.conv2d_transpose(x, ph([3, 3, 2, 3]), [1, 5, 5, 5], 1)
    with raises(ValueError, "output_shape must have shape (4,), got (3,)"):
        tf.nn.conv2d_transpose(x, ph([3, 3, 2, 3]), [1, 5, 5], 1)
    with raises(ValueError, "Dimensions 3 and 1 are not compatible"):
        tf.nn.separable_conv2d(x, ph([3, 3, 3, 1]), ph([3, 1, 3, 2]), [1, 1, 1, 1], "SAME")
    with raises(ValueError, "number of input channels does not match corresponding dimension "
                            "of filter, 3 != 2"):
        tf.nn.convolution(x, ph([3, 3, 2, 2]), "SAME", dilation_rate=[2, 2])


def test_window_errors():
    x = ph([1, 5, 5, 3])
    with raises(ValueError, "Negative dimension size caused by subtracting 6 from 5 for "
                            "'Conv2D' (op: 'Conv2D') with input shapes: [1,5,5,3], "
                            "[6,1,3,1]."):
        tf.nn.conv2d(x, ph([6, 1, 3, 1]), 1, "VALID")
    with raises(ValueError, "Negative dimension size caused by subtracting 7 from 5"):
        tf.nn.conv2d(x, ph([4, 1, 3, 1]), 1, "VALID", dilations=2)
    with raises(ValueError, "Negative dimension size caused by subtracting 3 from 2"):
        tf.nn.conv2d(ph([1, 1, 5, 3]), ph([3, 1, 3, 1]), 1, [[0, 0], [1, 0], [0, 0], [0, 0]])
    with raises(ValueError, "Negative dimension size caused by subtracting 6 from 5 for "
                            "'MaxPool' (op: 'MaxPool')"):
        tf.nn.max_pool(x, 6, 1, "VALID")
    with raises(ValueError, "Stride must be > 0, but got 0"):
        tf.nn.conv2d(x, ph([3, 3, 3, 1]), 0, "SAME")
    with raises(ValueError, "Dilation rate must be >= 1, but got 0"):
        tf.nn.conv2d(x, ph([3, 3, 3, 1]), 1, "SAME", dilations=0)
    with raises(ValueError, "Stride must be > 0, but got 0"):
        tf.nn.avg_pool(x, 2, 0, "SAME")


def test_attr_errors():
    x, w = ph([1, 5, 5, 3]), ph([3, 3, 3, 1])
    with raises(ValueError, "Attr 'padding' of 'Conv2D' Op passed string 'FULL' not in: "
                            '"SAME", "VALID", "EXPLICIT".'):
        tf.nn.conv2d(x, w, 1, "FULL")
    with raises(ValueError, "Attr 'data_format' of 'Conv2D' Op passed string 'NWHC' not in: "
                            '"NHWC", "NCHW".'):
        tf.nn.conv2d(x, w, 1, "SAME", data_format="NWHC")
    with raises(ValueError, "Attr 'padding' of 'MaxPool' Op passed string 'EXPLICIT' not in: "
                            '"SAME", "VALID".'):
        tf.nn.max_pool(x, 2, 2, "EXPLICIT")
    with raises(ValueError, "Attr 'strides' of 'Conv3D' Op passed list of length 3 less than "
                            "minimum 5."):
        tf.nn.conv3d(ph([1, 3, 3, 3, 1]), ph([1, 1, 1, 1, 1]), [1, 1, 1], "SAME")
    with raises(ValueError, "Conv3D requires the dilation attribute to contain 5 values, but "
                            "got: 3"):
        tf.nn.conv3d(ph([1, 3, 3, 3, 1]), ph([1, 1, 1, 1, 1]), [1] * 5, "SAME",
                     dilations=[1, 1, 1])
    with raises(ValueError, "Conv2D on data format NHWC requires the stride attribute to "
                            "contain 4 values, but got: 5"):
        apply_op("Conv2D", input=x, filter=w, strides=[1] * 5, padding="SAME")
    with raises(ValueError, "DepthwiseConv2D requires the stride attribute to contain 4 "
                            "values, but got: 2"):
        tf.nn.depthwise_conv2d_native(x, w, [1, 1], "SAME")
    with raises(ValueError, "strides should be of length 1, 2 or 4 but was 3"):
        tf.nn.conv2d(x, w, [1, 1, 1], "SAME")
    with raises(ValueError, "Attr 'ksize' of 'MaxPool' Op passed list of length 3 less than "
                            "minimum 4."):
        apply_op_checked("MaxPool", input=x, ksize=[1, 2, 2], strides=[1, 1, 1, 1],
                         padding="SAME")
    with raises(ValueError, "MaxPool requires the ksize attribute to contain 4 values, but "
                            "got: 5"):
        apply_op("MaxPool", input=x, ksize=[1, 2, 2, 1, 1], strides=[1, 1, 1, 1],
                 padding="SAME")
    with raises(ValueError, "Pool3D ops require the stride attribute to contain 5 values, but "
                            "got: 6"):
        apply_op("MaxPool3D", input=ph([1, 3, 3, 3, 1]), ksize=[1] * 5, strides=[1] * 6,
                 padding="SAME")
    with raises(TypeError, "Expected string for argument 'padding' not 2."):
        tf.nn.avg_pool(x, 2, 2, 2)


def apply_op_checked(op_type, **kwargs):
    from tensorflux._src.ops.nn.window_utils import apply_checked
    return apply_checked(op_type, **kwargs)


def test_padding_argument_errors():
    x, w = ph([1, 5, 5, 3]), ph([3, 3, 3, 1])
    with raises(ValueError, '"EXPLICIT" is not a valid value for the padding parameter. To '
                            'use explicit padding, the padding parameter must be a list.'):
        tf.nn.conv2d(x, w, 1, "EXPLICIT")
    with raises(ValueError, "When padding is a list, it must be of size 4. Got padding of "
                            "size: 2"):
        tf.nn.conv2d(x, w, 1, [[1, 1], [1, 1]])
    with raises(ValueError, "When padding is a list, each element of padding must be a "
                            "list/tuple of size 2. Element with index 1 of padding has size 3"):
        tf.nn.conv2d(x, w, 1, [[0, 0], [1, 1, 1], [1, 1], [0, 0]])
    with raises(ValueError, "Nonzero explicit padding in the batch or depth dimensions is not "
                            "supported"):
        tf.nn.conv2d(x, w, 1, [[1, 0], [1, 1], [1, 1], [0, 0]])
    with raises(ValueError, "All elements of explicit_paddings must be nonnegative"):
        tf.nn.conv2d(x, w, 1, [[0, 0], [-1, 1], [1, 1], [0, 0]])


def test_python_argument_errors():
    x, w = ph([1, 5, 5, 3]), ph([3, 3, 3, 1])
    with raises(ValueError, "Cannot specify both 'filter' and 'filters'"):
        tf.nn.conv2d(x, w, 1, "SAME", filters=w)
    with raises(ValueError, 'data_format must be "NWC" or "NCW".'):
        tf.nn.conv1d(ph([1, 5, 3]), ph([3, 3, 1]), 1, "SAME", data_format="NHCW")
    with raises(ValueError, "strides > 1 not supported in conjunction with dilation_rate > 1"):
        tf.nn.convolution(x, w, "SAME", strides=[2, 2], dilation_rate=[2, 2])
    with raises(ValueError, "Input tensor must be of rank 3, 4 or 5 but was 6."):
        tf.nn.convolution(ph([1, 2, 2, 2, 2, 1]), ph([1, 1, 1, 1, 1, 1]), "SAME")
    with raises(ValueError, "rate must be rank 1"):
        tf.nn.depthwise_conv2d(x, ph([3, 3, 3, 1]), [1, 1, 1, 1], "SAME", rate=2)
    with raises(ValueError, "dilation_rate must be positive"):
        tf.nn.depthwise_conv2d(x, ph([3, 3, 3, 1]), [1, 1, 1, 1], "SAME", rate=[0, 1])
    with raises(ValueError, "rate 0 cannot be less than one"):
        tf.nn.atrous_conv2d_transpose(x, ph([3, 3, 2, 3]), [1, 5, 5, 2], 0, "SAME")
    with raises(ValueError, "ksize cannot be zero."):
        tf.nn.max_pool(x, [1, 0, 2, 1], 1, "SAME")
    with raises(ValueError, "Data formats other than 'NHWC' are not yet supported"):
        tf.nn.max_pool_with_argmax(x, 2, 2, "SAME", data_format="NCHW")
    with raises(ValueError, "data_format has to be either NCHW or NHWC."):
        tf.nn.conv2d_transpose(x, ph([3, 3, 2, 3]), [1, 5, 5, 2], 1, data_format="NDHWC")


# -- run-time (kernel) errors ---------------------------------------------------------------------
def test_kernel_errors_at_run_time():
    x = ph([None, None, None, None])
    xv = np.ones((1, 4, 4, 3), np.float32)
    y = tf.nn.conv2d(x, ph([None, None, None, None]), 1, "SAME")
    with raises(tf.errors.InvalidArgumentError,
                "input depth must be evenly divisible by filter depth: 3 vs 2"):
        run(y, {x: xv, y.op.inputs[1]: np.ones((3, 3, 2, 1), np.float32)})
    b = tf.nn.conv2d(ph([1, 4, 4, 3]), ph([1, 1, 3, 1]), [2, 1, 1, 1], "SAME")
    with raises(tf.errors.UnimplementedError, "Current implementation does not yet support "
                                              "strides in the batch and depth dimensions."):
        run(b, {b.op.inputs[0]: xv, b.op.inputs[1]: np.ones((1, 1, 3, 1), np.float32)})
    v = tf.nn.conv2d(x, ph([3, 3, 3, 1]), 1, "VALID")
    with raises(tf.errors.InvalidArgumentError, "Computed output size would be negative: -1 "
                                                "[input_size: 1, effective_filter_size: 3, "
                                                "stride: 1]"):
        run(v, {x: np.ones((1, 1, 4, 3), np.float32),
                v.op.inputs[1]: np.ones((3, 3, 3, 1), np.float32)})
    dy = ph([1, 3, 3, 1])
    t = tf.nn.conv2d_transpose(dy, ph([3, 3, 3, 1]), [1, 4, 4, 3], [1, 2, 2, 1], "SAME")
    with raises(tf.errors.InvalidArgumentError,
                "Conv2DBackpropInput: Size of out_backprop doesn't match computed: actual = 3, "
                "computed = 2 spatial_dim: 1 input: 4 filter: 3 output: 3 stride: 2 "
                "dilation: 1"):
        run(t, {dy: np.ones((1, 3, 3, 1), np.float32),
                t.op.inputs[1]: np.ones((3, 3, 3, 1), np.float32)})
    p = tf.nn.max_pool(ph([2, 4, 4, 3]), [2, 2, 2, 1], [2, 2, 2, 1], "VALID")
    with raises(tf.errors.UnimplementedError,
                "Pooling is not yet supported on the batch dimension."):
        run(p, {p.op.inputs[0]: np.ones((2, 4, 4, 3), np.float32)})
    a = tf.nn.avg_pool(ph([1, 4, 4, 4]), [1, 1, 1, 2], [1, 1, 1, 2], "VALID")
    with raises(tf.errors.UnimplementedError, "Non-spatial pooling is not yet supported."):
        run(a, {a.op.inputs[0]: np.ones((1, 4, 4, 4), np.float32)})
    m = tf.nn.max_pool(ph([1, 4, 4, 4]), [1, 2, 1, 2], [1, 2, 1, 2], "VALID")
    with raises(tf.errors.UnimplementedError, "MaxPooling supports exactly one of pooling "
                                              "across depth or pooling across width/height."):
        run(m, {m.op.inputs[0]: np.ones((1, 4, 4, 4), np.float32)})


# -- values TF's rules decide --------------------------------------------------------------------
def test_avg_pool_same_averages_only_valid_elements():
    x = np.arange(9, dtype=np.float32).reshape(1, 3, 3, 1)
    got = run(tf.nn.avg_pool(x, 2, 1, "SAME"))[0, :, :, 0]
    # Windows [i, i+1] x [j, j+1], clipped at the bottom/right edge.
    want = [[(0 + 1 + 3 + 4) / 4, (1 + 2 + 4 + 5) / 4, (2 + 5) / 2],
            [(3 + 4 + 6 + 7) / 4, (4 + 5 + 7 + 8) / 4, (5 + 8) / 2],
            [(6 + 7) / 2, (7 + 8) / 2, 8]]
    np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("ksize,strides,want", [
    # Tiling windows (reshape lowering): each window's top-left element.
    (2, 2, [[1, 0, 1, 0], [0, 0, 0, 0], [1, 0, 1, 0], [0, 0, 0, 0]]),
    # Overlapping SAME windows (XLA select-and-scatter): pad 1 on each side, so window
    # (i, j) starts at (max(i - 1, 0), max(j - 1, 0)): rows/columns 0, 0, 1, 2.
    (3, 1, [[4, 2, 2, 0], [2, 1, 1, 0], [2, 1, 1, 0], [0, 0, 0, 0]]),
    # Overlapping, stride 2: SAME pads 0 before and 1 after, windows start at 0 and 2.
    (3, 2, [[1, 0, 1, 0], [0, 0, 0, 0], [1, 0, 1, 0], [0, 0, 0, 0]]),
])
def test_max_pool_gradient_ties_go_to_the_first_maximum(ksize, strides, want):
    x = tf.constant(np.ones((1, 4, 4, 1), np.float32))
    g = tf.gradients(tf.nn.max_pool(x, ksize, strides, "SAME"), x)[0]
    np.testing.assert_array_equal(run(g)[0, :, :, 0], want)


def test_integer_max_pool_grad_uses_the_first_maximum():
    x = np.array([[1, 3, 3], [3, 0, 2], [1, 3, 3]], np.int32).reshape(1, 3, 3, 1)
    y = apply_op("MaxPool", input=x, ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1],
                 padding="VALID")
    g = apply_op("MaxPoolGrad", orig_input=x, orig_output=y,
                 grad=np.array([[1, 10], [100, 1000]], np.int32).reshape(1, 2, 2, 1),
                 ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1], padding="VALID")
    np.testing.assert_array_equal(run(g)[0, :, :, 0],
                                  [[0, 11, 0], [100, 0, 0], [0, 1000, 0]])


def test_max_pool_with_argmax_indices():
    x = np.array([[1, 5], [3, 5]], np.float32).reshape(1, 2, 2, 1)
    out, argmax = run(list(tf.nn.max_pool_with_argmax(np.concatenate([x, x]), 2, 2, "VALID",
                                                       include_batch_in_index=True)))
    assert out.ravel().tolist() == [5, 5] and argmax.ravel().tolist() == [1, 5]
    _, argmax = run(list(tf.nn.max_pool_with_argmax(np.concatenate([x, x]), 2, 2, "VALID")))
    assert argmax.ravel().tolist() == [1, 1]


def test_conv2d_hand_computed():
    # 1 x 3 x 3 x 1 input, 2 x 2 ones filter, SAME with stride 2: pads 0 before, 1 after.
    x = np.arange(1, 10, dtype=np.float32).reshape(1, 3, 3, 1)
    w = np.ones((2, 2, 1, 1), np.float32)
    got = run(tf.nn.conv2d(x, w, 2, "SAME"))[0, :, :, 0]
    np.testing.assert_array_equal(got, [[1 + 2 + 4 + 5, 3 + 6], [7 + 8, 9]])
    t = run(tf.nn.conv2d_transpose(np.ones((1, 2, 2, 1), np.float32), w, [1, 3, 3, 1], 2))
    np.testing.assert_array_equal(t[0, :, :, 0], [[1, 1, 1], [1, 1, 1], [1, 1, 1]])
