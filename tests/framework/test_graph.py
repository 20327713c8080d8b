import pytest

import tensorflux as tf


def test_classic_example_prints_like_tf1():
    a = tf.constant([1, 2], name="a")
    b = tf.constant([2, 4], name="b")
    result = a + b
    assert str(result) == 'Tensor("add:0", shape=(2,), dtype=int32)'
    assert repr(result) == "<tf.Tensor 'add:0' shape=(2,) dtype=int32>"
    assert repr(result.op) == "<tf.Operation 'add' type=Add>"
    assert result.op.inputs == (a, b)
    assert result.value_index == 0 and result.name == "add:0"


def test_unknown_rank_omits_shape_in_str():
    p = tf.placeholder(tf.float32)
    assert str(p) == 'Tensor("Placeholder:0", dtype=float32)'
    assert repr(p) == "<tf.Tensor 'Placeholder:0' shape=<unknown> dtype=float32>"


def test_default_names_are_made_unique():
    names = [tf.constant(1).op.name for _ in range(3)]
    assert names == ["Const", "Const_1", "Const_2"]
    x = tf.constant(1.0, name="x")
    y = tf.constant(1.0, name="x")
    assert (x.op.name, y.op.name) == ("x", "x_1")


def test_name_collisions_are_case_insensitive():
    tf.constant(1, name="Foo")
    assert tf.constant(1, name="foo").op.name == "foo_1"


def test_explicit_name_taken_by_suffix_is_skipped():
    tf.constant(1, name="a_1")
    tf.constant(1, name="a")
    assert tf.constant(1, name="a").op.name == "a_2"


def test_operator_names_match_tf1():
    a = tf.constant(1)
    assert (a + 1).op.name == "add"
    assert (a + 2).op.name == "add_1"
    # Op names collide case-insensitively: "Add" is taken by "add" and "add_1".
    assert tf.add(a, a).op.name == "Add_2"
    assert (a * 2).op.name == "mul"
    assert tf.multiply(a, a).op.name == "Mul_1"
    assert tf.get_default_graph().get_operation_by_name("mul/y").type == "Const"
    r = 3 - a
    assert r.op.name == "sub" and r.op.inputs[0].op.name == "sub/x"


def test_nested_name_scopes():
    with tf.name_scope("outer"):
        with tf.name_scope("inner"):
            c = tf.constant(1, name="c")
        with tf.name_scope("inner"):
            d = tf.constant(1, name="c")
    assert c.op.name == "outer/inner/c"
    assert d.op.name == "outer/inner_1/c"


def test_name_scope_absolute_and_reset():
    with tf.name_scope("a"):
        with tf.name_scope("b/") as scope:
            assert scope == "b/"
            assert tf.constant(1, name="c").op.name == "b/c"
        with tf.name_scope(None) as scope:
            assert scope == ""
            assert tf.constant(1, name="top").op.name == "top"
        with tf.name_scope("") as scope:
            assert scope == ""


def test_name_scope_returns_scope_string_and_default_name():
    with tf.name_scope(None, "default", []) as scope:
        assert scope == "default/"
    with tf.name_scope(None, "default", []) as scope:
        assert scope == "default_1/"
    with pytest.raises(ValueError, match="not a valid scope name"):
        with tf.name_scope("bad name!"):
            pass


def test_graph_lookup_and_errors():
    g = tf.get_default_graph()
    c = tf.constant(1.0, name="c")
    assert g.get_tensor_by_name("c:0") is c
    assert g.get_operation_by_name("c") is c.op
    with pytest.raises(KeyError, match="The name 'nope:0' refers to a Tensor which does not "
                                       "exist. The operation, 'nope', does not exist in the graph."):
        g.get_tensor_by_name("nope:0")
    with pytest.raises(KeyError, match="exists but only has 1 outputs"):
        g.get_tensor_by_name("c:3")
    with pytest.raises(ValueError, match="refers to an Operation, not a Tensor"):
        g.get_tensor_by_name("c")
    with pytest.raises(KeyError, match="The name 'nope' refers to an Operation not in the graph."):
        g.get_operation_by_name("nope")
    with pytest.raises(ValueError, match="appears to refer to a Tensor, not a Operation"):
        g.get_operation_by_name("c:0")
    assert [op.name for op in g.get_operations()] == ["c"]


def test_graphs_are_separate_and_default_stack():
    g1 = tf.Graph()
    with g1.as_default():
        a = tf.constant(1)
        assert tf.get_default_graph() is g1
    assert a.graph is g1
    assert tf.get_default_graph() is not g1
    with pytest.raises(ValueError, match="is not an element of this graph"):
        tf.get_default_graph().as_graph_element(a)


def test_reset_default_graph():
    tf.constant(1)
    g = tf.get_default_graph()
    tf.reset_default_graph()
    assert tf.get_default_graph() is not g
    assert tf.get_default_graph().get_operations() == []
    with tf.Graph().as_default():
        with pytest.raises(AssertionError):
            tf.reset_default_graph()


def test_finalize_and_version():
    g = tf.Graph()
    with g.as_default():
        v0 = g.version
        tf.constant(1)
        assert g.version > v0
        g.finalize()
        assert g.finalized
        with pytest.raises(RuntimeError, match="Graph is finalized and cannot be modified."):
            tf.constant(2)


def test_control_dependencies():
    a = tf.constant(1, name="a")
    b = tf.constant(2, name="b")
    with tf.control_dependencies([a]):
        c = tf.constant(3, name="c")
        d = c + 1  # its input c already depends on a: no extra control edge, as in TF
        with tf.control_dependencies([b.op]):
            e = tf.constant(4, name="e")
        with tf.control_dependencies(None):
            f = tf.constant(5, name="f")
    assert c.op.control_inputs == [a.op]
    assert d.op.control_inputs == []
    assert e.op.control_inputs == [a.op, b.op]
    assert f.op.control_inputs == []
    with pytest.raises(TypeError, match="Can not convert a int into a Operation"):
        with tf.control_dependencies([1]):
            pass


def test_consumers_and_tensor_protocol():
    a = tf.constant([1.0, 2.0])
    b = a * 2.0
    assert a.consumers() == [b.op]
    with pytest.raises(TypeError, match="Using a `tf.Tensor` as a Python `bool` is not allowed"):
        bool(a)
    with pytest.raises(TypeError, match="Tensor objects are only iterable"):
        iter(a)
    assert a.get_shape() == a.shape


def test_set_shape_refines_and_rejects():
    p = tf.placeholder(tf.float32, [None, 3])
    p.set_shape([2, None])
    assert p.shape.as_list() == [2, 3]
    with pytest.raises(ValueError, match="not compatible"):
        p.set_shape([4, 3])


def test_collections():
    c = tf.constant(1, name="scope/c")
    tf.add_to_collection("things", c)
    tf.add_to_collections(["a", "b"], 5)
    assert tf.get_collection("things") == [c]
    assert tf.get_collection("things", scope="scope") == [c]
    assert tf.get_collection("things", scope="other") == []
    assert tf.get_collection("a") == [5] and tf.get_collection("b") == [5]
    ref = tf.get_collection_ref("things")
    ref.append(7)
    assert tf.get_collection("things") == [c, 7]


def test_op_attrs_and_node_def():
    p = tf.placeholder(tf.float32, [None, 2], name="p")
    assert p.op.get_attr("dtype") == tf.float32
    assert p.op.get_attr("shape").as_list() == [None, 2]
    with pytest.raises(ValueError, match="no attr named 'nope'"):
        p.op.get_attr("nope")
    assert 'name: "p"' in str(p.op) and 'op: "Placeholder"' in str(p.op)
