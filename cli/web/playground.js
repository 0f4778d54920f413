// The playground page: a scene from the server (generated, or a file dropped here), a segment
// dragged across it and answered by the server's engine, and a bullet-hell mode whose frames
// run rectcast's first-hit kernel in this browser's WebGPU, each checked against the server.
import { openGpu } from "/gpu.js";

const $ = (id) => document.getElementById(id);
const canvas = $("scene");
const context = canvas.getContext("2d");
const options = new URLSearchParams(location.search);
const TARGETS = ["rects", "walls", "circles", "polygons"];

const state = {
  scene: null,
  rects: new Float32Array(0),
  bullets: null,
  segment: null,
  // The segment whose table and GPU check are shown.
  answeredFor: null,
  table: [],
  mode: "drag",
  gpu: null,
  gpuError: null,
  running: false,
  lastFrame: null,
  stats: { frames: 0, compared: 0, uncertain: 0, mismatches: 0, overflows: 0, firstMismatch: null },
};

async function json(url, init) {
  const response = await fetch(url, init);
  const body = await response.json();
  if (!response.ok) {
    throw new Error(body.error ?? `${response.status} ${response.statusText}`);
  }
  return body;
}

// ---- the scene ----

// A generated scene is viewed whole (its field); one with files loaded, fitted to what it holds.
function setScene(scene, fit = false) {
  state.scene = scene;
  state.view = ((fit || scene.still) && contentView(scene)) || fieldView(scene);
  state.rects = new Float32Array(scene.rects.flat());
  const bullets = scene.segments ?? [];
  state.bullets = {
    start: new Float32Array(bullets.flatMap((s) => [s[0], s[1]])),
    velocity: new Float32Array(bullets.flatMap((s) => [s[2] - s[0], s[3] - s[1]])),
    segments: new Float32Array(bullets.flat()),
  };
  state.segment = null;
  state.table = [];
  $("bullets").textContent = bullets.length;
  $("snap").textContent = snapStep();
  renderTable();
  draw();
}

async function generate() {
  const form = new FormData($("scene-form"));
  const query = new URLSearchParams(form).toString();
  setScene(await json(`/api/scene?${query}`));
}

async function load(file) {
  const as = $("load-as").value;
  $("load-error").textContent = "";
  try {
    const loaded = await json(`/api/load?name=${encodeURIComponent(file.name)}&as=${as}`, {
      method: "POST",
      body: await file.arrayBuffer(),
    });
    const scene = { ...state.scene, ...loaded };
    if (as === "segments") {
      scene.segments = loaded.segments;
    }
    setScene(scene, true);
  } catch (e) {
    $("load-error").textContent = `${file.name}: ${e.message}`;
  }
}

// ---- drawing ----

// The view: canvas pixel = (scene point - (x, y)) * k.
function fieldView(scene) {
  return { x: 0, y: 0, k: Math.min(canvas.width / scene.width, canvas.height / scene.height) };
}

// The view of everything in the scene, with a margin, centred; none for an empty scene.
function contentView(scene) {
  const xs = [];
  const ys = [];
  const add = (x, y) => (xs.push(x), ys.push(y));
  for (const [a, b, c, d] of [...scene.rects, ...scene.walls, ...(scene.segments ?? [])]) {
    add(a, b);
    add(c, d);
  }
  for (const [x, y, r] of scene.circles) {
    add(x - r, y - r);
    add(x + r, y + r);
  }
  for (const rings of scene.polygons) for (const ring of rings) for (const [x, y] of ring) add(x, y);
  if (xs.length === 0) return null;
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const margin = 0.05 * Math.max(x1 - x0, y1 - y0, 1e-30);
  const k = Math.min(canvas.width / (x1 - x0 + 2 * margin), canvas.height / (y1 - y0 + 2 * margin));
  return {
    x: (x0 + x1) / 2 - canvas.width / k / 2,
    y: (y0 + y1) / 2 - canvas.height / k / 2,
    k,
  };
}

function draw() {
  if (!state.scene) {
    return;
  }
  const { x, y, k } = state.view;
  context.setTransform(1, 0, 0, 1, 0, 0);
  context.clearRect(0, 0, canvas.width, canvas.height);
  context.setTransform(k, 0, 0, k, -x * k, -y * k);
  context.lineWidth = 1 / k;
  const hit = new Set(state.table.map((row) => `${row.target}:${row.index}`));
  if (state.mode === "bullets" && state.lastFrame) {
    for (const r of state.lastFrame.rectsHit) hit.add(`rects:${r}`);
  }
  const { scene } = state;
  scene.rects.forEach((r, i) => {
    context.fillStyle = hit.has(`rects:${i}`) ? "rgba(224,123,36,0.55)" : "rgba(70,110,200,0.12)";
    context.fillRect(r[0], r[1], r[2] - r[0], r[3] - r[1]);
    context.strokeStyle = "#4668c8";
    context.strokeRect(r[0], r[1], r[2] - r[0], r[3] - r[1]);
  });
  scene.walls.forEach((w, i) => {
    context.strokeStyle = hit.has(`walls:${i}`) ? "#e07b24" : "#333";
    context.lineWidth = 3 / k;
    line(w);
  });
  context.lineWidth = 1 / k;
  scene.circles.forEach((c, i) => {
    context.beginPath();
    context.arc(c[0], c[1], c[2], 0, 2 * Math.PI);
    context.fillStyle = hit.has(`circles:${i}`) ? "rgba(224,123,36,0.55)" : "rgba(40,160,90,0.15)";
    context.fill();
    context.strokeStyle = "#28a05a";
    context.stroke();
  });
  scene.polygons.forEach((rings, i) => {
    context.beginPath();
    for (const ring of rings) {
      ring.forEach(([x, y], v) => (v === 0 ? context.moveTo(x, y) : context.lineTo(x, y)));
      context.closePath();
    }
    context.fillStyle = hit.has(`polygons:${i}`) ? "rgba(224,123,36,0.55)" : "rgba(150,70,190,0.15)";
    context.fill("evenodd");
    context.strokeStyle = "#9646be";
    context.stroke();
  });
  if (state.mode === "drag") {
    drawSegment(k);
  } else {
    drawBullets(k);
  }
}

function line([x0, y0, x1, y1]) {
  context.beginPath();
  context.moveTo(x0, y0);
  context.lineTo(x1, y1);
  context.stroke();
}

function pointAt([x0, y0, x1, y1], t) {
  return [x0 + t * (x1 - x0), y0 + t * (y1 - y0)];
}

function dot([x, y], radius, colour) {
  context.beginPath();
  context.arc(x, y, radius, 0, 2 * Math.PI);
  context.fillStyle = colour;
  context.fill();
}

function drawSegment(k) {
  const s = state.segment;
  if (!s) {
    return;
  }
  context.strokeStyle = "#111";
  context.lineWidth = 2 / k;
  line(s);
  state.table.forEach((row, i) => {
    const first = i === 0;
    dot(pointAt(s, Number(row.t_enter)), (first ? 7 : 4) / k, "#1a9c3c");
    dot(pointAt(s, Number(row.t_exit)), (first ? 7 : 4) / k, "#c8102e");
  });
}

function drawBullets(k) {
  const frame = state.lastFrame;
  const segments = state.bullets.segments;
  const n = segments.length / 4;
  context.lineWidth = 1.5 / k;
  for (const hitting of [false, true]) {
    context.beginPath();
    for (let i = 0; i < n; i++) {
      const isHit = frame ? frame.rectOf[i] !== frame.noRect : false;
      if (isHit !== hitting) continue;
      context.moveTo(segments[4 * i], segments[4 * i + 1]);
      context.lineTo(segments[4 * i + 2], segments[4 * i + 3]);
    }
    context.strokeStyle = hitting ? "#c8102e" : "rgba(60,60,60,0.45)";
    context.stroke();
  }
}

// ---- drag a segment ----

// Client pixels per scene unit, and where the scene's origin is in client pixels.
function placement() {
  const box = canvas.getBoundingClientRect();
  const perUnit = (canvas.clientWidth / canvas.width) * state.view.k;
  return {
    left: box.left + canvas.clientLeft - state.view.x * perUnit,
    top: box.top + canvas.clientTop - state.view.y * perUnit,
    perUnit,
  };
}

// The grid a dragged point snaps to: a power of two of scene units at least two pixels wide,
// so a point lands where it was meant to even where the canvas sits at half a pixel.
function snapStep() {
  return 2 ** Math.ceil(Math.log2(2 / placement().perUnit));
}

// A mouse event's point in scene units, snapped to the grid.
function snapped(event) {
  const { left, top, perUnit } = placement();
  const step = snapStep();
  const snap = (v) => Math.round(v / perUnit / step) * step;
  return [snap(event.clientX - left), snap(event.clientY - top)];
}

// Where scene point (x, y) is in client pixels (what a test moves the mouse to).
function clientPoint(x, y) {
  const { left, top, perUnit } = placement();
  return [left + x * perUnit, top + y * perUnit];
}

let dragging = null;
let asking = null;
let askAgain = false;

canvas.addEventListener("mousedown", (event) => {
  if (state.mode !== "drag" || !state.scene) return;
  const at = snapped(event);
  dragging = at;
  setSegment([...at, ...at]);
});
canvas.addEventListener("mousemove", (event) => {
  if (!dragging) return;
  setSegment([...dragging, ...snapped(event)]);
});
window.addEventListener("mouseup", (event) => {
  if (!dragging) return;
  setSegment([...dragging, ...snapped(event)]);
  dragging = null;
});

function setSegment(segment) {
  state.segment = segment.map(Math.fround);
  $("segment").textContent = `(${state.segment[0]}, ${state.segment[1]}) → (${state.segment[2]}, ${state.segment[3]})`;
  draw();
  ask();
}

// Asks the server for the current segment's pairs: one request at a time, the latest segment.
function ask() {
  if (asking) {
    askAgain = true;
    return asking;
  }
  asking = answer(state.segment)
    .catch((e) => {
      $("drag-gpu").textContent = `the server refused the segment: ${e.message}`;
    })
    .finally(() => {
      asking = null;
      if (askAgain) {
        askAgain = false;
        ask();
      }
    });
  return asking;
}

// The CSV table `rectcast pairs` writes, as objects by column name.
function parseCsv(text) {
  const [header, ...lines] = text.trim().split("\n");
  const names = header.split(",");
  return lines.map((line) => Object.fromEntries(line.split(",").map((v, i) => [names[i], v])));
}

async function answer(segment) {
  const body = { segments: [segment] };
  for (const target of TARGETS) {
    if (state.scene[target].length > 0) body[target] = state.scene[target];
  }
  const tables = await json("/api/pairs", { method: "POST", body: JSON.stringify(body) });
  if (segment !== state.segment) return;
  const rows = [];
  for (const target of TARGETS) {
    if (!tables[target]) continue;
    const names = tables[target].split("\n")[0].split(",");
    const [, id, , category] = names;
    for (const row of parseCsv(tables[target])) {
      if (row.hit !== "true") continue;
      // Rects' sides as they are; a polygon's entry_edge and entry_ring as "edge 3 ring 0".
      const sides = (prefix) =>
        names
          .filter((n) => n.startsWith(prefix) && row[n] !== "")
          .map((n) => (n === prefix ? row[n] : `${n.slice(prefix.length + 1)} ${row[n]}`))
          .join(" ");
      rows.push({
        target,
        index: row[id],
        kind: row[category],
        t_enter: row.t_enter,
        t_exit: row.t_exit,
        entry: sides("entry"),
        exit: sides("exit"),
      });
    }
  }
  // By entry, then in the order the targets are listed: the first row is the first hit.
  rows.sort((a, b) => Number(a.t_enter) - Number(b.t_enter));
  state.table = rows;
  renderTable();
  draw();
  await checkDrag(segment);
  state.answeredFor = segment;
}

function renderTable() {
  const body = $("pairs").tBodies[0];
  body.replaceChildren(
    ...state.table.map((row, i) => {
      const tr = document.createElement("tr");
      if (i === 0) tr.className = "first";
      for (const key of ["target", "index", "kind", "t_enter", "t_exit", "entry", "exit"]) {
        const td = document.createElement("td");
        td.textContent = row[key];
        tr.append(td);
      }
      return tr;
    }),
  );
}

// The dragged segment's first hit among the rects on WebGPU against the server's, byte for byte.
async function checkDrag(segment) {
  const segments = new Float32Array(segment);
  const native = await nativeFirstHits(segments, state.rects);
  if (!state.gpu) {
    $("drag-gpu").textContent = `First rect hit from the server: ${describe(native, 0)} (no WebGPU here)`;
    return;
  }
  const gpu = await state.gpu.firstHits(segments, state.rects);
  // A segment the GPU listed as uncertain takes the server's answer, as the engine's does.
  const text = gpu.found.has(0)
    ? `${describe(native, 0)}, decided by the server: the GPU could not certify it`
    : sameHit(gpu.words, native, 0)
      ? `${describe(gpu.words, 0)}, the same bytes as the server's`
      : `${describe(gpu.words, 0)}, DIFFERENT from the server's ${describe(native, 0)}`;
  $("drag-gpu").textContent = `WebGPU first rect hit: ${text}`;
}

function describe(words, i) {
  const floats = new Float32Array(words.buffer, words.byteOffset, words.length);
  if (words[4 * i] === state.noRect) return "none";
  return `rect ${words[4 * i]} at t ${floats[4 * i + 1]}..${floats[4 * i + 2]}`;
}

function sameHit(a, b, i) {
  for (let k = 4 * i; k < 4 * i + 4; k++) if (a[k] !== b[k]) return false;
  return true;
}

// ---- bullet hell ----

// Each segment's first hit among the rects from the server's engine: 4 words a segment.
async function nativeFirstHits(segments, rects) {
  const n = segments.length / 4;
  const m = rects.length / 4;
  const body = new ArrayBuffer(8 + 16 * (n + m));
  new Uint32Array(body, 0, 2).set([n, m]);
  new Float32Array(body, 8, 4 * n).set(segments);
  new Float32Array(body, 8 + 16 * n, 4 * m).set(rects);
  const response = await fetch("/api/first-hit", { method: "POST", body });
  if (!response.ok) {
    throw new Error((await response.json()).error);
  }
  return new Uint32Array(await response.arrayBuffer());
}

// Moves every bullet by its velocity, wrapping at the field's edges.
function advance() {
  if (state.scene.still) return;
  const { start, velocity, segments } = state.bullets;
  const { width, height } = state.scene;
  for (let i = 0; i < start.length / 2; i++) {
    let x = start[2 * i] + velocity[2 * i];
    let y = start[2 * i + 1] + velocity[2 * i + 1];
    x = x < 0 ? x + width : x > width ? x - width : x;
    y = y < 0 ? y + height : y > height ? y - height : y;
    start[2 * i] = x;
    start[2 * i + 1] = y;
    segments.set([x, y, x + velocity[2 * i], y + velocity[2 * i + 1]], 4 * i);
  }
}

async function frame() {
  const started = performance.now();
  advance();
  const segments = state.bullets.segments;
  const gpu = state.gpu ? await state.gpu.firstHits(segments, state.rects) : null;
  const gpuDone = performance.now();
  const native = await nativeFirstHits(segments, state.rects);
  const checked = performance.now();
  const stats = state.stats;
  const n = segments.length / 4;
  const rectOf = new Uint32Array(n);
  const rectsHit = new Set();
  let hits = 0;
  for (let i = 0; i < n; i++) {
    let answer = native;
    if (gpu) {
      if (gpu.overflow || gpu.found.has(i)) {
        stats.uncertain += 1;
      } else {
        stats.compared += 1;
        answer = gpu.words;
        if (!sameHit(gpu.words, native, i)) {
          stats.mismatches += 1;
          if (!stats.firstMismatch) {
            stats.firstMismatch = {
              frame: stats.frames,
              segment: i,
              inputs: Array.from(segments.subarray(4 * i, 4 * i + 4)),
              gpu: Array.from(gpu.words.subarray(4 * i, 4 * i + 4)),
              native: Array.from(native.subarray(4 * i, 4 * i + 4)),
            };
            console.error("first mismatch", stats.firstMismatch);
          }
        }
      }
      if (gpu.overflow) stats.overflows += 1;
    }
    rectOf[i] = answer[4 * i];
    if (rectOf[i] !== state.noRect) {
      hits += 1;
      rectsHit.add(rectOf[i]);
    }
  }
  stats.frames += 1;
  const now = performance.now();
  state.lastFrame = {
    rectOf,
    rectsHit,
    noRect: state.noRect,
    hits,
    frameMs: now - started,
    gpuMs: gpu ? gpuDone - started : null,
    checkMs: checked - gpuDone,
  };
  draw();
  readouts(now);
  return stats;
}

const frameTimes = [];

function readouts(now) {
  const frame = state.lastFrame;
  const stats = state.stats;
  frameTimes.push(now);
  while (frameTimes[0] < now - 1000) frameTimes.shift();
  $("fps").textContent = frameTimes.length;
  $("frame-ms").textContent = `${frame.frameMs.toFixed(1)} ms`;
  $("gpu-ms").textContent = frame.gpuMs === null ? "no WebGPU" : `${frame.gpuMs.toFixed(1)} ms`;
  $("check-ms").textContent = `${frame.checkMs.toFixed(1)} ms`;
  $("frames").textContent = stats.frames;
  $("hits").textContent = frame.hits;
  $("compared").textContent = stats.compared;
  $("uncertain").textContent = stats.uncertain;
  $("mismatches").textContent = stats.mismatches;
  const m = stats.firstMismatch;
  $("first-mismatch").textContent = m
    ? `first mismatch: frame ${m.frame}, segment ${m.segment} (${m.inputs.join(", ")}): GPU words ${m.gpu.join(" ")}, server ${m.native.join(" ")}`
    : "";
}

async function runFrames(count) {
  for (let k = 0; k < count; k++) {
    await frame();
  }
  return { ...state.stats };
}

async function loop() {
  while (state.running && state.mode === "bullets") {
    await frame();
    await new Promise((resolve) => requestAnimationFrame(resolve));
  }
}

// ---- the page ----

function setMode(mode) {
  state.mode = mode;
  state.running = false;
  $("run").textContent = "Start";
  for (const button of document.querySelectorAll("button.mode")) {
    button.classList.toggle("active", button.dataset.mode === mode);
  }
  $("drag-panel").hidden = mode !== "drag";
  $("bullet-panel").hidden = mode !== "bullets";
  $("hint").hidden = mode !== "drag";
  draw();
}

async function start() {
  for (const button of document.querySelectorAll("button.mode")) {
    button.addEventListener("click", () => setMode(button.dataset.mode));
  }
  $("run").addEventListener("click", () => {
    state.running = !state.running;
    $("run").textContent = state.running ? "Stop" : "Start";
    loop();
  });
  $("scene-form").addEventListener("submit", (event) => {
    event.preventDefault();
    generate().catch((e) => ($("load-error").textContent = e.message));
  });
  $("file").addEventListener("change", () => $("file").files[0] && load($("file").files[0]));
  const drop = $("drop");
  drop.addEventListener("dragover", (event) => {
    event.preventDefault();
    drop.classList.add("over");
  });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (event) => {
    event.preventDefault();
    drop.classList.remove("over");
    const file = event.dataTransfer.files[0];
    if (file) load(file);
  });

  const info = await json("/api/info");
  $("engine").textContent = info.engine;
  const kernels = await json("/kernels.json");
  state.noRect = kernels.kernels.find((k) => k.file === "rect_queries.wgsl").constants.NO_RECT;
  if (options.get("webgpu") === "off") {
    state.gpuError = "turned off by ?webgpu=off";
  } else {
    try {
      const gpu = await openGpu(kernels);
      if (gpu.error) state.gpuError = gpu.error;
      else state.gpu = gpu;
    } catch (e) {
      state.gpuError = e.message;
    }
  }
  $("webgpu").textContent = state.gpu
    ? `${state.gpu.adapterName}: first hits run here, checked against the server`
    : `unavailable (${state.gpuError}): every answer comes from the server's engine`;
  $("frame-backend").textContent = state.gpu
    ? `this browser's WebGPU (${state.gpu.adapterName}), checked against the server's engine`
    : "the server's engine (no WebGPU here)";
  $("status").textContent = state.gpu ? "WebGPU ready" : "no WebGPU: the server answers";
  // Each frame tests every bullet against every rect here: the broad phase's grid stays on the
  // server when its kernel needs more storage buffers than a browser allows.
  const cells = kernels.kernels
    .find((k) => k.file === "grid.wgsl")
    .entry_points.find((e) => e.name === "segment_cells");
  const allowed = state.gpu ? state.gpu.device.limits.maxStorageBuffersPerShaderStage : 8;
  $("grid-note").textContent =
    cells.storage_buffers > allowed
      ? `Every bullet meets every rect here: the broad phase's grid runs on the server only (its segment_cells binds ${cells.storage_buffers} storage buffers; this browser allows ${allowed}).`
      : "";
  await generate();
}

const ready = start().catch((e) => {
  $("status").textContent = `the page failed to start: ${e.message}`;
  throw e;
});

window.playground = { ready, state, runFrames, setMode, setSegment, clientPoint, answered: () => asking ?? Promise.resolve() };
