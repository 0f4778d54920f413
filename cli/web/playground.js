// The playground page: a scene from the server (generated, or a file dropped here), a segment
// dragged across it and answered by the server's engine, and a bullet-hell mode whose frames
// run rectcast's first-hit kernel in this browser's WebGPU, each checked against the server.
import { openGpu } from "/gpu.js";
import { STYLE, dot, drawCircle, drawDragged, drawPolygon, drawRect, drawWall, line, pointAt } from "/draw.js";

const $ = (id) => document.getElementById(id);
const canvas = $("scene");
const context = canvas.getContext("2d");
const options = new URLSearchParams(location.search);
const TARGETS = ["rects", "walls", "circles", "polygons"];

const state = {
  scene: null,
  // Bumped by every scene set: a frame whose scene changed while it was in flight is not compared.
  sceneVersion: 0,
  rects: new Float32Array(0),
  bullets: null,
  segment: null,
  // The segment whose table and GPU check are shown.
  answeredFor: null,
  table: [],
  mode: "drag",
  gpu: null,
  gpuError: null,
  // What the server answers (GET /api/info's limits).
  limits: null,
  running: false,
  lastFrame: null,
  stats: {
    frames: 0,
    compared: 0,
    uncertain: 0,
    overflowed: 0,
    mismatches: 0,
    skipped: 0,
    firstMismatch: null,
  },
};

async function json(url, init) {
  const response = await fetch(url, init);
  const body = await response.json();
  if (!response.ok) {
    throw new Error(body.error ?? `${response.status} ${response.statusText}`);
  }
  return body;
}

// A count with its thousands marked: 65,536.
const commas = (n) => n.toLocaleString("en-US");

// A float32 as Rust's `{}` writes it, the way the table's t_enter and t_exit are: the fewest
// digits that read back as the same float32, and no exponent.
function f32Text(x) {
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "NaN" : x > 0 ? "inf" : "-inf";
  for (let p = 1; p <= 9; p++) {
    const [mantissa, exponent] = Math.abs(x).toExponential(p - 1).split("e");
    const digits = Number(mantissa.replace(".", ""));
    const scale = Number(exponent) - (p - 1);
    // The closest p digits, or a neighbour where the closest falls out of x's interval.
    let best = null;
    for (const d of [digits, digits - 1, digits + 1]) {
      const value = Number(`${d}e${scale}`);
      if (d > 0 && Math.fround(value) === Math.abs(x) && (best === null || Math.abs(value - Math.abs(x)) < best.off)) {
        best = { d, off: Math.abs(value - Math.abs(x)) };
      }
    }
    if (best) return (x < 0 ? "-" : "") + plainDecimal(String(best.d), scale);
  }
  return String(x);
}

// digits x 10^scale, written out.
function plainDecimal(digits, scale) {
  const trimmed = digits.replace(/0+$/, "");
  scale += digits.length - trimmed.length;
  digits = trimmed;
  if (scale >= 0) return digits + "0".repeat(scale);
  const point = digits.length + scale;
  return point > 0 ? `${digits.slice(0, point)}.${digits.slice(point)}` : `0.${"0".repeat(-point)}${digits}`;
}

// ---- the scene ----

// Why the server could not answer `scene` (a drag's pairs, a frame's first hits), or null.
function beyondLimits(scene) {
  const { targets, segments, pairs } = state.limits;
  for (const kind of TARGETS) {
    if (scene[kind].length > targets) {
      return `${commas(scene[kind].length)} ${kind}, more than the ${commas(targets)} of each target kind the server answers`;
    }
  }
  const bullets = (scene.segments ?? []).length;
  if (bullets > segments) {
    return `${commas(bullets)} segments, more than the ${commas(segments)} bullets the server answers`;
  }
  // A dragged segment meets every rect, wall, circle and polygon edge.
  let edges = 0;
  for (const rings of scene.polygons) for (const ring of rings) edges += ring.length;
  const all = scene.rects.length + scene.walls.length + scene.circles.length + edges;
  if (all > pairs) {
    return `${commas(all)} targets (every polygon edge counted), more than the ${commas(pairs)} pairs the server answers a dragged segment`;
  }
  return null;
}

// A generated scene is viewed whole (its field); one with files loaded, fitted to what it holds.
// Everything is made before anything is set: a scene is shown whole or not at all.
function setScene(scene, fit = false) {
  const view = ((fit || scene.still) && contentView(scene)) || fieldView(scene);
  const rects = new Float32Array(scene.rects.flat());
  const list = scene.segments ?? [];
  const bullets = {
    start: new Float32Array(list.flatMap((s) => [s[0], s[1]])),
    velocity: new Float32Array(list.flatMap((s) => [s[2] - s[0], s[3] - s[1]])),
    segments: new Float32Array(list.flat()),
  };
  state.scene = scene;
  state.sceneVersion += 1;
  state.view = view;
  state.rects = rects;
  state.bullets = bullets;
  state.segment = null;
  state.table = [];
  state.lastFrame = null;
  $("bullets").textContent = list.length;
  $("snap").textContent = snapStep();
  renderTable();
  draw();
}

async function generate() {
  const form = new FormData($("scene-form"));
  const query = new URLSearchParams(form).toString();
  setScene(await json(`/api/scene?${query}`));
}

// The scene form shows what the scene holds: Generate makes one of the same counts.
function showCounts(scene) {
  const fields = $("scene-form").elements;
  for (const kind of TARGETS) fields[kind].value = scene[kind].length;
  fields.segments.value = (scene.segments ?? []).length;
}

// Why a file cannot be read as `as` by its name (the CLI's formats go by extension), or null.
function wrongFormat(name, as) {
  const extension = name.toLowerCase().replace(/\.gz$/, "").split(".").pop();
  const text = ["wkt", "geojson", "json"].includes(extension);
  if (text && as !== "segments" && as !== "polygons") {
    return `WKT and GeoJSON hold line strings and polygons: load this file as segments or as polygons. ${as[0].toUpperCase() + as.slice(1)} come from a CSV, NPY, .f32 or Parquet file`;
  }
  if (!text && as === "polygons") {
    return "polygons come from a WKT or GeoJSON file (.wkt, .geojson, .json): load this one as rects, walls, circles or segments";
  }
  return null;
}

async function load(file) {
  const as = $("load-as").value;
  $("load-error").textContent = "";
  try {
    const wrong = wrongFormat(file.name, as);
    if (wrong) throw new Error(wrong);
    const loaded = await json(`/api/load?name=${encodeURIComponent(file.name)}&as=${as}`, {
      method: "POST",
      body: await file.arrayBuffer(),
    });
    const scene = { ...state.scene, ...loaded };
    const beyond = beyondLimits(scene);
    if (beyond) throw new Error(`${beyond}: not loaded, the scene is as it was`);
    setScene(scene, true);
    showCounts(scene);
  } catch (e) {
    // The server's errors name the file already (with its line and column).
    const named = e.message.startsWith(`${file.name}:`) ? e.message : `${file.name}: ${e.message}`;
    $("load-error").textContent = named;
  } finally {
    // The same file chosen again, fixed, is loaded again.
    $("file").value = "";
  }
}

// ---- drawing ----

// The view: canvas pixel = (scene point - (x, y)) * k.
function fieldView(scene) {
  return { x: 0, y: 0, k: Math.min(canvas.width / scene.width, canvas.height / scene.height) };
}

// The view of everything in the scene, with a margin, centred; none for an empty scene.
function contentView(scene) {
  let [x0, x1, y0, y1] = [Infinity, -Infinity, Infinity, -Infinity];
  const add = (x, y) => {
    x0 = Math.min(x0, x);
    x1 = Math.max(x1, x);
    y0 = Math.min(y0, y);
    y1 = Math.max(y1, y);
  };
  for (const list of [scene.rects, scene.walls, scene.segments ?? []]) {
    for (const [a, b, c, d] of list) {
      add(a, b);
      add(c, d);
    }
  }
  for (const [x, y, r] of scene.circles) {
    add(x - r, y - r);
    add(x + r, y + r);
  }
  for (const rings of scene.polygons) for (const ring of rings) for (const [x, y] of ring) add(x, y);
  if (x0 > x1) return null;
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
  const bullets = state.mode === "bullets";
  const hit = new Set();
  if (bullets) {
    for (const r of state.lastFrame?.rectsHit ?? []) hit.add(`rects:${r}`);
  } else {
    for (const row of state.table) hit.add(`${row.target}:${row.index}`);
  }
  const { scene } = state;
  scene.rects.forEach((r, i) => drawRect(context, r, k, hit.has(`rects:${i}`)));
  // Bullets meet the rects only (the first-hit kernel checked here is the rects'): the other
  // targets are not drawn in that mode.
  if (!bullets) {
    scene.walls.forEach((w, i) => drawWall(context, w, k, hit.has(`walls:${i}`)));
    scene.circles.forEach((c, i) => drawCircle(context, c, k, hit.has(`circles:${i}`)));
    scene.polygons.forEach((rings, i) => drawPolygon(context, rings, k, hit.has(`polygons:${i}`)));
    drawSegment(k);
  } else {
    drawBullets(k);
  }
}

function drawSegment(k) {
  const s = state.segment;
  if (!s) {
    return;
  }
  drawDragged(context, s, k);
  state.table.forEach((row, i) => {
    const first = i === 0;
    dot(context, pointAt(s, Number(row.t_enter)), (first ? 7 : 4) / k, STYLE.entry);
    dot(context, pointAt(s, Number(row.t_exit)), (first ? 7 : 4) / k, STYLE.exit);
  });
}

function drawBullets(k) {
  const segments = state.bullets.segments;
  const n = segments.length / 4;
  const frame = state.lastFrame?.rectOf.length === n ? state.lastFrame : null;
  context.lineWidth = 1.5 / k;
  for (const hitting of [false, true]) {
    context.beginPath();
    for (let i = 0; i < n; i++) {
      const isHit = frame ? frame.rectOf[i] !== frame.noRect : false;
      if (isHit !== hitting) continue;
      context.moveTo(segments[4 * i], segments[4 * i + 1]);
      context.lineTo(segments[4 * i + 2], segments[4 * i + 3]);
    }
    context.strokeStyle = hitting ? STYLE.bulletHit : STYLE.bullet;
    context.stroke();
  }
}

// The legend's swatches, drawn as the scene draws each thing (in a 40 x 20 box).
function drawLegend() {
  const swatches = {
    rect: (ctx) => drawRect(ctx, [4, 3, 36, 17], 1, false),
    wall: (ctx) => drawWall(ctx, [4, 16, 36, 4], 1, false),
    circle: (ctx) => drawCircle(ctx, [20, 10, 8], 1, false),
    polygon: (ctx) => drawPolygon(ctx, [[[4, 17], [20, 3], [36, 17]]], 1, false),
    hit: (ctx) => drawRect(ctx, [4, 3, 36, 17], 1, true),
    segment: (ctx) => drawDragged(ctx, [5, 15, 36, 5], 1),
    entry: (ctx) => dot(ctx, [20, 10], 5, STYLE.entry),
    exit: (ctx) => dot(ctx, [20, 10], 5, STYLE.exit),
    bullet: (ctx) => {
      ctx.lineWidth = 1.5;
      ctx.strokeStyle = STYLE.bullet;
      line(ctx, [4, 14, 36, 6]);
    },
    "bullet-hit": (ctx) => {
      ctx.lineWidth = 1.5;
      ctx.strokeStyle = STYLE.bulletHit;
      line(ctx, [4, 14, 36, 6]);
    },
  };
  for (const swatch of document.querySelectorAll("canvas.swatch")) {
    const ctx = swatch.getContext("2d");
    ctx.clearRect(0, 0, swatch.width, swatch.height);
    swatches[swatch.dataset.swatch](ctx);
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
  const { scene, rects } = state;
  const body = { segments: [segment] };
  for (const target of TARGETS) {
    if (scene[target].length > 0) body[target] = scene[target];
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
  await checkDrag(segment, rects);
  state.answeredFor = segment;
}

function renderTable() {
  const rows = document.createDocumentFragment();
  state.table.forEach((row, i) => {
    const tr = document.createElement("tr");
    if (i === 0) tr.className = "first";
    for (const key of ["target", "index", "kind", "t_enter", "t_exit", "entry", "exit"]) {
      const td = document.createElement("td");
      td.textContent = row[key];
      tr.append(td);
    }
    rows.append(tr);
  });
  $("pairs").tBodies[0].replaceChildren(rows);
}

// The dragged segment's first hit among the rects on WebGPU against the server's, byte for byte.
async function checkDrag(segment, rects) {
  const segments = new Float32Array(segment);
  const native = await nativeFirstHits(segments, rects);
  if (!state.gpu) {
    $("drag-gpu").textContent = `First rect hit from the server: ${describe(native, 0)} (no WebGPU here)`;
    return;
  }
  const gpu = await state.gpu.firstHits(segments, rects);
  // A segment the GPU listed as uncertain takes the server's answer, as the engine's does.
  const text = gpu.overflow || gpu.found.has(0)
    ? `${describe(native, 0)}, decided by the server: the GPU could not certify it`
    : sameHit(gpu.words, native, 0)
      ? `${describe(gpu.words, 0)}, the same bytes as the server's`
      : `${describe(gpu.words, 0)}, DIFFERENT from the server's ${describe(native, 0)}`;
  $("drag-gpu").textContent = `WebGPU first rect hit: ${text}`;
}

// Segment i's first hit, its t as the table writes them.
function describe(words, i) {
  const floats = new Float32Array(words.buffer, words.byteOffset, words.length);
  if (words[4 * i] === state.noRect) return "none";
  return `rect ${words[4 * i]} at t ${f32Text(floats[4 * i + 1])}..${f32Text(floats[4 * i + 2])}`;
}

// All of segment i's first hit: its rect, t and flags (kind and sides).
function describeAll(words, i) {
  const floats = new Float32Array(words.buffer, words.byteOffset, words.length);
  const rect = words[4 * i] === state.noRect ? "no rect" : `rect ${words[4 * i]}`;
  return `${rect}, t ${f32Text(floats[4 * i + 1])}..${f32Text(floats[4 * i + 2])}, flags 0x${words[4 * i + 3].toString(16)}`;
}

function sameHit(a, b, i) {
  for (let k = 4 * i; k < 4 * i + 4; k++) if (a[k] !== b[k]) return false;
  return true;
}

// ---- bullet hell ----

// Each segment's first hit among the rects from the server's engine: 4 words a segment, asked
// in parts of at most what one request takes.
async function nativeFirstHits(segments, rects) {
  const n = segments.length / 4;
  const m = rects.length / 4;
  const { segments: most, first_hit_pairs: pairs = Infinity } = state.limits;
  const part = Math.max(1, Math.min(most, Math.floor(pairs / Math.max(m, 1))));
  const out = new Uint32Array(4 * n);
  let start = 0;
  do {
    const k = Math.min(part, n - start);
    const body = new ArrayBuffer(8 + 16 * (k + m));
    new Uint32Array(body, 0, 2).set([k, m]);
    new Float32Array(body, 8, 4 * k).set(segments.subarray(4 * start, 4 * (start + k)));
    new Float32Array(body, 8 + 16 * k, 4 * m).set(rects);
    const response = await fetch("/api/first-hit", { method: "POST", body });
    if (!response.ok) {
      throw new Error((await response.json()).error);
    }
    out.set(new Uint32Array(await response.arrayBuffer()), 4 * start);
    start += k;
  } while (start < n);
  return out;
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

// One frame at a time (the loop's and runFrames'): they move the same bullets, and share the
// GPU's buffers.
let framing = Promise.resolve();

function frame() {
  const next = framing.then(oneFrame);
  framing = next.catch(() => {});
  return next;
}

async function oneFrame() {
  const started = performance.now();
  advance();
  // This frame's scene, on both sides: a scene set while it is in flight is not compared with it.
  const version = state.sceneVersion;
  const { segments } = state.bullets;
  const { rects } = state;
  const gpu = state.gpu ? await state.gpu.firstHits(segments, rects) : null;
  const gpuDone = performance.now();
  const native = await nativeFirstHits(segments, rects);
  const checked = performance.now();
  const stats = state.stats;
  if (version !== state.sceneVersion) {
    stats.skipped += 1;
    $("skipped").textContent = stats.skipped;
    $("frame-check").textContent = "a frame not compared: the scene changed while it was in flight";
    return stats;
  }
  const n = segments.length / 4;
  const rectOf = new Uint32Array(n);
  const rectsHit = new Set();
  let hits = 0;
  const check = { bullets: n, compared: 0, uncertain: 0, overflowed: 0 };
  for (let i = 0; i < n; i++) {
    let answer = native;
    if (gpu) {
      if (gpu.overflow) {
        check.overflowed += 1;
      } else if (gpu.found.has(i)) {
        check.uncertain += 1;
      } else {
        check.compared += 1;
        answer = gpu.words;
        if (!sameHit(gpu.words, native, i)) {
          stats.mismatches += 1;
          if (!stats.firstMismatch) {
            stats.firstMismatch = {
              frame: stats.frames,
              segment: i,
              inputs: Array.from(segments.subarray(4 * i, 4 * i + 4)),
              gpu: describeAll(gpu.words, i),
              native: describeAll(native, i),
            };
            console.error("first mismatch", stats.firstMismatch);
          }
        }
      }
    }
    rectOf[i] = answer[4 * i];
    if (rectOf[i] !== state.noRect) {
      hits += 1;
      rectsHit.add(rectOf[i]);
    }
  }
  stats.compared += check.compared;
  stats.uncertain += check.uncertain + check.overflowed;
  stats.overflowed += check.overflowed;
  stats.frames += 1;
  const now = performance.now();
  state.lastFrame = {
    rectOf,
    rectsHit,
    noRect: state.noRect,
    hits,
    check,
    frameMs: now - started,
    gpuMs: gpu ? gpuDone - started : null,
    checkMs: checked - gpuDone,
  };
  draw();
  readouts(now);
  return stats;
}

const frameTimes = [];

// What this frame compared: every bullet is the GPU's certified answer checked against the
// server's, or the server's alone (uncertain on the GPU, or its list overflowed).
function checkText(check) {
  if (!state.gpu) return `the server answered all ${commas(check.bullets)} bullets (no WebGPU here)`;
  const parts = [`compared ${commas(check.compared)} of ${commas(check.bullets)} bullets with the server's answers`];
  if (check.uncertain > 0) parts.push(`${commas(check.uncertain)} uncertain on the GPU, decided by the server`);
  if (check.overflowed > 0) parts.push(`${commas(check.overflowed)} overflowed the uncertain list, decided by the server`);
  return `this frame: ${parts.join("; ")}`;
}

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
  $("overflowed").textContent = stats.overflowed;
  $("skipped").textContent = stats.skipped;
  $("mismatches").textContent = stats.mismatches;
  $("frame-check").textContent = checkText(frame.check);
  const m = stats.firstMismatch;
  $("first-mismatch").textContent = m
    ? `first mismatch: frame ${m.frame}, bullet ${m.segment} (${m.inputs.map(f32Text).join(", ")}): the GPU's ${m.gpu}; the server's ${m.native}`
    : "";
}

async function runFrames(count) {
  for (let k = 0; k < count; k++) {
    await frame();
  }
  return { ...state.stats };
}

async function loop() {
  try {
    while (state.running && state.mode === "bullets") {
      await frame();
      await new Promise((resolve) => requestAnimationFrame(resolve));
    }
  } catch (e) {
    state.running = false;
    $("run").textContent = "Start";
    $("frame-check").textContent = `the frames stopped: ${e.message}`;
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
  for (const item of document.querySelectorAll("#legend [data-mode]")) {
    item.hidden = item.dataset.mode !== mode;
  }
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
    $("load-error").textContent = "";
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
  window.addEventListener("resize", () => state.scene && ($("snap").textContent = snapStep()));
  drawLegend();
  setMode(state.mode);

  const info = await json("/api/info");
  $("engine").textContent = info.engine;
  state.limits = info.limits;
  const fields = $("scene-form").elements;
  for (const kind of TARGETS) fields[kind].max = info.limits.targets;
  fields.segments.max = info.limits.segments;
  $("limits").textContent = `The server answers at most ${commas(info.limits.targets)} of each target kind (rects, walls, circles, polygons) and ${commas(info.limits.segments)} bullets: a file with more is not loaded.`;
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
