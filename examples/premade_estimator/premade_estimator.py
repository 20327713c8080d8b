"""TF1's premade-estimator tutorial: a DNNClassifier on iris with feature columns,
trained, evaluated, asked for predictions and exported as a SavedModel that
`tensorflux serve --model_base_path <export_dir>` serves.

    python examples/premade_estimator/premade_estimator.py --export_dir /tmp/iris_export
"""

import argparse

import iris_data

import tensorflux as tf

parser = argparse.ArgumentParser()
parser.add_argument("--batch_size", default=100, type=int, help="batch size")
parser.add_argument("--train_steps", default=1000, type=int, help="number of training steps")
parser.add_argument("--model_dir", default=None, help="checkpoints (default: a temp dir)")
parser.add_argument("--export_dir", default=None, help="SavedModel base directory")


def main(argv):
    args = parser.parse_args(argv[1:])
    (train_x, train_y), (test_x, test_y) = iris_data.load_data()

    my_feature_columns = []
    for key in train_x.keys():
        my_feature_columns.append(tf.feature_column.numeric_column(key=key))

    # Two hidden layers of 10 nodes each; the model must choose between 3 classes.
    classifier = tf.estimator.DNNClassifier(
        feature_columns=my_feature_columns, hidden_units=[10, 10], n_classes=3,
        model_dir=args.model_dir)

    classifier.train(
        input_fn=lambda: iris_data.train_input_fn(train_x, train_y, args.batch_size),
        steps=args.train_steps)

    eval_result = classifier.evaluate(
        input_fn=lambda: iris_data.eval_input_fn(test_x, test_y, args.batch_size))
    print("\nTest set accuracy: {accuracy:0.3f}\n".format(**eval_result))

    expected = ["Setosa", "Versicolor", "Virginica"]
    predict_x = {
        "SepalLength": [5.1, 5.9, 6.9],
        "SepalWidth": [3.3, 3.0, 3.1],
        "PetalLength": [1.7, 4.2, 5.4],
        "PetalWidth": [0.5, 1.5, 2.1],
    }
    predictions = classifier.predict(
        input_fn=lambda: iris_data.eval_input_fn(predict_x, labels=None,
                                                 batch_size=args.batch_size))
    template = '\nPrediction is "{}" ({:.1f}%), expected "{}"'
    for pred_dict, expec in zip(predictions, expected):
        class_id = pred_dict["class_ids"][0]
        probability = pred_dict["probabilities"][class_id]
        print(template.format(iris_data.SPECIES[class_id], 100 * probability, expec))

    if args.export_dir:
        # Serialized tf.Example protos in: the classification and predict signatures
        # that TF Serving's REST API (:classify, :predict) calls.
        spec = tf.feature_column.make_parse_example_spec(my_feature_columns)
        receiver_fn = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
        path = classifier.export_saved_model(args.export_dir, receiver_fn)
        print("Exported to", path.decode())


if __name__ == "__main__":
    tf.logging.set_verbosity(tf.logging.INFO)
    tf.app.run(main)
