"""The live leaderboard: one line per model as it finishes (model, validation score, fit
time, best so far), then the final table, printed with rich."""

from __future__ import annotations

import sys


class LiveLeaderboard:
    def __init__(self, metric, higher_is_better, verbose=True, file=None):
        self.metric = metric
        self.higher = higher_is_better
        self.verbose = verbose
        self.best = None
        self._console = None
        if verbose:
            from rich.console import Console
            self._console = Console(file=file or sys.stderr, highlight=False)

    def _print(self, text):
        if self._console is not None:
            self._console.print(text)

    def start(self, rows, columns, task, folds, time_limit):
        how = f"{folds}-fold out-of-fold" if folds > 1 else "validation"
        self._print(f"[bold]automl[/bold]: {task}, {rows} rows x {columns} feature columns; "
                    f"{how} {self.metric}; time limit {time_limit:.0f} s")
        self._print(f"  {'model':<22} {'val ' + self.metric:>14} {'fit s':>8}  best")

    def model_done(self, name, score, fit_time):
        better = self.best is None or (score > self.best[1] if self.higher
                                       else score < self.best[1])
        if better:
            self.best = (name, score)
        mark = "  *" if better else ""
        self._print(f"  {name:<22} {score:>14.5f} {fit_time:>8.1f}{mark}")

    def skipped(self, name, reason):
        self._print(f"  [dim]{name:<22} skipped: {reason}[/dim]")

    def final(self, table):
        if self._console is None:
            return
        from rich.table import Table
        view = Table(title=f"leaderboard ({self.metric})")
        for column in table.columns:
            view.add_column(str(column), justify="left" if column == "model" else "right")
        for row in table.itertuples(index=False):
            view.add_row(*[f"{v:.5g}" if isinstance(v, float) else str(v) for v in row])
        self._console.print(view)
