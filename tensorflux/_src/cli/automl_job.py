"""`tensorflux automl train | predict | serve`.

    tensorflux automl train --data adult.csv --target income --time-limit 300 --output m/
    tensorflux automl predict --model m/ --data new.csv --output predictions.csv
    tensorflux automl serve --model m/ --port 8501

`train` holds out 20% of the rows (stratified; or evaluates on --validation when given,
which also serves as the search's validation split), fits on the rest, saves the model
to --output and writes the report there (report.html, plots, report.json) with the
held-out metrics. Data problems are one line (exit status 2).
"""

from __future__ import annotations

import os
import sys

import numpy as np

from tensorflux._src.automl import splits, tables
from tensorflux._src.automl import task as task_lib
from tensorflux._src.automl.errors import DataError
from tensorflux._src.automl.predictor import _encode_target, fit, load
from tensorflux._src.cli.errors import UsageError

TEST_FRACTION = 0.2


def run(action, **options):
    try:
        if action == "train":
            return train(**options)
        if action == "predict":
            return predict(**options)
        return serve(**options)
    except DataError as exc:
        raise UsageError(str(exc)) from None


def train(data, target, time_limit=None, metric=None, task=None, validation=None,
          output=None, seed=0):
    time_limit = 300.0 if time_limit is None else time_limit
    output = output or os.path.join("runs", "automl-" + _stem(data))
    frame = task_lib.clean_target(tables.read_table(data, "--data"), target, "--data")
    detected = task_lib.detect_task(frame[target], task, target)
    if validation is None:
        y = frame[target]
        strata = (np.asarray(y, float) if detected == "regression" else
                  np.unique(y.astype(str), return_inverse=True)[1])
        fit_rows, test_rows = splits.holdout(strata, detected, TEST_FRACTION, seed)
        train_frame, test_frame = frame.iloc[fit_rows], frame.iloc[test_rows]
        held_out = f"{len(test_rows)} held-out rows ({TEST_FRACTION:.0%}, stratified)"
    else:
        train_frame = frame
        test_frame = task_lib.clean_target(tables.read_table(validation, "--validation"),
                                           target, "--validation")
        held_out = f"the --validation table ({len(test_frame)} rows, also used for " \
                   f"model selection)"
    predictor = fit(train_frame, target, time_limit=time_limit, metric=metric, task=detected,
                    validation=None if validation is None else test_frame, seed=seed)
    _, predictions, proba = predictor.predict_both(test_frame)
    y_test = _encode_target(test_frame[target], predictor._labels, target)
    raw = predictions.astype(float) if proba is None else proba
    from tensorflux._src.automl import metrics
    values = metrics.all_metrics(predictor.task, y_test, raw)
    predictor.info["held_out"] = held_out
    predictor.info["held_out_metrics"] = values
    predictor.save(output)
    report = predictor.write_report(output, y_test, raw, values)
    print(f"metrics on {held_out}:", file=sys.stderr)
    for key, value in values.items():
        print(f"  {key:<18} {value:.5f}", file=sys.stderr)
    print(f"model saved to {output}" + (f"; report: {report}" if report else ""))
    return output


def predict(model, data, output=None):
    predictor = load(model)
    # A delimited file's rows are named by their line (the header is line 1).
    delimited = str(data).lower().endswith((".csv", ".tsv", ".txt", ".csv.gz", ".tsv.gz"))
    frame, labels, proba = predictor.predict_both(tables.read_table(data, "--data"),
                                                  where="line" if delimited else "row",
                                                  what="--data")
    import pandas as pd
    table = pd.DataFrame({"prediction": labels}, index=frame.index)
    if proba is not None:
        for index, label in enumerate(predictor.classes_):
            table[f"proba_{label}"] = proba[:, index]
    text = table.to_csv(index=False, float_format="%.8g")
    if output is None:
        sys.stdout.write(text)
    else:
        temp = output + ".tmp"
        with open(temp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(temp, output)
        print(f"wrote {len(table)} predictions to {output}", file=sys.stderr)
    return table


def serve(model, port=None, host=None, model_name=None, ready=None):
    """Serves the model directory as version 1 of `model_name` until interrupted."""
    import logging

    from tensorflux._src.cli.serve_job import _serve_forever
    from tensorflux.serving import server

    port = 8501 if port is None else port
    if not 0 <= port <= 65535:
        raise UsageError(f"--port must be between 0 and 65535, got {port}")
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname).1s serve] %(message)s")
    model_server = build_server(model, model_name)
    server.run_event_loop(_serve_forever(model_server, host or "0.0.0.0", port, ready,
                                         server))


def build_server(model, model_name=None):
    """The ModelServer (tensorflux serve's) answering for the automl model in `model`."""
    from tensorflux._src.cli import automl_serve
    from tensorflux.serving import model_manager, server

    if not os.path.isfile(os.path.join(model, "predictor.json")):
        raise UsageError(f"--model {model}: not a saved automl model (no predictor.json); "
                         f"train one with `tensorflux automl train --output {model}`")
    name = model_name or "default"
    config = model_manager.ModelConfig(name, os.path.abspath(model))
    manager = automl_serve.SingleModelManager(config, automl_serve.AutoMLServable)
    manager.poll()
    if not manager.available():
        status = manager.status()["model_version_status"][0]["status"]
        raise UsageError(f"--model {model}: {status['error_message']}")
    return server.ModelServer({name: manager}, poll_seconds=0.0)


def _stem(path):
    if not isinstance(path, str):
        return "table"
    base = os.path.basename(path)
    for suffix in (".gz", ".csv", ".tsv", ".parquet", ".pq", ".txt"):
        if base.lower().endswith(suffix):
            base = base[:-len(suffix)]
    return base or "table"
