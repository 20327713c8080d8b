"""tensorflux automl against AutoGluon-Tabular, FLAML and a linear baseline.

How to run (the peers live in their own venv, never in tensorflux's dependencies):

    python3 -m venv /work/automlvenv
    /work/automlvenv/bin/pip install torch==2.13.0      # CPU torch first (AutoGluon's NN)
    /work/automlvenv/bin/pip install "autogluon.tabular[lightgbm,catboost,xgboost,fastai]" \\
        "flaml[automl]" scikit-learn palmerpenguins ISLP vega_datasets
    /work/automlvenv/bin/pip uninstall -y torchvision   # PyPI's build breaks beside CPU torch
    .venv/bin/python benchmarks/automl.py --peer-python /work/automlvenv/bin/python \\
        --time-limit 60 [--tables breast_cancer penguins ...] [--systems tensorflux ...]

Per table (benchmarks/automl_tables.py lists them: sklearn's bundled sets, palmerpenguins,
ISLP's and vega_datasets' tables; binary, multiclass and regression, with categoricals,
missing values and dates among them) one fixed held-out split (seed 0, 25% test,
stratified for classification) is written once as CSV. Each system then runs in its
own subprocess with the same time limit, fits on the training CSV and writes its
test-set predictions; one scorer (sklearn.metrics, in the peer venv) scores them all:
ROC AUC for binary tasks, log loss for multiclass (accuracy alongside), RMSE for
regression. The systems:

- tensorflux: `automl.fit(train_df, target=..., time_limit=T, task=...)` in this interpreter
  (or --tensorflux-python), with --tensorflux-path (default: this checkout) first on
  PYTHONPATH;
- autogluon: TabularPredictor(presets="medium_quality", eval_metric = the task's metric);
- flaml: flaml.AutoML(time_budget=T, metric = the task's metric);
- baseline: one logistic / ridge regression on one-hot + imputed + standardised
  features (what Amazon ML trained).

A system that cannot be imported is reported as "not installed"; one that crashes or
runs past 3 x T + 300 s as "failed" / "timed out" with its last line of output. Writes
benchmarks/results/automl.json and benchmarks/results/automl.md (scores, wall times,
mean rank per system, mean and median relative gap to AutoGluon); --work-dir keeps the
splits and every system's predictions. The twelve default tables at 60 s take about an
hour on 2 cores; develop with `--time-limit 15 --tables penguins carseats`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE]
from automl_summary import markdown, summarize
from timing import write_json_atomically

WORKER = os.path.join(HERE, "automl_systems.py")
SYSTEMS = ("tensorflux", "autogluon", "flaml", "baseline")
PEERS = ("autogluon", "flaml", "baseline")


def _tables_module():
    """The table list, read without importing the loaders' packages."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("automl_tables",
                                                  os.path.join(HERE, "automl_tables.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _last_line(text):
    lines = [line for line in (text or "").strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


class Runner:
    def __init__(self, args):
        self.args = args
        self.tf_env = dict(os.environ)
        path = os.path.abspath(args.tensorflux_path)
        self.tf_env["PYTHONPATH"] = os.pathsep.join(
            [path] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
        self.peer_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    def python(self, system):
        if system == "tensorflux":
            return self.args.tensorflux_python, self.tf_env
        return self.args.peer_python, self.peer_env

    def call(self, system, *argv, timeout=None):
        python, env = self.python(system)
        return subprocess.run([python, WORKER, *argv], env=env, capture_output=True,
                              text=True, timeout=timeout, cwd=HERE, check=False)

    def available(self, system):
        python, _ = self.python(system)
        if not os.path.exists(python):
            return f"not installed ({python} does not exist)"
        done = self.call(system, "check", "--system", system, timeout=600)
        if done.returncode:
            return f"not installed ({_last_line(done.stderr)})"
        return None


def main(argv=None):
    tables_module = _tables_module()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer-python", default="/work/automlvenv/bin/python",
                        help="the venv with autogluon, flaml, scikit-learn and the tables")
    parser.add_argument("--tensorflux-python", default=sys.executable)
    parser.add_argument("--tensorflux-path", default=os.path.dirname(HERE),
                        help="the checkout whose tensorflux is benchmarked")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--tables", nargs="+", default=list(tables_module.DEFAULT_TABLES),
                        choices=sorted(tables_module.TABLES))
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS)
    parser.add_argument("--work-dir", default=None,
                        help="keep splits and predictions here (default: a temp dir)")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "automl.json"))
    args = parser.parse_args(argv)
    if not os.path.exists(args.peer_python):
        raise SystemExit(f"--peer-python {args.peer_python} does not exist: the tables are "
                         "loaded and scored in the peer venv (see this script's docstring)")
    runner = Runner(args)
    work = args.work_dir or tempfile.mkdtemp(prefix="automl-bench-")
    print(f"work dir: {work}", flush=True)

    status = {s: runner.available(s) for s in args.systems}
    for system, why in status.items():
        print(f"{system:10s} {why or 'ok'}", flush=True)

    metas = {}
    for table in args.tables:
        table_dir = os.path.join(work, "tables", table)
        done = runner.call("baseline", "prepare", "--table", table, "--out", table_dir,
                           timeout=600)
        if done.returncode:
            raise SystemExit(f"preparing table {table} failed: {_last_line(done.stderr)}")
        metas[table] = json.loads(done.stdout.strip().splitlines()[-1])

    runs = {}
    hard_limit = 3 * args.time_limit + 300
    for table in args.tables:
        runs[table] = {}
        for system in args.systems:
            if status[system]:
                runs[table][system] = {"status": status[system]}
                continue
            out = os.path.join(work, "runs", table, system)
            start = time.perf_counter()
            try:
                done = runner.call(system, "run", "--system", system, "--table-dir",
                                   os.path.join(work, "tables", table), "--out", out,
                                   "--time-limit", str(args.time_limit), timeout=hard_limit)
                wall = time.perf_counter() - start
                if done.returncode:
                    record = {"status": f"failed: {_last_line(done.stderr)}", "wall_s": wall}
                else:
                    with open(os.path.join(out, "run.json")) as f:
                        record = {"status": "ok", "wall_s": wall, **json.load(f)}
            except subprocess.TimeoutExpired:
                record = {"status": f"timed out after {hard_limit:.0f} s",
                          "wall_s": time.perf_counter() - start}
            runs[table][system] = record
            print(f"{table:16s} {system:10s} {record['status'][:60]:60s} "
                  f"{record.get('wall_s', 0):7.1f} s", flush=True)

    done = runner.call("baseline", "score", "--work", work, "--tables", *args.tables,
                       "--systems", *args.systems, timeout=600)
    if done.returncode:
        raise SystemExit(f"scoring failed: {_last_line(done.stderr)}")
    scores = json.loads(done.stdout)
    for table, by_system in scores.items():
        for system, row in by_system.items():
            runs[table][system]["scores"] = row

    done = runner.call("baseline", "versions", timeout=600)
    peer_versions = json.loads(done.stdout) if done.returncode == 0 else {}
    commit = subprocess.run(["git", "-C", args.tensorflux_path, "rev-parse", "HEAD"],
                            capture_output=True, text=True, check=False).stdout.strip()
    payload = {"time_limit_s": args.time_limit, "systems": args.systems,
               "tensorflux_commit": commit or None, "peer_versions": peer_versions,
               "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
               "tensorflux_path": os.path.abspath(args.tensorflux_path),
               "tables": {t: {"meta": metas[t], "runs": runs[t]} for t in args.tables}}
    payload["summary"] = summarize(payload)
    write_json_atomically(args.out, payload)
    text = markdown(payload)
    md_path = os.path.splitext(args.out)[0] + ".md"
    tmp = md_path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, md_path)
    print(text)
    print(f"wrote {args.out} and {md_path}")


if __name__ == "__main__":
    main()
