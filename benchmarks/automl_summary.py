"""Ranks, gaps to AutoGluon and the markdown table of benchmarks/automl.py's results.

Pure Python over the result dict, so it can be re-run on a saved automl.json:

    python benchmarks/automl_summary.py benchmarks/results/automl.json
"""

from __future__ import annotations

import json
import statistics
import sys

HIGHER_IS_BETTER = {"roc_auc": True, "accuracy": True, "balanced_accuracy": True,
                    "r2": True, "log_loss": False, "rmse": False, "mae": False}
LABEL = {"roc_auc": "ROC AUC ↑", "log_loss": "log loss ↓", "rmse": "RMSE ↓"}
REFERENCE = "autogluon"


def _primary(table):
    """{system: value of the table's metric} for the systems that produced one."""
    metric = table["meta"]["metric"]
    return {s: r["scores"][metric] for s, r in table["runs"].items()
            if r.get("status") == "ok" and metric in r.get("scores", {})}


def _ranks(values, competing, higher):
    """Rank 1 = best; ties share their mean rank; competitors without a value (failed,
    timed out) share the ranks after everyone who scored."""
    ordered = sorted(values, key=lambda s: -values[s] if higher else values[s])
    ranks, i = {}, 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and values[ordered[j + 1]] == values[ordered[i]]:
            j += 1
        for s in ordered[i:j + 1]:
            ranks[s] = (i + j) / 2 + 1
        i = j + 1
    rest = [s for s in competing if s not in values]
    for s in rest:
        ranks[s] = len(values) + (len(rest) + 1) / 2
    return ranks


def summarize(payload):
    systems = payload["systems"]
    rank_sum = {s: 0.0 for s in systems}
    ranked = {s: 0 for s in systems}
    gaps = {s: [] for s in systems}
    wins = {s: 0 for s in systems}
    per_table = {}
    for name, table in payload["tables"].items():
        metric = table["meta"]["metric"]
        higher = HIGHER_IS_BETTER[metric]
        values = _primary(table)
        competing = [s for s in systems
                     if not table["runs"][s]["status"].startswith("not installed")]
        ranks = _ranks(values, competing, higher) if values else {}
        per_table[name] = {"metric": metric, "ranks": ranks}
        for s, r in ranks.items():
            rank_sum[s] += r
            ranked[s] += 1
            wins[s] += r == 1
        reference = values.get(REFERENCE)
        for s, v in values.items():
            if reference is not None and reference != 0:
                gap = (reference - v) if higher else (v - reference)
                gaps[s].append(gap / abs(reference))
    return {"tables": per_table, "systems": {
        s: {"mean_rank": rank_sum[s] / ranked[s] if ranked[s] else None,
            "tables_ranked": ranked[s], "wins": wins[s],
            "mean_relative_gap_to_autogluon": sum(gaps[s]) / len(gaps[s]) if gaps[s] else None,
            "median_relative_gap_to_autogluon": statistics.median(gaps[s]) if gaps[s] else None,
            "tables_compared_to_autogluon": len(gaps[s])} for s in systems}}


def _cell(run, metric, task):
    if run.get("status") != "ok":
        return run.get("status", "?").split(" (")[0].replace("|", "/")
    scores = run.get("scores", {})
    if metric not in scores:
        return "no score: " + str(scores.get("error", "?"))
    text = f"{scores[metric]:.4f}"
    if task == "multiclass":
        text += f" (acc {scores['accuracy']:.3f})"
    return f"{text}, {run['fit_s'] + run['predict_s']:.0f} s"


def markdown(payload):
    systems = payload["systems"]
    summary = payload.get("summary") or summarize(payload)
    lines = [(f"# tensorflux automl benchmark: {payload['time_limit_s']:g} s per system "
             "and table"), "",
             f"Command: `{payload.get('command', '')}`", "",
             f"tensorflux {(payload.get('tensorflux_commit') or '?')[:10]} from "
             f"{payload.get('tensorflux_path', '?')}; peers: "
             + ", ".join(f"{k} {v}" for k, v in payload.get("peer_versions", {}).items()),
             "",
             ("Each cell: the test-split score (multiclass: log loss, accuracy in "
             "brackets), then the wall time of fit + predict (automl.json also has each "
             "subprocess's whole wall time, imports included, as wall_s)."), "",
             "| table | task (metric) | train/test rows | " + " | ".join(systems) + " |",
             "|" + "---|" * (3 + len(systems))]
    for name, table in payload["tables"].items():
        meta = table["meta"]
        lines.append(
            f"| {name} | {meta['task']} ({LABEL[meta['metric']]}) | "
            f"{meta['n_train']}/{meta['n_test']} | "
            + " | ".join(_cell(table["runs"][s], meta["metric"], meta["task"])
                         for s in systems) + " |")
    lines += ["", ("| system | mean rank | tables won | relative gap to AutoGluon, mean "
              "(+ = worse) | median | tables compared |"), "|---|---|---|---|---|---|"]
    for s in systems:
        row = summary["systems"][s]
        rank = "–" if row["mean_rank"] is None else f"{row['mean_rank']:.2f}"
        gaps = [row[f"{kind}_relative_gap_to_autogluon"] for kind in ("mean", "median")]
        gaps = ["–" if g is None else f"{100 * g:+.2f}%" for g in gaps]
        lines.append(f"| {s} | {rank} | {row['wins']} | {gaps[0]} | {gaps[1]} | "
                     f"{row['tables_compared_to_autogluon']} |")
    lines += ["", ("Relative gap: (AutoGluon - system) / AutoGluon for ROC AUC, "
              "(system - AutoGluon) / AutoGluon for log loss and RMSE, per table; log "
              "loss gaps are large when AutoGluon's loss is small, so the median is "
              "shown beside the mean. Ranks: 1 = best; a system that failed or timed out "
              "on a table ranks after every system that scored.")]
    notes = []
    for name, table in payload["tables"].items():
        for s in systems:
            status = table["runs"][s].get("status", "")
            if status != "ok" and not status.startswith("not installed"):
                notes.append(f"- {name} / {s}: {status}")
            note = table["runs"][s].get("scores", {}).get("note")
            if note:
                notes.append(f"- {name} / {s}: {note}")
    if notes:
        lines += ["", "Failures and notes:", "", *notes]
    lines += ["", "Tables:", ""]
    for name, table in payload["tables"].items():
        meta = table["meta"]
        lines.append(f"- {name}: {meta['note']}; {meta['n_features']} features, "
                     f"{len(meta['categorical'])} non-numeric, "
                     f"{meta['missing_cells']} missing cells")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        payload = json.load(f)
    payload["summary"] = summarize(payload)
    print(markdown(payload))
