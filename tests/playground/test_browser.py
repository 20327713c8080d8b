"""The page in a real headless Chromium (Debian's `chromium`), driven by Playwright.

Skipped where the `playwright` package or /usr/bin/chromium is missing (CI installs both).
Each test starts the playground on a loopback port in this process.
"""

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import numpy as np
import pytest

CHROMIUM = os.environ.get("TENSORFLUX_CHROMIUM", "/usr/bin/chromium")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
if not os.path.exists(CHROMIUM):
    pytest.skip(f"no Chromium at {CHROMIUM}", allow_module_level=True)

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def playground(tmp_path_factory):
    """The playground's base URL, served from a thread of this process."""
    from tensorflux._src.playground import server

    root = tmp_path_factory.mktemp("playground") / "exports"
    loop = asyncio.new_event_loop()
    started = {}

    def serve():  # the server's own loop (Playwright's sync API runs one in this thread)
        asyncio.set_event_loop(loop)
        started["runner"], started["port"] = loop.run_until_complete(
            server.start("127.0.0.1", 0, str(root)))
        loop.run_forever()
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    while "port" not in started:
        assert thread.is_alive(), "the playground server did not start"
        time.sleep(0.05)
    runner = started["runner"]
    yield f"http://127.0.0.1:{started['port']}/"
    asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(30)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield browser
        browser.close()


def _open(browser, url):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(url)
    page.wait_for_function("window.playground.lastState !== null", timeout=60_000)
    return page


def _config(page):
    return page.evaluate("window.playground.config")


def _wait_config(page, predicate_js, timeout=60_000):
    page.wait_for_function(f"(() => {{ const c = window.playground.config; "
                           f"const s = window.playground.lastState; return {predicate_js}; }})()",
                           timeout=timeout)


def test_spiral_with_added_layers_learns(browser, playground):
    page = _open(browser, playground)
    page.click("[data-node=sinX]")
    page.click("[data-node=sinY]")
    page.click("button[data-dataset=spiral]")
    page.click("#addLayer")
    page.click("#addLayer")
    _wait_config(page, "c.networkShape.length === 4 && c.dataset === 'spiral' && c.sinY "
                       "&& s.nodes.length === 4 + 4 + 2 + 2 + 2 + 1")
    page.select_option("#learningRate", "0.1")  # a rate change keeps the network
    _wait_config(page, "c.learningRate === 0.1")
    page.click("#play")
    first = float(page.text_content("#testLoss"))
    loss = page.wait_for_function(
        "(() => { const v = Number(document.getElementById('testLoss').textContent); "
        "return v < 0.2 ? v : false; })()", timeout=90_000).json_value()
    epoch = int(page.text_content("#epoch").replace(",", ""))
    page.click("#play")  # pause
    print(f"spiral 4,2,2,2 + sin features, rate 0.1: test loss {first} -> {loss} at epoch {epoch}")
    assert first > 0.4 and loss < 0.2
    assert page.evaluate("window.playground.losses.length") > 2  # the loss curve has points
    page.close()


def test_controls_write_the_url_and_a_reload_restores_them(browser, playground):
    page = _open(browser, playground)
    before = page.url
    page.select_option("#activation", "relu")
    page.select_option("#learningRate", "0.1")
    page.click("#addLayer")
    page.wait_for_function("location.hash.includes('activation=relu') && "
                           "location.hash.includes('learningRate=0.1') && "
                           "location.hash.includes('networkShape=4,2,2')")
    url = page.url
    assert url != before
    config = _config(page)
    page.close()
    again = _open(browser, url)
    assert _config(again) == config
    assert again.input_value("#activation") == "relu"
    assert again.input_value("#learningRate") == "0.1"
    assert again.evaluate("document.querySelectorAll('.node').length") == 7 + 4 + 2 + 2 + 1
    assert again.is_hidden("#notes")
    again.close()


def test_impossible_url_values_fall_back_with_a_visible_note(browser, playground):
    page = _open(browser, playground + "#networkShape=9,0,3&learningRate=banana&noise=-4"
                                       "&dataset=xor")
    config = _config(page)
    assert config["networkShape"] == [4, 2] and config["learningRate"] == 0.03
    assert config["noise"] == 0 and config["dataset"] == "xor"
    assert page.is_visible("#notes")
    text = page.text_content("#notes")
    assert "networkShape: got '9,0,3'" in text and "learningRate: got 'banana'" in text
    assert "networkShape=4,2" in page.url  # the URL now holds what is used
    page.close()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_export_is_served_by_tensorflux_serve_with_the_pages_predictions(browser, playground):
    page = _open(browser, playground + "#dataset=gauss&networkShape=3")
    page.click("#step")
    page.wait_for_function("window.playground.lastState.epoch === 1")
    page.click("#exportButton")
    page.wait_for_function("window.playground.exported !== null", timeout=60_000)
    assert "SavedModel:" in page.text_content("#exportResult")
    exported = page.evaluate("window.playground.exported")
    state = page.evaluate("window.playground.lastState")
    page.close()

    base = os.path.dirname(exported["savedModel"])
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, "-m", "tensorflux", "serve", "--model_name",
                             "playground", "--model_base_path", base, "--port", str(port),
                             "--host", "127.0.0.1", "--file_system_poll_wait_seconds", "0"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        # the page's output heatmap corners (-6, 6), (6, 6), (-6, -6), (6, -6)
        points = exported["points"] + [[-6, 6], [6, 6], [-6, -6], [6, -6]]
        body = json.dumps({"instances": points}).encode()
        deadline = time.monotonic() + 90
        while True:
            try:
                request = urllib.request.Request(
                    f"http://127.0.0.1:{port}/v1/models/playground:predict", body)
                with urllib.request.urlopen(request, timeout=10) as answer:
                    predictions = np.array(json.load(answer)["predictions"])[:, 0]
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode()
                assert time.monotonic() < deadline, "tensorflux serve did not answer"
                time.sleep(0.3)
    finally:
        proc.terminate()
        proc.wait(30)
    np.testing.assert_allclose(predictions[:5], exported["predictions"], rtol=1e-5, atol=1e-6)
    import base64
    grid = state["grid"]
    output = np.frombuffer(base64.b64decode(state["output"]), np.uint8).reshape(grid, grid)
    corners = output[[0, 0, -1, -1], [0, -1, 0, -1]] / 127.5 - 1
    np.testing.assert_allclose(predictions[5:], corners, atol=1 / 127.5 + 1e-6)


def test_updates_per_second_with_six_layers_of_eight(browser, playground):
    page = _open(browser, playground + "#dataset=spiral&networkShape=8,8,8,8,8,8"
                                       "&xSquared=true&ySquared=true&xTimesY=true"
                                       "&sinX=true&sinY=true")
    page.click("#play")
    page.wait_for_function("window.playground.lastState.epoch >= 5", timeout=90_000)
    # Three 2-second windows; the best one counts, so that another test compiling on the
    # same 2 cores for a moment does not decide the result (all three are printed).
    rates = []
    for _ in range(3):
        start_states, start = page.evaluate("window.playground.states"), time.monotonic()
        time.sleep(2)
        states, elapsed = page.evaluate("window.playground.states"), time.monotonic() - start
        rates.append((states - start_states) / elapsed)
    page.click("#play")
    print(f"6x8 network, 7 features: {', '.join(f'{r:.1f}' for r in rates)} updates/s in "
          f"the browser (page shows {page.text_content('#ups')}/s)")
    assert max(rates) >= 20, rates
    page.close()


def test_graph_view_lists_the_sessions_ops_and_many_tabs(browser, playground):
    pages = [_open(browser, playground + f"#networkShape={n}") for n in (1, 2, 3)]
    for page in pages:
        page.click("#play")
    page = pages[0]
    page.click("#graphButton")
    page.wait_for_function("window.playground.graph !== null")
    text = page.text_content("#graphOps")
    for name in ("layer0/weights", "predictions", "heatmaps", "VariableV2", "While"):
        assert name in text, name
    for other in pages[1:]:
        other.close()  # closed while playing
    page.wait_for_function("window.playground.lastState.epoch >= 3", timeout=60_000)
    page.close()
    fresh = _open(browser, playground)
    assert fresh.evaluate("window.playground.lastState.epoch") == 0
    fresh.close()


def test_hover_shows_a_weight_and_click_edits_it(browser, playground):
    page = _open(browser, playground + "#networkShape=3")
    link = page.locator("#links path").nth(4)
    l, i, j = (int(link.get_attribute(f"data-{k}")) for k in "lij")
    weight = page.evaluate(f"window.playground.lastState.weights[{l}][{i}][{j}]")
    link.hover(force=True)
    assert page.text_content("#hoverCard") == f"Weight is {weight:.3f} (click to change)"
    page.once("dialog", lambda dialog: dialog.accept("1.5"))
    link.click(force=True)
    page.wait_for_function(f"window.playground.lastState.weights[{l}][{i}][{j}] === 1.5")
    assert link.get_attribute("stroke-width") == "3.00"  # |w| * 2
    bias = page.locator("[data-node=h0_1] .bias")
    bias.hover()
    assert page.text_content("#hoverCard") == "Bias is 0.100 (click to change)"
    page.once("dialog", lambda dialog: dialog.accept("-0.5"))
    bias.click()
    page.wait_for_function("window.playground.lastState.biases[0][1] === -0.5")
    assert bias.evaluate("b => getComputedStyle(b).backgroundColor") == "rgb(238, 191, 135)"  # the colour scale at -0.5
    page.close()
