"""`tensorflux place`: bad options are one-line usage errors, before any model is built
(the placement itself is covered by tests/placement and benchmarks/placement.py)."""

import pytest

from tensorflux import cli


@pytest.mark.parametrize("argv, message", [
    (["--devices", "0"], "--devices: expected a positive number of devices, got 0"),
    (["--model", "vgg"], "--model: expected one of lstm4, resnet20, got 'vgg'"),
    (["--reward", "guess"], "argument --reward: invalid choice: 'guess'"),
])
def test_bad_place_options_are_one_line_errors(capsys, tmp_path, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["place", "--output", str(tmp_path), *argv])
    lines = capsys.readouterr().err.strip().splitlines()
    assert exit_info.value.code == 2
    assert message in lines[-1], lines
