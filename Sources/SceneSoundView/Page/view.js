// SceneSound's live view: draws the scene the server reports (pushed over the WebSocket as the
// model SceneModel.swift defines) the way `scenesound status --plot` draws it, and sends the
// page's actions back as the CLI verbs' operations. Nothing happens while the page is hidden.
"use strict";
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const SIZE = 640, LISTENER_Y = SIZE * 0.72;   // SceneGeometry.mapSizePixels, listenerYFraction
  const COLOUR = { listener: "#0072b2", window: "#e69f00", sounding: "#d55e00", muffled: "#999999",
                   silent: "#c8c8c8", monitor: "#555555" };
  const $ = (id) => document.getElementById(id);
  let socket = null, latest = null, drawn = null, pending = false, nextID = 1, drag = null, setup = null;
  let updates = 0, received = 0;

  // SceneGeometry.radiusPixels: 4 px with nothing playing, 6 (−60 dB) to 22 px (0 dB).
  function radius(level) {
    if (level === null || level === undefined) return 4;
    return 6 + 16 * Math.max(0, Math.min(1, (level + 60) / 60));
  }
  function scale(model) { return SIZE / model.metres_across; }
  function point(model, x, z) { const s = scale(model); return [SIZE / 2 + x * s, LISTENER_Y + z * s]; }
  function el(name, attrs, parent) {
    const node = document.createElementNS(SVG, name);
    for (const k in attrs) node.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(node);
    return node;
  }
  function text(parent, x, y, cls, content) {
    const t = el("text", { x: x.toFixed(1), y: y.toFixed(1), class: cls }, parent);
    t.textContent = content;
    return t;
  }
  function hasLevel(mark) { return mark.level_db !== null && mark.level_db !== undefined; }
  function levelText(mark) {
    // Captured apps' streams and the server's plays (system sounds, alerts) have no level in
    // the server's status: named or counted, not metered.
    const names = mark.apps.concat(mark.unlisted_sounds ? [mark.unlisted_sounds + (mark.unlisted_sounds > 1 ? " sounds" : " sound")] : []);
    const apps = names.length ? names.join(", ") + " playing" + (hasLevel(mark) ? ", " : " (no level reported)") : "";
    if (!hasLevel(mark)) return apps || "nothing plays";
    return apps + (mark.level_db <= -120 ? "silent" : Math.round(mark.level_db) + " dB");
  }

  function connect() {
    socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
    socket.onopen = () => { setConnection("live", false); sendVisibility(); };
    socket.onclose = () => { setConnection("disconnected from scenesound view — retrying", true); socket = null; setTimeout(connect, 1000); };
    socket.onmessage = (event) => {
      received++;
      document.body.dataset.received = String(received);
      if (document.hidden) return;
      const message = JSON.parse(event.data);
      if (message.type === "setup") { setup = message; fillSets(); }
      else if (message.type === "state") {
        latest = message;
        if (!pending) { pending = true; requestAnimationFrame(render); }
      } else if (message.type === "reply") {
        say(message.message, !message.ok);
      }
    };
  }
  function setConnection(what, lost) { const c = $("connection"); c.textContent = what; c.classList.toggle("lost", lost); }
  function sendVisibility() {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "visible", visible: !document.hidden }));
    // Visible again: the latest state kept while hidden is drawn at once (the server sends more).
    if (!document.hidden && latest && !pending) { pending = true; requestAnimationFrame(render); }
  }
  document.addEventListener("visibilitychange", sendVisibility);
  function act(action) {
    if (!socket || socket.readyState !== WebSocket.OPEN) return say("not connected", true);
    action.id = nextID++;
    socket.send(JSON.stringify(action));
  }
  function say(message, error) { const m = $("message"); m.textContent = message; m.classList.toggle("error", !!error); }

  function render() {
    pending = false;
    // A drag in progress keeps its mark: the scene is drawn again as the drag ends. Hidden
    // (a frame asked for just before), nothing is drawn: visible again, the latest is.
    if (!latest || drag || document.hidden) return;
    updates++;
    document.body.dataset.updates = String(updates);
    if (latest.error) { setConnection(latest.error, true); return; }
    setConnection("live", false);
    const model = latest.scene;
    drawn = model;
    // Drawn anew each time: the keyboard's focus goes back to the same mark or button.
    const focused = focusKey(document.activeElement);
    drawMap(model);
    drawPanel(model);
    if (focused) {
      const again = document.querySelector(focused);
      if (again && again !== document.activeElement) again.focus();
    }
  }
  function focusKey(element) {
    if (!element || !element.dataset) return null;
    for (const key of ["scene", "exclude", "include", "spatial"]) {
      if (element.dataset[key] !== undefined) {
        const tag = element.tagName.toLowerCase() === "g" ? "g.mark" : element.tagName.toLowerCase();
        return tag + "[data-" + key + "=\"" + CSS.escape(element.dataset[key]) + "\"]";
      }
    }
    return null;
  }

  function drawMap(model) {
    const svg = $("map");
    while (svg.childNodes.length > 1) svg.removeChild(svg.lastChild);
    el("rect", { width: "100%", height: "100%", fill: "#fbfaf7" }, svg);
    text(svg, 12, 22, "title", "seen from above (" + model.metres_across.toFixed(2) + " m across)");
    // What labels keep off: monitors, their names, windows, marks, the head (as on the --plot map).
    const reserved = [];
    for (const m of model.monitors) {
      const [x1, y1] = point(model, m.left_metres, m.z_metres), [x2] = point(model, m.right_metres, m.z_metres);
      el("line", { class: "monitor", x1, y1, x2, y2: y1, stroke: COLOUR.monitor, "stroke-width": 6 }, svg);
      const name = text(svg, x1, y1 - 10, "monitor-name", m.name + (m.primary ? " (primary)" : ""));
      reserved.push({ x: x1, y: y1 - 5, w: x2 - x1, h: 10 }, { x: x1, y: y1 - 22, w: name.getComputedTextLength(), h: 14 });
    }
    const [lx, ly] = point(model, 0, 0);
    reserved.push({ x: lx - 30, y: ly - 30, w: 60, h: 60 });
    // The head: yaw + turns left, i.e. anticlockwise seen from above.
    const head = el("g", { id: "head", "data-yaw-degrees": model.head_yaw_degrees,
                           transform: "rotate(" + (-model.head_yaw_degrees) + " " + lx + " " + ly + ")" }, svg);
    el("line", { x1: lx, y1: ly, x2: lx, y2: ly - 28, stroke: COLOUR.listener, "stroke-width": 4 }, head);
    el("circle", { cx: lx, cy: ly, r: 14, fill: COLOUR.listener }, head);
    el("circle", { cx: lx - 14, cy: ly, r: 4, fill: COLOUR.listener }, head);
    el("circle", { cx: lx + 14, cy: ly, r: 4, fill: COLOUR.listener }, head);
    const s = scale(model);
    const labels = [];
    for (const mark of model.marks) {
      const [x, y] = point(model, mark.x_metres, mark.z_metres);
      const visible = (mark.state || "visible") === "visible";
      const g = el("g", { class: "mark" + (visible ? "" : " muffled") + (mark.alert ? " alert" : "") + (mark.placed ? " placed" : ""),
                          "data-scene": mark.id, "data-x": x.toFixed(1), "data-y": y.toFixed(1),
                          "data-azimuth-degrees": mark.azimuth_degrees, "data-distance-metres": mark.distance_metres,
                          transform: "translate(" + x.toFixed(1) + " " + y.toFixed(1) + ")" }, svg);
      if (mark.placed) {
        g.setAttribute("tabindex", "0");
        g.setAttribute("role", "button");
        g.setAttribute("aria-label", mark.label + ": placed at " + mark.azimuth_degrees + "°, " + mark.distance_metres + " m; arrow keys move it");
        g.addEventListener("pointerdown", (e) => startDrag(e, mark, g));
        g.addEventListener("keydown", (e) => nudge(e, mark));
      }
      if (mark.width_metres > 0) {
        const half = mark.width_metres / 2 * s;
        el("line", { class: "window", x1: -half, y1: 0, x2: half, y2: 0, stroke: COLOUR.window, "stroke-width": 10, opacity: 0.7 }, g);
        reserved.push({ x: x - half, y: y - 5, w: 2 * half, h: 10 });
      }
      // An app playing with no level reported is drawn as sounding, at a middle size.
      const unmetered = mark.apps.length + mark.unlisted_sounds > 0;
      const sounding = hasLevel(mark) || unmetered;
      const r = hasLevel(mark) ? radius(mark.level_db) : unmetered ? radius(-30) : radius(null);
      const colour = !sounding ? COLOUR.silent : visible ? COLOUR.sounding : COLOUR.muffled;
      el("circle", { class: "dot", cx: 0, cy: 0, r: r.toFixed(1), fill: colour, opacity: 0.85 }, g);
      // The level meter under the mark: −60 to 0 dB.
      if (hasLevel(mark)) {
        const fill = Math.max(0, Math.min(1, (mark.level_db + 60) / 60));
        el("rect", { class: "meter-bg", x: -15, y: r + 4, width: 30, height: 4, fill: "#e4e2dc" }, g);
        el("rect", { class: "meter-fill", x: -15, y: r + 4, width: (30 * fill).toFixed(1), height: 4, fill: COLOUR.sounding }, g);
      }
      labels.push({ g, r, x, y, text: mark.label + " " + levelText(mark) });
    }
    // Labels right of their mark, else left, else a line further down or up, clear of the
    // marks and of the labels placed before (as the --plot map lays them out). Measured as drawn.
    const placed = reserved.concat(labels.map((l) => ({ x: l.x - l.r, y: l.y - l.r, w: 2 * l.r, h: 2 * l.r })));
    for (const l of labels) {
      const t = text(l.g, 0, 0, "label", l.text);
      const width = t.getComputedTextLength(), height = 14;
      const tries = [[l.r + 4, -height / 2], [-l.r - 4 - width, -height / 2]];
      for (let step = 1; step < 16; step++) {
        for (const dy of [step * height, -step * height]) tries.push([l.r + 4, -height / 2 + dy], [-l.r - 4 - width, -height / 2 + dy]);
      }
      let chosen = tries[0];
      for (const [dx, dy] of tries) {
        const box = { x: l.x + dx, y: l.y + dy, w: width, h: height };
        if (box.y < 28) continue;
        if (placed.some((p) => box.x < p.x + p.w && p.x < box.x + box.w && box.y < p.y + p.h && p.y < box.y + box.h)) continue;
        chosen = [dx, dy];
        break;
      }
      placed.push({ x: l.x + chosen[0], y: l.y + chosen[1], w: width, h: height });
      t.setAttribute("x", chosen[0].toFixed(1));
      t.setAttribute("y", (chosen[1] + 11).toFixed(1));
    }
  }

  function drawPanel(model) {
    $("head-text").textContent = "yaw " + model.head_yaw_degrees.toFixed(1) + "°, pitch " + model.head_pitch_degrees.toFixed(1) +
      "°, roll " + model.head_roll_degrees.toFixed(1) + "°";
    $("tracker-text").textContent = model.tracker ? "tracker " + model.tracker + ", " + (model.tracker_poses_per_second || 0) + " poses/s" +
      (model.tracking && model.tracking !== "full" ? ", tracking " + model.tracking : "") : "no tracker live";
    $("tracking-current").textContent = "following " + (model.tracking || "full") +
      (model.recenter_after_seconds ? ", recentering after " + model.recenter_after_seconds + " s at rest" : ", no automatic recentering");
    $("tracking-current").dataset.tracking = model.tracking || "full";
    $("tracking-current").dataset.recenterAfterSeconds = model.recenter_after_seconds || 0;
    // What the server follows, unless the user has picked another and not used it yet.
    if (!$("tracking-mode").dataset.picked) $("tracking-mode").value = model.tracking || "full";
    const choice = model.tracker_choice || "any";
    const limit = model.tracker_rate_limit_poses_per_second;
    $("tracker-current").textContent = (choice === "any" ? "following any tracker" : "following " + choice + " only") +
      (limit ? ", at most " + limit + " poses/s from each" : "");
    $("tracker-current").dataset.trackerChoice = choice;
    $("tracker-current").dataset.rateLimitPosesPerSecond = limit || 0;
    if (!$("tracker-choice").dataset.picked) $("tracker-choice").value = choice;
    drawDevice(model);
    $("hrtf-current").textContent = model.hrtf_path;
    $("eq-current").textContent = model.headphone_eq_path || "none";
    $("capture-text").textContent = model.capture_state === null || model.capture_state === undefined
      ? "app capture is off (start scenesoundd with --capture-apps)" : "capture " + model.capture_state;
    drawApps(model);
    drawExcluded(model);
    const scenes = $("scenes"); scenes.replaceChildren();
    for (const mark of model.marks) {
      const li = document.createElement("li"); li.dataset.scene = mark.id;
      li.textContent = mark.label + ": " + mark.azimuth_degrees.toFixed(0) + "°, " + mark.distance_metres.toFixed(2) + " m, " +
        levelText(mark) + ((mark.state || "visible") === "visible" ? "" : " (" + mark.state + ", muffled)") + (mark.alert ? " — alert" : "");
      if (hasLevel(mark)) {
        const meter = document.createElement("span"); meter.className = "meter"; meter.setAttribute("aria-hidden", "true");
        const bar = document.createElement("span"); bar.style.width = (100 * Math.max(0, Math.min(1, (mark.level_db + 60) / 60))) + "%";
        meter.appendChild(bar); li.appendChild(meter);
      }
      scenes.appendChild(li);
    }
    if (!model.marks.length) { const li = document.createElement("li"); li.textContent = "no scenes"; scenes.appendChild(li); }
  }

  // A list with controls keeps its elements while it lists the same things: drawn anew with
  // every update (30 a second while a meter moves), a button replaced between the press and
  // the release of a click loses the click, and a menu open on a select closes.
  function drawControls(list, shape, build) {
    const key = JSON.stringify(shape);
    if (list.dataset.shape !== key) {
      list.dataset.shape = key;
      list.replaceChildren();
      build(list);
    }
  }

  // Each app's row (its Exclude button, its menu) lives as long as the app is listed: another
  // app coming or going (an alert's stream ending) or its own mode changing leaves it in
  // place, so a click pressed on the button is released on it too.
  function drawApps(model) {
    const list = $("apps");
    const label = (app) => (app.application || app.name) + " (" + app.kind + ", " + app.azimuth_degrees.toFixed(0) + "°) ";
    // A row per stream, keyed by the app's name and which of its streams it is (an app with
    // two streams has two rows, one Exclude for the app in each).
    const rows = new Map(), streams = new Map();
    for (const li of list.children) if (li.dataset.row !== undefined) rows.set(li.dataset.row, li);
    const wanted = model.apps.map((app) => {
      const index = streams.get(app.name) || 0;
      streams.set(app.name, index + 1);
      const key = app.name + "\n" + index;
      const li = rows.get(key) || appRow(app, key);
      const text = li.querySelector("span.label");
      if (text.textContent !== label(app)) text.textContent = label(app);
      drawAppSpatial(li, app);
      return li;
    });
    if (!wanted.length) {
      const none = list.children.length === 1 && list.firstChild.dataset.row === undefined ? list.firstChild : document.createElement("li");
      if (none.textContent !== "no app is playing") none.textContent = "no app is playing";
      wanted.push(none);
    }
    for (const li of [...list.children]) if (!wanted.includes(li)) li.remove();
    wanted.forEach((li, index) => { if (list.children[index] !== li) list.insertBefore(li, list.children[index] || null); });
  }

  function appRow(app, key) {
    const li = document.createElement("li"); li.dataset.app = app.name; li.dataset.row = key;
    const text = document.createElement("span"); text.className = "label"; li.appendChild(text);
    const b = document.createElement("button"); b.type = "button"; b.textContent = "Exclude"; b.dataset.exclude = app.name;
    b.addEventListener("click", () => act({ action: "exclude", name: app.name }));
    li.appendChild(b);
    return li;
  }

  // How it plays: at its window, with the head, or plain stereo (apps spatial); a server
  // before `apps spatial` reports no mode, and the row has no menu.
  function drawAppSpatial(li, app) {
    let select = li.querySelector("select");
    if (!app.spatial) { if (select) { select.previousSibling.remove(); select.remove(); } return; }
    if (!select) {
      select = document.createElement("select"); select.dataset.spatial = app.name;
      select.setAttribute("aria-label", "how " + (app.application || app.name) + " plays");
      for (const [mode, title] of [["anchored", "at its window"], ["head-locked", "with the head"], ["off", "plain stereo"]]) {
        const option = document.createElement("option"); option.value = mode; option.textContent = title; select.appendChild(option);
      }
      select.addEventListener("change", () => act({ action: "app_spatial", name: app.name, mode: select.value }));
      li.appendChild(document.createTextNode(" ")); li.appendChild(select);
    }
    // Set when the server's report changes, not at every update: a choice just made stays
    // shown until the server has it.
    if (select.dataset.reported !== app.spatial) { select.dataset.reported = app.spatial; select.value = app.spatial; }
  }

  function drawExcluded(model) {
    drawControls($("excluded"), model.excluded_apps, (excluded) => {
      for (const name of model.excluded_apps) {
        const li = document.createElement("li"); li.dataset.excluded = name; li.textContent = name + " ";
        const b = document.createElement("button"); b.type = "button"; b.textContent = "Include"; b.dataset.include = name;
        b.addEventListener("click", () => act({ action: "include", name }));
        li.appendChild(b); excluded.appendChild(li);
      }
      if (!model.excluded_apps.length) { const li = document.createElement("li"); li.textContent = "none"; excluded.appendChild(li); }
    });
  }

  // The device playing and how it is rendered (issue 29): what `scenesound device` prints.
  function drawDevice(model) {
    const device = model.output_device, rendering = model.rendering;
    const deviceText = $("device-text"), renderingText = $("rendering-text");
    if (device) {
      const port = device.port_description || device.port;
      deviceText.textContent = (device.description || device.sink) + " (" + device.sink + ")" +
        (device.form_factor ? ", " + device.form_factor : "") + (port ? ", port " + port : "") +
        (device.bluetooth_profile ? ", Bluetooth " + device.bluetooth_profile : "");
      deviceText.dataset.sink = device.sink;
    } else {
      deviceText.textContent = "no output device known (" + model.output_kind + " output)";
      deviceText.dataset.sink = "";
    }
    const select = $("device-spatial");
    if (rendering) {
      renderingText.textContent = (rendering.method === "speakers" ? "speakers " + (rendering.speaker_layout || "") : "binaural (headphones)") +
        ", spatial " + rendering.spatial + ", because " + rendering.reason +
        (rendering.preference && rendering.preference !== "auto" && !rendering.reason.endsWith(rendering.preference)
          ? " (render " + rendering.preference + ")" : "");
      renderingText.dataset.method = rendering.method;
      renderingText.dataset.spatial = rendering.spatial;
      // What the device plays with, unless the user has just picked another the server has
      // not reported yet.
      if (select.dataset.picked === rendering.spatial) delete select.dataset.picked;
      if (!select.dataset.picked) select.value = rendering.spatial;
      const render = $("device-render");
      renderingText.dataset.preference = rendering.preference;
      if (render.dataset.picked === rendering.preference) delete render.dataset.picked;
      if (!render.dataset.picked) render.value = rendering.preference;
    } else {
      renderingText.textContent = "rendering not reported by this server";
    }
  }

  function fillSets() {
    for (const id of ["hrtf-set", "hrtf-other"]) {
      const select = $(id); select.replaceChildren();
      for (const name of setup.hrtf_sets) { const o = document.createElement("option"); o.value = name; o.textContent = name; select.appendChild(o); }
    }
    if (setup.hrtf_sets.length > 1) $("hrtf-other").selectedIndex = 1;
  }

  // Dragging a placed scene: the mark follows the pointer; on release the scene is placed there
  // (`scene place`) and what is drawn next is where the server put it.
  function toMetres(event) {
    const svg = $("map"), p = svg.createSVGPoint();
    p.x = event.clientX; p.y = event.clientY;
    const q = p.matrixTransform(svg.getScreenCTM().inverse()), s = scale(drawn);
    return [(q.x - SIZE / 2) / s, (q.y - LISTENER_Y) / s, q.x, q.y];
  }
  function placeAt(mark, x, z) {
    const azimuth = Math.atan2(-x, -z) * 180 / Math.PI, distance = Math.max(0.05, Math.min(1000, Math.hypot(x, z)));
    act({ action: "place", scene: mark.id, azimuth_degrees: Math.round(azimuth * 10) / 10, elevation_degrees: 0,
          distance_metres: Math.round(distance * 100) / 100 });
  }
  function startDrag(event, mark, g) {
    event.preventDefault();
    drag = { mark, g };
    window.addEventListener("pointermove", moveDrag);
    window.addEventListener("pointerup", endDrag, { once: true });
  }
  function moveDrag(event) {
    if (!drag) return;
    const [, , px, py] = toMetres(event);
    drag.g.setAttribute("transform", "translate(" + px.toFixed(1) + " " + py.toFixed(1) + ")");
  }
  function endDrag(event) {
    window.removeEventListener("pointermove", moveDrag);
    if (!drag) return;
    const [x, z] = toMetres(event);
    placeAt(drag.mark, x, z);
    drag = null;
    if (!pending) { pending = true; requestAnimationFrame(render); }
  }
  function nudge(event, mark) {
    const steps = { ArrowLeft: [5, 0], ArrowRight: [-5, 0], ArrowUp: [0, 0.1], ArrowDown: [0, -0.1] };
    const step = steps[event.key];
    if (!step) return;
    event.preventDefault();
    act({ action: "place", scene: mark.id, azimuth_degrees: ((mark.azimuth_degrees + step[0] + 540) % 360) - 180,
          elevation_degrees: 0, distance_metres: Math.round(Math.max(0.1, mark.distance_metres + step[1]) * 100) / 100 });
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("recenter").addEventListener("click", () => act({ action: "recenter" }));
    $("device-render").addEventListener("change", () => {
      $("device-render").dataset.picked = $("device-render").value;
      act({ action: "device_render", mode: $("device-render").value });
    });
    $("device-spatial").addEventListener("change", () => {
      $("device-spatial").dataset.picked = $("device-spatial").value;
      act({ action: "device_spatial", mode: $("device-spatial").value });
    });
    $("tracking-mode").addEventListener("change", () => { $("tracking-mode").dataset.picked = "yes"; });
    $("tracking-use").addEventListener("click", () => {
      delete $("tracking-mode").dataset.picked;
      act({ action: "head_tracking", mode: $("tracking-mode").value, seconds: Number($("recenter-after").value) || 0 });
    });
    $("tracker-choice").addEventListener("change", () => { $("tracker-choice").dataset.picked = "yes"; });
    $("tracker-use").addEventListener("click", () => {
      delete $("tracker-choice").dataset.picked;
      act({ action: "head_tracker", mode: $("tracker-choice").value, poses_per_second: Number($("tracker-rate").value) || 0 });
    });
    $("hrtf-use").addEventListener("click", () => act({ action: "hrtf_use", name: $("hrtf-set").value }));
    $("hrtf-compare").addEventListener("click", () => act({ action: "hrtf_compare", name: $("hrtf-set").value, other: $("hrtf-other").value }));
    $("eq-use").addEventListener("click", () => act({ action: "eq_use", path: $("eq-path").value }));
    $("eq-none").addEventListener("click", () => act({ action: "eq_use", path: "none" }));
    connect();
  });
})();
