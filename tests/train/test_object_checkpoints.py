"""tf.train.Checkpoint / CheckpointManager / PythonState in graph mode, warm_start with
VocabInfo, init_from_checkpoint of partitioned variables, Saver.to_proto/from_proto."""

import numpy as np
import pytest

import tensorflux as tf


class _Counter(tf.train.experimental.PythonState):
    def __init__(self):
        self.value = 0

    def serialize(self):
        return str(self.value)

    def deserialize(self, string_value):
        self.value = int(string_value)


class Model(tf.Module):
    def __init__(self):
        super().__init__()
        self.dense = tf.layers.Dense(2, name="dense")
        self.extra = [tf.Variable(1.0, name="a"), {"b": tf.Variable(2.0, name="b")}]


def _build():
    x = tf.placeholder(tf.float32, [None, 3])
    model = Model()
    loss = tf.reduce_sum(tf.square(model.dense(x)))
    opt = tf.train.AdamOptimizer(0.1)
    train = opt.minimize(loss)
    return x, model, opt, train


def test_checkpoint_keys_save_restore_and_status(tmp_path):
    x, model, opt, train = _build()
    counter = _Counter()
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt, state=counter)
    with pytest.raises(ValueError, match="`Checkpoint` was expecting a trackable object"):
        tf.train.Checkpoint(model=[1, 2])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {x: np.ones((2, 3))})
        counter.value = 42
        path = ckpt.save(str(tmp_path / "ckpt"), session=sess)
        assert path == str(tmp_path / "ckpt-1")
        saved = sess.run({"kernel": model.dense.kernel,
                          "m": opt.get_slot(model.dense.kernel, "m"),
                          "beta1_power": opt._get_non_slot_variable("beta1_power")})
        assert ckpt.save(str(tmp_path / "ckpt"), session=sess).endswith("ckpt-2")
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "ckpt-2")
    keys = dict(tf.train.list_variables(path))
    # TF's object-based key paths.
    assert keys == {
        "model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE": [3, 2],
        "model/dense/bias/.ATTRIBUTES/VARIABLE_VALUE": [2],
        "model/extra/0/.ATTRIBUTES/VARIABLE_VALUE": [],
        "model/extra/1/b/.ATTRIBUTES/VARIABLE_VALUE": [],
        "model/dense/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE": [3, 2],
        "model/dense/kernel/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE": [3, 2],
        "model/dense/bias/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE": [2],
        "model/dense/bias/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE": [2],
        "optimizer/beta1_power/.ATTRIBUTES/VARIABLE_VALUE": [],
        "optimizer/beta2_power/.ATTRIBUTES/VARIABLE_VALUE": [],
        "save_counter/.ATTRIBUTES/VARIABLE_VALUE": [],
        "state/.ATTRIBUTES/py_state": [],  # a string scalar, as TF saves it
        "_CHECKPOINTABLE_OBJECT_GRAPH": [],  # TF's TrackableObjectGraph, serialized
    }
    np.testing.assert_allclose(tf.train.load_variable(
        path, "model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE"), saved["kernel"])
    # A new program with the same structure restores through the key paths.
    tf.reset_default_graph()
    x, model, opt, train = _build()
    counter = _Counter()
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt, state=counter)
    status = ckpt.restore(path)
    status.assert_consumed().assert_existing_objects_matched().assert_nontrivial_match()
    with tf.Session() as sess:
        status.initialize_or_restore(sess)
        np.testing.assert_allclose(sess.run(model.dense.kernel), saved["kernel"])
        np.testing.assert_allclose(sess.run(opt.get_slot(model.dense.kernel, "m")),
                                   saved["m"])
        np.testing.assert_allclose(sess.run(opt._get_non_slot_variable("beta1_power")),
                                   saved["beta1_power"])
        assert counter.value == 42 and sess.run(ckpt.save_counter) == 1
        assert ckpt.save(str(tmp_path / "ckpt"), session=sess).endswith("ckpt-2")
    # A program with an extra variable: partial matches are reported.
    tf.reset_default_graph()
    v = tf.Variable(0.0, name="new")
    partial = tf.train.Checkpoint(new=v).restore(path)
    with pytest.raises(AssertionError, match="Unresolved object in checkpoint"):
        partial.assert_consumed()
    with pytest.raises(AssertionError, match="not bound to checkpointed values"):
        partial.assert_existing_objects_matched()
    with pytest.raises(AssertionError, match="Nothing except the root object matched"):
        partial.assert_nontrivial_match()
    with tf.Session() as sess:
        partial.expect_partial().initialize_or_restore(sess)
        assert sess.run(v) == 0.0  # not in the checkpoint: initialized
    none = tf.train.Checkpoint(new=v).restore(None)
    with pytest.raises(AssertionError, match="No checkpoint specified"):
        none.assert_consumed()
    with pytest.raises(tf.errors.NotFoundError):
        tf.train.Checkpoint(new=v).restore(str(tmp_path / "missing"))


def test_checkpoint_manager_numbering_and_deletion(tmp_path):
    v = tf.Variable(3.0, name="v")
    step = tf.Variable(100, name="step", dtype=tf.int64)
    ckpt = tf.train.Checkpoint(v=v)
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=2)
    assert manager.latest_checkpoint is None and manager.checkpoints == []
    with tf.Session() as sess:
        sess.run([v.initializer, step.initializer])
        paths = [manager.save(session=sess) for _ in range(3)]
        assert paths == [str(tmp_path / f"ckpt-{i}") for i in (1, 2, 3)]
        assert manager.checkpoints == paths[1:]
        assert not tf.train.checkpoint_exists(paths[0])
        assert manager.save(checkpoint_number=step, session=sess).endswith("ckpt-100")
        assert manager.save(checkpoint_number=7, session=sess).endswith("ckpt-7")
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == str(tmp_path / "ckpt-7")
    assert list(state.all_model_checkpoint_paths) == [str(tmp_path / "ckpt-100"),
                                                      str(tmp_path / "ckpt-7")]
    again = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=2)
    assert again.latest_checkpoint == str(tmp_path / "ckpt-7")
    with pytest.raises(ValueError, match="Expected a positive integer or `None`"):
        tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=0)
    options = tf.train.CheckpointOptions(experimental_io_device="/job:localhost")
    assert options.experimental_io_device == "/job:localhost"


def test_warm_start_with_vocab_and_renames(tmp_path):
    old = np.arange(8, dtype=np.float32).reshape(4, 2)
    emb = tf.get_variable("emb", initializer=tf.constant(old))
    tf.get_variable("old_bias", initializer=tf.constant([5.0, 6.0]))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver().save(sess, str(tmp_path / "model"))
    (tmp_path / "old.txt").write_text("a\nb\nc\nd\n")
    (tmp_path / "new.txt").write_text("c\nx\na\nd\ne\n")
    tf.reset_default_graph()
    emb = tf.get_variable("emb", [6, 2], partitioner=tf.fixed_size_partitioner(2),
                          initializer=tf.ones_initializer())
    bias = tf.get_variable("bias", [2])
    other = tf.get_variable("other", [1], initializer=tf.constant_initializer(9.0),
                            trainable=False)
    info = tf.train.VocabInfo(str(tmp_path / "new.txt"), 5, 1, str(tmp_path / "old.txt"),
                              backup_initializer=tf.constant_initializer(-1.0))
    tf.train.warm_start(path, var_name_to_vocab_info={"emb": info},
                        var_name_to_prev_var_name={"bias": "old_bias"})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = np.concatenate(sess.run(list(emb)))
        assert sess.run(other) == 9.0  # not trainable: not warm-started
        np.testing.assert_allclose(sess.run(bias), [5.0, 6.0])
    # New vocab c, x, a, d, e + 1 OOV row: old rows of c, a, d; the rest from the backup.
    np.testing.assert_allclose(got, [old[2], [-1, -1], old[0], old[3], [-1, -1], [-1, -1]])
    with pytest.raises(ValueError, match="only supported values for the axis argument"):
        tf.train.VocabInfo("n", 1, 0, "o", axis=2)
    with pytest.raises(ValueError, match="var_name_to_prev_var_name that were not used"):
        tf.train.warm_start(path, vars_to_warm_start=None,
                            var_name_to_prev_var_name={"nope": "old_bias"})


def test_init_from_checkpoint_partitioned_and_saver_proto(tmp_path):
    full = np.arange(10, dtype=np.float32).reshape(5, 2)
    tf.get_variable("w", initializer=tf.constant(full))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    tf.reset_default_graph()
    with tf.variable_scope("s"):
        w = tf.get_variable("w", [5, 2], partitioner=tf.fixed_size_partitioner(2))
    tf.train.init_from_checkpoint(path, {"w": "s/w"})
    saver = tf.train.Saver(max_to_keep=3)
    saver_def = saver.to_proto()
    assert saver_def.max_to_keep == 3 and saver.to_proto(export_scope="x") is None
    restored = tf.train.Saver.from_proto(saver_def)
    assert restored.saver_def == saver_def
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(np.concatenate(sess.run(list(w))), full)
