"""The TF1-style example programs run unchanged from the command line."""

import json
import os

from tests.platform import helpers

EXAMPLES = os.path.join(helpers.ROOT, "examples")


def _script(name):
    return os.path.join(EXAMPLES, name)


def test_examples_run_and_document_their_flags(tmp_path):
    mlp_dir, best_dir = tmp_path / "mlp", tmp_path / "best"
    runs = [
        helpers.start([_script("train_mlp.py"), f"--train_dir={mlp_dir}", "--max_steps=30",
                       "--log_every=10", "--hidden_units=32"]),
        helpers.start([_script("csv_softmax_regression.py"), f"--data_dir={tmp_path / 'iris'}",
                       "--steps=60", "--output=memory://scaffold-example/predictions.csv"]),
        helpers.start([_script("keep_best_checkpoint.py"), f"--train_dir={best_dir}",
                       "--epochs=3", "--hidden=8,4"]),
    ]
    (rc1, out1, err1), (rc2, out2, err2), (rc3, out3, err3) = map(helpers.finish, runs)

    assert rc1 == 0, err1
    accuracy = float(out1.splitlines()[0].split(": ")[1])
    assert 0.3 < accuracy <= 1.0  # 30 steps of a 10-class MLP: well above chance
    assert "model.ckpt-30.index" in out1 and (mlp_dir / "checkpoint").exists()
    assert "train_mlp.py:" in err1 and "step 30: loss = " in err1  # tf.logging at INFO

    assert rc2 == 0, err2
    assert "final loss: " in out2 and "-> memory://scaffold-example/predictions.csv" in out2
    assert float(out2.split("test accuracy: ")[1].split()[0]) > 0.6
    with open(tmp_path / "iris" / "iris.csv") as f:
        lines = f.read().splitlines()
    assert lines[0].startswith("split,label,") and len(lines) == 151  # header + 150 rows

    assert rc3 == 0, err3
    summary = json.loads((best_dir / "summary.json").read_text())
    assert len(summary["history"]) == 3
    best = max(summary["history"], key=lambda h: h["accuracy"])
    assert summary["best"]["accuracy"] == best["accuracy"]
    kept = sorted(os.listdir(best_dir / "best"))
    assert kept == [f"model.ckpt-{summary['best']['epoch']}.{ext}"
                    for ext in ("data-00000-of-00001", "index", "meta")]

    helps = [helpers.start([_script(name), "--help"])
             for name in ("train_mlp.py", "csv_softmax_regression.py", "keep_best_checkpoint.py")]
    flags_expected = (["--train_dir: Where checkpoints are written.", "--max_steps"],
                      ["--data_dir", "--standardize: <yes|no>"],
                      ["--hidden: Hidden layer sizes", "--epochs"])
    for proc, expected in zip(helps, flags_expected):
        rc, out, _ = helpers.finish(proc)
        assert rc == 1 and "Try --helpfull" in out  # absl's --help exit status
        for text in expected:
            assert text in out
