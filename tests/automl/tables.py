"""Small tables for the automl tests: the UCI copies shipped with tensorflux, and a
mixed-type table generated from a known rule."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

import tensorflux.datasets

_DATA = os.path.join(os.path.dirname(tensorflux.datasets.__file__), "data")


def uci(name, target="label"):
    with open(os.path.join(_DATA, f"{name}.csv")) as f:
        lines = f.read().splitlines()
    head = lines[0].split(",")
    n, d, classes = int(head[0]), int(head[1]), head[2:]
    rows = np.array([line.split(",") for line in lines[1:n + 1]], dtype=float)
    frame = pd.DataFrame(rows[:, :d], columns=[f"x{i}" for i in range(d)])
    frame[target] = [classes[int(i)] for i in rows[:, d]]
    return frame


def mixed(n=400, seed=0):
    """Numbers with missing values, a category, a boolean, a date, an id; the target
    depends on the number, the category and the boolean."""
    rng = np.random.default_rng(seed)
    age = rng.uniform(18, 80, n).round()
    city = rng.choice(["paris", "lyon", "nice", "rare_a"], n, p=[0.5, 0.3, 0.19, 0.01])
    member = rng.choice(["yes", "no"], n)
    income = np.exp(rng.normal(10, 1, n))  # skewed
    score = (age - 50) / 10 + (city == "paris") * 1.5 - (member == "no") * 1.0 \
        + rng.normal(0, 0.5, n)
    frame = pd.DataFrame({
        "id": np.arange(1000, 1000 + n), "age": age, "city": city, "member": member,
        "income": income,
        "joined": pd.date_range("2020-01-01", periods=n, freq="D").strftime("%Y-%m-%d"),
        "bought": np.where(score > 0, "yes_buy", "no_buy")})
    frame.loc[rng.choice(n, n // 20, replace=False), "age"] = np.nan
    return frame
