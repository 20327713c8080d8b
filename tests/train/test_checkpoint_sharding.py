"""tf.train.experimental.ShardingCallback / ShardableTensor / ShardByTaskPolicy /
MaxShardSizePolicy through tf.train.CheckpointOptions(experimental_sharding_callback=)."""

import dataclasses
import glob
import os

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.framework.protos import BundleEntryProto, BundleHeaderProto
from tensorflux._src.io import tensor_bundle

_KEY = "/.ATTRIBUTES/VARIABLE_VALUE"


def _options(callback):
    return tf.train.CheckpointOptions(experimental_sharding_callback=callback)


def _data_files(prefix):
    return sorted(glob.glob(prefix + ".data-*"))


def _contents(prefix):
    """Per data file, [(tensor name, bytes)] of what it holds, read from TF's index (a
    slice's entry is keyed by TF's OrderedCode of the name and extents)."""
    with open(prefix + ".index", "rb") as f:
        items = tensor_bundle.read_table(f.read(), prefix)
    header = BundleHeaderProto.FromString(items[0][1])
    entries = {key: BundleEntryProto.FromString(value) for key, value in items[1:]}
    names = {}
    for key, entry in entries.items():
        if key[:1] != b"\0":
            names[key] = key.decode()
        for piece in entry.slices:
            starts = [e.start for e in piece.extent]
            lengths = [e.length if e.HasField("length") else -1 for e in piece.extent]
            names[tensor_bundle.slice_key(key.decode(), starts, lengths)] = key.decode()
    files = [[] for _ in range(header.num_shards)]
    for key, entry in entries.items():
        if not entry.slices:
            files[entry.shard_id].append((names[key], entry.size))
    return [sorted(f) for f in files]


def _restored(path, shapes_dtypes, state_cls=None):
    """Restores `path` into a fresh graph of zero variables; {name: value}."""
    tf.reset_default_graph()
    variables = {name: tf.Variable(tf.zeros(shape, dtype), name=name)
                 for name, (shape, dtype) in shapes_dtypes.items()}
    ckpt = tf.train.Checkpoint(**variables)
    with tf.Session() as sess:
        ckpt.restore(path).run_restore_ops(sess)
        return sess.run(variables)


def test_descriptions_hashes_and_fields():
    assert (tf.train.experimental.ShardByTaskPolicy().description
            == "Split tensors into shards based on their device spec task.")
    assert (tf.train.experimental.MaxShardSizePolicy(10).description
            == "Split tensors into shards with a max shard size.")
    assert [f.name for f in dataclasses.fields(tf.train.experimental.ShardableTensor)] == [
        "_tensor_save_spec", "tensor", "dtype", "device", "name", "shape", "slice_spec",
        "checkpoint_key", "trackable"]

    class Value(tf.train.experimental.ShardingCallback):
        def __init__(self, val):
            self.val = val

        @property
        def description(self):
            return "value callback"

        def __call__(self, shardable_tensors):
            return []

    assert hash(Value(1)) == hash(Value(1)) and hash(Value(1)) != hash(Value(2))
    with pytest.raises(TypeError):
        tf.train.experimental.ShardingCallback()  # abstract
    with pytest.raises(ValueError, match="must be of type ShardingCallback"):
        tf.train.CheckpointOptions(experimental_sharding_callback=lambda ts: [])


def test_max_shard_size_policy_slices_as_tf():
    # TF's sharding_policies_test 2D case: int32 [3, 2] and float32 [3, 2, 1].
    v0 = tf.Variable([[0, 1], [2, 3], [4, 5]], name="v0")
    v1 = tf.Variable([[[6.0], [7.0]], [[8.0], [9.0]], [[10.0], [11.0]]], name="v1")
    shardable = [tf.train.experimental.ShardableTensor(
        _tensor_save_spec=None, tensor=v.value(), dtype=v.dtype.base_dtype,
        device=tf.DeviceSpec.from_string("/cpu:0"), name=v.op.name, shape=v.value().shape,
        slice_spec="", checkpoint_key=v.op.name + _KEY, trackable=v) for v in (v0, v1)]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = {}
        for size in (12, 16):
            shards = tf.train.experimental.MaxShardSizePolicy(size)(shardable)
            got[size] = sess.run([{key: dict(slices) for key, slices in shard.items()}
                                  for shard in shards])
    k0, k1 = "v0" + _KEY, "v1" + _KEY
    # 12 bytes: one column of each per shard.
    assert [list(s) for s in got[12]] == [[k0], [k0], [k1], [k1]]
    np.testing.assert_array_equal(got[12][0][k0]["3 2 0,3:0,1"], [[0], [2], [4]])
    np.testing.assert_array_equal(got[12][1][k0]["3 2 0,3:1,1"], [[1], [3], [5]])
    np.testing.assert_array_equal(got[12][2][k1]["3 2 1 0,3:0,1:0,1"], [[[6.]], [[8.]], [[10.]]])
    np.testing.assert_array_equal(got[12][3][k1]["3 2 1 0,3:1,1:0,1"], [[[7.]], [[9.]], [[11.]]])
    # 16 bytes: the middle shard holds the end of v0 and the start of v1.
    assert [sorted(s) for s in got[16]] == [[k0], [k0, k1], [k1]]
    np.testing.assert_array_equal(got[16][0][k0]["3 2 0,2:0,2"], [[0, 1], [2, 3]])
    np.testing.assert_array_equal(got[16][1][k0]["3 2 2,1:0,2"], [[4, 5]])
    np.testing.assert_array_equal(got[16][1][k1]["3 2 1 0,1:0,2:0,1"], [[[6.], [7.]]])
    np.testing.assert_array_equal(got[16][2][k1]["3 2 1 1,2:0,2:0,1"],
                                  [[[8.], [9.]], [[10.], [11.]]])


def test_shard_by_task_policy_writes_one_file_per_task(tmp_path):
    rng = np.random.RandomState(1)
    values = {"a": rng.randn(4, 3).astype(np.float32), "b": rng.randn(5).astype(np.float64),
              "c": np.array([7, -2, 9], np.int32), "d": np.float32(0.25)}
    with tf.device("/job:worker/task:0"):
        a = tf.Variable(values["a"], name="a")
        c = tf.Variable(values["c"], name="c")
    with tf.device("/job:worker/task:1/cpu:0"):
        b = tf.Variable(values["b"], name="b")
    d = tf.Variable(values["d"], name="d")  # no task: this process's CPU
    ckpt = tf.train.Checkpoint(a=a, b=b, c=c, d=d)
    written = []
    options = tf.train.CheckpointOptions(
        experimental_sharding_callback=tf.train.experimental.ShardByTaskPolicy(),
        experimental_write_callbacks=[written.append])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = ckpt.write(str(tmp_path / "ckpt"), session=sess, options=options)
    assert written == [path]
    files = _data_files(path)
    assert [os.path.basename(f) for f in files] == [
        f"ckpt.data-0000{i}-of-00003" for i in range(3)]
    # One file per task, tasks in the order their first tensor comes.
    assert [[name for name, _ in f] for f in _contents(path)] == [
        ["a" + _KEY, "c" + _KEY], ["b" + _KEY], ["d" + _KEY]]
    restored = _restored(path, {n: (v.shape, v.dtype) for n, v in values.items()})
    for name, value in values.items():
        assert restored[name].dtype == value.dtype
        np.testing.assert_array_equal(restored[name], value)


class _Counter(tf.train.experimental.PythonState):
    def __init__(self, value=""):
        self.value = value

    def serialize(self):
        return self.value

    def deserialize(self, string_value):
        self.value = string_value


def test_max_shard_size_policy_splits_big_tensors_and_restores_exactly(tmp_path):
    rng = np.random.RandomState(2)
    values = {"big": rng.randn(9, 5).astype(np.float32),      # 180 bytes
              "vec": rng.randn(6).astype(np.float64),          # 48 bytes
              "ints": rng.randint(-50, 50, size=[2, 3, 2]).astype(np.int64),  # 96 bytes
              "scalar": np.float32(3.5)}
    max_size = 64
    variables = {n: tf.Variable(v, name=n) for n, v in values.items()}
    state = _Counter("x" * 20)
    ckpt = tf.train.Checkpoint(state=state, **variables)
    options = _options(tf.train.experimental.MaxShardSizePolicy(max_size))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = ckpt.save(str(tmp_path / "ckpt"), session=sess, options=options)
        ops_before = len(sess.graph.get_operations())
        path2 = ckpt.save(str(tmp_path / "ckpt"), session=sess, options=options)
        # The sharding plan is built once: later saves add no ops to the graph.
        assert len(sess.graph.get_operations()) == ops_before
    files = _data_files(path)
    # Every data byte is written once (the save counter is an int64, the state a string
    # of 20 bytes: TF stores its varint length, a 4-byte length checksum, the bytes).
    total = sum(v.nbytes for v in values.values()) + 8 + 1 + 4 + 20
    contents = _contents(path)
    assert len(contents) == len(files)
    assert sum(size for f in contents for _, size in f) == total
    assert len(files) >= -(-total // max_size)
    for f, held in zip(files, contents):
        # TF's data files hold only the tensors' bytes (their metadata is in the index):
        # at most max_size, plus the 5 bytes of framing of the string it may hold.
        assert os.path.getsize(f) == sum(size for _, size in held)
        assert sum(size for name, size in held if "py_state" not in name) <= max_size
    # The 180-byte matrix cannot fit one shard: its slices are spread over files.
    assert sum(any(name == "big" + _KEY for name, _ in f) for f in contents) >= 3
    shapes = dict(tf.train.list_variables(path))
    assert shapes["big" + _KEY] == [9, 5] and shapes["ints" + _KEY] == [2, 3, 2]
    np.testing.assert_array_equal(tf.train.load_variable(path, "big" + _KEY), values["big"])
    assert path2.endswith("ckpt-2")
    for p in (path, path2):
        restored = _restored(p, {n: (v.shape, v.dtype) for n, v in values.items()})
        for name, value in values.items():
            assert restored[name].dtype == value.dtype
            np.testing.assert_array_equal(restored[name], value)
    # The PythonState and the save counter come back too.
    tf.reset_default_graph()
    state2 = _Counter()
    ckpt2 = tf.train.Checkpoint(state=state2)
    with tf.Session() as sess:
        ckpt2.restore(path2).run_restore_ops(sess)
        assert state2.value == "x" * 20
        assert sess.run(ckpt2.save_counter) == 2


def test_max_shard_size_policy_exact_files(tmp_path):
    # TF's 1-D case: float32 [4] and int32 [4, 1] at 8 bytes: two elements per file.
    v0 = tf.Variable(np.array([0.0, 1.0, 2.0, 3.0], np.float32), name="v0")
    v1 = tf.Variable(np.array([[4], [5], [6], [7]], np.int32), name="v1")
    ckpt = tf.train.Checkpoint(v0=v0, v1=v1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = ckpt.write(str(tmp_path / "ckpt"), session=sess,
                          options=_options(tf.train.experimental.MaxShardSizePolicy(8)))
    files = _data_files(path)
    assert [[name for name, _ in f] for f in _contents(path)] == [
        ["v0" + _KEY], ["v0" + _KEY], ["v1" + _KEY], ["v1" + _KEY]]
    # Each file holds exactly its slice's little-endian bytes.
    expected = [np.array([0.0, 1.0], "<f4"), np.array([2.0, 3.0], "<f4"),
                np.array([[4], [5]], "<i4"), np.array([[6], [7]], "<i4")]
    for f, want in zip(files, expected):
        with open(f, "rb") as data:
            assert data.read() == want.tobytes()


class _Broken(tf.train.experimental.ShardingCallback):
    """Puts every tensor in one shard after `edit(key, spec, tensor)`."""

    def __init__(self, edit):
        self.edit = edit

    @property
    def description(self):
        return "broken callback"

    def __call__(self, shardable_tensors):
        shard = {}
        for t in shardable_tensors:
            for key, spec, tensor in self.edit(t.checkpoint_key, t.slice_spec, t.tensor):
                shard.setdefault(key, {})[spec] = tensor
        return [shard]


@pytest.mark.parametrize("edit, message", [
    (lambda k, s, t: [] if k.startswith("w") else [(k, s, t)],
     "tensors in the object graph were not found in the checkpoint shards"),
    (lambda k, s, t: [(k, s, tf.cast(t, tf.float64) if k.startswith("w") else t)],
     "a tensor was found with an altered dtype"),
    (lambda k, s, t: [(k, s, tf.transpose(t) if k.startswith("w") else t)],
     "a tensor was found with an altered shape"),
    (lambda k, s, t: [(k, s, t), ("ADDED_TENSOR", "", t)],
     "a tensor not originally in the object graph"),
    (lambda k, s, t: [(k, s, t), (k, s + " ", t)],
     "multiple tensors with the same checkpoint key and slice spec were found"),
    (lambda k, s, t: [(k, "2 3 0,2:0,2", t[:, :2]), (k, "2 3 0,2:1,2", t[:, 1:])]
     if k.startswith("w") else [(k, s, t)],
     "tensor slices with the same checkpoint key overlap"),
    (lambda k, s, t: [(k, "2 3 0,2:0,2", t[:, :2])] if k.startswith("w") else [(k, s, t)],
     "tensors in the object graph were not found in the checkpoint shards"),
])
def test_callback_output_is_validated(tmp_path, edit, message):
    w = tf.Variable(np.ones([2, 3], np.float32), name="w")
    u = tf.Variable(np.float32(2.0), name="u")
    ckpt = tf.train.Checkpoint(w=w, u=u)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(RuntimeError, match=message) as info:
            ckpt.write(str(tmp_path / "ckpt"), session=sess, options=_options(_Broken(edit)))
    assert "callback_description: broken callback" in str(info.value)
    assert not os.path.exists(str(tmp_path / "ckpt.index"))


def test_custom_callback_may_split_and_move_tensors(tmp_path):
    W = np.arange(12, dtype=np.float32).reshape(4, 3)

    class Halves(tf.train.experimental.ShardingCallback):
        @property
        def description(self):
            return "halves"

        def __call__(self, shardable_tensors):
            shards = []
            for t in shardable_tensors:
                if t.checkpoint_key.startswith("w"):
                    shards.append({t.checkpoint_key: {"4 3 0,2:0,3": t.tensor[:2]}})
                    shards.append({t.checkpoint_key: {"4 3 2,2:0,3": t.tensor[2:]}})
                else:
                    shards.append({t.checkpoint_key: {t.slice_spec: t.tensor}})
            return shards

    w = tf.Variable(W, name="w")
    u = tf.Variable(np.int32(5), name="u")
    ckpt = tf.train.Checkpoint(u=u, w=w)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = ckpt.write(str(tmp_path / "ckpt"), session=sess, options=_options(Halves()))
    assert len(_data_files(path)) == 3
    restored = _restored(path, {"w": ([4, 3], np.float32), "u": ([], np.int32)})
    np.testing.assert_array_equal(restored["w"], W)
    assert restored["u"] == 5


def test_checkpoint_options_signature_and_skip_slot_variables(tmp_path):
    import inspect

    assert list(inspect.signature(tf.train.CheckpointOptions).parameters) == [
        "experimental_io_device", "experimental_enable_async_checkpoint",
        "experimental_write_callbacks", "enable_async", "experimental_skip_slot_variables",
        "experimental_sharding_callback"]
    assert tf.train.CheckpointOptions(experimental_enable_async_checkpoint=True).enable_async
    w = tf.Variable(np.array([1.0, -2.0], np.float32), name="w")
    opt = tf.train.AdamOptimizer(0.5)
    train = opt.minimize(tf.reduce_sum(tf.square(w)))
    ckpt = tf.train.Checkpoint(w=w, opt=opt)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        saved_w = sess.run(w)
        path = ckpt.write(str(tmp_path / "ckpt"), session=sess)
    # The first Adam step's m slot is (1 - beta1) * grad = 0.1 * 2w.
    m_key = f"w/.OPTIMIZER_SLOT/opt/m{_KEY}"
    np.testing.assert_allclose(tf.train.load_variable(path, m_key),
                               0.1 * 2 * np.array([1.0, -2.0]), rtol=1e-6)
    tf.reset_default_graph()
    w = tf.Variable(tf.zeros([2]), name="w")
    opt = tf.train.AdamOptimizer(0.5)
    opt.minimize(tf.reduce_sum(tf.square(w)))
    ckpt = tf.train.Checkpoint(w=w, opt=opt)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        options = tf.train.CheckpointOptions(experimental_skip_slot_variables=True)
        ckpt.restore(path, options=options).run_restore_ops(sess)
        np.testing.assert_array_equal(sess.run(w), saved_w)
        np.testing.assert_array_equal(sess.run(opt.get_slot(w, "m")), [0.0, 0.0])
        ckpt.restore(path).run_restore_ops(sess)
        np.testing.assert_allclose(sess.run(opt.get_slot(w, "m")), [0.2, -0.4], rtol=1e-6)
