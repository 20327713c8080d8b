"""Knowledge distillation on the built-in digits: a LeNet student trained on a ResNet
teacher's soft targets against the same LeNet trained on the labels alone.

Runs `tensorflux train` (its job function, in this process): the teacher (--teacher-model,
default resnet20, on the whole training split) once, then for each setting and seed the
student twice with the same options, seed, training rows and epochs: plainly, and with
`--teacher` (temperature --temperature, soft weight --soft-weight). A setting is
`EXAMPLES:EPOCHS`: the student trains on the first EXAMPLES rows of its seed's shuffled
training split (`--train-examples`; `all` for the whole split) for EPOCHS epochs.

Defaults: `130:50` (about 10% of the split, 13 images per class, trained until the
hard-label student fits its rows: Hinton et al.'s 3% experiment, where with few hard
labels per class the hard-target model overfits and the soft targets carry most of the
information) and `all:15` (the whole split, where
the 98%-accurate teacher has little to add). Reports each run's test accuracy and
cross-entropy and the per-seed paired differences (mean, std, wins/losses); writes
benchmarks/results/distillation.json.

    python benchmarks/distillation.py [--teacher-dir RUN] [--settings 130:50,all:15]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tensorflux._src.cli import train_job

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def train(quiet, **options):
    """train_job.train with its console output captured (unless --verbose)."""
    if not quiet:
        return train_job.train(**options)
    with contextlib.redirect_stdout(io.StringIO()):
        return train_job.train(**options)


def run_setting(quiet, args, teacher_dir, workdir, examples, epochs):
    rows = []
    tag = f"{examples or 'all'}x{epochs}"
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        common = {"model": args.student_model, "epochs": epochs, "seed": seed,
                  "train_examples": examples}
        plain = train(quiet, logdir=os.path.join(workdir, f"plain-{tag}-{seed}"), **common)
        student = train(quiet, logdir=os.path.join(workdir, f"student-{tag}-{seed}"),
                        teacher=teacher_dir, temperature=args.temperature,
                        soft_weight=args.soft_weight, **common)
        rows.append({"seed": seed,
                     "hard_labels": {"test_accuracy": plain["test_accuracy"],
                                     "test_loss": plain["test_loss"]},
                     "distilled": {"test_accuracy": student["test_accuracy"],
                                   "test_loss": student["test_loss"]}})
        print(f"{tag} seed {seed}: hard labels {plain['test_accuracy']:.2%} "
              f"(loss {plain['test_loss']:.4f})   distilled {student['test_accuracy']:.2%} "
              f"(loss {student['test_loss']:.4f})", flush=True)
    return rows


def summarize(rows):
    gains = [r["distilled"]["test_accuracy"] - r["hard_labels"]["test_accuracy"]
             for r in rows]
    loss_changes = [r["distilled"]["test_loss"] - r["hard_labels"]["test_loss"] for r in rows]
    hard = [r["hard_labels"]["test_accuracy"] for r in rows]
    soft = [r["distilled"]["test_accuracy"] for r in rows]
    spread = statistics.stdev if len(rows) > 1 else (lambda v: 0.0)
    return {
        "mean_hard_labels_accuracy": statistics.mean(hard),
        "std_hard_labels_accuracy": spread(hard),
        "mean_distilled_accuracy": statistics.mean(soft),
        "std_distilled_accuracy": spread(soft),
        "mean_accuracy_gain": statistics.mean(gains),
        "std_accuracy_gain": spread(gains),
        "seeds_distilled_better": sum(g > 0 for g in gains),
        "seeds_distilled_worse": sum(g < 0 for g in gains),
        "mean_test_loss_change": statistics.mean(loss_changes),
    }


def print_setting(setting, rows, summary):
    print(f"\nsetting {setting} (training examples:epochs)")
    print(f"{'seed':>4} {'hard labels':>12} {'distilled':>10} {'gain':>7}")
    for r in rows:
        gain = r["distilled"]["test_accuracy"] - r["hard_labels"]["test_accuracy"]
        print(f"{r['seed']:>4} {r['hard_labels']['test_accuracy']:>12.2%} "
              f"{r['distilled']['test_accuracy']:>10.2%} {gain:>+7.2%}")
    print(f"mean {summary['mean_hard_labels_accuracy']:>12.2%} "
          f"{summary['mean_distilled_accuracy']:>10.2%} {summary['mean_accuracy_gain']:>+7.2%}"
          f" (std of the gain {summary['std_accuracy_gain']:.2%}; distilled better on "
          f"{summary['seeds_distilled_better']}/{len(rows)} seeds, worse on "
          f"{summary['seeds_distilled_worse']}; test cross-entropy "
          f"{summary['mean_test_loss_change']:+.4f} with distillation)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teacher-model", default="resnet20")
    parser.add_argument("--teacher-epochs", type=int, default=40)
    parser.add_argument("--teacher-dir", help="reuse this trained teacher run (e.g. from an "
                                              "earlier --workdir) instead of training one")
    parser.add_argument("--student-model", default="lenet")
    parser.add_argument("--settings", default="130:50,all:15",
                        help="comma-separated EXAMPLES:EPOCHS (EXAMPLES: a count or all)")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0,
                        help="seeds run are first-seed ... first-seed + seeds - 1 (to split "
                             "a benchmark over processes)")
    parser.add_argument("--temperature", type=float, default=2.0)
    parser.add_argument("--soft-weight", type=float, default=0.5)
    parser.add_argument("--workdir", help="where runs go (default: a temporary directory)")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--out", default=os.path.join(RESULTS, "distillation.json"))
    args = parser.parse_args()

    workdir = args.workdir or tempfile.mkdtemp(prefix="tensorflux-distillation-")
    quiet = not args.verbose
    teacher_dir = args.teacher_dir or os.path.join(workdir, "teacher")
    # An existing --teacher-dir run is only evaluated (its epochs are done).
    teacher = train(quiet, model=args.teacher_model, epochs=args.teacher_epochs,
                    logdir=teacher_dir, seed=0)
    print(f"teacher {args.teacher_model}: test accuracy {teacher['test_accuracy']:.2%}, "
          f"test loss {teacher['test_loss']:.4f}", flush=True)

    settings = {}
    for setting in args.settings.split(","):
        examples, epochs = setting.split(":")
        rows = run_setting(quiet, args, teacher_dir, workdir,
                           None if examples == "all" else int(examples), int(epochs))
        settings[setting] = {"runs": rows, "summary": summarize(rows)}
    results = {"args": vars(args), "teacher": teacher, "settings": settings}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    for setting, r in settings.items():
        print_setting(setting, r["runs"], r["summary"])
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
