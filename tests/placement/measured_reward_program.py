"""Run with XLA_FLAGS=--xla_force_host_platform_device_count=2 (test_measured_reward.py):
trains the policy on measured steps of a two-chain graph on 2 forced CPU devices and
prints what the test checks as JSON."""

import json
import math

import numpy as np

import tensorflux as tf
from tensorflux import placement

SIZE = 256


def main():
    graph = tf.Graph()
    with graph.as_default():
        outs = []
        for c in range(2):
            x = tf.constant(np.eye(SIZE, dtype=np.float32), name=f"x{c}")
            for i in range(3):
                x = tf.tanh(tf.matmul(x, x, name=f"c{c}/mm{i}"), name=f"c{c}/t{i}")
            outs.append(x)
        total = tf.add_n(outs, name="total")
    names = ["/device:CPU:0", "/device:CPU:1"]
    calls = []

    def reward(op_graph):
        timer = placement.step_timer(graph, [total], names, op_names=op_graph.names)

        def measured(assignment):
            calls.append(np.asarray(assignment).tolist())
            return timer(assignment)
        return measured

    config = placement.PolicyConfig(groups=2, samples=4, updates=3, hidden=8)
    best, report = placement.place(graph, [total], 2, config=config, reward=reward,
                                   methods=("single_device", "learned"))
    timer = placement.step_timer(graph, [total], names, op_names=report.op_graph.names)
    print(json.dumps({
        "calls": len(calls), "distinct": len({tuple(c) for c in calls}),
        "evaluations": report.evaluations, "curve": report.curve,
        "learned_devices": sorted(set(best.values())),
        "single_step": timer(np.zeros(report.op_graph.size, np.int64)),
        "devices_after": graph.get_operation_by_name("c1/mm0").device,
        "finite": all(math.isfinite(c[2]) for c in report.curve)}))


if __name__ == "__main__":
    main()
