"""Console tests: an in-process broker per test and a real headless Chromium (Debian's
`chromium`, installed by testkit/setup_deps.py) driven by Playwright."""

import os
import shutil

import pytest

from trafka.testing import TrafkaBroker

CHROMIUM = os.environ.get("TRAFKA_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def broker(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data", in_process=True) as running:
        yield running


# Module scope, not session: Playwright's sync API keeps an asyncio loop running in this thread
# while it is open, and every later asyncio.run() (aiokafka's tests) would then refuse to start.
@pytest.fixture(scope="module")
def chromium():
    if CHROMIUM is None:
        pytest.skip("no chromium on PATH (make test installs it: python -m testkit.setup_deps)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(chromium):
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    tab = context.new_page()
    tab.set_default_timeout(5000)
    try:
        yield tab
    finally:
        context.close()
