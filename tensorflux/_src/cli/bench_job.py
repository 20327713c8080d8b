"""`tensorflux bench`: training throughput of a zoo image classifier, per batch size and
precision, optionally against the same model written directly in JAX.

    tensorflux bench --model resnet50 --batch-sizes 8,16 --image-size 64 --compare

For each (precision, batch size) a fresh graph is built and timed: `--warmup` steps
(the first compiles), then `--windows` windows of `--steps` steps; the reported rate is
the median window's images/sec, with the slowest and fastest windows. Results go to
<output>/bench.json and bench.png, and a table is printed.
"""

from __future__ import annotations

import gc
import importlib.util
import os
import sys

from tensorflux._src.cli import bench_report, bench_step
from tensorflux._src.cli.errors import UsageError

# 12 warm-up steps: the first compiles, and on CPU the runtime's compiler-option
# autotuner times two executables for 10 steps before keeping one.
DEFAULTS = {"model": "resnet50", "batch_sizes": "32,64", "precision": "float32",
            "warmup": 12, "steps": 10, "windows": 3, "max_epochs": 10}
PRECISIONS = {"float32": ("float32",), "bfloat16": ("bfloat16",),
              "both": ("float32", "bfloat16")}
TIME_TO_ACCURACY_SIZE = 32  # CIFAR-sized: the digits are upscaled to 32x32x3


# -- options ------------------------------------------------------------------------------------
def parse_batch_sizes(text):
    """"8,16" -> [8, 16]; anything else is a one-line UsageError."""
    try:
        sizes = [int(part) for part in str(text).split(",") if part.strip()]
    except ValueError:
        sizes = []
    if not sizes or any(s < 1 for s in sizes):
        raise UsageError(f"--batch-sizes must be a comma-separated list of positive "
                         f"integers such as 8,16, got {text!r}")
    return sorted(set(sizes))


def _positive(name, value, minimum=1):
    if value is not None and value < minimum:
        raise UsageError(f"--{name.replace('_', '-')} must be at least {minimum}, "
                         f"got {value}")


def parse_target(value):
    """Test accuracy as a fraction; 90 and 0.9 both mean 90%."""
    if value is None:
        return None
    target = value / 100.0 if 1 < value <= 100 else value
    if not 0 < target <= 1:
        raise UsageError(f"--time-to-accuracy must be an accuracy such as 0.9 or 90, "
                         f"got {value}")
    return target


def find_classifier(name):
    """The zoo's ModelSpec of an image classifier, or a UsageError naming the choices."""
    from tensorflux import models
    from tensorflux.models import registry
    try:
        spec = models.get(name)
        known = models.names()
    except ModuleNotFoundError:
        # A family module the zoo lists is missing (a partial install): use what
        # registered itself instead of failing on every name.
        known = sorted(registry.specs())
        spec = registry.specs().get(name)
    except ValueError:
        spec, known = None, sorted(registry.specs())
    if spec is None:
        classifiers = [n for n in known if registry.specs()[n].kind == "image_classifier"]
        raise UsageError(f"--model {name!r} is unknown; choose an image classifier: "
                         f"{', '.join(classifiers)}")
    if spec.kind != "image_classifier":
        raise UsageError(f"--model {name!r} is a {spec.kind.replace('_', ' ')}; bench times "
                         f"image classifiers (resnet50, mobilenet_v2, ...)")
    return spec


def resolve_options(given):
    options = dict(DEFAULTS)
    options.update({k: v for k, v in given.items() if v is not None})
    options["batch_sizes"] = parse_batch_sizes(options["batch_sizes"])
    if options["precision"] not in PRECISIONS:
        raise UsageError(f"--precision must be float32, bfloat16 or both, "
                         f"got {options['precision']!r}")
    for name in ("warmup", "steps", "windows", "max_epochs"):
        _positive(name, options[name])
    _positive("image_size", options.get("image_size"), minimum=8)
    price = options.get("price_per_hour")
    if price is not None and not price > 0:
        raise UsageError(f"--price-per-hour must be positive, got {price}")
    options["time_to_accuracy"] = parse_target(options.get("time_to_accuracy"))
    return options


# -- the JAX peers -------------------------------------------------------------------------------
def load_jax_peers():
    """benchmarks/peers/jax_models.py from the source tree, or None when it is not there
    (an installed wheel carries no benchmarks)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    path = os.path.join(root, "benchmarks", "peers", "jax_models.py")
    if not os.path.exists(path):
        return None
    name = "tensorflux_bench_jax_peers"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while defining
        spec.loader.exec_module(module)
    return sys.modules[name]


def bench_jax_peer(peers, model, batch_size, image_size, num_classes, precision, timing):
    run = peers.image_classifier_step(model, batch_size, image_size, num_classes, precision)
    try:
        return bench_step.time_steps(run, batch_size, **timing)
    finally:
        del run
        gc.collect()  # drop the peer's buffers before the next configuration


def _device():
    import jax
    device = jax.devices()[0]
    kind = getattr(device, "device_kind", "")
    return device.platform if kind.lower() == device.platform else f"{device.platform} {kind}"


# -- the job -------------------------------------------------------------------------------------
def bench(**given):
    """Runs the benchmark; returns the results dict that bench.json holds."""
    options = resolve_options(given)
    spec = find_classifier(options["model"])
    image_size = options.get("image_size") or spec.input_shape[0]
    output = options.get("output") or os.path.join("runs", f"bench-{spec.name}")
    try:
        os.makedirs(output, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create the output directory {output!r}: "
                         f"{exc.strerror}") from None
    peers = _peers_for(spec.name) if options.get("compare") else None
    timing = {k: options[k] for k in ("warmup", "steps", "windows")}
    precisions = PRECISIONS[options["precision"]]

    bench_report.console.print(
        f"Benchmarking [bold]{spec.name}[/] training steps at {image_size}x{image_size}, "
        f"batch sizes {', '.join(map(str, options['batch_sizes']))}, "
        f"{' and '.join(precisions)} on {_device()}", soft_wrap=True)
    rows = []
    for precision in precisions:
        for batch_size in options["batch_sizes"]:
            rows.append(_bench_one(spec, batch_size, image_size, precision, timing,
                                   options, peers))
    results = {"model": spec.name, "image_size": image_size, "num_classes": spec.num_classes,
               "device": _device(), "precisions": list(precisions),
               "batch_sizes": options["batch_sizes"], **timing,
               "price_per_hour": options.get("price_per_hour"),
               "jax_peer": None if not options.get("compare") else peers is not None,
               "rows": rows, "time_to_accuracy": None}
    bench_report.results_table(results)
    if options["time_to_accuracy"] is not None:
        tta_size = options.get("image_size") or TIME_TO_ACCURACY_SIZE
        results["time_to_accuracy"] = bench_step.time_to_accuracy(
            spec.name, options["time_to_accuracy"], options["max_epochs"], tta_size)
        bench_report.time_to_accuracy_line(results["time_to_accuracy"])
    json_path = os.path.join(output, "bench.json")
    bench_report.write_json(results, json_path)
    bench_report.plot(results, os.path.join(output, "bench.png"))
    bench_report.console.print(f"Results: {json_path} and bench.png", soft_wrap=True)
    return results


def _peers_for(name):
    peers = load_jax_peers()
    if peers is None:
        bench_report.console.print("--compare: benchmarks/peers is not in this install; "
                                   "no JAX column")
    elif name not in peers.IMAGE_CLASSIFIERS:
        bench_report.console.print(
            f"--compare: {name} has no JAX peer (peers: "
            f"{', '.join(sorted(peers.IMAGE_CLASSIFIERS))}); no JAX column", soft_wrap=True)
        peers = None
    return peers


def _bench_one(spec, batch_size, image_size, precision, timing, options, peers):
    row = {"precision": precision, "batch_size": batch_size}
    row.update(bench_step.bench_tensorflux(spec.name, batch_size, image_size,
                                           spec.num_classes, precision, timing))
    if options.get("real_data"):
        real = bench_step.bench_tensorflux(spec.name, batch_size, image_size,
                                           spec.num_classes, precision, timing,
                                           real_data=True)
        row["real_data_images_per_sec"] = real["images_per_sec"]
        row["real_data_slowdown"] = row["images_per_sec"] / real["images_per_sec"]
    if peers is not None:
        jax_row = bench_jax_peer(peers, spec.name, batch_size, image_size, spec.num_classes,
                                 precision, timing)
        row["jax_images_per_sec"] = jax_row["images_per_sec"]
        row["jax_first_step_seconds"] = jax_row["first_step_seconds"]
        # Step time tensorflux / JAX (below 1: tensorflux is faster), as benchmarks report.
        row["time_ratio_vs_jax"] = jax_row["images_per_sec"] / row["images_per_sec"]
    if options.get("price_per_hour") is not None:
        row["cost_per_million_images"] = bench_report.cost_per_million_images(
            options["price_per_hour"], row["images_per_sec"])
    bench_report.console.print(
        f"  {precision} batch {batch_size}: {row['images_per_sec']:,.1f} images/sec"
        + (f" (JAX {row['jax_images_per_sec']:,.1f}, "
           f"time ratio {row['time_ratio_vs_jax']:.2f})"
           if "time_ratio_vs_jax" in row else ""), soft_wrap=True)
    return row
