"""The step-time simulator against step times computed by hand, and per-op costs
against closed-form FLOP counts."""

import math

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.placement import baselines, op_graph
from tensorflux._src.placement.cost_model import Device, Link, Simulator

# 1 FLOP/s devices with no memory traffic cost or overhead: an op's time is its flops.
UNIT = {"flops_per_s": 1.0, "memory_bandwidth": 1e30, "overhead": 0.0, "memory": 1e9}


def make_graph(flops, edges, types=None, out=None, params=None):
    n = len(flops)
    return op_graph.OpGraph(
        names=[f"op{i}" for i in range(n)], types=types or ["MatMul"] * n, edges=edges,
        flops=np.array(flops, float), bytes_accessed=np.zeros(n),
        output_bytes=np.array(out or [0] * n, float),
        param_bytes=np.array(params or [0] * n, float), pinned=[""] * n)


def devices(k, **kw):
    return [Device(f"/device:GPU:{i}", **dict(UNIT, **kw)) for i in range(k)]


def test_chain_on_one_device_is_the_sum_of_its_ops():
    g = make_graph([2, 3, 4], [(0, 1, 10), (1, 2, 10)])
    assert Simulator(g, devices(2), Link(1.0, 10.0)).run([0, 0, 0]).step_time == 9.0


def test_cross_device_edge_pays_latency_plus_bytes_over_bandwidth():
    # op0 (2s) on dev0 -> 20 bytes at 10 B/s + 1s latency = 3s -> op1 (3s) on dev1.
    g = make_graph([2, 3], [(0, 1, 20)])
    result = Simulator(g, devices(2), Link(1.0, 10.0)).run([0, 1])
    assert result.step_time == 2 + 1 + 2 + 3
    assert result.transfer_bytes == 20


def test_independent_ops_overlap_on_two_devices_and_serialize_on_one():
    g = make_graph([5, 5, 1], [(0, 2, 0), (1, 2, 0)])
    sim = Simulator(g, devices(2), Link(0.5, 1.0))
    assert sim.run([0, 0, 0]).step_time == 11.0
    # op1 on dev1 ends at 5, its 0-byte control edge takes the 0.5s latency.
    assert sim.run([0, 1, 0]).step_time == 5 + 0.5 + 1


def test_a_value_is_sent_once_per_destination_and_the_link_serializes():
    # op0 feeds op1 and op2 on dev1 (one send of 10 B: 1s), op3 feeds op4 on dev1 over
    # the same link: it waits for the first send.
    g = make_graph([1, 1, 1, 1, 1], [(0, 1, 10), (0, 2, 10), (3, 4, 10)])
    result = Simulator(g, devices(2), Link(0.0, 10.0)).run([0, 1, 1, 0, 1])
    # op0 [0,1], op3 [1,2]; send op0 [1,2]; send op3 [2,3]; dev1: op1 [2,3], op2 [3,4],
    # op4 [4,5].
    assert result.step_time == 5.0
    assert result.transfer_bytes == 20


def test_memory_over_capacity_is_invalid():
    g = make_graph([1, 1], [(0, 1, 8)], out=[8, 4], params=[100, 0])
    sim = Simulator(g, devices(2, memory=100.0), Link(0.0, 1.0))
    bad = sim.run([0, 0])
    assert not bad.valid and math.isinf(bad.step_time) and "out of memory" in bad.reason
    ok = sim.run([0, 1])      # dev0: 100 + 8, still over
    assert not ok.valid
    g2 = make_graph([1, 1], [(0, 1, 8)], out=[0, 4], params=[96, 0])
    res = Simulator(g2, devices(2, memory=100.0), Link(0.0, 1.0)).run([0, 1])
    assert res.valid and list(res.memory) == [96, 12]


def test_device_speed_and_memory_traffic_set_compute_time():
    g = make_graph([8e9], [])
    g.bytes_accessed[:] = 4e9
    dev = Device("/gpu:0", flops_per_s=4e9, memory_bandwidth=2e9, overhead=1e-3)
    assert Simulator(g, [dev]).run([0]).step_time == pytest.approx(2 + 2 + 1e-3)


def test_bad_assignment_is_rejected_with_its_shape():
    g = make_graph([1, 1], [(0, 1, 0)])
    with pytest.raises(ValueError, match="assignment"):
        Simulator(g, devices(2)).run([0, 2])


def test_greedy_spreads_independent_chains():
    g = make_graph([4, 4, 4, 4], [(0, 1, 1), (2, 3, 1)])
    sim = Simulator(g, devices(2), Link(0.0, 1.0))
    place = baselines.greedy(g, sim)
    assert sim.run(place).step_time == 8.0
    assert place[0] == place[1] and place[2] == place[3] and place[0] != place[2]


def test_op_graph_costs_come_from_xla_and_edges_carry_tensor_bytes():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [8, 16], name="x")
        w = tf.constant(np.ones((16, 32), np.float32), name="w")
        y = tf.matmul(x, w, name="y")
        z = tf.nn.relu(y, name="z")
    g = op_graph.build(graph, [z])
    assert g.names == ["x", "w", "y", "z"]
    i = g.names.index("y")
    assert g.flops[i] == 2 * 8 * 16 * 32 and g.cost_sources[i] == "xla"
    assert g.flops[g.names.index("x")] == 0
    assert (i, 3, 8 * 32 * 4) in g.edges and (0, i, 8 * 16 * 4) in g.edges


def test_default_placer_keeps_pinned_ops():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [4], name="x")
        with tf.device("/gpu:2"):
            y = tf.square(x, name="y")
        z = tf.add(y, 1.0, name="z")
    g = op_graph.build(graph, [z])
    place = baselines.default_placer(g, devices(4))
    assert dict(zip(g.names, place.tolist()))["y"] == 2
    assert sum(place) == 2
