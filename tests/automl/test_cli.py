"""tensorflux automl train -> predict -> serve, and the served answers equal predict's."""

import asyncio
import json
import threading
import urllib.error
import urllib.request

import numpy as np
import pandas as pd
import pytest

from tensorflux import cli

from .tables import mixed


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("automl_cli")
    frame = mixed(300)
    frame.to_csv(root / "train.csv", index=False)
    frame.drop(columns="bought").iloc[:20].to_csv(root / "new.csv", index=False)
    cli.main(["automl", "train", "--data", str(root / "train.csv"), "--target", "bought",
              "--time-limit", "6", "--output", str(root / "model")])
    return root


def test_train_writes_the_model_and_held_out_metrics(model_dir):
    document = json.loads((model_dir / "model" / "predictor.json").read_text())
    assert document["task"] == "binary" and document["target"] == "bought"
    assert document["info"]["held_out"].startswith("60 held-out rows")
    assert document["info"]["held_out_metrics"]["roc_auc"] > 0.85
    assert (model_dir / "model" / "leaderboard.csv").exists()


def test_predict_writes_labels_and_probabilities(model_dir):
    out = model_dir / "preds.csv"
    cli.main(["automl", "predict", "--model", str(model_dir / "model"), "--data",
              str(model_dir / "new.csv"), "--output", str(out)])
    table = pd.read_csv(out)
    assert list(table.columns) == ["prediction", "proba_no_buy", "proba_yes_buy"]
    assert len(table) == 20
    np.testing.assert_allclose(table[["proba_no_buy", "proba_yes_buy"]].sum(axis=1), 1.0,
                               rtol=1e-6)


def test_bad_data_is_one_line_with_status_2(model_dir, tmp_path, capsys):
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n3\n")
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["automl", "train", "--data", str(tmp_path / "bad.csv"), "--target", "b"])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("tensorflux: error: --data") and "line 3" in error
    assert len(error.splitlines()) == 1


def test_predict_names_the_line_of_a_bad_value(model_dir, tmp_path, capsys):
    frame = pd.read_csv(model_dir / "new.csv").astype({"age": object})
    frame.loc[1, "age"] = "forty"  # data row 2: line 3 of the file
    frame.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["automl", "predict", "--model", str(model_dir / "model"), "--data",
                  str(tmp_path / "bad.csv")])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err.strip()
    assert error == ("tensorflux: error: column 'age', line 3: 'forty' is not a number, but "
                     "the model reads 'age' as numbers; fix the value or leave it empty "
                     "(missing)")


@pytest.fixture(scope="module")
def server_url(model_dir):
    from tensorflux._src.cli import automl_job
    from tensorflux.serving import server

    model_server = automl_job.build_server(str(model_dir / "model"), "buyers")
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    runner = asyncio.run_coroutine_threadsafe(
        server.start(model_server, "127.0.0.1", 0), loop).result(60)
    port = runner.addresses[0][1]
    yield f"http://127.0.0.1:{port}/v1/models/buyers"
    asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(30)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def _post(url, document):
    request = urllib.request.Request(url, json.dumps(document).encode(),
                                     {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_served_probabilities_equal_predict(model_dir, server_url):
    records = json.loads(pd.read_csv(model_dir / "new.csv").iloc[:5].to_json(
        orient="records"))
    expected = pd.read_csv(model_dir / "preds.csv").iloc[:5] \
        if (model_dir / "preds.csv").exists() else None
    if expected is None:
        cli.main(["automl", "predict", "--model", str(model_dir / "model"), "--data",
                  str(model_dir / "new.csv"), "--output", str(model_dir / "preds.csv")])
        expected = pd.read_csv(model_dir / "preds.csv").iloc[:5]
    status, answer = _post(server_url + ":predict", {"instances": records})
    assert status == 200
    served = np.array([p["probabilities"] for p in answer["predictions"]])
    np.testing.assert_allclose(served, expected[["proba_no_buy", "proba_yes_buy"]],
                               rtol=1e-6)
    assert [p["classes"] for p in answer["predictions"]] == list(expected["prediction"])
    status, answer = _post(server_url + ":classify", {"examples": records})
    assert status == 200
    assert answer["results"][0][1][0] == "yes_buy"
    assert answer["results"][0][1][1] == pytest.approx(expected["proba_yes_buy"][0],
                                                       rel=1e-6)
    with urllib.request.urlopen(server_url, timeout=30) as response:
        status_json = json.loads(response.read())
    assert status_json["model_version_status"][0]["state"] == "AVAILABLE"


def test_bad_records_get_400_and_the_server_stays_up(model_dir, server_url):
    good = json.loads(pd.read_csv(model_dir / "new.csv").iloc[:1].to_json(orient="records"))
    bad = dict(good[0], age="forty")
    status, answer = _post(server_url + ":predict", {"instances": [good[0], bad]})
    assert status == 400
    assert answer == {"error": "column 'age', instance 1: 'forty' is not a number, but the "
                               "model reads 'age' as numbers; fix the value or leave it "
                               "empty (missing)"}
    missing = {k: v for k, v in good[0].items() if k != "income"}
    status, answer = _post(server_url + ":predict", {"instances": [missing]})
    assert status == 400 and "column 'income' is missing" in answer["error"]
    status, answer = _post(server_url + ":predict", {"instances": "nope"})
    assert status == 400 and "'instances' must be a non-empty list" in answer["error"]
    status, answer = _post(server_url + ":regress", {"examples": good})
    assert status == 400 and "this model classifies" in answer["error"]
    unseen = dict(good[0], city="atlantis")
    status, answer = _post(server_url + ":predict", {"instances": [unseen]})
    assert status == 200 and len(answer["predictions"]) == 1
    status, answer = _post(server_url + ":predict", {"instances": good})
    assert status == 200
