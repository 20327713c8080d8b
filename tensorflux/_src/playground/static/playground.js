// tensorflux playground: the page. Training runs on the server (a tensorflux Session);
// this file draws what the websocket streams and sends the controls' changes back.
// The configuration lives in the URL fragment; the server validates it (notes come back
// for values it could not use) and the validated form is written back to the URL.
"use strict";

const LEARNING_RATES = [0.00001, 0.0001, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3, 10];
const REG_RATES = [0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3, 10];
const FEATURES = [["x", "X\u2081"], ["y", "X\u2082"], ["xSquared", "X\u2081\u00B2"],
  ["ySquared", "X\u2082\u00B2"], ["xTimesY", "X\u2081X\u2082"], ["sinX", "sin(X\u2081)"],
  ["sinY", "sin(X\u2082)"]];
const DATASETS = {classification: [["circle", "Circle"], ["xor", "Exclusive or"],
  ["gauss", "Gaussian"], ["spiral", "Spiral"]],
  regression: [["plane", "Plane"], ["multigauss", "Multi Gaussian"]]};
const DOMAIN = 6;
const NODE = 40, COL = 110, ROW = 52, TOP = 40;

const $ = (id) => document.getElementById(id);
const pg = window.playground = {config: null, lastState: null, data: null, ups: 0,
  states: 0, losses: [], exported: null, graph: null, notes: [], connected: false};

// -- colours: -1 orange, 0 light grey, +1 blue (the original's scale) ----------------------
const LUT = (() => {
  const neg = [245, 147, 34], mid = [232, 234, 235], pos = [8, 119, 189];
  const lut = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i++) {
    const v = i / 127.5 - 1, a = v < 0 ? neg : pos, t = Math.abs(v);
    for (let c = 0; c < 3; c++) lut[i * 3 + c] = Math.round(mid[c] + (a[c] - mid[c]) * t);
  }
  return lut;
})();
const colour = (v) => {
  const i = Math.max(0, Math.min(255, Math.round((v + 1) * 127.5)));
  return `rgb(${LUT[i * 3]},${LUT[i * 3 + 1]},${LUT[i * 3 + 2]})`;
};

// -- websocket ---------------------------------------------------------------------------
let ws;
function send(message) { if (ws && ws.readyState === 1) ws.send(JSON.stringify(message)); }

function connect() {
  ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
  ws.onopen = () => { pg.connected = true; send({type: "config", config: parseHash()}); };
  ws.onclose = () => { pg.connected = false; setPlaying(false); };
  ws.onmessage = (event) => {
    const m = JSON.parse(event.data);
    if (m.type === "config") onConfig(m);
    else if (m.type === "data") { pg.data = m; pg.losses = []; drawOutput(); }
    else if (m.type === "state") onState(m);
    else if (m.type === "graph") onGraph(m);
    else if (m.type === "exported") onExported(m);
    else if (m.type === "error") showNotes([m.message]);
  };
}

// -- URL state -----------------------------------------------------------------------------
function parseHash() {
  const raw = {};
  for (const part of location.hash.replace(/^#/, "").split("&")) {
    if (!part) continue;
    const i = part.indexOf("=");
    const key = decodeURIComponent(i < 0 ? part : part.slice(0, i));
    raw[key] = i < 0 ? "" : decodeURIComponent(part.slice(i + 1));
  }
  return raw;
}

function change(updates) {
  Object.assign(pg.config, updates);
  const raw = {};
  for (const [k, v] of Object.entries(pg.config)) raw[k] = Array.isArray(v) ? v.join(",") : String(v);
  send({type: "config", config: raw});
}

function onConfig(m) {
  pg.config = m.config;
  history.replaceState(null, "", "#" + m.query);
  showNotes(m.notes);
  syncControls();
}

function showNotes(notes) {
  pg.notes = notes;
  const box = $("notes");
  box.hidden = !notes.length;
  box.textContent = notes.length ? "Some settings in the link could not be used: " +
    notes.join("; ") : "";
}

// -- controls ------------------------------------------------------------------------------
function fillSelect(id, values) {
  $(id).innerHTML = values.map((v) => `<option value="${v}">${v}</option>`).join("");
}

function syncControls() {
  const c = pg.config;
  for (const id of ["activation", "regularization", "problem"]) $(id).value = c[id];
  $("learningRate").value = String(c.learningRate);
  $("regularizationRate").value = String(c.regularizationRate);
  for (const id of ["percTrainData", "noise", "batchSize"]) {
    $(id).value = c[id]; $(id + "Value").textContent = c[id];
  }
  $("showTestData").checked = c.showTestData;
  $("discretize").checked = c.discretize;
  const key = c.problem === "classification" ? "dataset" : "regDataset";
  $("datasets").innerHTML = DATASETS[c.problem].map(([name, label]) =>
    `<button class="text${c[key] === name ? " selected" : ""}" data-dataset="${name}">${label}</button>`).join("");
  for (const b of $("datasets").querySelectorAll("button")) {
    b.onclick = () => change({[key]: b.dataset.dataset});
  }
  const n = c.networkShape.length;
  $("layerCount").textContent = `${n} HIDDEN LAYER${n === 1 ? "" : "S"}`;
  layoutNetwork();
}

function bindControls() {
  fillSelect("learningRate", LEARNING_RATES);
  fillSelect("regularizationRate", REG_RATES);
  for (const id of ["activation", "regularization", "problem"]) {
    $(id).onchange = () => change({[id]: $(id).value});
  }
  for (const id of ["learningRate", "regularizationRate"]) {
    $(id).onchange = () => change({[id]: Number($(id).value)});
  }
  for (const id of ["percTrainData", "noise", "batchSize"]) {
    $(id).oninput = () => { $(id + "Value").textContent = $(id).value; };
    $(id).onchange = () => change({[id]: Number($(id).value)});
  }
  for (const id of ["showTestData", "discretize"]) {
    $(id).onchange = () => { change({[id]: $(id).checked}); drawOutput(); };
  }
  $("regenerate").onclick = () => change({seed: Math.floor(Math.random() * 1e6)});
  $("addLayer").onclick = () => {
    const s = pg.config.networkShape;
    if (s.length < 6) change({networkShape: s.concat([2])});
  };
  $("removeLayer").onclick = () => {
    const s = pg.config.networkShape;
    if (s.length > 0) change({networkShape: s.slice(0, -1)});
  };
  $("play").onclick = () => setPlaying(!pg.playing, true);
  $("step").onclick = () => { setPlaying(false, true); send({type: "step"}); };
  $("reset").onclick = () => { setPlaying(false); pg.losses = []; send({type: "reset"}); };
  $("graphButton").onclick = () => {
    const view = $("graphView");
    view.hidden = !view.hidden;
    if (!view.hidden) send({type: "graph"});
  };
  $("exportButton").onclick = () => {
    $("exportResult").hidden = false;
    $("exportResult").textContent = "exporting\u2026";
    send({type: "export"});
  };
}

function setPlaying(on, tell) {
  pg.playing = on;
  $("play").classList.toggle("playing", on);
  $("play").innerHTML = on ? "&#x275A;&#x275A;" : "&#x25B6;";
  if (tell) send({type: on ? "play" : "pause"});
}

// -- network drawing -------------------------------------------------------------------------
// Columns: all seven features (off ones greyed, click toggles), the hidden layers, output.
let nodeCanvases = {};

function layoutNetwork() {
  const net = $("net"), c = pg.config;
  for (const el of net.querySelectorAll(".node, .col-controls")) el.remove();
  nodeCanvases = {};
  pg.positions = {};
  linkKey = "";
  const addNode = (id, x, y, cls, label) => {
    const div = document.createElement("div");
    div.className = "node " + cls;
    div.style.left = x + "px"; div.style.top = y + "px";
    div.dataset.node = id;
    const canvas = document.createElement("canvas");
    canvas.width = canvas.height = 25;
    div.appendChild(canvas);
    if (label) {
      const l = document.createElement("span");
      l.className = "label"; l.textContent = label; div.appendChild(l);
    }
    net.appendChild(div);
    nodeCanvases[id] = canvas;
    pg.positions[id] = [x, y];
    return div;
  };
  FEATURES.forEach(([id, label], i) => {
    const div = addNode(id, 60, TOP + i * ROW, "feature" + (c[id] ? "" : " off"), label);
    div.onclick = () => change({[id]: !pg.config[id]});
  });
  c.networkShape.forEach((width, l) => {
    const x = 60 + (l + 1) * COL;
    const ctl = document.createElement("div");
    ctl.className = "col-controls";
    ctl.style.left = (x - 10) + "px";
    ctl.innerHTML = `<button data-l="${l}" data-d="1">+</button><button data-l="${l}" data-d="-1">&minus;</button><br>${width} neuron${width === 1 ? "" : "s"}`;
    for (const b of ctl.querySelectorAll("button")) {
      b.onclick = () => {
        const shape = pg.config.networkShape.slice();
        shape[l] = Math.max(1, Math.min(8, shape[l] + Number(b.dataset.d)));
        change({networkShape: shape});
      };
    }
    net.appendChild(ctl);
    for (let j = 0; j < width; j++) addBias(addNode(`h${l}_${j}`, x, TOP + j * ROW, "", ""), l, j);
  });
  addBias(addNode("output", 60 + (c.networkShape.length + 1) * COL, TOP, "", ""),
    c.networkShape.length, 0);
  net.style.width = (60 + (c.networkShape.length + 2) * COL) + "px";
  if (pg.lastState && sameShape(pg.lastState)) drawState(pg.lastState);
}

// Each neuron's bias: a small square on its left edge, coloured by value; hover shows it,
// click edits it.
function addBias(node, layer, index) {
  const box = document.createElement("div");
  box.className = "bias";
  box.dataset.l = layer; box.dataset.j = index;
  box.onmouseenter = () => {
    const card = $("hoverCard");
    card.hidden = false;
    card.textContent = `Bias is ${Number(box.dataset.b).toFixed(3)} (click to change)`;
    card.style.left = (parseFloat(node.style.left) - 20) + "px";
    card.style.top = (parseFloat(node.style.top) + 80) + "px";
  };
  box.onmouseleave = () => { $("hoverCard").hidden = true; };
  box.onclick = (e) => {
    e.stopPropagation();
    const text = prompt("New bias value", box.dataset.b);
    if (text === null) return;
    const value = Number(text);
    if (text.trim() === "" || !Number.isFinite(value)) {
      showNotes([`bias: got ${JSON.stringify(text)}, expected a number`]);
      return;
    }
    send({type: "setBias", layer: layer, target: index, value});
  };
  node.appendChild(box);
}

function drawBiases(state) {
  for (const box of $("net").querySelectorAll(".bias")) {
    const b = state.biases[box.dataset.l][box.dataset.j];
    box.dataset.b = b;
    box.style.background = colour(Math.max(-1, Math.min(1, b)));
  }
}

function sameShape(state) {
  const enabled = FEATURES.map(([id]) => id).filter((id) => pg.config[id]);
  return JSON.stringify(state.nodes.slice(0, enabled.length)) === JSON.stringify(enabled) &&
    state.weights.length === pg.config.networkShape.length + 1 &&
    state.weights.slice(1).every((w, i) => w.length === pg.config.networkShape[i]);
}

// The links' <path>s are made once per network shape (makeLinks); each frame only sets
// their colour, width and weight (drawLinks), so a frame stays cheap at 6 x 8 neurons.
let linkPaths = [], linkKey = "";

function makeLinks(state) {
  const svg = $("links");
  const parts = [];
  const layers = [state.nodes.filter((id) => !id.startsWith("h") && id !== "output")];
  pg.config.networkShape.forEach((w, l) => layers.push([...Array(w).keys()].map((j) => `h${l}_${j}`)));
  layers.push(["output"]);
  state.weights.forEach((matrix, l) => {
    matrix.forEach((row, i) => row.forEach((w, j) => {
      const a = pg.positions[layers[l][i]], b = pg.positions[layers[l + 1][j]];
      if (!a || !b) return;
      const x1 = a[0] + NODE + 2, y1 = a[1] + NODE / 2, x2 = b[0], y2 = b[1] + NODE / 2;
      const mx = (x1 + x2) / 2;
      parts.push(`<path d="M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}" ` +
        `data-l="${l}" data-i="${i}" data-j="${j}"></path>`);
    }));
  });
  svg.innerHTML = parts.join("");
  linkPaths = [...svg.querySelectorAll("path")];
}

function drawLinks(state) {
  const key = JSON.stringify(state.nodes) + JSON.stringify(Object.values(pg.positions));
  if (key !== linkKey || linkPaths.length === 0) { makeLinks(state); linkKey = key; }
  for (const path of linkPaths) {
    const w = state.weights[path.dataset.l][path.dataset.i][path.dataset.j];
    path.dataset.w = w;
    path.setAttribute("stroke", colour(Math.max(-1, Math.min(1, w))));
    path.setAttribute("stroke-width", Math.min(8, Math.max(0.5, Math.abs(w) * 2)).toFixed(2));
  }
}

function bindLinks() {
  const svg = $("links");
  svg.addEventListener("mouseover", (e) => {
    const path = e.target.closest("path");
    if (!path) return;
    const card = $("hoverCard");
    card.hidden = false;
    card.textContent = `Weight is ${Number(path.dataset.w).toFixed(3)} (click to change)`;
    const box = $("net").getBoundingClientRect();
    card.style.left = (e.clientX - box.left + 10) + "px";
    card.style.top = (e.clientY - box.top + 30) + "px";
  });
  svg.addEventListener("mouseout", () => { $("hoverCard").hidden = true; });
  svg.addEventListener("click", (e) => {
    const path = e.target.closest("path");
    if (!path) return;
    const text = prompt("New weight value", path.dataset.w);
    if (text === null) return;
    const value = Number(text);
    if (text.trim() === "" || !Number.isFinite(value)) {
      showNotes([`weight: got ${JSON.stringify(text)}, expected a number`]);
      return;
    }
    send({type: "setWeight", layer: Number(path.dataset.l), source: Number(path.dataset.i),
      target: Number(path.dataset.j), value});
  });
}

const scratch = {};
function paintMap(canvas, bytes, offset, grid, discretize) {
  const ctx = canvas.getContext("2d");
  const image = ctx.createImageData(grid, grid);
  for (let p = 0; p < grid * grid; p++) {
    let v = bytes[offset + p];
    if (discretize) v = v >= 128 ? 255 : 0;
    image.data[p * 4] = LUT[v * 3]; image.data[p * 4 + 1] = LUT[v * 3 + 1];
    image.data[p * 4 + 2] = LUT[v * 3 + 2]; image.data[p * 4 + 3] = 255;
  }
  if (canvas.width === grid) { ctx.putImageData(image, 0, 0); return; }
  let tmp = scratch[grid];
  if (!tmp) { tmp = scratch[grid] = document.createElement("canvas"); tmp.width = tmp.height = grid; }
  tmp.getContext("2d").putImageData(image, 0, 0);
  ctx.imageSmoothingEnabled = true;
  ctx.drawImage(tmp, 0, 0, canvas.width, canvas.height);
}

function decode(text) {
  const raw = atob(text), bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

let outputBytes = null, outputOffset = 0, outputGrid = 0;

function drawState(state) {
  const bytes = decode(state.maps);
  const size = state.nodeGrid * state.nodeGrid;
  state.nodes.forEach((id, k) => {
    if (nodeCanvases[id]) paintMap(nodeCanvases[id], bytes, k * size, state.nodeGrid, false);
  });
  outputBytes = decode(state.output); outputOffset = 0; outputGrid = state.grid;
  drawLinks(state);
  drawBiases(state);
  drawOutput();
}

function drawOutput() {
  const canvas = $("heatmap"), ctx = canvas.getContext("2d");
  if (outputBytes) paintMap(canvas, outputBytes, outputOffset, outputGrid, pg.config && pg.config.discretize);
  if (!pg.data || !pg.config) return;
  const scale = (v) => (v + DOMAIN) / (2 * DOMAIN) * canvas.width;
  const draw = (points, stroke) => {
    for (const [x, y, label] of points) {
      ctx.beginPath();
      ctx.arc(scale(x), canvas.height - scale(y), 3, 0, 2 * Math.PI);
      ctx.fillStyle = colour(Math.max(-1, Math.min(1, label)));
      ctx.fill();
      ctx.lineWidth = 1; ctx.strokeStyle = stroke; ctx.stroke();
    }
  };
  draw(pg.data.train, "#fff");
  if (pg.config.showTestData) draw(pg.data.test, "#000");
}

function drawLossCurve() {
  const canvas = $("lossCurve"), ctx = canvas.getContext("2d");
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  const losses = pg.losses;
  if (losses.length < 2) return;
  const max = Math.max(...losses.map(([a, b]) => Math.max(a, b)), 1e-6);
  for (const [k, style] of [[0, "#999"], [1, "#000"]]) {
    ctx.beginPath();
    losses.forEach((l, i) => {
      const x = i / (losses.length - 1) * canvas.width, y = canvas.height * (1 - l[k] / max);
      if (i) ctx.lineTo(x, y); else ctx.moveTo(x, y);
    });
    ctx.strokeStyle = style; ctx.lineWidth = 1.5; ctx.stroke();
  }
}

// -- stream --------------------------------------------------------------------------------
const stamps = [];
function onState(state) {
  pg.lastState = state;
  pg.states += 1;
  const now = performance.now();
  stamps.push(now);
  while (stamps.length && stamps[0] < now - 1000) stamps.shift();
  pg.ups = stamps.length;
  $("ups").textContent = String(pg.ups);
  $("epoch").textContent = String(state.epoch).padStart(6, "0").replace(/(\d{3})(\d{3})$/, "$1,$2");
  $("testLoss").textContent = state.testLoss.toFixed(3);
  $("trainLoss").textContent = state.trainLoss.toFixed(3);
  if (state.epoch === 0) pg.losses = [];
  pg.losses.push([state.trainLoss, state.testLoss]);
  if (pg.losses.length > 600) pg.losses.splice(0, pg.losses.length - 600);
  if (pg.config && sameShape(state)) drawState(state);
  drawLossCurve();
  send({type: "ack", frame: state.frame});
}

function onGraph(m) {
  pg.graph = m;
  const groups = new Map();
  for (const op of m.ops) {
    const scope = op.name.includes("/") ? op.name.split("/")[0] : "(top level)";
    if (!groups.has(scope)) groups.set(scope, []);
    groups.get(scope).push(op);
  }
  const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
  let html = `<p>${m.ops.length} ops</p>`;
  for (const [scope, ops] of groups) {
    html += `<details${scope === "(top level)" ? " open" : ""}><summary>${esc(scope)} (${ops.length} ops)</summary>`;
    for (const op of ops) {
      html += `<div class="op"><b>${esc(op.name)}</b> <span class="type">${esc(op.op)}</span>` +
        (op.inputs.length ? ` &larr; ${esc(op.inputs.join(", "))}` : "") +
        (op.outputs.length ? ` &rarr; ${esc(op.outputs.join(", "))}` : "") + "</div>";
    }
    html += "</details>";
  }
  $("graphOps").innerHTML = html;
}

function onExported(m) {
  pg.exported = m;
  const box = $("exportResult");
  box.hidden = false;
  box.innerHTML = "";
  const lines = [`SavedModel: ${m.savedModel}`, `TF1 program: ${m.program}`,
    `serve it: tensorflux serve --model_base_path ${m.savedModel.replace(/\/\d+$/, "")}`,
    "predictions: " + m.points.map((p, i) => `(${p}) \u2192 ${m.predictions[i].toFixed(4)}`).join(", ")];
  for (const line of lines) { const d = document.createElement("div"); d.textContent = line; box.appendChild(d); }
}

bindControls();
bindLinks();
connect();
