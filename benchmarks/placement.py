"""Learned device placement vs the baselines: the 4-layer LSTM LM and ResNet-20
training steps over 4 simulated devices (predicted by the cost model), and the same
placements measured on 4 forced host CPU devices. Forced host devices share this
machine's cores, so measured speedups are not expected: the measured column checks that
the placements run and what moving values between devices costs.

    python benchmarks/placement.py [--updates 150] [--measure] [--output runs/placement]
"""

import argparse
import json
import pathlib

from tensorflux._src.cli import place_job


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="lstm4,resnet20")
    parser.add_argument("--updates", type=int, default=150)
    parser.add_argument("--measure", action="store_true")
    parser.add_argument("--output", default="runs/placement")
    args = parser.parse_args()
    results = {}
    for model in args.models.split(","):
        summary, _ = place_job.place(model=model, devices=4, updates=args.updates,
                                     measure=args.measure,
                                     output=f"{args.output}/{model}")
        results[model] = {k: summary[k] for k in ("ops", "predicted", "measured")}
    path = pathlib.Path(args.output) / "placement.json"
    path.write_text(json.dumps(results, indent=1))
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
