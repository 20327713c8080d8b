"""tf.data.experimental.to_variant/from_variant, the tf.data service (dispatcher and
workers on real TCP ports) and distributed_save."""

import gc
import socket
import subprocess
import sys
import threading

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.data import service_wire
from tests.data.test_csv_sql_examples import drain_with_errors
from tests.data.test_dataset import drain, values

svc = tf.data.experimental.service


# -- to_variant / from_variant ----------------------------------------------------------
def test_variant_round_trip_placeholder_and_function_boundary():
    n = tf.placeholder(tf.int64, [])
    ds = tf.data.Dataset.range(n).map(lambda x: x * 10)
    variant = tf.data.experimental.to_variant(ds)
    assert variant.dtype == tf.variant and variant.shape.as_list() == []
    back = tf.data.experimental.from_variant(variant, ds.element_spec)
    assert back.element_spec == tf.TensorSpec([], tf.int64)
    # the variant crosses into a flat_map function (a captured tensor there)
    outer = tf.data.Dataset.range(2).flat_map(
        lambda i: tf.data.experimental.from_variant(variant, ds.element_spec).map(
            lambda x: x + i))
    # and is fed through a variant placeholder, as a value fetched from another run
    fed = tf.placeholder(tf.variant, [])
    from_feed = tf.data.experimental.from_variant(fed, ds.element_spec)
    its = [d.make_initializable_iterator() for d in (back, outer, from_feed)]
    nexts = [it.get_next() for it in its]
    card = tf.data.experimental.cardinality(back)
    out = [[], [], []]
    with tf.Session() as sess:
        held = sess.run(variant, {n: 2})
        sess.run([its[0].initializer, its[1].initializer], {n: 3})
        sess.run(its[2].initializer, {fed: held})
        for k in range(3):
            while True:
                try:
                    out[k].append(int(sess.run(nexts[k])))
                except tf.errors.OutOfRangeError:
                    break
        assert sess.run(card, {n: 5}) == 5
    assert out == [[0, 10, 20], [0, 10, 20, 1, 11, 21], [0, 10]]


def test_from_variant_errors():
    ds = tf.data.Dataset.range(3)
    with pytest.raises(TypeError, match="variant"):
        tf.data.experimental.from_variant(tf.constant(1), ds.element_spec)
    wrong = tf.data.experimental.from_variant(tf.data.experimental.to_variant(ds),
                                              tf.TensorSpec([], tf.string))
    with pytest.raises(tf.errors.InvalidArgumentError, match="incompatible"):
        drain(wrong)


# -- the tf.data service --------------------------------------------------------------
@pytest.fixture(scope="module")
def cluster():
    """A dispatcher and two workers; afterwards no thread is left and the ports close."""
    before = set(threading.enumerate())
    dispatcher = svc.DispatchServer()
    address = dispatcher.target.split("://")[1]
    workers = [svc.WorkerServer(svc.WorkerConfig(dispatcher_address=address))
               for _ in range(2)]
    assert dispatcher._num_workers() == 2
    yield dispatcher, workers
    ports = [dispatcher.bound_port()] + [w.bound_port() for w in workers]
    for worker in workers:
        worker.stop()
    dispatcher.stop()
    assert set(threading.enumerate()) <= before
    for port in ports:
        with pytest.raises(OSError):
            socket.create_connection(("localhost", port), timeout=1).close()


def test_configs_and_server_arguments():
    config = svc.DispatcherConfig()
    assert (config.port, config.protocol, config.work_dir, config.fault_tolerant_mode) == \
        (0, "grpc", None, False)
    assert (config.job_gc_check_interval_ms, config.job_gc_timeout_ms) == (0, 0)
    assert svc.DispatcherConfig(job_gc_timeout_ms=0).job_gc_timeout_ms == 1
    worker = svc.WorkerConfig("localhost:1")
    assert (worker.worker_address, worker.port, worker.protocol,
            worker.data_transfer_address) == ("localhost:%port%", 0, "grpc",
                                              "localhost:%dts_port%")
    with pytest.raises(ValueError, match="fault tolerant mode without configuring a work"):
        svc.DispatchServer(svc.DispatcherConfig(fault_tolerant_mode=True))
    with pytest.raises(ValueError, match="Must specify a `dispatcher_address`"):
        svc.WorkerServer(svc.WorkerConfig(None))
    assert [p.name for p in svc.ShardingPolicy] == [
        "OFF", "DYNAMIC", "FILE", "DATA", "FILE_OR_DATA", "HINT"]
    assert list(svc.ShardingPolicy) == [0, 1, 2, 3, 4, 5]
    with pytest.raises(ValueError, match="non-empty trainer ID"):
        svc.CrossTrainerCache("")


def test_parallel_and_distributed_epochs(cluster):
    dispatcher, workers = cluster
    ds = tf.data.Dataset.range(12).map(lambda x: x * x)
    squares = [x * x for x in range(12)]
    # parallel_epochs: every worker produces the whole dataset
    both = values(drain(ds.apply(svc.distribute("parallel_epochs", dispatcher.target))))
    assert sorted(both) == sorted(squares * 2)
    # distributed_epoch: the source is split between the workers, each element once
    once = values(drain(ds.apply(svc.distribute("distributed_epoch", dispatcher.target))))
    assert sorted(once) == squares
    assert [w._num_tasks() for w in workers] == [0, 0]  # anonymous jobs are released
    # a transformation after distribute runs locally; a repetition is a new job
    after = ds.apply(svc.distribute(svc.ShardingPolicy.DYNAMIC, dispatcher.target,
                                    job_name="rep")).map(lambda x: x + 1).repeat(2)
    assert sorted(values(drain(after))) == sorted([s + 1 for s in squares] * 2)


def test_static_sharding_policies(cluster):
    dispatcher, _ = cluster
    slices = tf.data.Dataset.from_tensor_slices(np.arange(10) * 3)
    for policy in (svc.ShardingPolicy.FILE, svc.ShardingPolicy.DATA,
                   svc.ShardingPolicy.FILE_OR_DATA):
        # one request at a time (workers in turn) or several in flight (the default)
        for outstanding in (1, None):
            got = values(drain(slices.apply(svc.distribute(
                policy, dispatcher.target, max_outstanding_requests=outstanding))))
            assert sorted(got) == list(range(0, 30, 3)), (policy, outstanding)
    # DATA shards the output: batches stay whole
    batches = values(drain(tf.data.Dataset.range(7).batch(2).apply(
        svc.distribute(svc.ShardingPolicy.DATA, dispatcher.target))))
    assert sorted(batches) == [[0, 1], [2, 3], [4, 5], [6]]
    # HINT fills in shard(SHARD_HINT, SHARD_HINT) with (workers, worker index)
    hinted = tf.data.Dataset.range(8).shard(tf.data.experimental.SHARD_HINT,
                                            tf.data.experimental.SHARD_HINT)
    got = values(drain(hinted.apply(svc.distribute(svc.ShardingPolicy.HINT,
                                                   dispatcher.target))))
    assert sorted(got) == list(range(8))


def test_register_dataset_and_from_dataset_id_with_sparse_and_strings(cluster):
    dispatcher, _ = cluster
    sparse = tf.SparseTensor(indices=[[0, 0], [1, 2], [2, 1]], values=[1.0, 2.0, 3.0],
                             dense_shape=[3, 4])
    ds = tf.data.Dataset.zip((tf.data.Dataset.from_tensor_slices(sparse),
                              tf.data.Dataset.from_tensor_slices([b"a", b"bb", b"\x00c"])))
    dataset_id = svc.register_dataset(dispatcher.target, ds)
    again = svc.register_dataset(dispatcher.target, ds)
    assert dataset_id.dtype == tf.string and dataset_id.shape.as_list() == []
    with tf.Session() as sess:
        first, second = sess.run([dataset_id, again])
    assert first == second  # an already registered dataset keeps its id
    read = svc.from_dataset_id("parallel_epochs", dispatcher.target, first,
                               element_spec=ds.element_spec)
    got = drain(read)
    assert len(got) == 6  # two workers, each the whole dataset
    rows = sorted((s.indices.tolist(), s.values.tolist(), s.dense_shape.tolist(), text)
                  for s, text in got)
    expected = [([[0]], [1.0], [4], b"a"), ([[1]], [3.0], [4], b"\x00c"),
                ([[2]], [2.0], [4], b"bb")]
    assert rows == sorted(expected * 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="incompatible"):
        drain(svc.from_dataset_id("parallel_epochs", dispatcher.target, first,
                                  element_spec=tf.TensorSpec([], tf.int64)))
    ragged = tf.data.Dataset.from_tensor_slices(tf.ragged.constant([[1, 2], [3], [4, 5, 6]]))
    rows = drain(ragged.apply(svc.distribute("distributed_epoch", dispatcher.target)))
    assert sorted(np.asarray(r).tolist() for r in rows) == [[1, 2], [3], [4, 5, 6]]
    with pytest.raises(tf.errors.NotFoundError, match="Dataset id 424242 not found"):
        drain(svc.from_dataset_id("parallel_epochs", dispatcher.target, 424242,
                                  element_spec=ds.element_spec))


def test_shared_job_splits_elements_between_consumers(cluster):
    dispatcher, _ = cluster
    ds = tf.data.Dataset.range(10)
    dataset_id = svc.register_dataset(dispatcher.target, ds)
    with tf.Session() as sess:
        dataset_id = sess.run(dataset_id)
    readers = [svc.from_dataset_id("parallel_epochs", dispatcher.target, dataset_id,
                                   ds.element_spec, job_name="shared") for _ in range(2)]
    nexts = [r.make_one_shot_iterator().get_next() for r in readers]
    got, live = [[], []], [True, True]
    with tf.Session() as sess:
        while any(live):
            for k in range(2):
                if live[k]:
                    try:
                        got[k].append(int(sess.run(nexts[k])))
                    except tf.errors.OutOfRangeError:
                        live[k] = False
    assert got[0] and got[1]
    assert sorted(got[0] + got[1]) == sorted(list(range(10)) * 2)  # one job, 2 workers


def test_coordinated_reads_in_rounds(cluster):
    dispatcher, _ = cluster
    ds = tf.data.Dataset.range(1000).repeat()
    readers = [ds.apply(svc.distribute("parallel_epochs", dispatcher.target,
                                       job_name="rounds", consumer_index=i,
                                       num_consumers=2)).take(6) for i in range(2)]
    # round r comes from worker r % 2; each round hands consumer i the i-th element
    assert values(drain(readers[0])) == [0, 0, 2, 2, 4, 4]
    assert values(drain(readers[1])) == [1, 1, 3, 3, 5, 5]
    with pytest.raises(ValueError, match="Must either set both"):
        svc.distribute("parallel_epochs", dispatcher.target, job_name="x",
                       consumer_index=0)(ds)
    with pytest.raises(ValueError, match="`job_name` must be set when setting"):
        svc.distribute("parallel_epochs", dispatcher.target, consumer_index=0,
                       num_consumers=2)(ds)


def test_cross_trainer_cache(cluster):
    dispatcher, _ = cluster
    ds = tf.data.Dataset.range(10 ** 6).repeat()

    def trainer(trainer_id, job_name="cache", dataset=ds):
        return dataset.apply(svc.distribute(
            svc.ShardingPolicy.OFF, dispatcher.target, job_name=job_name,
            cross_trainer_cache=svc.CrossTrainerCache(trainer_id)))

    # both trainers see the whole sequence (taken from the two workers in turn)
    assert values(drain(trainer("t1").take(5))) == [0, 0, 1, 1, 2]
    assert values(drain(trainer("t2").take(5))) == [0, 0, 1, 1, 2]
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Cross-trainer caching requires named jobs"):
        drain(ds.apply(svc.distribute("parallel_epochs", dispatcher.target,
                                      cross_trainer_cache=svc.CrossTrainerCache("t"))))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="requires the input dataset to be infinite"):
        drain(trainer("t1", "finite", tf.data.Dataset.range(3)))


def test_element_errors_and_split_errors(cluster):
    dispatcher, _ = cluster
    ds = tf.data.Dataset.from_tensor_slices([1.0, 0.0, 2.0]).map(
        lambda x: tf.debugging.check_numerics(1.0 / x, "inverse"))
    got = drain_with_errors(ds.apply(svc.distribute("distributed_epoch", dispatcher.target)))
    errors = [e for e in got if isinstance(e, tuple)]
    assert sorted(float(v) for v in got if not isinstance(v, tuple)) == [0.5, 1.0]
    assert len(errors) == 1 and errors[0][1] == "InvalidArgumentError"
    generated = tf.data.Dataset.from_generator(lambda: iter([1, 2]), tf.int64)
    with pytest.raises(tf.errors.UnimplementedError,
                       match="Cannot create split providers for dataset of type "
                             "GeneratorDataset"):
        drain(generated.apply(svc.distribute("distributed_epoch", dispatcher.target)))


def test_argument_and_address_errors(cluster, monkeypatch):
    dispatcher, _ = cluster
    ds = tf.data.Dataset.range(3)
    with pytest.raises(ValueError, match='processing mode should be a .* Got \'epochs\''):
        svc.distribute("epochs", dispatcher.target)
    with pytest.raises(ValueError, match="`service` must not be empty"):
        svc.distribute("parallel_epochs", "")(ds)
    with pytest.raises(ValueError, match="`service` must be a string"):
        svc.distribute("parallel_epochs", 5)(ds)
    with pytest.raises(ValueError, match="Malformed `service` string has multiple"):
        svc.distribute("parallel_epochs", "grpc://a://b")(ds)
    with pytest.raises(ValueError, match="`job_name` must not be empty"):
        svc.distribute("parallel_epochs", dispatcher.target, job_name="")
    with pytest.raises(ValueError, match="`job_name` must be a string"):
        svc.from_dataset_id("parallel_epochs", dispatcher.target, 1, ds.element_spec,
                            job_name=3)
    with pytest.raises(ValueError, match="Invalid `compression` argument"):
        svc.register_dataset(dispatcher.target, ds, compression="ZIP")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="max_outstanding_requests must be positive"):
        drain(ds.apply(svc.distribute("parallel_epochs", dispatcher.target,
                                      max_outstanding_requests=0)))
    with pytest.raises(ValueError, match="In graph mode `element_spec` must be provided"):
        svc.from_dataset_id("parallel_epochs", dispatcher.target, 1)
    address = dispatcher.target.split("://")[1]
    with pytest.raises(tf.errors.NotFoundError,
                       match="No credentials factory has been registered for protocol grp"):
        drain(ds.apply(svc.distribute("parallel_epochs", "grp://" + address)))
    monkeypatch.setattr(service_wire, "CONNECT_TIMEOUT_S", 0.2)
    with socket.socket() as free:
        free.bind(("localhost", 0))
        closed_port = free.getsockname()[1]
    with pytest.raises(tf.errors.UnavailableError, match="Failed to connect to the tf.data "
                                                         "service dispatcher"):
        drain(ds.apply(svc.distribute("parallel_epochs", f"localhost:{closed_port}")))


def test_worker_without_the_definition_says_why(cluster):
    dispatcher, _ = cluster
    # a dataset registered by another process: this process's workers lack its definition
    connection = service_wire.Connection(dispatcher.target.split("://")[1])
    try:
        reply, _ = connection.call({
            "op": "register_dataset", "key": "1/2/elsewhere", "fingerprint": "0",
            "element_spec": {"tensor": ["int64", []]}, "cardinality": 3,
            "requested_id": None})
    finally:
        connection.close()
    read = svc.from_dataset_id("parallel_epochs", dispatcher.target, reply["dataset_id"],
                               tf.TensorSpec([], tf.int64))
    with pytest.raises(tf.errors.FailedPreconditionError,
                       match="cannot obtain the definition of dataset .* own process"):
        drain(read)


def test_distributed_save_then_load(cluster, tmp_path):
    dispatcher, _ = cluster
    path = str(tmp_path / "snap")
    ds = tf.data.Dataset.range(9).map(lambda x: (x, tf.strings.as_string(x)))
    save = tf.data.experimental.distributed_save(ds, path, dispatcher._address)
    with tf.Session() as sess:
        sess.run(save)
        with pytest.raises(tf.errors.AlreadyExistsError, match="already exists"):
            sess.run(save)
    loaded = tf.data.Dataset.load(path, wait=True)
    assert loaded.element_spec == ds.element_spec
    got = sorted((int(x), s) for x, s in drain(loaded))
    assert got == [(x, str(x).encode()) for x in range(9)]  # each element once
    with pytest.raises(ValueError, match="`data_service_address` must not be empty"):
        tf.data.experimental.distributed_save(ds, path, "")


def test_dropped_server_stops():
    dispatcher = svc.DispatchServer()
    port = dispatcher.bound_port()
    worker = svc.WorkerServer(svc.WorkerConfig(dispatcher._address))
    assert dispatcher._num_workers() == 1
    del worker  # the worker stops and leaves the dispatcher
    assert dispatcher._num_workers() == 0
    del dispatcher
    gc.collect()
    with pytest.raises(OSError):
        socket.create_connection(("localhost", port), timeout=1).close()


def test_dispatcher_in_another_process(tmp_path):
    script = ("import sys\nimport tensorflux as tf\n"
              "d = tf.data.experimental.service.DispatchServer()\n"
              "print(d.bound_port(), flush=True)\nsys.stdin.read()\nd.stop()\n")
    process = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    try:
        address = f"localhost:{int(process.stdout.readline())}"
        worker = svc.WorkerServer(svc.WorkerConfig(address))  # runs this process's datasets
        try:
            ds = tf.data.Dataset.range(5).map(lambda x: 2 * x)
            got = values(drain(ds.apply(svc.distribute("distributed_epoch", address))))
        finally:
            worker.stop()
    finally:
        process.stdin.close()
        assert process.wait(timeout=30) == 0
    assert sorted(got) == [0, 2, 4, 6, 8]
