"""Rewards from real steps: `step_timer` times a placement by running the graph's step
on real devices, for `place(..., reward=...)` (the paper's setting: the policy's reward
is the measured step time).

Each new placement is a new program: its devices are set on the graph's ops and a new
Session compiles and runs it, so a measured reward costs a compile (seconds for a
model's training step) plus `warmup + steps` steps; distinct placements only are timed
(policy.train caches rewards by placement). Use few updates and samples with it.
"""

from __future__ import annotations

import math
import statistics
import time

import tensorflux as tf


def step_timer(graph, fetches, device_names, *, feeds=None, init=None, warmup=1, steps=3,
               op_names=None):
    """`(assignment) -> median step seconds` of running `fetches` with op i of `op_names`
    (the placement's op order) on `device_names[assignment[i]]`; math.inf when the
    placement cannot run (as the simulator scores an out-of-memory placement)."""
    if not device_names:
        raise ValueError("device_names: expected at least one device name, got none")
    if steps < 1:
        raise ValueError(f"steps: expected a positive number of timed steps, got {steps!r}")
    ops = [graph.get_operation_by_name(name) for name in op_names]

    def measure(assignment):
        for op, d in zip(ops, assignment):
            op._set_device(device_names[int(d)])
        try:
            with tf.Session(graph=graph) as sess:
                if init is not None:
                    sess.run(init)
                for _ in range(warmup):
                    sess.run(fetches, feeds)
                times = []
                for _ in range(steps):
                    start = time.perf_counter()
                    sess.run(fetches, feeds)
                    times.append(time.perf_counter() - start)
        except (tf.errors.ResourceExhaustedError, tf.errors.InvalidArgumentError):
            return math.inf
        return statistics.median(times)

    return measure
