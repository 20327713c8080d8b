"""URL-state validation: defaults, coercion, and a note for each unusable value."""

from tensorflux._src.playground import config


def test_defaults_are_the_original_playgrounds():
    cfg, notes = config.validate({})
    assert notes == []
    assert cfg["dataset"] == "circle" and cfg["networkShape"] == [4, 2]
    assert cfg["learningRate"] == 0.03 and cfg["activation"] == "tanh"
    assert cfg["x"] and cfg["y"] and not cfg["xSquared"]


def test_strings_from_the_url_are_parsed():
    cfg, notes = config.validate({"dataset": "spiral", "networkShape": "8,8,8,8,8,8",
                                  "learningRate": "0.3", "noise": "25", "sinX": "true",
                                  "x": "false", "batchSize": "30", "regularization": "L2",
                                  "regularizationRate": "0.001", "problem": "regression",
                                  "regDataset": "multigauss"})
    assert notes == []
    assert cfg["networkShape"] == [8] * 6 and cfg["learningRate"] == 0.3
    assert cfg["noise"] == 25 and cfg["sinX"] is True and cfg["x"] is False
    assert config.dataset_name(cfg) == "multigauss"
    assert config.features(cfg) == ["y", "sinX"]


def test_impossible_values_fall_back_with_notes():
    cfg, notes = config.validate({"networkShape": "9,3,0", "learningRate": "banana",
                                  "noise": "7", "dataset": "moons", "bogus": "1",
                                  "batchSize": "1e9", "x": "maybe"})
    assert cfg["networkShape"] == [4, 2] and cfg["learningRate"] == 0.03
    assert cfg["noise"] == 0 and cfg["dataset"] == "circle" and cfg["batchSize"] == 10
    assert cfg["x"] is True
    text = "\n".join(notes)
    assert "networkShape: got '9,3,0', expected layer sizes from 1 to 8; using 4,2" in text
    assert ("learningRate: got 'banana', expected one of 1e-05, 0.0001, 0.001, 0.003, 0.01, "
            "0.03, 0.1, 0.3, 1, 3, 10; using 0.03") in text
    assert "noise: got '7', expected an integer from 0 to 50 in steps of 5" in text
    assert "dataset: got 'moons', expected one of circle, xor, gauss, spiral" in text
    assert "ignored unknown setting 'bogus'" in text
    assert len(notes) == 7


def test_non_numbers_and_infinities_are_notes_not_crashes():
    cfg, notes = config.validate({"noise": "abc", "seed": "inf", "batchSize": "nan",
                                  "networkShape": "2,,x", "percTrainData": ["50"]})
    assert cfg["noise"] == 0 and cfg["seed"] == 1 and cfg["batchSize"] == 10
    assert cfg["networkShape"] == [4, 2] and cfg["percTrainData"] == 50
    assert len(notes) == 5 and all("expected" in n for n in notes), notes
    assert "noise: got 'abc', expected a number; using 0" in notes


def test_too_many_layers_and_no_features():
    cfg, notes = config.validate({"networkShape": "1,2,3,4,5,6,7", "x": "false", "y": "0"})
    assert cfg["networkShape"] == [4, 2] and cfg["x"] and cfg["y"]
    assert any("at most 6" in n for n in notes)
    assert any("no input feature" in n for n in notes)
    cfg, notes = config.validate({"networkShape": ""})
    assert cfg["networkShape"] == [] and notes == []


def test_query_round_trips():
    cfg, _ = config.validate({"dataset": "xor", "networkShape": "3", "learningRate": "1"})
    raw = dict(part.split("=", 1) for part in config.to_query(cfg).split("&"))
    again, notes = config.validate(raw)
    assert notes == [] and again == cfg
