"""tf.train.Saver and the checkpoint utilities: files, formats, errors, crash safety.

Expected values are numpy arrays written here; every round trip goes through files on
disk into a fresh Session (and, where it matters, a freshly built graph).
"""

import os
import signal
import subprocess
import sys
import textwrap
import time
import types

import ml_dtypes
import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.train import atomic_write
from tensorflux._src.train import saver as saver_module

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

W = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
COUNT = np.int64(2 ** 40 + 7)
H = np.array([0.5, -1.25, 3.0, 1024.0], dtype=ml_dtypes.bfloat16)
KERNEL = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
BIAS = np.array([0.1, 0.2, 0.3, 0.4], dtype=np.float32)


def build_model():
    """The same variables every time: float32, int64, bfloat16 and a dense layer."""
    w = tf.Variable(tf.zeros([2, 3]), name="w")
    count = tf.Variable(tf.constant(0, dtype=tf.int64), name="count")
    h = tf.Variable(tf.zeros([4], dtype=tf.bfloat16), name="h")
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    tf.layers.dense(x, 4, name="dense")
    return {"w": w, "count": count, "h": h}


def set_values(sess, variables, values):
    """Loads numpy values through each variable's initializer (one graph run each)."""
    for name, value in values.items():
        variables[name].load(value, sess)


def dense_vars():
    return {v.op.name: v for v in tf.global_variables() if v.op.name.startswith("dense/")}


def trained_session():
    """A session whose variables hold the test's known values."""
    variables = build_model()
    variables.update(dense_vars())
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    set_values(sess, variables, {"w": W, "count": COUNT, "h": H, "dense/kernel": KERNEL,
                                 "dense/bias": BIAS})
    return sess, variables


def read_all(sess, variables):
    return dict(zip(variables, sess.run(list(variables.values()))))


def assert_known_values(values):
    np.testing.assert_array_equal(values["w"], W)
    assert values["w"].dtype == np.float32
    assert values["count"] == COUNT and values["count"].dtype == np.int64
    np.testing.assert_array_equal(values["h"], H)
    assert values["h"].dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(values["dense/kernel"], KERNEL)
    np.testing.assert_array_equal(values["dense/bias"], BIAS)


# -- round trips -----------------------------------------------------------------------------
def test_round_trip_into_a_new_graph_and_session(tmp_path):
    sess, _ = trained_session()
    saver = tf.train.Saver()
    traces = sess.compile_stats.traces
    path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=100)
    assert sess.compile_stats.traces == traces  # saving reads the store: nothing compiled
    assert path == str(tmp_path / "model.ckpt-100")
    for suffix in (".index", ".data-00000-of-00001", ".meta"):
        assert os.path.isfile(path + suffix)
    sess.close()

    tf.reset_default_graph()
    variables = build_model()
    variables.update(dense_vars())
    with tf.Session() as new_sess:
        tf.train.Saver().restore(new_sess, path)
        assert_known_values(read_all(new_sess, variables))


def test_restore_into_a_second_session_of_the_same_graph(tmp_path):
    sess, variables = trained_session()
    saver = tf.train.Saver()
    path = saver.save(sess, str(tmp_path / "model"))
    assert path == str(tmp_path / "model")
    with tf.Session() as other:
        saver.restore(other, path)
        assert_known_values(read_all(other, variables))
        # Restored values are ordinary variable values: training steps update them.
        other.run(variables["w"].assign_add(tf.ones([2, 3])))
        np.testing.assert_array_equal(other.run(variables["w"]), W + 1)


def test_saved_files_are_tensorflow_v2_bundles(tmp_path):
    sess, _ = trained_session()
    path = tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"), write_meta_graph=False)
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.ckpt.data-00000-of-00001",
                                            "model.ckpt.index"]
    # TF's data file: each tensor's little-endian bytes back to back, by name.
    dense = {"dense/bias": BIAS, "dense/kernel": KERNEL}
    sess_values = dict(dense, count=COUNT, h=H, w=W)
    expected = b"".join(np.asarray(sess_values[name]).astype(
        np.asarray(sess_values[name]).dtype.newbyteorder("<")).tobytes()
        for name in sorted(sess_values))
    with open(path + ".data-00000-of-00001", "rb") as f:
        assert f.read() == expected
    # TF's index: a table ending with the magic number 0xdb4775248b80fb57.
    with open(path + ".index", "rb") as f:
        assert f.read()[-8:] == bytes.fromhex("57fb808b247547db")
    assert sorted(tf.train.list_variables(path)) == [
        ("count", []), ("dense/bias", [4]), ("dense/kernel", [3, 4]), ("h", [4]),
        ("w", [2, 3])]
    assert tf.train.load_variable(path, "h").dtype == ml_dtypes.bfloat16
    assert not os.path.exists(path + ".meta")


def test_var_list_dict_renames_and_restores_into_other_variables(tmp_path):
    w = tf.Variable(W, name="w")
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    path = tf.train.Saver({"renamed/weights": w}).save(sess, str(tmp_path / "model.ckpt"))
    assert tf.train.list_variables(path) == [("renamed/weights", [2, 3])]

    tf.reset_default_graph()
    other = tf.Variable(tf.zeros([2, 3]), name="something_else")
    with tf.Session() as new_sess:
        tf.train.Saver({"renamed/weights": other}).restore(new_sess, path)
        np.testing.assert_array_equal(new_sess.run(other), W)


def test_var_list_list_uses_op_names(tmp_path):
    with tf.variable_scope("scope"):
        v = tf.get_variable("v", initializer=tf.constant([1.0, 2.0]))
    sess = tf.Session()
    sess.run(v.initializer)
    path = tf.train.Saver([v]).save(sess, str(tmp_path / "m"))
    assert tf.train.list_variables(path) == [("scope/v", [2])]


def test_reshape_restores_a_differently_shaped_variable(tmp_path):
    w = tf.Variable(W, name="w")
    sess = tf.Session()
    sess.run(w.initializer)
    path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    tf.reset_default_graph()
    w = tf.Variable(tf.zeros([3, 2]), name="w")
    with tf.Session() as new_sess:
        tf.train.Saver(reshape=True).restore(new_sess, path)
        np.testing.assert_array_equal(new_sess.run(w), W.reshape(3, 2))


def test_sharded_saver_writes_one_data_file_per_device(tmp_path):
    with tf.device("/cpu:0"):
        a = tf.Variable(np.float32(1.5), name="a")
    b = tf.Variable(np.array([3, 4], np.int32), name="b")
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    path = tf.train.Saver(sharded=True).save(sess, str(tmp_path / "m"))
    assert os.path.isfile(path + ".data-00000-of-00002")
    assert os.path.isfile(path + ".data-00001-of-00002")
    with tf.Session() as other:
        tf.train.Saver(sharded=True).restore(other, path)
        assert other.run(a) == np.float32(1.5)
        np.testing.assert_array_equal(other.run(b), [3, 4])


def test_global_step_may_be_a_variable_or_tensor(tmp_path):
    step = tf.train.get_or_create_global_step()
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    step.load(42, sess)
    saver = tf.train.Saver()
    assert saver.save(sess, str(tmp_path / "m"), global_step=step).endswith("m-42")
    assert saver.save(sess, str(tmp_path / "m"), global_step=step + 1).endswith("m-43")
    assert saver.save(sess, str(tmp_path / "m"), global_step="global_step:0").endswith("m-42")
    assert tf.train.global_step(sess, step) == 42
    padded = tf.train.Saver(pad_step_number=True)
    assert padded.save(sess, str(tmp_path / "m"), global_step=7).endswith("m-00000007")


# -- the checkpoint state file and checkpoint rotation ---------------------------------------
def save_steps(saver, sess, prefix, steps):
    return [saver.save(sess, prefix, global_step=s) for s in steps]


def test_state_file_text_format_relative_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkdir("train")
    sess, _ = trained_session()
    paths = save_steps(tf.train.Saver(), sess, os.path.join("train", "model.ckpt"), [1, 2])
    assert paths == ["train/model.ckpt-1", "train/model.ckpt-2"]
    assert (tmp_path / "train" / "checkpoint").read_text() == (
        'model_checkpoint_path: "model.ckpt-2"\n'
        'all_model_checkpoint_paths: "model.ckpt-1"\n'
        'all_model_checkpoint_paths: "model.ckpt-2"\n')
    state = tf.train.get_checkpoint_state("train")
    assert state.model_checkpoint_path == "train/model.ckpt-2"
    assert state.all_model_checkpoint_paths == ["train/model.ckpt-1", "train/model.ckpt-2"]
    assert tf.train.latest_checkpoint("train") == "train/model.ckpt-2"


def test_state_file_absolute_and_save_relative_paths(tmp_path):
    sess, _ = trained_session()
    prefix = str(tmp_path / "model.ckpt")
    save_steps(tf.train.Saver(), sess, prefix, [5])
    assert (tmp_path / "checkpoint").read_text() == (
        f'model_checkpoint_path: "{prefix}-5"\n'
        f'all_model_checkpoint_paths: "{prefix}-5"\n')
    save_steps(tf.train.Saver(save_relative_paths=True), sess, prefix, [6])
    assert (tmp_path / "checkpoint").read_text() == (
        'model_checkpoint_path: "model.ckpt-6"\n'
        'all_model_checkpoint_paths: "model.ckpt-6"\n')
    assert tf.train.latest_checkpoint(str(tmp_path)) == f"{prefix}-6"


def test_state_file_with_latest_filename_and_escapes(tmp_path):
    sess, _ = trained_session()
    directory = tmp_path / 'dir "quoted"'
    directory.mkdir()
    prefix = str(directory / "model")
    tf.train.Saver(save_relative_paths=True).save(sess, prefix, latest_filename="my_state")
    assert (directory / "my_state").read_text() == (
        'model_checkpoint_path: "model"\nall_model_checkpoint_paths: "model"\n')
    assert tf.train.latest_checkpoint(str(directory)) is None  # no `checkpoint` file
    assert tf.train.latest_checkpoint(str(directory), "my_state") == prefix
    state = tf.train.CheckpointState(prefix, [prefix])
    assert str(state).startswith('model_checkpoint_path: "' + str(directory).replace(
        '"', '\\"'))
    assert tf.train.CheckpointState.parse(str(state)) == state


def test_max_to_keep_deletes_the_oldest_checkpoints(tmp_path):
    sess, _ = trained_session()
    saver = tf.train.Saver(max_to_keep=2)
    paths = save_steps(saver, sess, str(tmp_path / "model.ckpt"), [1, 2, 3, 4])
    assert saver.last_checkpoints == paths[2:]
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["checkpoint"] + [f"model.ckpt-{s}{suffix}" for s in (3, 4)
                          for suffix in (".index", ".data-00000-of-00001", ".meta")])
    assert tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths == paths[2:]
    assert not tf.train.checkpoint_exists(paths[0])
    assert tf.train.checkpoint_exists(paths[3])


def test_max_to_keep_none_keeps_every_file_but_lists_only_the_last(tmp_path):
    sess, _ = trained_session()
    saver = tf.train.Saver(max_to_keep=None)
    paths = save_steps(saver, sess, str(tmp_path / "m"), [1, 2, 3])
    assert all(tf.train.checkpoint_exists(p) for p in paths)
    assert saver.last_checkpoints == []
    assert (tmp_path / "checkpoint").read_text() == (
        f'model_checkpoint_path: "{paths[-1]}"\nall_model_checkpoint_paths: "{paths[-1]}"\n')


def test_keep_checkpoint_every_n_hours_preserves_checkpoints(tmp_path, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(saver_module, "time", types.SimpleNamespace(time=lambda: clock[0]))
    sess, _ = trained_session()
    saver = tf.train.Saver(max_to_keep=1, keep_checkpoint_every_n_hours=1.0)
    paths = []
    for step, hours in enumerate([0.5, 1.5, 1.6, 1.7]):  # elapsed hours at each save
        clock[0] = 1000.0 + hours * 3600
        paths.append(saver.save(sess, str(tmp_path / "m"), global_step=step))
    # Step 1 is the first save past the 1-hour mark: kept; steps 0 and 2 are deleted.
    assert [tf.train.checkpoint_exists(p) for p in paths] == [False, True, False, True]
    assert saver.last_checkpoints == [paths[3]]


def test_recover_and_set_last_checkpoints(tmp_path):
    sess, _ = trained_session()
    first = tf.train.Saver(max_to_keep=5)
    paths = save_steps(first, sess, str(tmp_path / "m"), [1, 2])
    restarted = tf.train.Saver(max_to_keep=2)
    restarted.recover_last_checkpoints(paths + [str(tmp_path / "m-99")])  # m-99 never existed
    assert restarted.last_checkpoints == paths
    save_steps(restarted, sess, str(tmp_path / "m"), [3])
    assert not tf.train.checkpoint_exists(paths[0])  # rotation continues after the restart
    restarted.set_last_checkpoints_with_time([(paths[1], 5.0)])
    assert restarted.last_checkpoints == [paths[1]]


def test_latest_checkpoint_is_none_without_state_or_files(tmp_path):
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    assert tf.train.get_checkpoint_state(str(tmp_path)) is None
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "gone"\n')
    assert tf.train.latest_checkpoint(str(tmp_path)) is None  # its files do not exist
    (tmp_path / "checkpoint").write_text("this is not a checkpoint state\n")
    assert tf.train.get_checkpoint_state(str(tmp_path)) is None
    (tmp_path / "checkpoint").write_text('all_model_checkpoint_paths: "a"\n')
    with pytest.raises(ValueError, match="Invalid checkpoint state loaded from"):
        tf.train.get_checkpoint_state(str(tmp_path))


def test_update_checkpoint_state_by_hand(tmp_path):
    tf.train.update_checkpoint_state(str(tmp_path), str(tmp_path / "b"),
                                     [str(tmp_path / "a")])
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.all_model_checkpoint_paths == [str(tmp_path / "a"), str(tmp_path / "b")]


# -- reading checkpoints -------------------------------------------------------------------
def test_list_variables_load_variable_and_reader(tmp_path):
    sess, _ = trained_session()
    path = tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"), global_step=3)
    expected = [("count", []), ("dense/bias", [4]), ("dense/kernel", [3, 4]), ("h", [4]),
                ("w", [2, 3])]
    assert tf.train.list_variables(str(tmp_path)) == expected  # a directory: its latest
    assert tf.train.list_variables(path) == expected
    np.testing.assert_array_equal(tf.train.load_variable(path, "dense/kernel:0"), KERNEL)
    count = tf.train.load_variable(str(tmp_path), "count")
    assert count == COUNT and isinstance(count, np.int64)  # 0-d: a numpy scalar

    reader = tf.train.NewCheckpointReader(path)
    assert reader.get_variable_to_shape_map() == dict(expected)
    assert reader.get_variable_to_dtype_map() == {
        "count": tf.int64, "dense/bias": tf.float32, "dense/kernel": tf.float32,
        "h": tf.bfloat16, "w": tf.float32}
    assert reader.has_tensor("w") and not reader.has_tensor("nope")
    np.testing.assert_array_equal(reader.get_tensor("h"), H)
    assert reader.debug_string() == (b"count (DT_INT64) []\ndense/bias (DT_FLOAT) [4]\n"
                                     b"dense/kernel (DT_FLOAT) [3,4]\nh (DT_BFLOAT16) [4]\n"
                                     b"w (DT_FLOAT) [2,3]\n")
    with pytest.raises(tf.errors.NotFoundError, match="Key nope not found in checkpoint"):
        reader.get_tensor("nope")


def test_reader_errors(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files for"):
        tf.train.NewCheckpointReader(str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file or checkpoints"):
        tf.train.list_variables(str(tmp_path))
    (tmp_path / "bad.index").write_text("{not json")
    with pytest.raises(tf.errors.DataLossError, match="bad.index"):
        tf.train.NewCheckpointReader(str(tmp_path / "bad"))


def test_complex128_round_trips(tmp_path):
    z = np.array([[1 + 2j, -3.5j]], dtype=np.complex128)
    v = tf.Variable(z, name="z")
    sess = tf.Session()
    sess.run(v.initializer)
    path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    np.testing.assert_array_equal(tf.train.load_variable(path, "z"), z)
    with tf.Session() as other:
        tf.train.Saver().restore(other, path)
        np.testing.assert_array_equal(other.run(v), z)


def test_data_file_from_another_save_is_detected(tmp_path):
    v = tf.Variable(W, name="w")
    sess = tf.Session()
    sess.run(v.initializer)
    saver = tf.train.Saver()
    first = saver.save(sess, str(tmp_path / "a"))
    sess.run(v.assign(W + 1))
    second = saver.save(sess, str(tmp_path / "b"))
    os.replace(first + ".data-00000-of-00001", second + ".data-00000-of-00001")
    # The index's CRC32C of each tensor catches data of another save.
    with pytest.raises(tf.errors.DataLossError,
                       match=r"Checksum does not match.*b\.data-00000-of-00001"):
        tf.train.load_variable(second, "w")


# -- init_from_checkpoint ---------------------------------------------------------------------
def save_scoped_checkpoint(tmp_path):
    with tf.variable_scope("old"):
        a = tf.get_variable("a", initializer=tf.constant(W))
        b = tf.get_variable("inner/b", initializer=tf.constant(BIAS))
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"))
    del a, b
    tf.reset_default_graph()


def test_init_from_checkpoint_scope_to_scope(tmp_path):
    save_scoped_checkpoint(tmp_path)
    with tf.variable_scope("new"):
        a = tf.get_variable("a", shape=[2, 3], initializer=tf.zeros_initializer())
        b = tf.get_variable("inner/b", shape=[4], initializer=tf.zeros_initializer())
    untouched = tf.get_variable("other", shape=[2], initializer=tf.ones_initializer())
    tf.train.init_from_checkpoint(str(tmp_path), {"old/": "new/"})
    assert a.initial_value.op.name == "checkpoint_initializer"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(a), W)
        np.testing.assert_array_equal(sess.run(b), BIAS)
        np.testing.assert_array_equal(sess.run(untouched), [1.0, 1.0])


def test_init_from_checkpoint_by_name_and_by_variable(tmp_path):
    save_scoped_checkpoint(tmp_path)
    renamed = tf.get_variable("renamed", shape=[2, 3], initializer=tf.zeros_initializer())
    plain = tf.Variable(tf.zeros([4]), name="plain")
    tf.train.init_from_checkpoint(str(tmp_path / "model.ckpt"),
                                  {"old/a": "renamed", "old/inner/b": plain})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(renamed), W)
        np.testing.assert_array_equal(sess.run(plain), BIAS)


def test_init_from_checkpoint_errors(tmp_path):
    save_scoped_checkpoint(tmp_path)
    wrong_shape = tf.get_variable("wrong", shape=[3], initializer=tf.zeros_initializer())
    with pytest.raises(ValueError, match="Tensor old/missing is not found in"):
        tf.train.init_from_checkpoint(str(tmp_path), {"old/missing": "wrong"})
    with pytest.raises(ValueError, match=r"Shape of variable wrong:0 \(\(3,\)\) doesn't match"):
        tf.train.init_from_checkpoint(str(tmp_path), {"old/inner/b": wrong_shape})
    with tf.variable_scope("new"):
        tf.get_variable("zzz", shape=[1], initializer=tf.zeros_initializer())
    with pytest.raises(ValueError, match=r"Tensor old/zzz \(zzz in old/\) is not found"):
        tf.train.init_from_checkpoint(str(tmp_path), {"old/": "new/"})
    with pytest.raises(ValueError, match="should map to scope only"):
        tf.train.init_from_checkpoint(str(tmp_path), {"old/a": "no_such_variable"})


# -- errors -----------------------------------------------------------------------------------
def test_restore_missing_variable_raises_not_found_and_changes_nothing(tmp_path):
    w = tf.Variable(W, name="w")
    sess = tf.Session()
    sess.run(w.initializer)
    path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    tf.reset_default_graph()
    w = tf.Variable(tf.zeros([2, 3]), name="w")
    x = tf.placeholder(tf.float32, [None, 3])
    tf.layers.dense(x, 4, name="dense")
    with tf.Session() as new_sess:
        new_sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.NotFoundError) as info:
            tf.train.Saver().restore(new_sess, path)
        assert "Key dense/bias not found in checkpoint" in str(info.value)
        assert str(info.value).startswith("Restoring from checkpoint failed. This is most "
                                          "likely due to a Variable name or other graph key "
                                          "that is missing from the checkpoint.")
        np.testing.assert_array_equal(new_sess.run(w), np.zeros([2, 3]))  # not restored


def test_restore_shape_mismatch_names_variable_and_shapes(tmp_path):
    v = tf.Variable(np.zeros([4], np.float32), name="dense/bias")
    sess = tf.Session()
    sess.run(v.initializer)
    path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    tf.reset_default_graph()
    tf.Variable(np.zeros([3], np.float32), name="dense/bias")
    with tf.Session() as new_sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            tf.train.Saver().restore(new_sess, path)
    message = str(info.value)
    assert "Assign requires shapes of both tensors to match. lhs shape= [3] rhs shape= [4]" \
        in message
    assert "dense/bias" in message
    assert "a mismatch between the current graph and the graph from the checkpoint" in message


def test_restore_dtype_mismatch(tmp_path):
    v = tf.Variable(np.zeros([2], np.float64), name="v")
    sess = tf.Session()
    sess.run(v.initializer)
    path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    tf.reset_default_graph()
    tf.Variable(np.zeros([2], np.float32), name="v")
    with tf.Session() as new_sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="tensor_name = v; expected dtype float does not equal "
                                 "original dtype double"):
            tf.train.Saver().restore(new_sess, path)


def test_restore_invalid_paths(tmp_path):
    tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="The passed save_path is not a valid checkpoint: "
                                             + str(tmp_path / "nothing")):
            saver.restore(sess, str(tmp_path / "nothing"))
        with pytest.raises(ValueError, match="Can't load save_path when it is None."):
            saver.restore(sess, None)


def test_save_errors(tmp_path):
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="Attempting to use uninitialized value v"):
            saver.save(sess, str(tmp_path / "m"))
        sess.run(v.initializer)
        with pytest.raises(ValueError, match="Parent directory of .* doesn't exist"):
            saver.save(sess, str(tmp_path / "no_dir" / "m"))
        with pytest.raises(ValueError, match="'latest_filename' must not contain path"):
            saver.save(sess, str(tmp_path / "m"), latest_filename="a/b")
        with pytest.raises(ValueError, match="'latest_filename' collides with 'save_path'"):
            saver.save(sess, str(tmp_path / "checkpoint"))
        with pytest.raises(TypeError, match="'sess' must be a Session"):
            saver.save("not a session", str(tmp_path / "m"))
    assert not os.listdir(tmp_path)  # failed saves leave nothing behind


def test_saver_constructor_checks():
    with pytest.raises(ValueError, match="No variables to save"):
        tf.train.Saver()
    assert tf.train.Saver(allow_empty=True).save(tf.Session(), "unused",
                                                 write_meta_graph=False) is None
    v = tf.Variable(1.0, name="v")
    with pytest.raises(ValueError, match="build cannot be deferred"):
        tf.train.Saver([v], defer_build=True)
    with pytest.raises(TypeError, match="Variable to save is not a Variable"):
        tf.train.Saver([v.value()])
    with pytest.raises(ValueError, match="At least two variables have the same name: v"):
        tf.train.Saver([v, v])
    with pytest.raises(ValueError, match="The same saveable will be restored with two names"):
        tf.train.Saver({"a": v, "b": v})
    with pytest.raises(TypeError, match="Variables to save should be passed in a dict or a"):
        tf.train.Saver(v)
    deferred = tf.train.Saver(defer_build=True)
    with pytest.raises(RuntimeError, match="`build\\(\\)` should be called before save"):
        deferred.save(tf.Session(), "unused")
    assert tf.train.Saver(write_version=tf.train.SaverDef.V2).as_saver_def().version == 2


def test_meta_graph_file_is_tensorflows_meta_graph_def(tmp_path):
    # Parsed with TensorBoard's compiled copy of TF's meta_graph.proto: an independent
    # reader of the same message.
    from tensorboard.compat.proto import meta_graph_pb2, variable_pb2

    sess, _ = trained_session()
    path = tf.train.Saver(max_to_keep=3).save(sess, str(tmp_path / "m"),
                                              meta_graph_suffix="meta")
    meta = meta_graph_pb2.MetaGraphDef.FromString((tmp_path / "m.meta").read_bytes())
    nodes = {node.name: node for node in meta.graph_def.node}
    assert nodes["w"].op == "VariableV2"
    assert [d.size for d in nodes["w"].attr["shape"].shape.dim] == [2, 3]
    assert list(nodes["w/Assign"].input) == ["w", "zeros"]
    # tensorflux Savers have no save/restore ops, so no SaverDef is written (TF's
    # import_meta_graph then builds a default Saver over the variables).
    assert not meta.HasField("saver_def")
    assert meta.meta_info_def.tensorflow_version == "1.15.0"
    defs = [variable_pb2.VariableDef.FromString(v)
            for v in meta.collection_def["trainable_variables"].bytes_list.value]
    assert [d.variable_name for d in defs] == ["w:0", "count:0", "h:0", "dense/kernel:0",
                                                "dense/bias:0"]
    assert defs[0].snapshot_name == "w/read:0" and defs[0].initializer_name == "w/Assign"
    assert path == str(tmp_path / "m")


# -- crash safety ---------------------------------------------------------------------------
CHILD = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    import tensorflux as tf
    from tensorflux._src.train import atomic_write

    ckpt_dir, stage, marker = sys.argv[1:4]
    w = tf.Variable(tf.zeros([512, 1024]), name="w")  # 2 MiB
    step = tf.Variable(tf.constant(0, tf.int64), name="step")
    saver = tf.train.Saver()
    prefix = os.path.join(ckpt_dir, "model.ckpt")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w.load(np.full([512, 1024], 1.0, np.float32), sess)
        step.load(1, sess)
        saver.save(sess, prefix, global_step=1)

        publish = atomic_write._publish

        def paused_publish(tmp_path, path):
            # Checkpoint 2's `stage` file is fully written to its temp file: tell the
            # parent, then wait to be killed before it is renamed into place.
            if path.endswith(stage):
                with open(marker + ".tmp", "w") as f:
                    f.write(tmp_path)
                os.replace(marker + ".tmp", marker)
                time.sleep(600)
            publish(tmp_path, path)

        atomic_write._publish = paused_publish
        w.load(np.full([512, 1024], 2.0, np.float32), sess)
        step.load(2, sess)
        saver.save(sess, prefix, global_step=2)
    print("not killed")
""")


@pytest.mark.parametrize("stage", [".data-00000-of-00001", ".index", ".meta", "checkpoint"])
def test_killed_mid_save_keeps_the_previous_checkpoint(tmp_path, stage):
    ckpt_dir = tmp_path / "ckpt"
    ckpt_dir.mkdir()
    marker = tmp_path / "paused"
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(ckpt_dir), stage, str(marker)],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 240
        while not marker.exists():
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the child never reached checkpoint 2"
            time.sleep(0.05)
        tmp_file = marker.read_text()
        assert os.path.exists(tmp_file)  # the kill lands mid-save: written, not yet renamed
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL

    first = str(ckpt_dir / "model.ckpt-1")
    assert tf.train.latest_checkpoint(str(ckpt_dir)) == first
    assert (ckpt_dir / "checkpoint").read_text() == (
        f'model_checkpoint_path: "{first}"\nall_model_checkpoint_paths: "{first}"\n')
    if stage in (".data-00000-of-00001", ".index"):
        assert not tf.train.checkpoint_exists(str(ckpt_dir / "model.ckpt-2"))
    w = tf.Variable(tf.zeros([512, 1024]), name="w")
    step = tf.Variable(tf.constant(0, tf.int64), name="step")
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, tf.train.latest_checkpoint(str(ckpt_dir)))
        np.testing.assert_array_equal(sess.run(w), np.ones([512, 1024], np.float32))
        assert sess.run(step) == 1


def test_failed_atomic_write_keeps_the_old_file(tmp_path):
    target = tmp_path / "file"
    atomic_write.write_text(str(target), "old")

    def failing(tmp_path_):
        with open(tmp_path_, "w") as f:
            f.write("partial")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic_write.write_with(str(target), failing)
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["file"]  # the temp file is cleaned up
