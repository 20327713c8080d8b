"""AutoML on tables: `automl.fit(table, target=...)` infers column types, preprocesses,
searches LightGBM and tensorflux networks within a time limit and ensembles them.

    from tensorflux import automl
    predictor = automl.fit("train.csv", target="income", time_limit=120)
    predictor.predict("new.csv"); predictor.leaderboard(); predictor.save("model")
    automl.load("model").predict_proba(frame)

See docs/architecture.md, "AutoML", and `tensorflux automl --help`.
"""

from tensorflux._src.automl.errors import DataError
from tensorflux._src.automl.predictor import Predictor, fit, load

__all__ = ["DataError", "Predictor", "fit", "load"]
