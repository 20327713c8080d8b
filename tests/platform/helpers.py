"""Running Python as a subprocess against this checkout's tensorflux."""

import os
import subprocess
import sys

import tensorflux

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(tensorflux.__file__)))


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = ROOT + os.pathsep + e.get("PYTHONPATH", "")
    e.setdefault("JAX_PLATFORMS", "cpu")
    return e


def start(args, cwd=None):
    return subprocess.Popen([sys.executable, *args], cwd=cwd or ROOT, env=env(), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish(proc, timeout=120):
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def run(args, cwd=None, timeout=120):
    return finish(start(args, cwd), timeout)
