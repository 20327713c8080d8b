"""Measures placements on real devices: run as
`python -m tensorflux._src.cli.place_measure` with XLA_FLAGS forcing N host devices
(JAX fixes its device count when it starts, so `tensorflux place --measure` runs this in
a subprocess). Reads {"model", "placements": {method: {op name: device index}},
"warmup", "steps"} as JSON on stdin; prints {method: median step seconds} as JSON."""

from __future__ import annotations

import json
import statistics
import sys
import time

import tensorflux as tf
from tensorflux._src.cli import placement_models


def measure(model_name, placement, warmup, steps):
    model = placement_models.build(model_name)
    for name, device in placement.items():
        model.graph.get_operation_by_name(name)._set_device(f"/device:CPU:{device}")
    with tf.Session(graph=model.graph) as sess:
        sess.run(model.init)
        for _ in range(warmup):
            sess.run(model.fetches, model.feeds)
        times = []
        for _ in range(steps):
            start = time.perf_counter()
            sess.run(model.fetches, model.feeds)
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    job = json.load(sys.stdin)
    out = {method: measure(job["model"], placement, job.get("warmup", 2),
                           job.get("steps", 5))
           for method, placement in job["placements"].items()}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
