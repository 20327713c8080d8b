"""`tensorflux train --teacher RUN_DIR`: a student trained on a trained run's soft targets."""

import json
import re

import pytest

from tensorflux import cli

TEST_ACCURACY = re.compile(r"Test accuracy: ([\d.]+)%")
FAST = ["--epochs", "1", "--batch-size", "256"]


def one_line_error(capsys, *argv):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(list(argv))
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return exit_info.value.code, lines[0]


@pytest.fixture(scope="module")
def teacher(tmp_path_factory):
    """An MLP trained 6 epochs on the digits (about 93% test accuracy)."""
    root = tmp_path_factory.mktemp("teacher")
    cli.main(["train", "--model", "mlp", "--epochs", "6", "--logdir", str(root / "t")])
    return str(root / "t")


def test_student_trains_on_the_teacher_and_its_run_is_a_plain_run(teacher, tmp_path,
                                                                    monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    cli.main(["train", "--model", "linear", *FAST, "--teacher", teacher,
              "--temperature", "2", "--soft-weight", "0.5", "--logdir", "s"])
    out = capsys.readouterr().out
    assert f"Distilling from the teacher mlp in {teacher} (temperature 2, soft weight 0.5)" \
        in out
    config = json.loads((tmp_path / "s" / "run.json").read_text())
    assert (config["teacher"], config["temperature"], config["soft_weight"]) == (teacher,
                                                                                 2.0, 0.5)
    trained = TEST_ACCURACY.search(out).group(1)
    # The checkpoint is the plain model's: eval restores it as it would any run.
    cli.main(["eval", "--logdir", "s"])
    assert TEST_ACCURACY.search(capsys.readouterr().out).group(1) == trained
    # A rerun resumes distilling with the stored options; the teacher cannot change.
    cli.main(["train", "--logdir", "s", "--epochs", "2"])
    assert "Distilling from the teacher mlp" in capsys.readouterr().out
    status, line = one_line_error(capsys, "train", "--logdir", "s", "--teacher", "other")
    assert status == 2 and f"this run was started with --teacher {teacher}" in line


def test_distilled_student_beats_the_same_student_on_labels_alone(teacher, tmp_path,
                                                                 monkeypatch, capsys):
    """A small, fast version of benchmarks/distillation.py: an MLP student, 2 epochs, one
    fixed seed, plainly and on the teacher's soft targets (T=4, soft weight 0.7).
    Measured: test cross-entropy 0.85 plain vs 0.69 distilled, accuracy 85.2% vs 86.1%."""
    monkeypatch.chdir(tmp_path)
    common = ["--model", "mlp", "--epochs", "2", "--seed", "1"]
    results = {}
    for name, extra in (("plain", []), ("distilled", ["--teacher", teacher, "--temperature",
                                                      "4", "--soft-weight", "0.7"])):
        cli.main(["train", *common, *extra, "--logdir", name])
        capsys.readouterr()
        results[name] = json.loads((tmp_path / name / "history.json").read_text())[-1]
        cli.main(["eval", "--logdir", name])
        out = capsys.readouterr().out
        results[name]["test_accuracy"] = float(TEST_ACCURACY.search(out).group(1))
        results[name]["test_loss"] = float(re.search(r"test\s+│\s+[\d,]+\s+│\s+([\d.]+)",
                                                      out).group(1))
    plain, distilled = results["plain"], results["distilled"]
    assert distilled["test_loss"] < plain["test_loss"] - 0.05, results
    assert distilled["test_accuracy"] >= plain["test_accuracy"], results


def test_plain_runs_store_no_distillation_options(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cli.main(["train", "--dataset", "iris", "--epochs", "1", "--logdir", "p"])
    config = json.loads((tmp_path / "p" / "run.json").read_text())
    assert not {"teacher", "temperature", "soft_weight"} & set(config)


@pytest.mark.parametrize("argv, message", [
    (["--temperature", "2"], "--temperature needs --teacher RUN_DIR"),
    (["--soft-weight", "0.5"], "--soft-weight needs --teacher RUN_DIR"),
    (["--teacher", "nowhere"], "--teacher nowhere is not a training run (no run.json)"),
    (["--teacher", "TEACHER", "--temperature", "0"], "--temperature must be positive, got 0.0"),
    (["--teacher", "TEACHER", "--soft-weight", "2"],
     "--soft-weight must be between 0 and 1, got 2.0"),
    (["--teacher", "TEACHER", "--dataset", "iris"],
     "was trained on digits, but the student trains on iris"),
    (["--teacher", "TEACHER", "--workers", "2"],
     "--teacher is not supported with parameter-server training"),
])
def test_bad_distillation_options_are_one_line_errors(teacher, tmp_path, monkeypatch, capsys,
                                                      argv, message):
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    argv = [teacher if a == "TEACHER" else a for a in argv]
    status, line = one_line_error(capsys, "train", "--logdir", "x", *argv)
    assert status == 2
    assert line.startswith("tensorflux: error: ") and message in line, line


def test_train_examples_keeps_the_first_rows_of_the_seeds_training_split(
        teacher, tmp_path, monkeypatch, capsys):
    """--train-examples N trains (and distills) on N rows: the first N of the training
    split in the seed's shuffled order, the rows a full run of that seed starts with;
    validation and test stay whole. The digits: 1,797 images, 359 test, 10% of the
    other 1,438 held out for validation (144), 1,294 train."""
    from tensorflux._src.cli import data_source
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    cli.main(["train", "--model", "linear", *FAST, "--train-examples", "130", "--seed", "3",
              "--teacher", teacher, "--logdir", "sub"])
    out = capsys.readouterr().out
    assert "(130 train / 144 validation / 359 test" in out
    assert json.loads((tmp_path / "sub" / "run.json").read_text())["train_examples"] == 130
    full = data_source.load("digits", seed=3)
    subset = data_source.first_train_examples(full, 130)
    assert len(full.train) == 1294
    assert (subset.train.x == full.train.x[:130]).all()
    assert (subset.train.y == full.train.y[:130]).all()
    status, line = one_line_error(capsys, "train", "--logdir", "sub", "--train-examples", "50")
    assert status == 2 and "this run was started with --train-examples 130" in line
    status, line = one_line_error(capsys, "train", "--logdir", "y", "--train-examples", "0")
    assert status == 2 and "--train-examples: expected a count from 1 to 1294" in line
