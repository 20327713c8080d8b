"""ResNet-50 training on one GPU: tensorflux against its JAX and PyTorch peers in one
command, and where each one's step spends its GPU time.

What issue 22 asks of the GPU path: ResNet-50 v1.5 training steps in mixed bfloat16
(float32 weights, bfloat16 convolutions) at batch 256 on 224x224 images that live on the
device, images/sec for tensorflux and the peers measured in the same process.

    PYTHONPATH=. python benchmarks/gpu_resnet50.py --output runs/gpu-resnet50 --profile

1. Runs `tensorflux bench --model resnet50 --compare` with these settings (the same code
   path as the command: warm-up, then `--windows` windows of `--steps` steps, median
   window reported) and copies its bench.json to --output.
2. With --profile, traces `--profile-steps` more steps of each framework (tensorflux and
   JAX through jax.profiler, PyTorch through torch.profiler), keeps the traces
   (<framework>_trace.json.gz) and writes kernels.txt: per framework, the GPU time of
   one step by kind of kernel (convolution, matrix product, reduction, elementwise
   fusion, copy) and its 25 costliest kernels. A framework whose step has more GPU
   time than the device's step time shows idle gaps; one with less shows the kernels
   that cost it.

`--only tensorflux` (or jax, torch) skips the bench and times and profiles that
framework alone: for comparing versions of one, one process each. Refuses to run on a
CPU unless --allow-cpu (a smoke test of the script at small sizes).
"""

from __future__ import annotations

import argparse
import collections
import glob
import gzip
import json
import os
import re
import shutil
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

# Kernel names -> kind, first match wins. cuDNN's and CUTLASS's convolution kernels name
# their pass (fprop, dgrad, wgrad) or the implicit GEMM they are; XLA names its own
# kernels after the fusion they run (loop_*, input_reduce_*), Triton's after the fusion
# too, with "triton" in front.
KINDS = (
    ("convolution", re.compile(r"conv|fprop|dgrad|wgrad|implicit|cudnn|xmma", re.IGNORECASE)),
    ("matrix product", re.compile(r"gemm|cutlass|nvjet|matmul|dot", re.IGNORECASE)),
    ("reduction", re.compile(r"reduc|batch_norm|bn_", re.IGNORECASE)),
    ("copy", re.compile(r"copy|transpose|memcpy|memset|concat|pad", re.IGNORECASE)),
    ("elementwise fusion", re.compile(r"fusion|triton|elementwise|vectorized|loop|kernel",
                                      re.IGNORECASE)),
)


def kind_of(kernel_name):
    for kind, pattern in KINDS:
        if pattern.search(kernel_name):
            return kind
    return "other"


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# -- reading traces ------------------------------------------------------------------------------
def gpu_kernels_from_perfetto(path):
    """{kernel name: [durations in microseconds]} of the kernels a jax.profiler trace
    saw on a GPU's streams."""
    with gzip.open(path, "rt") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    processes = {e["pid"]: e["args"]["name"] for e in events
                 if e.get("ph") == "M" and e.get("name") == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e.get("ph") == "M" and e.get("name") == "thread_name"}
    kernels = collections.defaultdict(list)
    for e in events:
        if e.get("ph") != "X" or "GPU" not in processes.get(e["pid"], ""):
            continue
        # A GPU's trace has one line per CUDA stream, plus lines that repeat the same
        # time per XLA module and per HLO op; only the streams hold kernels.
        if not threads.get((e["pid"], e["tid"]), "").startswith("Stream"):
            continue
        kernels[e["name"]].append(float(e.get("dur", 0.0)))
    return kernels


def gpu_kernels_from_torch(profile):
    kernels = collections.defaultdict(list)
    for event in profile.events():
        if str(event.device_type).endswith("CUDA"):
            kernels[event.name].append(event.time_range.elapsed_us())
    return kernels


def summary(name, kernels, steps, step_ms=None, note=None):
    """Lines of text: the GPU time of one step by kind of kernel and the costliest
    kernels."""
    total = sum(sum(d) for d in kernels.values()) / steps / 1e3
    lines = [f"== {name}: {total:.2f} ms of kernels per step"
             + (f", step {step_ms:.2f} ms (profiled)" if step_ms else "")
             + f", {sum(len(d) for d in kernels.values()) / steps:.0f} launches per step"]
    if note:
        lines.append(f"   {note}")
    by_kind = collections.Counter()
    for kernel, durations in kernels.items():
        by_kind[kind_of(kernel)] += sum(durations) / steps / 1e3
    for kind, ms in by_kind.most_common():
        lines.append(f"   {kind:<20} {ms:8.2f} ms  {100 * ms / max(total, 1e-9):5.1f}%")
    lines.append("   costliest kernels (ms per step, launches per step, kind):")
    ranked = sorted(kernels.items(), key=lambda kv: -sum(kv[1]))
    for kernel, durations in ranked[:25]:
        lines.append(f"   {sum(durations) / steps / 1e3:8.3f} {len(durations) / steps:5.1f}  "
                     f"{kind_of(kernel):<18} {kernel[:110]}")
    return lines


# -- profiling each framework --------------------------------------------------------------------
def command_buffer_updates(path):
    """(count, total ms) of the host's CUDA-graph updates in a jax.profiler trace: XLA
    updates a command buffer before launching it whenever a buffer it uses moved."""
    with gzip.open(path, "rt") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    updates = [e.get("dur", 0.0) for e in events
               if e.get("ph") == "X" and e.get("name") == "command_buffer::update"]
    return len(updates), sum(updates) / 1e3


def profile_jax_steps(run, steps, out_path):
    """Traces `steps` calls of `run` (already warm); returns the kernels, the wall
    time per step in ms and a note on the host's command-buffer updates."""
    import jax
    directory = tempfile.mkdtemp(prefix="trace-")
    try:
        started = time.perf_counter()
        with jax.profiler.trace(directory, create_perfetto_trace=True):
            for _ in range(steps):
                run()
        step_ms = (time.perf_counter() - started) / steps * 1e3
        (found,) = glob.glob(os.path.join(directory, "**", "perfetto_trace.json.gz"),
                             recursive=True)
        shutil.copyfile(found, out_path)
        count, ms = command_buffer_updates(found)
        note = (f"host: {count / steps:.0f} command-buffer updates per step "
                f"({ms / steps:.2f} ms)")
        return gpu_kernels_from_perfetto(found), step_ms, note
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def profile_torch_steps(run, steps, out_path):
    import torch
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)
    started = time.perf_counter()
    with profile(activities=activities) as prof:
        for _ in range(steps):
            run()
    step_ms = (time.perf_counter() - started) / steps * 1e3
    plain = out_path[:-len(".gz")]
    prof.export_chrome_trace(plain)
    with open(plain, "rb") as src, gzip.open(out_path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.remove(plain)
    return gpu_kernels_from_torch(prof), step_ms, None


def profile_all(args, output, only=None):
    """Profiles each framework (or only the one named), timing it first when `only`
    (the bench did not)."""
    from tensorflux._src.cli import bench_job, bench_step
    lines = []
    steps = args.profile_steps

    def warm(name, run):
        # With the compilation cache on (tensorflux's default, which JAX's jit shares
        # in this process), the bench already compiled these steps: this first step
        # loads them.
        started = time.perf_counter()
        run()
        log(f"{name}: first step of a new instance {time.perf_counter() - started:.2f} s")
        for _ in range(2):
            run()

    def tensorflux_step():
        step = bench_step.TrainStep("resnet50", args.batch_size, args.image_size, 1000,
                                    args.precision)
        warm("tensorflux", step.run)
        while step.tuning():
            step.run()
        return step.run, step.close

    def peer_step(peer):
        run = peer.image_classifier_step("resnet50", args.batch_size, args.image_size, 1000,
                                         args.precision)
        warm(peer.NAME, run)
        return run, lambda: None

    frameworks = [("tensorflux", "tensorflux", tensorflux_step, profile_jax_steps)]
    for module, profiler in (("jax_models", profile_jax_steps),
                             ("torch_models", profile_torch_steps)):
        peer = bench_job.load_peer(module)
        if only not in (None, peer.KEY):
            continue
        if peer.unavailable() is not None:
            lines.append(f"== {peer.NAME}: not profiled ({peer.unavailable()})")
            continue
        frameworks.append((peer.NAME, peer.KEY, lambda peer=peer: peer_step(peer), profiler))
    if only is not None:
        frameworks = [f for f in frameworks if f[1] == only]
    for name, key, build, profiler in frameworks:
        log(f"profiling {name}")
        try:  # one framework failing still leaves the others' profiles
            run, close = build()
            try:
                if only is not None:
                    rate = bench_step.time_steps(run, args.batch_size, 1, args.steps,
                                                 args.windows)["images_per_sec"]
                    lines.append(f"== {name}: {rate:,.1f} images/sec (median of "
                                 f"{args.windows} windows of {args.steps} steps)")
                kernels, ms, note = profiler(run, steps,
                                             os.path.join(output, f"{key}_trace.json.gz"))
            finally:
                close()
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            lines.append(f"== {name}: profiling failed (traceback above)")
            continue
        lines += summary(name, kernels, steps, ms, note)
        del run
    text = "\n".join(lines) + "\n"
    with open(os.path.join(output, "kernels.txt"), "w") as f:
        f.write(text)
    print(text, flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", required=True, help="directory for bench.json, "
                        "kernels.txt and the traces")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument("--precision", default="bfloat16", choices=("bfloat16", "float32"))
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--windows", type=int, default=3)
    parser.add_argument("--profile", action="store_true",
                        help="also trace a few steps of each framework")
    parser.add_argument("--profile-steps", type=int, default=3)
    parser.add_argument("--only", choices=("tensorflux", "jax", "torch"),
                        help="skip the bench: time and profile this framework alone")
    parser.add_argument("--allow-cpu", action="store_true",
                        help="run even without a GPU (to test this script)")
    args = parser.parse_args(argv)

    import jax
    platform = jax.devices()[0].platform
    if platform != "gpu" and not args.allow_cpu:
        parser.error(f"JAX's default device is {platform!r}, not a GPU; this benchmark "
                     f"is for GPUs (--allow-cpu runs it anyway, to test the script)")
    os.makedirs(args.output, exist_ok=True)
    if args.only:
        profile_all(args, args.output, args.only)
        log("done")
        return
    from tensorflux._src.cli import bench_job
    log(f"bench on {jax.devices()[0]}")
    try:
        with tempfile.TemporaryDirectory() as bench_dir:
            bench_job.bench(model="resnet50", batch_sizes=str(args.batch_size),
                            precision=args.precision, image_size=args.image_size,
                            compare=True, warmup=args.warmup, steps=args.steps,
                            windows=args.windows, output=bench_dir)
            shutil.copyfile(os.path.join(bench_dir, "bench.json"),
                            os.path.join(args.output, "bench.json"))
    except Exception:  # the profiles below still say where the time goes
        if not args.profile:
            raise
        traceback.print_exc()
        log("the bench failed; profiling each framework on its own")
    if args.profile:
        profile_all(args, args.output)
    log("done")


if __name__ == "__main__":
    main()
