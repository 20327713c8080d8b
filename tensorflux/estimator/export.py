"""`tf.estimator.export`: serving input receivers, export outputs and exporters."""

from tensorflux._src.estimator.export import (  # noqa: F401
    BestExporter, ClassificationOutput, Exporter, ExportOutput, FinalExporter,
    LatestExporter, PredictOutput, RegressionOutput, ServingInputReceiver,
    TensorServingInputReceiver, build_parsing_serving_input_receiver_fn,
    build_raw_serving_input_receiver_fn,
)
