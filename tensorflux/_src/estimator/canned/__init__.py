"""TF 1.15's canned estimators (v1 classes): heads plus Linear, DNN, DNN+Linear and
Baseline model_fns built from feature columns, tf.layers-style variables and tf.metrics."""
