"""`tensorflux place`: place a model's training step over devices with each method,
print the predicted (cost model) and, with --measure, measured step times, and draw the
graph coloured by device and the policy's learning curve."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

from tensorflux import placement
from tensorflux._src.cli import placement_models
from tensorflux._src.cli.errors import UsageError
from tensorflux._src.placement import draw


def run_measure(model, assignments, names, devices, warmup=2, steps=5, timeout=900):
    """{method: measured median step seconds} on `devices` forced host CPU devices."""
    job = {"model": model, "warmup": warmup, "steps": steps,
           "placements": {m: {n: int(d) for n, d in zip(names, a)}
                          for m, a in assignments.items()}}
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}")
    proc = subprocess.run([sys.executable, "-m", "tensorflux._src.cli.place_measure"],
                          input=json.dumps(job), env=env, capture_output=True, text=True, check=False,
                          timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"measuring placements failed: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _rerun_with_devices(devices, argv, output):
    """Runs `tensorflux place` again in a subprocess with `devices` forced host CPU
    devices (JAX fixes its device count when it starts) and returns its summary."""
    env = dict(os.environ, JAX_PLATFORMS="cpu", TENSORFLUX_PLACE_CHILD="1",
               XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}")
    proc = subprocess.run([sys.executable, "-m", "tensorflux", "place", *argv], env=env,
                          check=False)
    if proc.returncode != 0:
        raise RuntimeError("placing with measured rewards failed (see above)")
    return json.loads((pathlib.Path(output) / "placement.json").read_text())


def place(model=None, devices=None, updates=None, groups=None, measure=None, output=None,
          seed=None, reward=None):
    model = model or "lstm4"
    devices = 4 if devices is None else devices
    if devices < 1:
        raise UsageError(f"--devices: expected a positive number of devices, got {devices}")
    reward = reward or "model"
    if reward not in ("model", "measured"):
        raise UsageError(f"--reward: expected model or measured, got {reward!r}")
    output = output or f"runs/place-{model}"
    if reward == "measured" and not os.environ.get("TENSORFLUX_PLACE_CHILD"):
        argv = ["--model", model, "--devices", str(devices), "--reward", "measured",
                "--output", output]
        for flag, value in (("--updates", updates), ("--groups", groups), ("--seed", seed)):
            if value is not None:
                argv += [flag, str(value)]
        if measure:
            argv.append("--measure")
        return _rerun_with_devices(devices, argv, output), None
    built = placement_models.build(model)
    timer = None
    if reward == "measured":
        # The policy's reward: the step measured on this process's forced CPU devices.
        cpu_names = [f"/device:CPU:{i}" for i in range(devices)]

        def timer(op_graph):
            return placement.step_timer(built.graph, built.fetches, cpu_names,
                                        feeds=built.feeds,
                                        init=built.init, op_names=op_graph.names)
    config = placement.PolicyConfig(updates=updates or placement.PolicyConfig.updates,
                                    groups=groups or placement.PolicyConfig.groups,
                                    seed=seed or 0)
    best, report = placement.place(built.graph, built.fetches, devices, hand=built.hand,
                                   config=config, reward=timer)
    out = pathlib.Path(output)
    out.mkdir(parents=True, exist_ok=True)
    measured = {}
    if measure:
        measured = run_measure(model, report.assignments, report.op_graph.names, devices)
    print(f"{model}: {report.op_graph.size} ops over {devices} simulated devices")
    lines = report.table().splitlines()
    print(lines[0] + ("   measured step (ms)" if measured else ""))
    for line, method in zip(lines[1:], report.results):
        extra = f"   {measured[method] * 1e3:.3f}" if method in measured else ""
        print(line + extra)
    names = [d.name for d in report.devices]
    shown = "learned" if "learned" in report.assignments else min(
        report.results, key=report.step_time)
    draw.graph_png(report.op_graph, report.assignments[shown], names,
                   out / "placement.png", f"{model}: {shown} placement")
    if report.curve:
        draw.curve_png(report.curve, out / "learning_curve.png", f"{model}: REINFORCE",
                       {m: report.step_time(m) for m in report.results if m != "learned"
                        and report.results[m].valid})
    summary = {"model": model, "devices": names, "reward": reward, "ops": report.op_graph.size,
               "predicted": {m: r.step_time for m, r in report.results.items()},
               "measured": measured, "curve": report.curve,
               "evaluations": report.evaluations, "policy_seconds": report.policy_seconds,
               "placement": {m: placement.to_names(report.op_graph, a, report.devices)
                             for m, a in report.assignments.items()}}
    (out / "placement.json").write_text(json.dumps(summary, indent=1))
    print(f"wrote {out / 'placement.png'}, {out / 'learning_curve.png'} and "
          f"{out / 'placement.json'}")
    return summary, best
