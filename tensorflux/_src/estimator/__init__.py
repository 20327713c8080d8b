"""tf.estimator's core: Estimator, EstimatorSpec, RunConfig, train_and_evaluate, export.

A library over train/ (MonitoredTrainingSession, hooks, Saver), summary/, data/ and
serving/ (SavedModelBuilder); see docs/architecture.md, "Estimators"."""
