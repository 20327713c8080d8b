"""`tensorflux playground` as a command: prints the URL and serves the page."""

import os
import subprocess
import sys
import urllib.request


def _env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))


def test_command_prints_the_url_and_serves_the_page(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "tensorflux", "playground", "--port", "0",
                             "--export-dir", str(tmp_path / "exports")],
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("tensorflux playground at http://127.0.0.1:"), line
        url = line.split()[3]
        with urllib.request.urlopen(url, timeout=30) as page:
            assert "tensorflux playground" in page.read().decode()
    finally:
        proc.terminate()
        assert proc.wait(30) == 0  # SIGTERM stops it cleanly


def test_bad_port_is_a_usage_error():
    done = subprocess.run([sys.executable, "-m", "tensorflux", "playground", "--port",
                           "70000"], check=False, env=_env(), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == ("tensorflux: error: --port must be between 0 and 65535, "
                                   "got 70000")
