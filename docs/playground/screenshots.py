"""Takes the playground screenshots in this folder: every data set at start and after
training (Debian's chromium through Playwright, the playground served from this
process), so the README's pictures can be remade after a change to the page.

    python docs/playground/screenshots.py [--epochs 150]
"""

import argparse
import asyncio
import os
import tempfile
import threading
import time

from playwright.sync_api import sync_playwright

from tensorflux._src.playground import server

HERE = os.path.dirname(os.path.abspath(__file__))
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SETUPS = [  # (file name, URL settings): a network able to fit each data set
    ("circle", "dataset=circle&networkShape=4,2"),
    ("xor", "dataset=xor&networkShape=4,2"),
    ("gauss", "dataset=gauss&networkShape=2"),
    ("spiral", "dataset=spiral&networkShape=8,8,6,4&sinX=true&sinY=true&xSquared=true"
               "&ySquared=true"),
    ("plane", "problem=regression&regDataset=plane&networkShape=2"),
    ("multigauss", "problem=regression&regDataset=multigauss&networkShape=8,6,4"),
]


def start_server():
    loop, started = asyncio.new_event_loop(), {}

    def serve():
        asyncio.set_event_loop(loop)
        started["runner"], started["port"] = loop.run_until_complete(
            server.start("127.0.0.1", 0, tempfile.mkdtemp()))
        loop.run_forever()
    threading.Thread(target=serve, daemon=True).start()
    while "port" not in started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{started['port']}/"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=150)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    base = start_server()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=ARGS, headless=True)
        for name, settings in SETUPS:
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.goto(f"{base}#{settings}")
            page.wait_for_function("window.playground.lastState !== null", timeout=60_000)
            page.screenshot(path=os.path.join(HERE, f"{name}-start.png"))
            page.click("#play")
            page.wait_for_function(f"window.playground.lastState.epoch >= {args.epochs}",
                                   timeout=300_000)
            page.click("#play")
            time.sleep(0.5)
            page.screenshot(path=os.path.join(HERE, f"{name}-trained.png"))
            loss = page.evaluate("window.playground.lastState.testLoss")
            print(f"{name}: test loss {loss:.3f} after {args.epochs} epochs")
            page.close()
        browser.close()


if __name__ == "__main__":
    main()
