"""The array family's compositions (meshgrid, repeat, sequence_mask, batch_gather, ...),
host ops (edit_distance, fingerprint), fake-quantization gradients, run-time checks, and
TF's construction errors and names. Expectations are NumPy, hand-worked values, or TF's
own golden values."""

import numpy as np
import pytest

import tensorflux as tf
from tests.helpers import run
from tests.ops.cases_array_misc import np_fake_quant_grads


# -- compositions ------------------------------------------------------------------------------
def test_compositions_match_numpy():
    x, y, z = [1, 2, 3], [4.0, 5.0], [7, 8, 9, 10]
    lengths = tf.placeholder(tf.int32, [None])
    fed_repeats = tf.placeholder(tf.int32, [None])
    data = np.arange(6).reshape(2, 3)
    params = np.arange(24.0).reshape(2, 3, 4)
    ind = np.array([[[0, 3], [1, 1], [2, 0]], [[3, 3], [0, 1], [2, 2]]])
    fetches = {
        "xy": tf.meshgrid(x, [4, 5]), "ij": tf.meshgrid(x, [4, 5], z, indexing="ij"),
        "rep_vec": tf.repeat(data, [2, 0, 1], axis=1), "rep_scalar": tf.repeat(data, 2, -2),
        "rep_flat": tf.repeat(data, 3), "rep_fed": tf.repeat(data, fed_repeats, axis=0),
        "mask": tf.sequence_mask(lengths), "mask5": tf.sequence_mask([[1, 3], [2, 0]], 5,
                                                                    dtype=tf.float32),
        "gather": tf.batch_gather(params, ind), "gather1": tf.batch_gather([[1, 2], [3, 4]],
                                                                           [[1], [0]]),
        "pads": tf.required_space_to_batch_paddings([5, 7], [2, 3], [[1, 0], [0, 1]]),
    }
    got = run(fetches, {lengths: [1, 3, 0], fed_repeats: [3, 1]})
    for a, b in zip(got["xy"], np.meshgrid(x, [4, 5])):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(got["ij"], np.meshgrid(x, [4, 5], z, indexing="ij")):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(got["rep_vec"], np.repeat(data, [2, 0, 1], axis=1))
    np.testing.assert_array_equal(got["rep_scalar"], np.repeat(data, 2, axis=0))
    np.testing.assert_array_equal(got["rep_flat"], np.repeat(data, 3))
    np.testing.assert_array_equal(got["rep_fed"], np.repeat(data, [3, 1], axis=0))
    np.testing.assert_array_equal(got["mask"], np.arange(3)[None, :] < [[1], [3], [0]])
    np.testing.assert_array_equal(got["mask5"], (np.arange(5) < np.array([[1, 3], [2, 0]])[
        ..., None]).astype(np.float32))
    np.testing.assert_array_equal(got["gather"], np.take_along_axis(params, ind, axis=2))
    np.testing.assert_array_equal(got["gather1"], [[2], [3]])
    # full = input + base = [6, 8]; extra = (block - full % block) % block = [0, 1]
    np.testing.assert_array_equal(got["pads"][0], [[1, 0], [0, 2]])
    np.testing.assert_array_equal(got["pads"][1], [[0, 0], [0, 1]])
    assert fetches["xy"][0].shape.as_list() == [2, 3]
    assert fetches["rep_vec"].shape.as_list() == [2, 3]
    assert fetches["mask5"].shape.as_list() == [2, 2, 5]
    assert fetches["gather"].shape.as_list() == [2, 3, 2]


def test_repeat_gradient_sums_the_copies():
    x = tf.placeholder(tf.float64, [3])
    w = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    (g,) = tf.gradients(tf.reduce_sum(tf.repeat(x, [2, 0, 3]) * w), x)
    np.testing.assert_allclose(run(g, {x: np.zeros(3)}), [3.0, 0.0, 12.0])


def test_composition_errors():
    with pytest.raises(ValueError, match="indexing parameter must be either 'xy' or 'ij'"):
        tf.meshgrid([1], [2], indexing="xx")
    with pytest.raises(TypeError, match="'sparse' is an invalid keyword argument"):
        tf.meshgrid([1], sparse=True)
    with pytest.raises(ValueError, match="maxlen must be scalar for sequence_mask"):
        tf.sequence_mask([1, 2], [3, 4])
    with pytest.raises(TypeError, match="axis must be an int; got float"):
        tf.repeat([1, 2], 2, axis=0.0)
    with pytest.raises(TypeError, match="repeats must be an integer tensor"):
        tf.repeat([1, 2], 2.0)
    with pytest.raises(ValueError, match="batch_gather does not allow indices with unknown"):
        tf.batch_gather([[1, 2]], tf.placeholder(tf.int32))
    assert tf.broadcast_static_shape(tf.TensorShape([None, 1, 3]),
                                     tf.TensorShape([5, None, 1])).as_list() == [5, None, 3]
    assert tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape(None)).ndims is None
    with pytest.raises(ValueError,
                       match=r"Incompatible shapes for broadcasting: \(2, 3\) and \(4,\)"):
        tf.broadcast_static_shape(tf.TensorShape([2, 3]), tf.TensorShape([4]))


# -- run-time checks -------------------------------------------------------------------------
def test_run_time_errors():
    x = tf.placeholder(tf.float32, [None, None], name="x")
    checked = tf.ensure_shape(x, [None, 3])
    assert checked.shape.as_list() == [None, 3]
    (g,) = tf.gradients(tf.reduce_sum(checked * 2.0), x)
    s0, s1 = tf.placeholder(tf.int32, [None]), tf.placeholder(tf.int32, [None])
    shape = tf.broadcast_dynamic_shape(s0, s1)
    image = tf.placeholder(tf.float32, [1, None, None, 1])
    s2d = tf.space_to_depth(image, 2)
    s2b = tf.space_to_batch_nd(image, [2, 2], [[0, 0], [1, 0]])
    b2s = tf.batch_to_space_nd(tf.placeholder(tf.float32, [None, 1, 1, 1]), [2, 2],
                               [[0, 0], [0, 0]])
    value_range = tf.placeholder(tf.float32, [2])
    hist = tf.histogram_fixed_width([1.0, 2.0], value_range, nbins=3)
    flat = tf.placeholder(tf.int32, [None])
    unravel = tf.unravel_index(flat, [2, 3])
    rows = tf.placeholder(tf.float32, [None, 4])
    search = tf.searchsorted(rows, tf.zeros([3, 2]))
    errors = tf.errors.InvalidArgumentError
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(g, {x: np.ones((2, 3))}), np.full((2, 3), 2.0))
        for fetch, feed, message in [
                (checked, {x: np.ones((2, 4))}, r"Shape of tensor x \[2,4\] is not compatible "
                                                r"with expected shape \[\?,3\]\."),
                (shape, {s0: [2, 3], s1: [4]}, r"Incompatible shapes: \[2,3\] vs\. \[4\]"),
                (s2d, {image: np.zeros((1, 4, 5, 1))},
                 "Image width 5 and height 4 should be divisible by block_size: 2"),
                (s2b, {image: np.zeros((1, 3, 4, 1))},
                 r"padded_shape\[0\]=3 is not divisible by block_shape\[0\]=2"),
                (b2s, {b2s.op.inputs[0]: np.zeros((6, 1, 1, 1))},
                 r"Input batch dimension \(6\) is not divisible by product of block sizes "
                 r"\(4\)"),
                (hist, {value_range: [2.0, 1.0]}, r"value_range should satisfy value_range\[0\] "
                                                  r"< value_range\[1\], but got '\[2.0, 1.0\]'"),
                (unravel, {flat: [1, 6]}, "index is out of bound as with dims"),
                (search, {rows: np.zeros((2, 4))}, "Leading dim_size of both tensors must "
                                                   "match."),
        ]:
            with pytest.raises(errors, match=message):
                sess.run(fetch, feed)
        np.testing.assert_array_equal(sess.run(shape, {s0: [2, 1, 3], s1: [4, 1]}), [2, 4, 3])


def test_construction_errors():
    with pytest.raises(ValueError, match="Attr 'block_size' of 'SpaceToDepth' Op passed 1 less "
                                         "than minimum 2."):
        tf.space_to_depth(tf.zeros([1, 2, 2, 1]), 1)
    with pytest.raises(ValueError, match="Attr 'data_format' of 'DepthToSpace' Op passed string "
                                         "'NWHC' not in"):
        tf.depth_to_space(tf.zeros([1, 2, 2, 4]), 2, data_format="NWHC")
    with pytest.raises(ValueError, match=r"Dimension size must be evenly divisible by 2 but is 5 "
                                         r"for 'SpaceToDepth' \(op: 'SpaceToDepth'\)"):
        tf.space_to_depth(tf.zeros([1, 5, 4, 1]), 2)
    with pytest.raises(ValueError, match="Shape must be rank 4 but is rank 3"):
        tf.depth_to_space(tf.zeros([2, 2, 4]), 2)
    with pytest.raises(ValueError, match="paddings cannot be negative"):
        tf.space_to_batch_nd(tf.zeros([1, 4, 1]), [2], [[-1, 1]])
    with pytest.raises(ValueError, match="Dimension size must be evenly divisible by 3 but is 4"):
        tf.space_to_batch_nd(tf.zeros([1, 4, 1]), [3], [[0, 0]])
    with pytest.raises(ValueError, match="Negative dimension size caused by subtracting 3 from 2"):
        tf.batch_to_space_nd(tf.zeros([2, 1, 1]), [2], [[0, 3]])
    with pytest.raises(ValueError, match=r"Cannot specify both 'block_size' and 'block_shape'"):
        tf.space_to_batch(tf.zeros([1, 2, 2, 1]), [[0, 0], [0, 0]], 2, block_shape=2)
    with pytest.raises(ValueError, match="Attr 'ksizes' of 'ExtractImagePatches' Op passed list "
                                         "of length 3 less than minimum 4."):
        tf.extract_image_patches(tf.zeros([1, 3, 3, 1]), [1, 2, 2], [1, 1, 1, 1], [1, 1, 1, 1],
                                 "VALID")
    with pytest.raises(ValueError, match=r"Computed output size would be negative: -2 "
                                         r"\[input_size: 1, effective_filter_size: 4"):
        tf.extract_volume_patches(tf.zeros([1, 1, 5, 5, 1]), [1, 4, 1, 1, 1], [1] * 5, "VALID")
    with pytest.raises(ValueError, match="Shape must be at most rank 1 but is rank 2"):
        tf.roll([1, 2], [[1]], [0])
    with pytest.raises(ValueError, match="side must be either 'right' or 'left'.  Saw: mid."):
        tf.searchsorted([1.0, 2.0], [1.5], side="mid")
    with pytest.raises(ValueError, match="Requires nbins > 0: 0"):
        tf.histogram_fixed_width([1.0], [0.0, 1.0], nbins=0)
    with pytest.raises(ValueError, match="Cannot bitcast due to shape. 3 does not match 2"):
        tf.bitcast(tf.zeros([2, 3], tf.int16), tf.float32)
    with pytest.raises(ValueError, match="All input shapes must be fully defined."):
        tf.parallel_stack([tf.zeros([2]), tf.placeholder(tf.float32, [None])])
    with pytest.raises(TypeError, match="Hypothesis must be a SparseTensor."):
        tf.edit_distance(tf.zeros([2, 2]), tf.SparseTensor([[0, 0]], [1], [1, 1]))
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 3 for 'EnsureShape'"):
        tf.ensure_shape(tf.zeros([2, 3, 1]), [2, 3])
    with pytest.raises(ValueError, match="Unsupported method: md5"):
        tf.fingerprint(tf.zeros([2]), method="md5")


def test_kernel_attr_errors_and_missing_gradients():
    patches = tf.extract_image_patches(tf.zeros([1, 3, 3, 2]), [2, 2, 2, 1], [1, 1, 1, 1],
                                       [1, 1, 1, 1], "VALID")
    roll = tf.roll(tf.zeros([2, 3]), 1, -3)
    quant = tf.fake_quant_with_min_max_args(tf.zeros([2]), min=1.0, max=-1.0)
    bits = tf.fake_quant_with_min_max_vars(tf.zeros([2]), -1.0, 1.0, num_bits=17)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.UnimplementedError, match="Only supportksizesacross space."):
            sess.run(patches)
        with pytest.raises(tf.errors.InvalidArgumentError, match="axis -1 is out of range"):
            sess.run(roll)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="min has to be smaller than max, was: 1 >= -1"):
            sess.run(quant)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="num_bits must be between 2 and 16, inclusive"):
            sess.run(bits)
    x = tf.placeholder(tf.float32, [2])
    for y in (tf.bitcast(x, tf.float32), tf.parallel_stack([x, x]), tf.guarantee_const(x)):
        with pytest.raises(LookupError, match="No gradient defined for operation"):
            tf.gradients(tf.reduce_sum(tf.cast(y, tf.float32)), x)


# -- fake quantization gradients (straight-through) -----------------------------------------------
def test_fake_quant_gradients_pass_inside_the_nudged_range():
    x_value = np.array([[-3.0, -1.0, 0.2], [0.9, 1.01, 4.0]], np.float32)
    x = tf.constant(x_value)
    mn, mx = tf.constant(-1.0), tf.constant(1.0)
    cmin, cmax = tf.constant([-1.0, -2.0, 0.0]), tf.constant([1.0, 0.5, 0.25])
    w = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    args = tf.fake_quant_with_min_max_args(x, -1.0, 1.0)
    var = tf.fake_quant_with_min_max_vars(x, mn, mx)
    per = tf.fake_quant_with_min_max_vars_per_channel(x, cmin, cmax)
    g_args = tf.gradients(tf.reduce_sum(args * w), x)
    g_vars = tf.gradients(tf.reduce_sum(var * w), [x, mn, mx])
    g_per = tf.gradients(tf.reduce_sum(per * w), [x, cmin, cmax])
    got_args, got_vars, got_per = run([g_args, g_vars, g_per])
    # In float32, -min / scale = 127.49999 for [-1, 1], so the zero point is 127 and the
    # nudged range [-0.99608, 1.00392]: -1.0 falls below it (TF's kernel computes the same).
    grads = np_fake_quant_grads(w, x_value, -1.0, 1.0)
    np.testing.assert_array_equal(grads[0] != 0, [[0, 0, 1], [1, 0, 0]])
    np.testing.assert_allclose(got_args[0], grads[0])
    for got, want in zip(got_vars, grads):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    per_channel = np_fake_quant_grads(w, x_value, [-1.0, -2.0, 0.0], [1.0, 0.5, 0.25],
                                      per_channel=True)
    for got, want in zip(got_per, per_channel):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(per_channel[2], [0.0, 5.0, 6.0])  # 1.01 > 0.5, 4 > 0.25


# -- host ops --------------------------------------------------------------------------------------
def test_edit_distance():
    hyp = tf.SparseTensor([[0, 0, 0], [1, 0, 0]], ["a", "b"], (2, 1, 1))
    truth = tf.SparseTensor([[0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 1, 0]],
                            ["a", "b", "c", "a"], (2, 2, 2))
    kitten, sitting = b"kitten", b"sitting"
    words = tf.SparseTensor([[0, i] for i in range(len(kitten))], list(kitten),
                            [1, len(sitting)])
    target = tf.SparseTensorValue(np.array([[0, i] for i in range(len(sitting))], np.int64),
                                  np.array(list(sitting), np.int32), [1, len(sitting)])
    indices = tf.placeholder(tf.int64, [None, 2])
    fed = tf.SparseTensor(indices, tf.placeholder(tf.int32, [None]), tf.placeholder(tf.int64))
    dist = tf.edit_distance(hyp, truth)
    plain = tf.edit_distance(hyp, truth, normalize=False)
    lev = tf.edit_distance(words, target, normalize=False)
    unknown = tf.edit_distance(fed, fed)
    assert dist.shape.as_list() == [2, 2] and dist.op.name == "edit_distance"
    assert unknown.shape.ndims is None and dist.dtype == tf.float32
    got = run([dist, plain, lev, unknown],
              {indices: [[0, 0], [0, 1]], fed.values: [3, 4], fed.dense_shape: [2, 2]})
    # TF's documented example: [[inf, 1], [0.5, 1]] (no truth, no hypothesis, one insertion).
    np.testing.assert_array_equal(got[0], [[np.inf, 1.0], [0.5, 1.0]])
    np.testing.assert_array_equal(got[1], [[1.0, 1.0], [1.0, 1.0]])
    np.testing.assert_array_equal(got[2], [3.0])  # kitten -> sitting
    np.testing.assert_array_equal(got[3], [0.0, 0.0])


def test_fingerprint_golden_values():
    # TF's fingerprint_op_test golden values, and BigQuery's FARM_FINGERPRINT("alphabet").
    numbers = (np.arange(3 * 4 * 5 * 6 * 7) + 47).astype(np.uint8).reshape(1, 3, 4, 5, 6, 7)
    strings = np.empty(4, dtype=object)
    strings[:] = [bytes(range(10)), bytes(range(7, 14)), b"", bytes(range(41, 60))]
    pods = tf.placeholder(tf.float32, [2, 6])
    f = tf.fingerprint(pods)
    assert f.shape.as_list() == [2, 8] and f.dtype == tf.uint8
    got = run([tf.fingerprint(numbers), tf.fingerprint(strings.reshape(1, 2, 2)),
               tf.fingerprint(strings), tf.fingerprint(["alphabet"]), f,
               tf.fingerprint(tf.bitcast(tf.reshape(pods, [2, 3, 2]), tf.int32))],
              {pods: np.arange(12, dtype=np.float32).reshape(2, 6)})
    assert got[0].tobytes() == b"\x2d\x90\xdf\x03\x79\x36\x3c\x43"
    assert got[1].tobytes() == b"\x92\x43\x28\x52\xa3\x7c\x48\x18"
    assert got[2].tobytes() == (b"\xea\xff\xd6\xb2\xb2\x4d\x70\x9b\x6e\x9d\xed\x21\xc6\x4a\x61"
                                b"\x52\x4f\x40\x90\x2f\x3b\x6a\xe1\x9a\x0d\x9b\x7f\x63\x23\x14"
                                b"\x1c\xb8")
    assert int(got[3][0].view(np.int64)[0]) == -2427165924636348523
    np.testing.assert_array_equal(got[4], got[5])  # the raw bytes: reshape/bitcast keep it


# -- names and aliases -----------------------------------------------------------------------------
def test_names_and_aliases():
    x = tf.zeros([2, 4, 4, 1])
    assert tf.roll(x, 1, 0).op.name == "Roll"
    assert tf.space_to_batch_nd(x, [2, 2], [[0, 0], [0, 0]]).op.name == "SpaceToBatchND"
    assert tf.space_to_batch(x, [[0, 0], [0, 0]], 2).op.type == "SpaceToBatchND"
    assert tf.space_to_depth(x, 2).op.name == "SpaceToDepth"
    assert tf.parallel_stack([1, 2]).op.name == "parallel_stack/ParallelConcat"
    assert tf.sequence_mask([1, 2], 3).op.name.startswith("SequenceMask/")
    assert tf.histogram_fixed_width([1.0], [0.0, 1.0]).op.name == "histogram_fixed_width"
    assert tf.histogram_fixed_width_bins([1.0], [0.0, 1.0]).dtype == tf.int32
    assert tf.extract_image_patches(x, [1, 2, 2, 1], [1] * 4, [1] * 4, "VALID").op.name == \
        "ExtractImagePatches"
    assert tf.unravel_index(3, [2, 2]).shape.as_list() == [2]
    assert tf.manip.roll is tf.roll and tf.manip.tile is tf.tile
    assert tf.manip.batch_to_space_nd is tf.batch_to_space_nd
    assert tf.manip.reshape is tf.reshape and tf.manip.scatter_nd is tf.scatter_nd
    assert tf.nn.space_to_batch is tf.space_to_batch
    assert tf.nn.space_to_depth is tf.space_to_depth and tf.nn.depth_to_space is tf.depth_to_space
    assert tf.image.extract_image_patches is tf.extract_image_patches
    assert tf.compat.v1.tensor_scatter_update is tf.tensor_scatter_nd_update


def np_dilated_conv(x, w, rate, same):
    """NHWC convolution with the filter dilated by `rate` (SAME pads as conv2d)."""
    kh, kw = w.shape[:2]
    eh, ew = (kh - 1) * rate[0] + 1, (kw - 1) * rate[1] + 1
    if same:
        x = np.pad(x, [(0, 0), ((eh - 1) // 2, eh - 1 - (eh - 1) // 2),
                       ((ew - 1) // 2, ew - 1 - (ew - 1) // 2), (0, 0)])
    oh, ow = x.shape[1] - eh + 1, x.shape[2] - ew + 1
    out = np.zeros((x.shape[0], oh, ow, w.shape[3]))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, i * rate[0]:i * rate[0] + oh, j * rate[1]:j * rate[1] + ow, :]
            out += np.einsum("bhwc,cd->bhwd", patch, w[i, j])
    return out


def test_with_space_to_batch_runs_an_op_as_if_dilated():
    rng = np.random.default_rng(0)
    x, w = rng.random((2, 7, 8, 3)), rng.random((3, 2, 3, 4))
    unknown = tf.placeholder(tf.float64, [None, None, None, 3])
    known = tf.placeholder(tf.float64, [2, 7, 8, 3])

    def op(inp, num_spatial_dims, padding):
        assert num_spatial_dims == 2 and padding == "VALID"
        return tf.nn.conv2d(inp, w, [1, 1, 1, 1], padding)

    outs = [tf.nn.with_space_to_batch(t, [2, 3], p, op, filter_shape=w.shape)
            for t in (unknown, known) for p in ("VALID", "SAME")]
    assert outs[3].shape.as_list() == [2, 7, 8, 4]
    got = run(outs, {unknown: x, known: x})
    for out, same in zip(got, [False, True, False, True]):
        np.testing.assert_allclose(out, np_dilated_conv(x, w, (2, 3), same), rtol=1e-12)
    with pytest.raises(ValueError, match="filter_shape must be specified for SAME padding"):
        tf.nn.with_space_to_batch(known, [2, 2], "SAME", op)
