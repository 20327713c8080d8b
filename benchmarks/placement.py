"""Learned device placement vs the baselines: the 4-layer LSTM LM and ResNet-20
training steps over 4 simulated devices (step times predicted by the cost model), the
same placements measured on 4 forced host CPU devices, and the policy's learning curves.

    python benchmarks/placement.py [--updates 150] [--no-measure]

Writes benchmarks/results/placement.json, placement.md and placement-<model>-curve.png
(reward over policy updates) and placement-<model>-graph.png (the learned placement).

The forced host devices (XLA_FLAGS=--xla_force_host_platform_device_count=4) are four
XLA CPU devices sharing this machine's cores (2 here, used by other work too): the
measured column shows that each placement runs and what splitting the step costs in
cross-device copies and per-device dispatch; it cannot show a parallel speedup.
"""

import argparse
import json
import os
import pathlib
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tensorflux._src.cli import place_job

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
METHODS = ("single_device", "default_placer", "greedy", "hand", "learned")


def markdown(results, args):
    lines = ["# Learned device placement", "",
             (f"`python benchmarks/placement.py --updates {args.updates}`: 4 simulated "
             "K40-like devices (4 TFLOP/s, 200 GB/s, 5 us per op) joined by 8 GB/s, 10 us "
             "links; predicted = the cost model's step time. Measured = median step on "
             "4 forced XLA host CPU devices sharing 2 cores (no parallel speedup is "
             "possible there: it shows the placements run and what splitting costs). "
             "Neither graph pins an op with tf.device, so single_device and "
             "default_placer are the same placement: the gap between their measured "
             "times is the measurement's noise on this shared machine."), ""]
    for model, r in results.items():
        lines += [(f"## {model} ({r['ops']} ops; policy: {r['evaluations']} placements "
                  f"simulated in {r['policy_seconds']:.0f} s)"), "",
                  "| method | predicted step (ms) | speedup vs single | measured step (ms) |",
                  "|---|---:|---:|---:|"]
        single = r["predicted"]["single_device"]
        for m in METHODS:
            if m not in r["predicted"]:
                continue
            p = r["predicted"][m]
            meas = r["measured"].get(m)
            lines.append(f"| {m} | {p * 1e3:.2f} | {single / p:.2f} | "
                         f"{'' if meas is None else f'{meas * 1e3:.1f}'} |")
        curve = r["curve"]
        first = sum(c[0] for c in curve[:10]) / min(10, len(curve))
        last = sum(c[0] for c in curve[-10:]) / min(10, len(curve))
        lines += ["", (f"Mean reward (-sqrt(step / single-device step)) of the first 10 "
                  f"updates {first:.3f}, of the last 10 {last:.3f}; learning curve: "
                  f"`placement-{model}-curve.png`."), ""]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="lstm4,resnet20")
    parser.add_argument("--updates", type=int, default=150)
    parser.add_argument("--no-measure", action="store_true")
    parser.add_argument("--workdir", default="runs/placement")
    parser.add_argument("--report-only", action="store_true",
                        help="rewrite placement.md from placement.json")
    args = parser.parse_args()
    if args.report_only:
        results = json.loads((RESULTS / "placement.json").read_text())
        (RESULTS / "placement.md").write_text(markdown(results, args))
        return
    RESULTS.mkdir(parents=True, exist_ok=True)
    results = {}
    for model in args.models.split(","):
        out = pathlib.Path(args.workdir) / model
        summary, _ = place_job.place(model=model, devices=4, updates=args.updates,
                                     measure=not args.no_measure, output=str(out))
        results[model] = {k: summary[k] for k in ("ops", "predicted", "measured", "curve",
                                                  "evaluations", "policy_seconds")}
        shutil.copy(out / "learning_curve.png", RESULTS / f"placement-{model}-curve.png")
        shutil.copy(out / "placement.png", RESULTS / f"placement-{model}-graph.png")
    (RESULTS / "placement.json").write_text(json.dumps(results, indent=1))
    (RESULTS / "placement.md").write_text(markdown(results, args))
    print((RESULTS / "placement.md").read_text())


if __name__ == "__main__":
    main()
