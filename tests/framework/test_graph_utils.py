"""Top-level graph utilities, type specs and the members TF1 programs call on graphs,
tensors and variables; values against hand-computed expectations."""

import time

import ml_dtypes
import numpy as np
import pytest

import tensorflux as tf


def test_quantized_and_narrow_dtypes():
    assert tf.qint8.is_quantized and not tf.int8.is_quantized
    assert tf.qint8.as_datatype_enum == 11 and tf.quint16.as_datatype_enum == 16
    assert tf.as_dtype(np.dtype([("qint32", np.int32)])) is tf.qint32
    assert tf.qint8 in tf.QUANTIZED_DTYPES and tf.qint8._as_ref in tf.QUANTIZED_DTYPES
    with pytest.raises(TypeError, match="quantized type"):
        tf.qint8.min
    e4 = tf.dtypes.experimental.float8_e4m3fn
    assert e4.as_datatype_enum == 25 and e4.is_floating and e4.max == 448.0
    assert tf.dtypes.experimental.int4.is_integer and tf.dtypes.experimental.int4.min == -8
    assert tf.dtypes.experimental.uint4.max == 15 and tf.dtypes.experimental.uint4.is_unsigned
    assert tf.as_dtype(ml_dtypes.float8_e5m2).name == "float8_e5m2"
    assert tf.float32.is_numeric and not tf.string.is_numeric and not tf.bool.is_numeric
    # TF 2.x's TraceType protocol on DType
    assert tf.float32.is_subtype_of(tf.float32) and not tf.float32.is_subtype_of(tf.int32)
    assert tf.float32.most_specific_common_supertype([tf.float32]) is tf.float32
    assert tf.float32.most_specific_common_supertype([tf.int32]) is None
    proto = tf.float64.experimental_as_proto()
    assert proto.datatype == 2 and tf.DType.experimental_from_proto(proto) is tf.float64
    assert tf.dtypes.cast is tf.cast and tf.dtypes.as_string is tf.as_string


def test_tensor_spec():
    spec = tf.TensorSpec([None, 3], tf.float32, name="x")
    assert spec.shape.as_list() == [None, 3] and spec.dtype is tf.float32 and spec.name == "x"
    assert spec.is_compatible_with(tf.TensorSpec([2, 3], tf.float32))
    assert not spec.is_compatible_with(tf.TensorSpec([2, 4], tf.float32))
    assert not spec.is_compatible_with(tf.TensorSpec([2, 3], tf.int32))
    assert spec.is_compatible_with(np.zeros((5, 3), np.float32))
    assert spec == tf.TensorSpec([None, 3], tf.float32, "x")
    assert spec != tf.TensorSpec([None, 3], tf.float32)
    joined = tf.TensorSpec([2, 3], tf.float32).most_specific_compatible_type(
        tf.TensorSpec([4, 3], tf.float32))
    assert joined == tf.TensorSpec([None, 3], tf.float32)
    t = tf.placeholder(tf.int64, [4], name="ids")
    assert tf.TensorSpec.from_tensor(t) == tf.TensorSpec([4], tf.int64, "ids")
    assert tf.type_spec_from_value(t) == tf.TensorSpec([4], tf.int64)
    assert tf.type_spec_from_value([1.0, 2.0]) == tf.TensorSpec([2], tf.float32)
    assert tf.type_spec_from_value(np.zeros((2, 2), np.float64)) == \
        tf.TensorSpec([2, 2], tf.float64)
    assert "TensorSpec(shape=(?, 3), dtype=tf.float32, name='x')" == repr(spec)


def test_tensor_and_variable_members():
    x = tf.placeholder(tf.float32, [2, None])
    assert x.ndim == 2 and tf.placeholder(tf.float32).ndim is None
    refs = {x.ref(): "x"}
    assert refs[x.experimental_ref()] == "x" and x.ref().deref() is x
    assert "__add__" in tf.Tensor.OVERLOADABLE_OPERATORS
    v = tf.Variable(tf.zeros([3]), validate_shape=False, name="v",
                    aggregation=tf.VariableAggregation.MEAN,
                    synchronization=tf.VariableSynchronization.ON_READ)
    assert v.aggregation is tf.VariableAggregation.MEAN
    assert v.synchronization is tf.VariableSynchronization.ON_READ
    assert tf.VariableAggregation.ONLY_FIRST_TOWER is tf.VariableAggregation.ONLY_FIRST_REPLICA
    assert v.shape.ndims is None
    v.set_shape([3])
    assert v.shape.as_list() == [3] and v.value().shape.as_list() == [3]
    with pytest.raises(ValueError):
        v.set_shape([4])
    assert {v.ref(): 1}[v.ref()] == 1
    info = tf.Variable.SaveSliceInfo("emb", [10, 4], [5, 0], [5, 4])
    assert info.spec == "10 4 5,5:0,4"
    with pytest.raises(ValueError, match="Invalid variable aggregation"):
        tf.Variable(1.0, aggregation=7)


def test_variable_creator_scope_sees_and_changes_each_variable():
    seen = []

    def creator(next_creator, **kwargs):
        seen.append(kwargs["name"])
        kwargs["initial_value"] = 5.0
        return next_creator(**kwargs)

    with tf.Graph().as_default():
        with tf.variable_creator_scope(creator):
            a = tf.Variable(1.0, name="a")
            b = tf.get_variable("b", [], initializer=tf.zeros_initializer())
        c = tf.Variable(1.0, name="c")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run([a, b, c]) == [5.0, 5.0, 1.0]
    assert seen[0] == "a" and len(seen) == 2


def test_graph_members():
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(7)
        a = tf.constant(1.0, name="a")
        tf.add_to_collection("mine", a)
    assert g.seed == 7 and "mine" in g.collections and not g.building_function
    assert g.num_operations() == 1 and g.operations == [a.op]
    assert g.new_operations() == [a.op] and g.new_operations() == []
    with g.as_default():
        b = tf.constant(2.0, name="b")
        op = g.create_op("Add", [a, b], [tf.float32], name="sum")
    assert op.type == "Add" and op.name == "sum" and g.new_operations() == [b.op, op]
    assert g.op_def_for_type("Add").name == "Add"
    with tf.Session(graph=g) as sess:
        assert sess.run(op.outputs[0]) == 3.0
    with pytest.raises(TypeError, match="not compatible with expected types"):
        with g.as_default():
            g.create_op("Add", [a, b], input_types=[tf.int32, tf.int32])
    g.Dismantle()
    assert g.num_operations() == 0 and g.collections == []


def test_colocate_with_places_ops_with_the_anchor():
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:1"):
            anchor = tf.constant(1.0, name="anchor")
        with tf.device("/cpu:0"):
            with tf.colocate_with(anchor):
                near = tf.identity(anchor, name="near")
            far = tf.identity(anchor, name="far")
        with g.colocate_with(None, ignore_existing=True):
            free = tf.constant(0.0, name="free")
    assert near.device == anchor.device == "/device:CPU:1" and far.device == "/device:CPU:0"
    assert near.op.colocation_groups() == [b"loc:@anchor"]
    assert free.op.colocation_groups() == [b"loc:@free"]
    with pytest.raises(ValueError, match="ignore_existing"):
        with g.colocate_with(None):
            pass


def test_init_scope_leaves_control_dependencies_and_bodies():
    with tf.Graph().as_default():
        gate = tf.no_op(name="gate")
        with tf.name_scope("outer"):
            with tf.control_dependencies([gate]):
                with tf.init_scope():
                    lifted = tf.constant(1.0, name="c")
                inside = tf.constant(2.0, name="d")
    assert lifted.op.control_inputs == [] and inside.op.control_inputs == [gate]
    assert lifted.op.name == "outer/c"


def test_static_values_and_predicates():
    with tf.Graph().as_default():
        c = tf.constant([1, 2]) * 3
        p = tf.placeholder(tf.int32, [2])
        np.testing.assert_array_equal(tf.get_static_value(c), [3, 6])
        assert tf.get_static_value(p) is None
        assert tf.is_tensor(c) and tf.is_tensor(tf.SparseTensor([[0]], [1], [2]))
        assert not tf.is_tensor(np.zeros(2)) and tf.is_symbolic_tensor(p)
        with pytest.raises(TypeError, match="only defined for Tensors"):
            tf.get_static_value([1, 2])
    assert tf.dimension_value(tf.TensorShape([4])[0]) == 4
    assert tf.dimension_at_index(tf.TensorShape([None, 5]), 1).value == 5
    assert tf.dimension_at_index(tf.TensorShape(None), 3).value is None
    assert not tf.executing_eagerly() and not tf.resource_variables_enabled()
    tf.enable_control_flow_v2()
    assert tf.control_flow_v2_enabled()
    tf.disable_v2_behavior()
    assert not tf.control_flow_v2_enabled()


def test_make_tensor_proto_round_trip():
    proto = tf.make_tensor_proto([[1, 2], [3, 4]], dtype=tf.int64)
    assert proto.dtype == tf.int64.as_datatype_enum
    np.testing.assert_array_equal(tf.make_ndarray(proto), [[1, 2], [3, 4]])
    filled = tf.make_ndarray(tf.make_tensor_proto(2.5, shape=[2, 3]))
    assert filled.dtype == np.float32 and (filled == 2.5).all() and filled.shape == (2, 3)
    strings = tf.make_ndarray(tf.make_tensor_proto([b"a", "bc"]))
    assert list(strings) == [b"a", b"bc"]


def test_switch_case_vectorized_map_and_timestamp():
    with tf.Graph().as_default():
        index = tf.placeholder(tf.int32, [])
        picked = tf.switch_case(index, [lambda: tf.constant(10), lambda: tf.constant(20),
                                        lambda: tf.constant(30)])
        keyed = tf.switch_case(index, {2: lambda: tf.constant(1.5)},
                               default=lambda: tf.constant(-1.0))
        rows = tf.constant(np.arange(6.0).reshape(3, 2))
        mapped = tf.vectorized_map(lambda r: r[0] * 10.0 + r[1], rows)
        stamp = tf.timestamp()
        with tf.Session() as sess:
            # an index outside the branches runs the last one (TF's rule without default)
            assert [sess.run(picked, {index: i}) for i in (0, 1, 2, 9, -1)] == \
                [10, 20, 30, 30, 30]
            assert [sess.run(keyed, {index: i}) for i in (2, 0)] == [1.5, -1.0]
            np.testing.assert_allclose(sess.run(mapped), [1.0, 23.0, 45.0])
            before = time.time()
            first = sess.run(stamp)
            second = sess.run(stamp)
            after = time.time()
        assert before <= first <= second <= after and stamp.dtype == tf.float64
    with pytest.raises(TypeError, match="int32"):
        tf.switch_case(tf.constant(1.0), [lambda: 1])


def test_gradient_wrappers():
    with tf.Graph().as_default():
        x = tf.constant([0.3, 1.7])
        straight = tf.grad_pass_through(tf.round)(x)
        d_straight = tf.gradients(tf.reduce_sum(straight * [2.0, 3.0]), x)[0]

        def f(v):
            return tf.sin(v) * v

        checkpointed = tf.recompute_grad(f)(x)
        d_checkpointed = tf.gradients(tf.reduce_sum(checkpointed), x)[0]
        tf.no_gradient("MyOpWithoutGradient")
        with tf.Session() as sess:
            got = sess.run([straight, d_straight, checkpointed, d_checkpointed])
    xs = np.array([0.3, 1.7])
    np.testing.assert_allclose(got[0], [0.0, 2.0])
    np.testing.assert_allclose(got[1], [2.0, 3.0])  # the identity's gradient
    np.testing.assert_allclose(got[2], np.sin(xs) * xs, rtol=1e-6)
    np.testing.assert_allclose(got[3], np.sin(xs) + xs * np.cos(xs), rtol=1e-6)


def test_raise_exception_on_not_ok_status():
    with tf.errors.raise_exception_on_not_ok_status() as status:
        pass
    with pytest.raises(tf.errors.NotFoundError, match="no such file"):
        with tf.errors.raise_exception_on_not_ok_status() as status:
            status.set(tf.errors.NOT_FOUND, "no such file")
    assert tf.OpError is tf.errors.OpError


def test_module_finds_variables_and_submodules():
    class Dense(tf.Module):
        def __init__(self, n_in, n_out, name=None):
            super().__init__(name=name)
            with self.name_scope:
                self.w = tf.Variable(tf.ones([n_in, n_out]), name="w")
                self.b = tf.Variable(tf.zeros([n_out]), name="b", trainable=False)

    class MLP(tf.Module):
        def __init__(self):
            super().__init__()
            self.layers = [Dense(3, 4), Dense(4, 2, name="head")]
            self.extra = {"scale": tf.Variable(2.0, name="scale")}

    model = MLP()
    assert model.name == "mlp" and [m.name for m in model.submodules] == ["dense", "head"]
    assert len(model.variables) == 5 and len(model.trainable_variables) == 3
    assert model.layers[1].w.name == "head/w:0" and model.layers[0].b.name == "dense/b:0"
    with pytest.raises(ValueError, match="not a valid module name"):
        tf.Module(name="bad name")


def test_assert_variables_initialized_and_scope_aliases():
    with tf.Graph().as_default():
        a = tf.Variable(tf.zeros([2, 3]), name="a")
        b = tf.Variable(1.0, name="b")
        check = tf.assert_variables_initialized()
        with tf.variable_op_scope([a], None, default_name="block") as scope:
            assert scope.name == "block"
        with tf.op_scope([a], None, "named") as scope:
            assert scope == "named/"
        with tf.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized"):
                sess.run(check)
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(check), [2, 0])
    assert tf.assert_variables_initialized([]) is None


def test_convert_to_tensor_or_sparse_tensor():
    value = tf.SparseTensorValue([[0]], [1.0], [3])
    sparse = tf.convert_to_tensor_or_sparse_tensor(value)
    assert isinstance(sparse, tf.SparseTensor) and sparse.dtype == tf.float32
    dense = tf.convert_to_tensor_or_sparse_tensor([1, 2], dtype=tf.int64)
    assert isinstance(dense, tf.Tensor) and dense.dtype == tf.int64
    with pytest.raises(RuntimeError, match="Sparse dtype"):
        tf.convert_to_tensor_or_sparse_tensor(sparse, dtype=tf.int32)


def test_log_device_placement_prints_each_planned_op_once(capsys):
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [2], name="p")
        total = tf.add(p, 1.0, name="total")
        config = tf.ConfigProto(log_device_placement=True)
        with tf.Session(config=config) as sess:
            sess.run(total, {p: [1.0, 2.0]})
            sess.run(total, {p: [3.0, 4.0]})  # the cached plan logs nothing more
        lines = capsys.readouterr().err.splitlines()
        assert lines == ["total: (Add): /job:localhost/replica:0/task:0/device:CPU:0"]
        assert not tf.debugging.get_log_device_placement()
        tf.debugging.set_log_device_placement(True)
        try:
            with tf.Session() as sess:
                sess.run(total, {p: [1.0, 2.0]})
        finally:
            tf.debugging.set_log_device_placement(False)
        assert "total: (Add)" in capsys.readouterr().err


def test_switch_to_thread_local_gives_each_thread_its_own_scopes():
    import threading
    g = tf.Graph()
    names = {}
    with g.as_default(), tf.name_scope("shared"):
        g.switch_to_thread_local()
        gate = threading.Barrier(2)

        def build(tag):
            with g.as_default(), tf.name_scope(tag):
                gate.wait()  # both threads are inside their own scope now
                names[tag] = tf.constant(0.0, name="c").op.name
                gate.wait()

        threads = [threading.Thread(target=build, args=(t,)) for t in ("a", "b")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        here = tf.constant(0.0, name="c").op.name
    assert names == {"a": "shared/a/c", "b": "shared/b/c"} and here == "shared/c"


def test_xla_experimental_compile_and_jit_scope():
    with tf.Graph().as_default():
        a, b = tf.constant(2.0), tf.constant(3.0)
        with tf.xla.experimental.jit_scope():
            product = a * b
        with tf.xla.experimental.jit_scope(compile_ops=lambda node_def: True):
            total = a + b
        single = tf.xla.experimental.compile(lambda x, y: x * y, [a, b])
        pair = tf.xla.experimental.compile(lambda x: [x + 1.0, x - 1.0], [a])
        counter = tf.Variable(0.0)
        ops_only = tf.xla.experimental.compile(lambda: tf.assign_add(counter, 1.0).op)
        nothing = tf.xla.experimental.compile(lambda: None)
        with tf.Session() as sess:
            sess.run(counter.initializer)
            assert sess.run([product, total]) == [6.0, 5.0]
            assert isinstance(single, tuple) and sess.run(single) == (6.0,)
            assert sess.run(pair) == [3.0, 1.0]
            assert ops_only[0].type == "NoOp" and nothing[0].type == "NoOp"
            sess.run(ops_only)
            assert sess.run(counter) == 1.0
    with pytest.raises(TypeError, match="compile_ops must be"):
        with tf.xla.experimental.jit_scope(compile_ops="yes"):
            pass
