"""`tensorflux bench`: training throughput of a zoo model, per batch size and precision,
optionally against the same model written directly in JAX, PyTorch and TensorFlow.

    tensorflux bench --model resnet50 --batch-sizes 8,16 --image-size 64 --compare
    tensorflux bench --model transformer_lm --batch-sizes 4,8 --seq-len 128 --compare

Image classifiers are timed in images/sec, Transformers (transformer_lm, and the
seq2seq transformer_base/big) in tokens/sec (target tokens; sequences/sec beside them).
For each (precision, batch size) a fresh graph is built and timed: `--warmup` steps (the
first compiles), then `--windows` windows of `--steps` steps; the reported rate is the
median window's, with the slowest and fastest windows. Each peer (benchmarks/peers/) is
timed the same way right after tensorflux, in the same process; a peer whose framework
is not installed is skipped with a one-line note. Results go to <output>/bench.json and
bench.png, and a table is printed. With `--cold-warm` each row also gets the first
step's time (and the initializers') in two fresh processes sharing a new compilation
cache: cold (it compiles) and warm (executables come from the cache; first_step.py).
"""

from __future__ import annotations

import dataclasses
import gc
import importlib
import importlib.util
import os
import sys

from tensorflux._src.cli import bench_report, bench_step
from tensorflux._src.cli.errors import UsageError

# 12 warm-up steps: the first compiles. On CPU the runtime's compiler-option autotuner
# then times its candidate executables (5 steps each); the bench warms up until it has
# kept one (bench_step.time_steps), so no window times a candidate being tried.
DEFAULTS = {"model": "resnet50", "batch_sizes": "32,64", "precision": "float32",
            "warmup": 12, "steps": 10, "windows": 3, "max_epochs": 10}
PRECISIONS = {"float32": ("float32",), "bfloat16": ("bfloat16",),
              "both": ("float32", "bfloat16")}
TIME_TO_ACCURACY_SIZE = 32  # CIFAR-sized: the digits are upscaled to 32x32x3
TRANSFORMER_KINDS = ("language_model", "seq2seq")
# The peers, in column order: benchmarks/peers/<module>.py.
PEER_MODULES = ("jax_models", "torch_models", "tf_models")


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


def find_model(name):
    """The zoo's ModelSpec of an image classifier or a Transformer, or a UsageError
    naming the choices."""
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
        timed = [n for n in known if _timeable(registry.specs()[n])]
        raise UsageError(f"--model {name!r} is unknown; choose an image classifier or a "
                         f"Transformer: {', '.join(timed)}")
    if not _timeable(spec):
        raise UsageError(f"--model {name!r} is a {spec.kind.replace('_', ' ')}; bench times "
                         f"image classifiers (resnet50, mobilenet_v2, ...) and Transformers "
                         f"(transformer_lm, transformer_base, transformer_big)")
    return spec


def _timeable(spec):
    if spec.kind == "image_classifier":
        return True
    if spec.kind in TRANSFORMER_KINDS:
        from tensorflux.models import transformer
        return isinstance(spec.config, transformer.TransformerConfig)
    return False


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
    _positive("seq_len", options.get("seq_len"), minimum=2)
    price = options.get("price_per_hour")
    if price is not None and not price > 0:
        raise UsageError(f"--price-per-hour must be positive, got {price}")
    options["time_to_accuracy"] = parse_target(options.get("time_to_accuracy"))
    return options


def _check_options_fit(spec, options):
    """Options of the other kind of model are mistakes, not silently ignored."""
    if spec.kind == "image_classifier":
        if options.get("seq_len") is not None:
            raise UsageError(f"--seq-len is for Transformers; {spec.name} is an image "
                             f"classifier (use --image-size)")
        return
    for option, flag in (("image_size", "--image-size"), ("real_data", "--real-data"),
                         ("time_to_accuracy", "--time-to-accuracy"),
                         ("cold_warm", "--cold-warm")):
        if options.get(option) is not None:
            raise UsageError(f"{flag} is for image classifiers; {spec.name} is a "
                             f"Transformer (use --seq-len for its length)")
    seq_len = options.get("seq_len")
    if seq_len is not None and seq_len > spec.config.max_length:
        raise UsageError(f"--seq-len must be at most {spec.name}'s max_length "
                         f"({spec.config.max_length}), got {seq_len}")


# -- the peers -----------------------------------------------------------------------------------
def load_peers_package():
    """benchmarks/peers/ from the source tree as a package, or None when it is not there
    (an installed wheel carries no benchmarks)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    directory = os.path.join(root, "benchmarks", "peers")
    init = os.path.join(directory, "__init__.py")
    if not os.path.exists(init):
        return None
    name = "tensorflux_bench_peers"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, init,
                                                      submodule_search_locations=[directory])
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while defining
        spec.loader.exec_module(module)
    return sys.modules[name]


def load_peer(module_name):
    """benchmarks/peers/<module_name>.py (it imports its framework only when used), or
    None without benchmarks/peers."""
    package = load_peers_package()
    if package is None:
        return None
    return importlib.import_module(f"{package.__name__}.{module_name}")


def select_peers(spec):
    """(the peers to time, one note per peer left out). A peer is left out when
    benchmarks/peers is missing, when it has no such model, or when its framework does
    not import ("not installed")."""
    if load_peers_package() is None:
        return [], ["benchmarks/peers is not in this install; no peer columns"]
    with_peers = load_peer("common").IMAGE_CLASSIFIERS
    if spec.kind == "image_classifier" and spec.name not in with_peers:
        known = ", ".join(with_peers)
        return [], [f"{spec.name} has no peers (image classifiers with peers: {known}, and "
                    f"the Transformers); no peer columns"]
    if spec.kind != "image_classifier" and not spec.config.shared_embeddings:
        return [], [f"{spec.name} has untied embeddings, which the peers do not write; "
                    f"no peer columns"]
    peers, notes = [], []
    for module_name in PEER_MODULES:
        peer = load_peer(module_name)
        reason = peer.unavailable()
        if reason is None:
            peers.append(peer)
        else:
            notes.append(f"{peer.NAME} peer skipped: {peer.FRAMEWORK} {reason}")
    return peers, notes


def peer_transformer_config(spec, seq_len):
    """The peers' TransformerConfig of zoo Transformer `spec` at `seq_len` tokens."""
    config = spec.config
    return load_peer("common").TransformerConfig(
        vocab_size=config.vocab_size, seq_len=seq_len, d_model=config.hidden_size,
        num_heads=config.num_heads, num_encoder_layers=config.num_encoder_layers,
        num_decoder_layers=config.num_decoder_layers, d_ff=config.filter_size,
        dropout=config.dropout, label_smoothing=config.label_smoothing,
        layer_norm_epsilon=config.layer_norm_epsilon, learning_rate=config.learning_rate,
        warmup_steps=config.warmup_steps, adam_beta1=config.adam_beta1,
        adam_beta2=config.adam_beta2, adam_epsilon=config.adam_epsilon)


def _device():
    import jax
    device = jax.devices()[0]
    kind = getattr(device, "device_kind", "")
    return device.platform if kind.lower() == device.platform else f"{device.platform} {kind}"


# -- what one row times: images of a classifier or tokens of a Transformer ------------------------
@dataclasses.dataclass
class Workload:
    spec: object
    unit: str            # "images" or "tokens"
    size: int            # image side or sequence length
    peer_config: object = None  # the peers' TransformerConfig

    @property
    def is_transformer(self):
        return self.unit == "tokens"

    def describe(self):
        return (f"{self.size} tokens per sequence" if self.is_transformer
                else f"{self.size}x{self.size}")

    def tensorflux(self, batch_size, precision, timing, real_data=False):
        if self.is_transformer:
            return bench_step.bench_transformer(self.spec, batch_size, self.size, precision,
                                                timing)
        return bench_step.bench_tensorflux(self.spec.name, batch_size, self.size,
                                           self.spec.num_classes, precision, timing,
                                           real_data=real_data)

    def peer(self, peer, batch_size, precision, timing):
        """The peer's rate in this workload's unit."""
        if self.is_transformer:
            run = peer.transformer_step(batch_size, self.peer_config, precision)
            items = batch_size * self.size
        else:
            run = peer.image_classifier_step(self.spec.name, batch_size, self.size,
                                             self.spec.num_classes, precision)
            items = batch_size
        try:
            return bench_step.time_steps(run, items, **timing, unit=self.unit)
        finally:
            del run
            gc.collect()  # drop the peer's buffers before the next configuration


def _workload(spec, options, peers_wanted):
    if spec.kind == "image_classifier":
        return Workload(spec, "images", options.get("image_size") or spec.input_shape[0])
    seq_len = options.get("seq_len") or spec.input_shape[0]
    peer_config = (peer_transformer_config(spec, seq_len)
                   if peers_wanted and load_peers_package() is not None else None)
    return Workload(spec, "tokens", seq_len, peer_config)


# -- the job -------------------------------------------------------------------------------------
def bench(**given):
    """Runs the benchmark; returns the results dict that bench.json holds."""
    options = resolve_options(given)
    spec = find_model(options["model"])
    _check_options_fit(spec, options)
    output = options.get("output") or os.path.join("runs", f"bench-{spec.name}")
    try:
        os.makedirs(output, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create the output directory {output!r}: "
                         f"{exc.strerror}") from None
    work = _workload(spec, options, bool(options.get("compare")))
    peers, notes = select_peers(spec) if options.get("compare") else ([], [])
    timing = {k: options[k] for k in ("warmup", "steps", "windows")}
    precisions = PRECISIONS[options["precision"]]

    bench_report.console.print(
        f"Benchmarking [bold]{spec.name}[/] training steps at {work.describe()}, "
        f"batch sizes {', '.join(map(str, options['batch_sizes']))}, "
        f"{' and '.join(precisions)} on {_device()}", soft_wrap=True)
    for note in notes:
        bench_report.console.print(f"--compare: {note}", soft_wrap=True)
    rows = []
    for precision in precisions:
        for batch_size in options["batch_sizes"]:
            rows.append(_bench_one(work, batch_size, precision, timing, options, peers))
            if options.get("cold_warm"):
                rows[-1].update(_cold_warm(work, batch_size, precision))
    results = {"model": spec.name, "kind": spec.kind, "unit": work.unit,
               "device": _device(), "precisions": list(precisions),
               "batch_sizes": options["batch_sizes"], **timing,
               "price_per_hour": options.get("price_per_hour"),
               "peers": _peer_info(peers) if options.get("compare") else None,
               "skipped_peers": notes, "rows": rows, "time_to_accuracy": None}
    if work.is_transformer:
        results.update(seq_len=work.size, vocab_size=spec.config.vocab_size,
                       config=_transformer_summary(spec.config))
    else:
        results.update(image_size=work.size, num_classes=spec.num_classes)
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


def _cold_warm(work, batch_size, precision):
    """First-step times in fresh processes, compilation cache empty then filled."""
    from tensorflux._src.cli import first_step
    times = first_step.cold_warm(work.spec.name, batch_size, work.size, precision,
                                 work.spec.num_classes)
    row = {}
    for kind in ("cold", "warm"):
        for name in ("init_seconds", "first_step_seconds", "process_to_first_step_seconds"):
            row[f"{kind}_{name}"] = times[kind][name]
    bench_report.console.print(
        f"  {precision} batch {batch_size} first step (initializers): cold "
        f"{row['cold_first_step_seconds']:.2f} s ({row['cold_init_seconds']:.2f} s), warm "
        f"{row['warm_first_step_seconds']:.2f} s ({row['warm_init_seconds']:.2f} s); "
        f"process start to first step done: {row['cold_process_to_first_step_seconds']:.1f}"
        f" s cold, {row['warm_process_to_first_step_seconds']:.1f} s warm", soft_wrap=True)
    return row


def _peer_info(peers):
    return [{"key": p.KEY, "name": p.NAME, "short": p.SHORT, "version": p.version()}
            for p in peers]


def _transformer_summary(config):
    from tensorflux.models import transformer
    fields = ("hidden_size", "filter_size", "num_heads", "num_encoder_layers",
              "num_decoder_layers", "dropout", "label_smoothing")
    summary = {name: getattr(config, name) for name in fields}
    summary["parameters"] = transformer.parameter_count(config)
    return summary


def _bench_one(work, batch_size, precision, timing, options, peers):
    unit = work.unit
    row = {"precision": precision, "batch_size": batch_size}
    row.update(work.tensorflux(batch_size, precision, timing))
    if options.get("real_data"):
        real = work.tensorflux(batch_size, precision, timing, real_data=True)
        row["real_data_images_per_sec"] = real["images_per_sec"]
        row["real_data_slowdown"] = row["images_per_sec"] / real["images_per_sec"]
    compared = []
    for peer in peers:
        try:
            peer_row = work.peer(peer, batch_size, precision, timing)
        except Exception as exc:  # noqa: BLE001 - a failing peer loses its cell, not the run
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            row[f"{peer.KEY}_error"] = f"{type(exc).__name__}: {message}"
            bench_report.console.print(
                f"  --compare: the {peer.NAME} peer failed at {precision} batch "
                f"{batch_size}: {row[f'{peer.KEY}_error']}", soft_wrap=True, markup=False)
            continue
        row[f"{peer.KEY}_{unit}_per_sec"] = peer_row[f"{unit}_per_sec"]
        row[f"{peer.KEY}_first_step_seconds"] = peer_row["first_step_seconds"]
        row[f"{peer.KEY}_first_loss"] = peer_row["first_loss"]
        # Step time tensorflux / peer (below 1: tensorflux is faster), as benchmarks report.
        row[f"time_ratio_vs_{peer.KEY}"] = peer_row[f"{unit}_per_sec"] / row[f"{unit}_per_sec"]
        compared.append(f"{peer.NAME} {peer_row[f'{unit}_per_sec']:,.1f}, "
                        f"time ratio {row[f'time_ratio_vs_{peer.KEY}']:.2f}")
    if options.get("price_per_hour") is not None:
        row[f"cost_per_million_{unit}"] = bench_report.cost_per_million(
            options["price_per_hour"], row[f"{unit}_per_sec"])
    bench_report.console.print(
        f"  {precision} batch {batch_size}: {row[f'{unit}_per_sec']:,.1f} {unit}/sec"
        + (f" ({'; '.join(compared)})" if compared else ""), soft_wrap=True)
    return row
