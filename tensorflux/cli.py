"""The `tensorflux` command: `tensorflux train`, `eval`, `bench`, `export` and `serve`.

    tensorflux train                      # LeNet-style CNN on the built-in digits
    tensorflux train --dataset iris       # an MLP on a built-in table
    tensorflux train --dataset ~/mnist    # a directory of MNIST IDX or CIFAR-10 files
    tensorflux train --model resnet20 --logdir runs/teacher
    tensorflux train --teacher runs/teacher --logdir runs/student   # distill into lenet
    tensorflux eval --logdir runs/lenet-digits
    tensorflux bench --model resnet50 --batch-sizes 8,16 --image-size 64 --compare
    tensorflux export --logdir runs/lenet-digits --export_dir exports/digits
    tensorflux place --model lstm4 --devices 4 --measure
    tensorflux serve --model_name digits --model_base_path exports/digits --port 8501
    tensorflux playground --port 8080     # TensorFlow Playground, trained by a Session
    tensorflux automl train --data adult.csv --target income --output runs/adult
    tensorflux automl predict --model runs/adult --data new.csv --output predictions.csv
    tensorflux automl serve --model runs/adult --port 8501

Mistakes (bad options, missing files, a run directory of another model) are reported as
one line on stderr with exit status 2; nothing is printed as a traceback.
"""

from __future__ import annotations

import argparse
import sys

DESCRIPTION = "tensorflux: TensorFlow 1.x graphs and Sessions, compiled to XLA."
DATASETS_HELP = ("a built-in dataset (digits, iris, wine, breast_cancer) or a directory of "
                 "MNIST IDX files or CIFAR-10 batches (default: digits)")


def _parser():
    parser = argparse.ArgumentParser(prog="tensorflux", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    train = commands.add_parser(
        "train", help="train a classifier; rerunning resumes from its checkpoint",
        description="Train a classifier with per-epoch validation, checkpoints, "
                    "TensorBoard logs and a learning-curve plot under --logdir. Running "
                    "the same command again resumes from the latest checkpoint.")
    train.add_argument("--model", help="auto (lenet for images, mlp for tables), lenet, "
                                       "mlp, linear, or a model-zoo image classifier "
                                       "such as resnet20 (default: auto)")
    train.add_argument("--dataset", help=DATASETS_HELP)
    train.add_argument("--epochs", type=int, help="total epochs to train (default: 25)")
    train.add_argument("--batch-size", type=int, help="examples per step (default: 64)")
    train.add_argument("--lr", type=float,
                       help="initial learning rate, decayed by a cosine (default: 0.003)")
    train.add_argument("--optimizer", help="adam, sgd, momentum, rmsprop or adagrad "
                                           "(default: adam)")
    train.add_argument("--logdir", help="the run directory (default: runs/<model>-<dataset>)")
    train.add_argument("--seed", type=int, help="graph-level random seed (default: 0)")
    train.add_argument("--train-examples", type=int, metavar="N",
                       help="train on the first N rows of the (seed-shuffled) training "
                            "split only (default: all)")
    train.add_argument("--teacher", metavar="RUN_DIR",
                       help="distill: train on the soft targets of this trained run's "
                            "model (same dataset) as well as the labels")
    train.add_argument("--temperature", type=float, metavar="T",
                       help="with --teacher: softmax temperature of the soft targets "
                            "(default: 2)")
    train.add_argument("--soft-weight", type=float, metavar="W",
                       help="with --teacher: weight of the T^2-scaled soft-target term; "
                            "the labels' cross-entropy gets 1 - W (default: 0.5)")
    train.add_argument("--workers", type=int, metavar="N",
                       help="parameter-server training on Ray with N worker tasks "
                            "(default: train in this process)")
    train.add_argument("--ps", type=int, metavar="M",
                       help="ps tasks holding the variables, with --workers (default: 1)")
    train.add_argument("--sync", action="store_true", default=None,
                       help="synchronous SGD (SyncReplicasOptimizer) with --workers "
                            "(default: asynchronous)")
    train.add_argument("--backup-workers", type=int, metavar="B",
                       help="with --sync: workers whose gradients a step does not wait "
                            "for (default: 0)")
    train.add_argument("--address",
                       help="join this Ray cluster (10.0.0.1:6379, ray://head:10001, auto) "
                            "instead of starting a local Ray instance")

    evaluate = commands.add_parser(
        "eval", help="evaluate a training run's checkpoint",
        description="Evaluate the latest (or a given) checkpoint of a training run.")
    evaluate.add_argument("--logdir", help="the run directory (default: runs/lenet-digits)")
    evaluate.add_argument("--checkpoint", help="a checkpoint prefix such as "
                                               "runs/lenet-digits/model.ckpt-575 "
                                               "(default: the run's latest)")
    evaluate.add_argument("--dataset", help="evaluate on other data of the same shape")
    evaluate.add_argument("--split", default="test",
                          help="train, validation, test or all (default: test)")

    bench = commands.add_parser(
        "bench", help="time a zoo model's training step (images/sec or tokens/sec)",
        description="Time a zoo image classifier's training step (forward, cross-entropy, "
                    "Momentum) or a Transformer's (the zoo's model_fn: dropout, "
                    "cross-entropy, Adam) on synthetic data per batch size and precision; "
                    "write bench.json and bench.png under --output.")
    bench.add_argument("--model", help="an image classifier or a Transformer from "
                                       "tensorflux.models (default: resnet50)")
    bench.add_argument("--batch-sizes", help="comma-separated batch sizes (default: 32,64)")
    bench.add_argument("--precision", help="float32, bfloat16 (mixed: float32 weights, "
                                           "bfloat16 compute) or both (default: float32)")
    bench.add_argument("--warmup", type=int, help="untimed steps first (default: 12)")
    bench.add_argument("--steps", type=int, help="steps per timed window (default: 10)")
    bench.add_argument("--windows", type=int,
                       help="timed windows; the median is reported (default: 3)")
    bench.add_argument("--image-size", type=int,
                       help="square input size (default: the model's, e.g. 224)")
    bench.add_argument("--seq-len", type=int,
                       help="tokens per sequence of a Transformer (default: the model's "
                            "max_length, e.g. 1024 for transformer_lm)")
    bench.add_argument("--real-data", action="store_true", default=None,
                       help="also time a tf.data pipeline over the built-in digits")
    bench.add_argument("--price-per-hour", type=float,
                       help="machine price, to report the cost per million images "
                            "(or tokens)")
    bench.add_argument("--time-to-accuracy", type=float, metavar="TARGET",
                       help="also train on the digits (32x32x3) until this test accuracy")
    bench.add_argument("--max-epochs", type=int,
                       help="epochs allowed for --time-to-accuracy (default: 10)")
    bench.add_argument("--compare", action="store_true", default=None,
                       help="also time the same model written directly in JAX, and in "
                            "PyTorch and TensorFlow when they are installed")
    bench.add_argument("--cold-warm", dest="cold_warm", action="store_true", default=None,
                       help="also time the first step (initializers included) in two fresh "
                            "processes sharing an empty compilation cache: cold, then warm "
                            "(image classifiers)")
    bench.add_argument("--output", help="where bench.json and bench.png go "
                                        "(default: runs/bench-<model>)")

    export = commands.add_parser(
        "export", help="export a training run's latest checkpoint as a SavedModel",
        description="Export the latest checkpoint of a training run as a SavedModel "
                    "(predict and classify signatures) into DIR/VERSION, the layout "
                    "TensorFlow Serving and `tensorflux serve` load.")
    export.add_argument("--logdir", required=True, help="the training run directory")
    export.add_argument("--export_dir", "--export-dir", dest="export_dir", required=True,
                        help="the model's base directory; versions go in subdirectories")
    export.add_argument("--version", dest="export_version", type=int, metavar="N",
                        help="the version number (default: the checkpoint's global step)")

    serve = commands.add_parser(
        "serve", help="serve exported models over TensorFlow Serving's REST API",
        description="Serve SavedModel versions (integer subdirectories of the base path) "
                    "over TensorFlow Serving's REST API (/v1/models/NAME:predict, "
                    ":classify, :regress, status and metadata), with "
                    "tensorflow_model_server's flags. New versions are loaded as they "
                    "appear. There is no gRPC endpoint.")
    serve.add_argument("--model_name", help="the model's name in URLs (default: default)")
    serve.add_argument("--model_base_path", help="directory of the model's version "
                                                 "subdirectories (1/, 2/, ...)")
    serve.add_argument("--port", type=int, help="port of the REST API when "
                                                "--rest_api_port is not set (default: 8500)")
    serve.add_argument("--rest_api_port", type=int,
                       help="port of the REST API (0 or unset: use --port)")
    serve.add_argument("--model_config_file", help="a ModelServerConfig text proto "
                                                   "(model_config_list) to serve many models")
    serve.add_argument("--enable_batching", nargs="?", const=True, default=False,
                       type=_flag_bool, metavar="BOOL",
                       help="merge concurrent requests into batched runs")
    serve.add_argument("--batching_parameters_file",
                       help="BatchingParameters text proto (or JSON): max_batch_size, "
                            "batch_timeout_micros, max_enqueued_batches, "
                            "num_batch_threads, allowed_batch_sizes")
    serve.add_argument("--model_version_policy",
                       help="latest, latest:N, all or specific:1,2 (default: latest)")
    serve.add_argument("--file_system_poll_wait_seconds", type=float,
                       help="seconds between scans for new versions; 0 scans once "
                            "(default: 1)")
    serve.add_argument("--rest_api_num_threads", type=int,
                       help="threads running unbatched requests (default: 4 per CPU)")
    serve.add_argument("--host", help="address to listen on (default: 0.0.0.0)")
    serve.add_argument("--max_request_bytes", type=int,
                       help="largest request body accepted (default: 64 MiB)")
    place = commands.add_parser(
        "place", help="place a model's training step over devices (learned and baselines)",
        description="Search an op-to-device placement of a model's training step with a "
                    "REINFORCE-trained grouper + placer against a cost model of simulated "
                    "devices; print the predicted step time of it and of the baselines "
                    "(single device, default placer, greedy, hand), and draw the graph "
                    "coloured by device and the learning curve under --output.")
    place.add_argument("--model", help="lstm4 (4-layer LSTM LM) or resnet20 (default: lstm4)")
    place.add_argument("--devices", type=int, help="simulated devices (default: 4)")
    place.add_argument("--updates", type=int, help="policy updates (default: 150)")
    place.add_argument("--groups", type=int, help="the grouper's groups (default: 8)")
    place.add_argument("--reward", choices=("model", "measured"),
                       help="train the policy on the cost model's step times (model, the "
                            "default) or on steps measured on as many forced host CPU "
                            "devices (measured: a compile per new placement; slow)")
    place.add_argument("--seed", type=int, help="policy seed (default: 0)")
    place.add_argument("--measure", action="store_true", default=None,
                       help="also time each placement on as many forced host CPU devices "
                            "(a subprocess with XLA_FLAGS)")
    place.add_argument("--output", help="where placement.png, learning_curve.png and "
                                        "placement.json go (default: runs/place-<model>)")
    playground = commands.add_parser(
        "playground", help="TensorFlow Playground in the browser, trained by a Session",
        description="Serve TensorFlow Playground's page on a local port: small networks "
                    "on 2-D data sets, trained live by a tensorflux Session; the page "
                    "shows the dataflow graph and exports the network as a SavedModel "
                    "and a TF1 program.")
    playground.add_argument("--port", type=int, default=8080,
                            help="port to listen on (default: 8080; 0 picks a free one)")
    playground.add_argument("--host", default="127.0.0.1",
                            help="address to listen on (default: 127.0.0.1)")
    playground.add_argument("--export-dir", "--export_dir", dest="export_dir",
                            default="playground-exports",
                            help="where the export button writes SavedModel versions and "
                                 "programs (default: playground-exports)")
    _automl_parser(commands)
    return parser


def _automl_parser(commands):
    automl = commands.add_parser(
        "automl", help="AutoML on a table: train, predict, serve",
        description="Train a model on a CSV/TSV/Parquet table with no ML choices to make "
                    "(column types, preprocessing, LightGBM and tensorflux networks searched "
                    "within a time limit, ensembled), predict in batch, or serve it over "
                    "TensorFlow Serving's REST API with raw records.")
    actions = automl.add_subparsers(dest="action", metavar="ACTION", required=True)
    train = actions.add_parser(
        "train", help="search, ensemble, evaluate on held-out rows, save and report",
        description="Hold out 20%% of the rows (stratified) unless --validation is given, "
                    "search models within --time-limit, save the model and write "
                    "report.html under --output.")
    train.add_argument("--data", required=True, help="the table (.csv, .tsv, .parquet)")
    train.add_argument("--target", required=True, help="the column to predict")
    train.add_argument("--time-limit", dest="time_limit", type=float, metavar="S",
                       help="seconds for the whole search (default: 300)")
    train.add_argument("--metric", help="roc_auc, log_loss, accuracy, balanced_accuracy, "
                                        "f1, rmse, mae or r2 (default: roc_auc for binary, "
                                        "log_loss for multiclass, rmse for regression)")
    train.add_argument("--task", help="binary, multiclass or regression (default: guessed "
                                      "from the target)")
    train.add_argument("--validation", help="a table to validate and evaluate on instead "
                                            "of held-out rows")
    train.add_argument("--output", help="the model directory (default: runs/automl-<data>)")
    train.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    predict = actions.add_parser("predict", help="batch predictions as CSV",
                                 description="Write a CSV with the prediction and one "
                                             "probability column per class (proba_<label>).")
    predict.add_argument("--model", required=True, help="the trained model directory")
    predict.add_argument("--data", required=True, help="the table to predict")
    predict.add_argument("--output", help="the CSV to write (default: standard output)")
    serve = actions.add_parser(
        "serve", help="serve the model over TensorFlow Serving's REST API",
        description="Serve the model as /v1/models/NAME (:predict with instances, "
                    ":classify / :regress with examples), raw records in, preprocessing "
                    "inside the server.")
    serve.add_argument("--model", required=True, help="the trained model directory")
    serve.add_argument("--port", type=int, help="port to listen on (default: 8501)")
    serve.add_argument("--host", help="address to listen on (default: 0.0.0.0)")
    serve.add_argument("--model_name", "--model-name", dest="model_name",
                       help="the model's name in URLs (default: default)")


def _flag_bool(text):
    value = text.strip().lower()
    if value in ("1", "true", "yes"):
        return True
    if value in ("0", "false", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def _version():
    from importlib import metadata
    try:
        return metadata.version("tensorflux")
    except metadata.PackageNotFoundError:
        return "unknown"


def main(argv=None):
    args = _parser().parse_args(argv)
    options = {k: v for k, v in vars(args).items() if k != "command"}
    try:
        # Imported here so that `--help` does not load the jobs (rich, matplotlib, models).
        from tensorflux._src.cli import eval_job, train_job
        if args.command == "train":
            train_job.train(**options)
        elif args.command == "export":
            from tensorflux._src.cli import export_job
            path = export_job.export_run(options["logdir"], options["export_dir"],
                                         options["export_version"])
            print(f"exported {path}")
        elif args.command == "bench":
            from tensorflux._src.cli import bench_job
            bench_job.bench(**options)
        elif args.command == "place":
            from tensorflux._src.cli import place_job
            place_job.place(**options)
        elif args.command == "playground":
            from tensorflux._src.playground import server as playground_server
            try:
                playground_server.serve(**options)
            except ValueError as exc:
                from tensorflux._src.cli.errors import UsageError
                raise UsageError(str(exc)) from None
        elif args.command == "automl":
            from tensorflux._src.cli import automl_job
            automl_job.run(**options)
        elif args.command == "serve":
            from tensorflux._src.cli import serve_job
            serve_job.serve(**options)
        else:
            eval_job.evaluate(**options)
    except KeyboardInterrupt:
        _fail("interrupted; run the same command again to resume from the last checkpoint",
              130)
    except Exception as exc:  # noqa: BLE001 - every failure is reported as one line
        _fail(_one_line(exc), 2 if _is_usage_error(exc) else 1)
    return 0


def _is_usage_error(exc):
    from tensorflux._src.cli.errors import UsageError
    return isinstance(exc, (UsageError, FileNotFoundError, PermissionError))


def _one_line(exc):
    from tensorflux import errors
    from tensorflux._src.cli.errors import UsageError
    if isinstance(exc, errors.OpError):
        return f"{type(exc).__name__}: {exc.message.splitlines()[0]}"
    if isinstance(exc, OSError) and exc.filename:
        return f"{exc.filename}: {exc.strerror}"
    message = str(exc).splitlines()[0] if str(exc) else ""
    return message if isinstance(exc, UsageError) else f"{type(exc).__name__}: {message}"


def _fail(message, status):
    print(f"tensorflux: error: {message}", file=sys.stderr)
    sys.exit(status)


if __name__ == "__main__":
    main()
