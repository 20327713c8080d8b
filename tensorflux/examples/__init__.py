"""`tensorflow.examples`: the tutorial helpers TF1 example programs import."""
