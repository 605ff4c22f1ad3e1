#!/usr/bin/python3
"""Drives `scenesound view`'s page in a real headless Chromium (Debian's chromium and
chromium-driver, through python3-selenium) for SceneSoundViewTests, and prints one JSON object
of what it saw: times from a change on the desktop to the page showing it, what the page shows
after its controls were used, the HTTP status of requests the server must refuse.

Usage: browser_scenario.py CONFIG_JSON. Each step runs only when its keys are in the config.
The Swift test starts and stops everything else (daemon, X, PulseAudio, the view) by PID and
checks the server's side of each step."""
import http.client
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

cfg = json.loads(sys.argv[1])
out = {"steps": []}


def wait(condition, timeout_seconds, what):
    """Polls every 5 ms; the seconds it took, or raises naming what never came."""
    start = time.monotonic()
    while True:
        try:
            if condition():
                return time.monotonic() - start
        except Exception:
            pass
        if time.monotonic() - start > timeout_seconds:
            raise TimeoutError(f"{what}: not within {timeout_seconds} s")
        time.sleep(0.005)


def fresh(action):
    """Runs `action` on elements found anew: the map draws itself anew with every update (up
    to 30 a second), and a list when what it lists changes, so an element found a moment ago
    may be gone."""
    for _ in range(50):
        try:
            return action()
        except StaleElementReferenceException:
            time.sleep(0.01)
    return action()


def js(script, *args):
    return driver.execute_script(script, *args)


def shown_after(change, condition, timeout_seconds, what):
    """Milliseconds from `change()` to the page first drawing what the JavaScript expression
    `condition` tests, timed by the page itself: an observer of its DOM notes the moment
    (Date.now(), the wall clock this process reads too), so the harness's own polling through
    the driver (tens of ms a call on a busy machine) is not counted. Also returns what the
    polling alone saw, for the printout."""
    js("window.scenarioShownAtMs = null;"
       "if (window.scenarioObserver) window.scenarioObserver.disconnect();"
       "const holds = () => { try { return !!(" + condition + "); } catch (e) { return false; } };"
       "window.scenarioObserver = new MutationObserver(() => {"
       "  if (window.scenarioShownAtMs === null && holds()) window.scenarioShownAtMs = Date.now(); });"
       "window.scenarioObserver.observe(document.body, {subtree: true, childList: true, attributes: true});")
    start_ms = time.time() * 1000
    change()
    polled = wait(lambda: js("return window.scenarioShownAtMs") is not None, timeout_seconds, what)
    shown_ms = js("window.scenarioObserver.disconnect(); return window.scenarioShownAtMs")
    return shown_ms - start_ms, (polled * 1000)


def mark_place(scene):
    """The server's azimuth (degrees) and distance (metres) of a scene, as the page shows it."""
    return js("const g = document.querySelector('g.mark[data-scene=\"' + arguments[0] + '\"]');"
              "return g ? [parseFloat(g.dataset.azimuthDegrees), parseFloat(g.dataset.distanceMetres)] : null;", scene)


def mark_position(scene):
    return js("const g = document.querySelector('g.mark[data-scene=\"' + arguments[0] + '\"]');"
              "return g ? [parseFloat(g.dataset.x), parseFloat(g.dataset.y)] : null;", scene)


def refused_statuses():
    """Requests the server must refuse, sent by hand: (status, reason) of each."""
    url = urllib.parse.urlsplit(cfg["url"])
    host, port = url.hostname, url.port
    token = urllib.parse.parse_qs(url.query)["token"][0]
    good_host = f"127.0.0.1:{port}"
    websocket = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
                 "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
    cookie = {"Cookie": f"scenesound_view_{port}={token}"}
    cases = {
        "no_token": ("/", {"Host": good_host}),
        "wrong_token": ("/?token=" + "0" * 32, {"Host": good_host}),
        "foreign_host": (f"/?token={token}", {"Host": f"attacker.example:{port}"}),
        "foreign_origin": (f"/?token={token}", {"Host": good_host, "Origin": "http://attacker.example"}),
        "websocket_no_token": ("/ws", {"Host": good_host, "Origin": f"http://{good_host}", **websocket}),
        "websocket_foreign_origin": ("/ws", {"Host": good_host, "Origin": "http://attacker.example", **websocket, **cookie}),
        "websocket_foreign_host": ("/ws", {"Host": f"attacker.example:{port}", "Origin": f"http://attacker.example:{port}",
                                           **websocket, **cookie}),
        # The control: the same upgrade as the page's is accepted.
        "websocket_allowed": ("/ws", {"Host": good_host, "Origin": f"http://{good_host}", **websocket, **cookie}),
        "page_with_cookie": ("/", {"Host": good_host, **cookie}),
    }
    result = {}
    for name, (path, headers) in cases.items():
        connection = http.client.HTTPConnection(host, port, timeout=5)
        connection.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
        for key, value in headers.items():
            connection.putheader(key, value)
        connection.endheaders()
        response = connection.getresponse()
        result[name] = response.status
        connection.close()
    return result


profile = tempfile.mkdtemp(prefix="scenesound-view-chromium-")
options = Options()
options.binary_location = cfg.get("chromium", "/usr/bin/chromium")
for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,720", "--no-first-run",
                 "--disable-extensions", "--disable-background-networking", "--disable-sync", "--hide-scrollbars",
                 "--force-device-scale-factor=1", f"--user-data-dir={profile}"]:
    options.add_argument(argument)
driver = webdriver.Chrome(service=Service(cfg.get("chromedriver", "/usr/bin/chromedriver")), options=options)
try:
    # The page's own area at 1280x720 (a headless window's size includes its frame).
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 720, "deviceScaleFactor": 1, "mobile": False})
    driver.get(cfg["url"])
    out["first_state_seconds"] = wait(lambda: int(js("return document.body.dataset.updates || '0'")) >= 1, 15, "the first scene")
    out["address_after_token"] = driver.current_url
    out["viewport"] = js("return [window.innerWidth, window.innerHeight]")

    if "device_spatial_mode" in cfg:
        # The output device's spatial mode chosen on the page (`scenesound spatial`): the page
        # shows the device and its rendering, and then the mode the server reports.
        mode = cfg["device_spatial_mode"]
        out["device_text"] = driver.find_element(By.ID, "device-text").text
        out["rendering_text_before"] = driver.find_element(By.ID, "rendering-text").text
        Select(driver.find_element(By.ID, "device-spatial")).select_by_value(mode)
        out["device_spatial_seconds"] = wait(lambda: js("return document.getElementById('rendering-text').dataset.spatial") == mode
                                             and driver.find_element(By.ID, "message").text.startswith("done: scenesound spatial"),
                                             10, f"the device's spatial mode {mode} shown")
        out["rendering_text"] = driver.find_element(By.ID, "rendering-text").text
        out["device_spatial_selected"] = driver.find_element(By.ID, "device-spatial").get_attribute("value")
        out["steps"].append("device spatial mode chosen")

    if "device_render" in cfg:
        # The device's rendering chosen on the page (`scenesound device render`).
        render = cfg["device_render"]
        Select(driver.find_element(By.ID, "device-render")).select_by_value(render)
        out["device_render_seconds"] = wait(lambda: js("return document.getElementById('rendering-text').dataset.preference") == render
                                            and driver.find_element(By.ID, "message").text.startswith("done: scenesound device render"),
                                            10, f"the device's rendering {render} shown")
        out["rendering_text_after_render"] = driver.find_element(By.ID, "rendering-text").text
        out["steps"].append("device rendering chosen")

    if "app" in cfg:
        app = cfg["app"]
        out["app_shown_seconds"] = wait(lambda: driver.find_elements(By.CSS_SELECTOR, f'li[data-app="{app}"]'), 20, f"the app {app} listed")
        out["app_mark_seconds"] = wait(lambda: js("return [...document.querySelectorAll('#scenes li')].some(li => li.textContent.includes(arguments[0]))"
                                                  " || [...document.querySelectorAll('g.mark')].length > 0", app), 10, "the app's mark")
        out["steps"].append("app shown")

    if "metered_scene" in cfg:
        scene = cfg["metered_scene"]
        out["meter_seconds"] = wait(lambda: js("const g = document.querySelector('g.mark[data-scene=\"' + arguments[0] + '\"]');"
                                               "return !!g && !!g.querySelector('rect.meter-fill') && / -?[0-9]+ dB$/.test(g.querySelector('text').textContent)",
                                               scene), 10, f"a level meter at {scene}")
        out["meter_label"] = js("return document.querySelector('g.mark[data-scene=\"' + arguments[0] + '\"] text').textContent", scene)
        out["steps"].append("meter shown")

    if "alert_app" in cfg:
        app = cfg["alert_app"]
        out["alert_seconds"] = wait(lambda: js("return [...document.querySelectorAll('g.mark.alert')].some(g => g.textContent.includes(arguments[0])"
                                               " && getComputedStyle(g.querySelector('.dot')).animationName === 'flash')", app),
                                    10, f"the alert of {app} flashing")
        out["steps"].append("alert flashing")

    if "alert_play_scene" in cfg:
        # An alert played from the server's sample cache (`scenesound alert`): its scene flashes
        # and shows the play's level.
        scene = cfg["alert_play_scene"]
        out["alert_play_seconds"] = wait(lambda: js("const g = document.querySelector('g.mark.alert[data-scene=\"' + arguments[0] + '\"]');"
                                                    "return !!g && getComputedStyle(g.querySelector('.dot')).animationName === 'flash'"
                                                    " && !!g.querySelector('rect.meter-fill')", scene),
                                         10, f"the alert played at {scene} flashing with its level")
        out["steps"].append("alert play flashing")

    if "window_scene" in cfg:
        scene = cfg["window_scene"]
        wait(lambda: mark_position(scene) is not None, 10, f"the mark of {scene}")
        before = mark_position(scene)
        env = dict(os.environ, DISPLAY=cfg["display"])
        issued = {}

        def move():
            start = time.monotonic()
            subprocess.run(["xdotool", "windowmove", cfg["window_id"], str(cfg["move_to_x"]), str(cfg["move_to_y"])], env=env, check=True)
            issued["ms"] = (time.monotonic() - start) * 1000
        moved = ("(() => { const g = document.querySelector('g.mark[data-scene=' + JSON.stringify(" + json.dumps(scene) + ") + ']');"
                 " return g && Math.abs(parseFloat(g.dataset.x) - " + repr(before[0]) + ") > 5; })()")
        out["window_move_ms"], out["window_move_polled_ms"] = shown_after(move, moved, 5, "the window's mark moving")
        out["xdotool_ms"] = issued["ms"]
        out["window_mark_before"] = before
        out["window_mark_after"] = mark_position(scene)
        out["steps"].append("window moved")

    if "opentrack_port" in cfg:
        yaw = cfg["opentrack_yaw_degrees"]
        packet = struct.pack("<6d", 0, 0, 0, yaw, 0, 0)
        sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        turned = "Math.abs(parseFloat(document.getElementById('head').dataset.yawDegrees) - " + repr(float(yaw)) + ") < 1"
        out["head_turn_ms"], out["head_turn_polled_ms"] = shown_after(
            lambda: sender.sendto(packet, ("127.0.0.1", cfg["opentrack_port"])), turned, 5, "the head turning")
        out["head_transform"] = js("return document.getElementById('head').getAttribute('transform')")
        sender.close()
        out["steps"].append("head turned")

    if "hidden_yaw_degrees" in cfg:
        # The page hidden (as a browser reports a background tab): it tells the server, which
        # then sends it nothing, and it draws nothing, until it is visible again.
        def set_hidden(hidden):
            js("Object.defineProperty(document, 'hidden', {configurable: true, get: () => arguments[0]});"
               "Object.defineProperty(document, 'visibilityState', {configurable: true, get: () => arguments[0] ? 'hidden' : 'visible'});"
               "document.dispatchEvent(new Event('visibilitychange'));", hidden)
        set_hidden(True)
        received = int(js("return document.body.dataset.received"))
        updates = int(js("return document.body.dataset.updates"))
        yaw = cfg["hidden_yaw_degrees"]
        sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sender.sendto(struct.pack("<6d", 0, 0, 0, yaw, 0, 0), ("127.0.0.1", cfg["opentrack_port"]))
        time.sleep(0.5)  # a negative check: nothing may arrive in this half second
        out["received_while_hidden"] = int(js("return document.body.dataset.received")) - received
        out["drawn_while_hidden"] = int(js("return document.body.dataset.updates")) - updates
        set_hidden(False)
        out["head_after_visible_ms"] = wait(lambda: abs(float(js("return document.getElementById('head').dataset.yawDegrees")) - yaw) < 1,
                                            5, "the head drawn once visible again") * 1000
        sender.close()
        out["steps"].append("hidden and visible")

    if "placed_scene" in cfg:
        scene = cfg["placed_scene"]
        wait(lambda: mark_position(scene) is not None, 10, f"the mark of {scene}")
        before = mark_place(scene)
        # The keyboard: focus the mark (it keeps the focus as the page is drawn anew), one step
        # left (+5°).
        js("document.querySelector('g.mark[data-scene=\"' + arguments[0] + '\"]').focus()", scene)
        ActionChains(driver).send_keys(Keys.ARROW_LEFT).perform()
        wait(lambda: abs(mark_place(scene)[0] - before[0]) > 1, 5, "the placed mark moving by the keyboard")
        out["keyboard_from"] = before
        out["keyboard_to"] = mark_place(scene)
        # The pointer: drag it 60 px towards the listener (nearer), staying on the map.
        before = mark_place(scene)
        fresh(lambda: ActionChains(driver).click_and_hold(driver.find_element(By.CSS_SELECTOR, f'g.mark[data-scene="{scene}"] circle.dot'))
              .move_by_offset(0, 30).move_by_offset(0, 30).release().perform())
        wait(lambda: mark_place(scene)[1] < before[1] - 0.05, 5, "the placed mark moving by a drag")
        out["dragged_from"] = before
        out["dragged_to"] = mark_place(scene)
        out["steps"].append("scene placed")

    if "screenshot" in cfg:
        time.sleep(0.3)  # the alert flash and meters settle: a picture, not a measurement
        driver.save_screenshot(cfg["screenshot"])
        out["steps"].append("screenshot")

    if "app_spatial_mode" in cfg:
        # The app's spatial mode chosen on the page (`apps spatial`): its select shows what the
        # server then reports.
        app, mode = cfg["app"], cfg["app_spatial_mode"]
        fresh(lambda: Select(driver.find_element(By.CSS_SELECTOR, f'select[data-spatial="{app}"]')).select_by_value(mode))
        out["app_spatial_seconds"] = wait(lambda: fresh(lambda: driver.find_element(By.CSS_SELECTOR, f'select[data-spatial="{app}"]')
                                                        .get_attribute("value")) == mode
                                          and driver.find_element(By.ID, "message").text.startswith("done: scenesound apps spatial"),
                                          10, f"{app} playing {mode}")
        out["steps"].append("app spatial mode chosen")

    if "app" in cfg:
        app = cfg["app"]
        # The button stays the same element while the page is drawn anew (meters move up to 30
        # times a second): a click runs from press to release, and a button replaced between
        # the two loses it (a fresh-clone run once lost this very click so).
        js("window.excludeButton = document.querySelector(arguments[0])", f'button[data-exclude="{app}"]')
        if "passing_app" in cfg:
            # Another app comes and goes meanwhile (an alert's stream, a notification): the row
            # stays too (ci108 lost it so, the alerter's stream ending during this wait).
            passer, name = subprocess.Popen(cfg["passing_app"]), cfg["passing_app_name"]
            listed = lambda: driver.find_elements(By.CSS_SELECTOR, f'li[data-app="{name}"]')
            wait(listed, 10, f"{name} listed")
            passer.wait(timeout=15)
            wait(lambda: not listed(), 10, f"{name} no longer listed")
            out["steps"].append("another app came and went")
        updates = int(js("return document.body.dataset.updates"))
        wait(lambda: int(js("return document.body.dataset.updates")) >= updates + 3, 5, "three more updates drawn")
        out["exclude_button_kept"] = js("return window.excludeButton.isConnected")
        fresh(lambda: driver.find_element(By.CSS_SELECTOR, f'button[data-exclude="{app}"]').click())
        out["app_excluded_seconds"] = wait(lambda: driver.find_elements(By.CSS_SELECTOR, f'li[data-excluded="{app}"]')
                                           and not driver.find_elements(By.CSS_SELECTOR, f'li[data-app="{app}"]'), 10,
                                           f"{app} shown as left alone")
        out["message_after_exclude"] = driver.find_element(By.ID, "message").text
        out["steps"].append("app excluded")

    if "hrtf_set" in cfg:
        name = cfg["hrtf_set"]
        Select(driver.find_element(By.ID, "hrtf-set")).select_by_value(name)
        driver.find_element(By.ID, "hrtf-use").click()
        out["hrtf_switch_seconds"] = wait(lambda: name in driver.find_element(By.ID, "hrtf-current").text, 90, f"the HRTF set {name} in use")
        out["hrtf_shown"] = driver.find_element(By.ID, "hrtf-current").text
        out["steps"].append("hrtf chosen")

    if "compare_with" in cfg:
        Select(driver.find_element(By.ID, "hrtf-other")).select_by_value(cfg["compare_with"])
        driver.find_element(By.ID, "hrtf-compare").click()
        out["compare_seconds"] = wait(lambda: driver.find_element(By.ID, "message").text.startswith("done: scenesound hrtf compare"), 120,
                                      "the A/B comparison played")
        out["message_after_compare"] = driver.find_element(By.ID, "message").text
        out["steps"].append("hrtf compared")

    if "eq_path" in cfg:
        field = driver.find_element(By.ID, "eq-path")
        field.send_keys(cfg["eq_path"])
        driver.find_element(By.ID, "eq-use").click()
        out["eq_seconds"] = wait(lambda: driver.find_element(By.ID, "eq-current").text == cfg["eq_path"], 10, "the EQ in use")
        out["steps"].append("eq chosen")

    if cfg.get("recenter"):
        driver.find_element(By.ID, "recenter").click()
        out["recenter_seconds"] = wait(lambda: abs(float(js("return document.getElementById('head').dataset.yawDegrees"))) < 0.5, 5,
                                       "the head recentred")
        out["steps"].append("recentered")

    if "tracking_mode" in cfg:
        mode, seconds = cfg["tracking_mode"], cfg["recenter_after_seconds"]
        Select(driver.find_element(By.ID, "tracking-mode")).select_by_value(mode)
        field = driver.find_element(By.ID, "recenter-after")
        field.clear()
        field.send_keys(str(seconds))
        driver.find_element(By.ID, "tracking-use").click()
        out["tracking_seconds"] = wait(lambda: js("const e = document.getElementById('tracking-current'); "
                                                  "return e.dataset.tracking + ' ' + e.dataset.recenterAfterSeconds") == f"{mode} {seconds}",
                                       5, f"tracking {mode}, recentering after {seconds} s")
        out["steps"].append("tracking chosen")

    if "tracker_choice" in cfg:
        choice, rate = cfg["tracker_choice"], cfg["tracker_rate_poses_per_second"]
        Select(driver.find_element(By.ID, "tracker-choice")).select_by_value(choice)
        field = driver.find_element(By.ID, "tracker-rate")
        field.clear()
        field.send_keys(str(rate))
        driver.find_element(By.ID, "tracker-use").click()
        out["tracker_seconds"] = wait(lambda: js("const e = document.getElementById('tracker-current'); "
                                                 "return e.dataset.trackerChoice + ' ' + e.dataset.rateLimitPosesPerSecond") == f"{choice} {rate}",
                                      5, f"tracker {choice} at {rate} poses/s")
        out["tracker_text"] = driver.find_element(By.ID, "tracker-current").text
        out["steps"].append("tracker chosen")

    if "minimize_window_id" in cfg:
        scene = cfg["window_scene"]
        subprocess.run(["xdotool", "windowminimize", cfg["minimize_window_id"]], env=dict(os.environ, DISPLAY=cfg["display"]), check=True)
        out["muffled_ms"] = wait(lambda: js("return document.querySelector('g.mark[data-scene=\"' + arguments[0] + '\"]').classList.contains('muffled')",
                                           scene), 5, "the minimized window's mark dimmed") * 1000
        out["steps"].append("window minimized")

    if "screenshot_4k" in cfg:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 3840, "height": 2160, "deviceScaleFactor": 1, "mobile": False})
        wait(lambda: js("return window.innerWidth === 3840 && document.getElementById('map').getBoundingClientRect().width > 1280"),
             5, "the page laid out at 3840x2160")
        driver.save_screenshot(cfg["screenshot_4k"])
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 720, "deviceScaleFactor": 1, "mobile": False})

    if cfg.get("refusals"):
        out["statuses"] = refused_statuses()
        out["steps"].append("refusals")

    out["console_errors"] = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
except Exception as error:
    out["error"] = f"{type(error).__name__}: {error}"
    try:
        out["page_text"] = driver.find_element(By.TAG_NAME, "body").text[:2000]
    except Exception:
        pass
finally:
    # When the page began to close (CLOCK_MONOTONIC, as the tests' clock): the browser's quit
    # takes a second or more on a busy machine, and the page's connection closes at its start.
    out["quit_began_monotonic_seconds"] = time.monotonic()
    driver.quit()
print(json.dumps(out))
