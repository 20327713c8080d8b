"""The playground's graph and Session against a NumPy network (numpy_net.py)."""

import copy
import runpy
import sys

import numpy as np
import pytest

from tensorflux._src.playground import config, network
from tests.playground import numpy_net


def _net(**settings):
    cfg, notes = config.validate({k: str(v) for k, v in settings.items()})
    assert notes == []
    return network.Network(cfg)


@pytest.fixture(scope="module")
def small():
    net = _net(dataset="xor", networkShape="3,2", xTimesY="true", sinY="true",
               activation="tanh", regularization="L2", noise=10)
    yield net
    net.close()


def test_heatmaps_and_losses_match_numpy(small):
    snap = small.snapshot()
    params = [(w.astype(np.float64), b.astype(np.float64)) for w, b in snap["params"]]
    names = ["x", "y", "xTimesY", "sinY"]
    grid = network.grid_points()
    assert grid[0].tolist() == [-6, 6] and grid[-1].tolist() == [6, -6]
    nodes = numpy_net.forward(grid, names, params, "tanh", "classification")
    expected = np.concatenate(nodes, 1).T
    assert snap["maps"].shape == (4 + 3 + 2 + 1, 2500)
    np.testing.assert_allclose(snap["maps"], expected, rtol=1e-4, atol=1e-5)
    out = numpy_net.forward(small.train_x, names, params, "tanh", "classification")[-1]
    np.testing.assert_allclose(snap["trainLoss"],
                               np.mean(0.5 * (out[:, 0] - small.train_y) ** 2), rtol=1e-5)
    out = numpy_net.forward(small.test_x, names, params, "tanh", "classification")[-1]
    np.testing.assert_allclose(snap["testLoss"],
                               np.mean(0.5 * (out[:, 0] - small.test_y) ** 2), rtol=1e-5)


def test_initial_weights_follow_the_original(small):
    small.reset()
    params = small.snapshot()["params"]
    assert [w.shape for w, _ in params] == [(4, 3), (3, 2), (2, 1)]
    assert all((np.abs(w) <= 0.5).all() for w, _ in params)
    assert all(np.allclose(b, 0.1) for _, b in params)


def test_one_epoch_is_minibatch_sgd_with_l2(small):
    small.reset()
    start = [(w.astype(np.float64), b.astype(np.float64))
             for w, b in small.snapshot()["params"]]
    rng = copy.deepcopy(small._rng)
    small.train(0.3, 0.01)
    order = rng.permutation(len(small.train_y))
    params = start
    for batch in order.reshape(-1, 10):
        params = numpy_net.sgd_step(small.train_x[batch], small.train_y[batch],
                                    ["x", "y", "xTimesY", "sinY"], params, "tanh",
                                    "classification", 0.3, "L2", 0.01)
    got = small.snapshot()
    assert got["epoch"] == 1
    for (w, b), (ew, eb) in zip(got["params"], params):
        np.testing.assert_allclose(w, ew, rtol=2e-4, atol=2e-5)
        np.testing.assert_allclose(b, eb, rtol=2e-4, atol=2e-5)


def test_set_weight(small):
    small.set_weight(1, 2, 0, 1.25)
    assert small.snapshot()["params"][1][0][2, 0] == 1.25
    with pytest.raises(ValueError, match=r"weight \[3, 0\] is outside layer 1's \[3, 2\]"):
        small.set_weight(1, 3, 0, 1.0)
    with pytest.raises(ValueError, match="layer must be in"):
        small.set_weight(5, 0, 0, 1.0)
    small.set_bias(2, 0, -0.25)
    assert small.snapshot()["params"][2][1].tolist() == [-0.25]
    with pytest.raises(ValueError, match="bias 2 is outside layer 1's 2"):
        small.set_bias(1, 2, 1.0)
    with pytest.raises(ValueError, match="bias value must be a finite number, got nan"):
        small.set_bias(0, 0, float("nan"))


def test_regression_output_is_linear():
    net = _net(problem="regression", regDataset="plane", networkShape="", percTrainData=90)
    try:
        (w, b), = net.snapshot()["params"]
        pts = np.array([[1.0, 2.0], [-3.0, 0.5]], np.float32)
        np.testing.assert_allclose(net.predict(pts)[:, 0], pts @ w[:, 0] + b[0], rtol=1e-5)
        for _ in range(60):
            net.train(0.03, 0.0)
        assert net.snapshot()["testLoss"] < 1e-3  # the plane is linear in x1 + x2
    finally:
        net.close()


def test_spiral_loss_falls_with_a_deep_net():
    net = _net(dataset="spiral", networkShape="8,8,8,8,8,8", xSquared="true",
               ySquared="true", xTimesY="true", sinX="true", sinY="true")
    try:
        first = net.snapshot()["testLoss"]
        for _ in range(150):
            net.train(0.03, 0.0)
        last = net.snapshot()
        # 0.5 at the start (outputs near 0, labels ±1); the deterministic run (seed 1)
        # reaches train 0.039, test 0.175 after 150 epochs
        assert first > 0.4 and last["trainLoss"] < 0.1, last["trainLoss"]
        assert last["testLoss"] < 0.4 * first, last["testLoss"]
    finally:
        net.close()


def test_export_serves_the_same_predictions_and_program(small, tmp_path, monkeypatch):
    import tensorflux
    from tensorflux._src.playground import program
    from tensorflux.serving import load_servable

    saved, path = small.export(str(tmp_path / "exports"))
    assert saved.endswith("/1") and path.endswith("model_1.py")
    points = np.array(program.SAMPLE_POINTS, np.float32)
    params = [(w.astype(np.float64), b.astype(np.float64))
              for w, b in small.snapshot()["params"]]
    expected = numpy_net.forward(points, ["x", "y", "xTimesY", "sinY"], params, "tanh",
                                 "classification")[-1]
    servable = load_servable(saved)
    got = servable.run("serving_default", {"inputs": points})["predictions"]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    assert small.export(str(tmp_path / "exports"))[0].endswith("/2")

    # The TF1 program runs unchanged with tensorflux standing in for tensorflow.
    monkeypatch.setitem(sys.modules, "tensorflow", tensorflux)
    monkeypatch.setattr(sys, "argv", [path])
    lines = []
    monkeypatch.setattr("builtins.print", lambda *a, **k: lines.append(" ".join(map(str, a))))
    with tensorflux.Graph().as_default():
        runpy.run_path(path, run_name="__main__")
    values = [float(line.split("->")[1]) for line in lines]
    np.testing.assert_allclose(values, expected[:, 0], atol=2e-6)
