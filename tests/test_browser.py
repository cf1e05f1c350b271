"""The HTML replay page in a real browser: headless Chromium driven by Selenium.

CI installs Debian's ``chromium`` and ``chromium-driver`` (``.ci/run``); there a missing browser
fails the test. Elsewhere it is skipped, saying how to install it.
"""

import io
import os
import shutil
import time

import numpy as np
import pytest
from PIL import Image

from solitaire_gym.rendering.image import board_size, render_position
from solitaire_gym.rendering.replay import write_html
from solitaire_gym.traces import load_trace, save_trace

CODE = "SH1-C4-AAAAAJ2"
MOVES = ["t4>c", "t1>c", "t8>t2", "t7>t2", "t4>t3", "t4>f", "t5>f", "t5>t3", "c4>t2", "t7>c"]
MOVES += ["t7>f", "t5>f", "t9>t5", "t9>t5"]  # four cards to the foundations, one cell to a column


def _browser():
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        message = (
            "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (
        "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-dev-shm-usage", "--window-size=1400,1000",
    ):  # fmt: skip
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(executable_path=driver), options=options)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """A replay page of a short Seahaven game with foundation moves (so the score changes)."""
    folder = tmp_path_factory.mktemp("page")
    trace = load_trace(save_trace(folder / "t.json", CODE, MOVES, agent="test"))
    assert len({p["score"] for p in trace.positions}) > 2
    path = write_html(trace, folder / "replay.html")
    driver = _browser()
    try:
        driver.get(path.resolve().as_uri())
        yield driver, trace, path
    finally:
        driver.quit()


def text(driver, id_):
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, id_).text


def click(driver, id_):
    from selenium.webdriver.common.by import By

    driver.find_element(By.ID, id_).click()


def shown(driver, trace, k):
    """The page shows position k of the trace."""
    assert text(driver, "step") == str(k)
    assert text(driver, "move-text") == ("start" if k == 0 else trace.moves[k - 1])
    assert text(driver, "score") == trace.score_text(k)
    assert text(driver, "moves") == str(trace.positions[k]["moves"])
    assert driver.execute_script("return document.getElementById('jump').value") == str(k)


def board_picture(driver) -> np.ndarray:
    from selenium.webdriver.common.by import By

    png = driver.find_element(By.ID, "board").screenshot_as_png
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def test_page_is_self_contained(page):
    _, _, path = page
    html = path.read_text()
    assert "http://" not in html and "https://" not in html and "<link" not in html


def test_step_jump_and_play(page):
    from selenium.webdriver.common.by import By

    driver, trace, _ = page
    n = len(trace.moves)
    assert text(driver, "total") == str(n)
    shown(driver, trace, 0)
    assert driver.find_element(By.ID, "prev").get_attribute("disabled")

    # The board is a canvas of the game's size that the page has painted, not blank.
    h, w = board_size(trace.code)
    size = driver.execute_script(
        "var b = document.getElementById('board'); return [b.height, b.width];"
    )
    assert size == [h, w]
    deadline = time.time() + 10  # the sprites load asynchronously
    first = board_picture(driver)
    while first.std() < 30 and time.time() < deadline:
        time.sleep(0.1)
        first = board_picture(driver)
    assert first.std() > 30 and len(np.unique(first.reshape(-1, 3), axis=0)) > 20
    # It looks like the Python picture of the same position: same felt, cards in the same
    # places (text may be drawn by another font, so not every pixel agrees).
    python = render_position(trace.positions[0])
    shot = np.asarray(Image.fromarray(first).resize((w, h)))
    close = (np.abs(shot.astype(int) - python.astype(int)).sum(axis=2) < 60).mean()
    assert close > 0.9, close

    for k in range(1, n + 1):  # step forward through every move
        click(driver, "next")
        shown(driver, trace, k)
    assert driver.find_element(By.ID, "next").get_attribute("disabled")
    final = board_picture(driver)
    assert (final != first).any()
    python = render_position(trace.positions[-1])
    shot = np.asarray(Image.fromarray(final).resize((w, h)))
    assert (np.abs(shot.astype(int) - python.astype(int)).sum(axis=2) < 60).mean() > 0.9
    click(driver, "prev")
    shown(driver, trace, n - 1)

    # Jump with the slider and with the move list.
    driver.execute_script(
        "var j = document.getElementById('jump'); j.value = 5;j.dispatchEvent(new Event('input'));"
    )
    shown(driver, trace, 5)
    driver.find_element(By.CSS_SELECTOR, '#move-list li[data-step="9"]').click()
    shown(driver, trace, 9)
    click(driver, "first")
    shown(driver, trace, 0)

    # Play runs on by itself; pause stops it.
    driver.find_element(By.CSS_SELECTOR, '#speed option[value="100"]').click()
    click(driver, "play")
    assert text(driver, "play") == "Pause"
    deadline = time.time() + 10
    while int(text(driver, "step")) < 3 and time.time() < deadline:
        time.sleep(0.05)
    click(driver, "play")
    assert text(driver, "play") == "Play"
    k = int(text(driver, "step"))
    assert k >= 3
    time.sleep(0.4)
    shown(driver, trace, k)  # paused: nothing moves

    click(driver, "last")
    shown(driver, trace, n)
    from selenium.webdriver.common.keys import Keys

    driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_LEFT)
    shown(driver, trace, n - 1)
