"""The error AutoML raises for data it cannot use: one line naming the column / row / line
and saying what to do (the CLI prints it as it is, without a traceback)."""

from __future__ import annotations


class DataError(ValueError):
    """The data given to AutoML (a table, a target, a record) cannot be used as it is."""
