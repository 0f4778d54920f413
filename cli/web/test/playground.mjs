// The playground in a real Chromium (headless, WebGPU through SwiftShader), against a real
// `rectcast serve`: a segment dragged through a rect's corner shows the native answer, bullet-hell
// frames on WebGPU match the server's engine byte for byte, the page without WebGPU answers from
// the server (at 1,024 pixels wide), a bad file is named with its line and column, scenes up to
// the server's limits load whole and larger files are refused, a scene set while a frame is in
// flight is not compared with it, an adversarial frame says what it compared and what
// overflowed, and screenshots show the scene.
//
//   node cli/web/test/playground.mjs          (scripts/test.sh runs it)
// RECTCAST_BIN: the binary (target/release/rectcast); CHROMIUM: the browser (/usr/bin/chromium);
// screenshots go to target/playground/.
import { spawn, execFileSync } from "node:child_process";
import { createInterface } from "node:readline";
import { mkdtempSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";

const root = new URL("../../../", import.meta.url).pathname;
const bin = process.env.RECTCAST_BIN ?? join(root, "target/release/rectcast");
const shots = join(root, "target/playground");
mkdirSync(shots, { recursive: true });
// A hung browser or server fails the run instead of holding it.
const deadline = setTimeout(() => {
  console.error("playground tests: no end after 300 s");
  process.exit(1);
}, 300_000);

const dir = mkdtempSync(join(tmpdir(), "playground-"));
const file = (name, text) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
// Through rect 0's corner (100, 100), across a wall, a circle and a polygon's hole.
const SEGMENT = [40, 160, 160, 40];
const files = {
  rects: file("rects.csv", "min_x,min_y,max_x,max_y\n100,100,200,200\n150,0,170,120\n"),
  walls: file("walls.csv", "x0,y0,x1,y1\n120,0,120,200\n0,0,300,300\n"),
  circles: file("circles.csv", "cx,cy,r\n60,140,10\n500,500,5\n"),
  polygons: file(
    "polygons.wkt",
    "POLYGON((110 20, 190 20, 190 95, 110 95, 110 20), (130 40, 170 40, 170 80, 130 80, 130 40))\n",
  ),
};
const segmentFile = file("segment.csv", `x0,y0,x1,y1\n${SEGMENT.join(",")}\n`);
const counts = { rects: 2, walls: 2, circles: 2, polygons: 1 };

// The rows the page's table must show, from `rectcast pairs` run on the same files: the hits,
// by t_enter, kinds in the page's order.
function expectedTable(segments = segmentFile, targets = files) {
  const rows = [];
  for (const kind of ["rects", "walls", "circles", "polygons"].filter((k) => targets[k])) {
    const csv = execFileSync(bin, ["pairs", "--segments", segments, `--${kind}`, targets[kind]], { maxBuffer: 1 << 28 }).toString();
    const [header, ...lines] = csv.trim().split("\n");
    const names = header.split(",");
    for (const line of lines) {
      const cells = line.split(",");
      if (cells[2] !== "true") continue;
      // Polygons' entry_edge and entry_ring are shown as "edge 3 ring 0".
      const joined = (prefix) =>
        names
          .flatMap((n, i) => (n.startsWith(prefix) && cells[i] !== "" ? [n === prefix ? cells[i] : `${n.split("_")[1]} ${cells[i]}`] : []))
          .join(" ");
      rows.push([kind, cells[1], cells[3], cells[4], cells[5], joined("entry"), joined("exit")]);
    }
  }
  return rows.sort((a, b) => Number(a[3]) - Number(b[3]));
}

function sameRows(page, expected, what) {
  for (let i = 0; i < Math.max(page.length, expected.length); i++) {
    assert.deepEqual(page[i], expected[i], `${what}: row ${i} differs: page ${JSON.stringify(page[i])}, rectcast pairs ${JSON.stringify(expected[i])}`);
  }
}

// The server, on a free port.
const server = spawn(bin, ["serve", "--port", "0", "--backend", "cpu"], { stdio: ["ignore", "pipe", "inherit"] });
const url = await new Promise((resolve, reject) => {
  createInterface({ input: server.stdout }).once("line", (line) => resolve(line.split(" ").pop()));
  server.once("exit", (code) => reject(new Error(`rectcast serve exited with ${code}`)));
});
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: ["--enable-unsafe-webgpu"] });

async function open({ webgpu, width = 1300 }) {
  const page = await browser.newPage({ viewport: { width, height: 1000 } });
  // An uncaught error fails the scenario (noErrors).
  page.errors = [];
  page.on("pageerror", (e) => {
    console.error("page error:", e.message);
    page.errors.push(e.message);
  });
  page.on("console", (m) => m.type() === "error" && console.error("page console:", m.text()));
  if (!webgpu) {
    // A browser without WebGPU: no navigator.gpu at all.
    await page.addInitScript(() => delete Navigator.prototype.gpu);
  }
  await page.goto(url);
  await page.evaluate(() => window.playground.ready);
  return page;
}

function noErrors(page) {
  assert.deepEqual(page.errors, [], "no uncaught error on the page");
}

// Marks the page's scene, so that a wait can tell the next one from it.
const markScene = (page) => page.evaluate(() => void (window.markedScene = window.playground.state.scene));
// Waits for a scene other than the marked one, or an error shown; fails on the error.
async function nextScene(page, what, timeout = 30_000) {
  await page.waitForFunction(() => window.playground.state.scene !== window.markedScene || document.getElementById("load-error").textContent !== "", null, { timeout });
  const error = await page.textContent("#load-error");
  assert.equal(error, "", `${what}: the page shows ${JSON.stringify(error)}`);
}

async function generate(page, fields) {
  for (const [name, value] of Object.entries(fields)) {
    const field = page.locator(`#scene-form [name=${name}]`);
    await (name === "kind" ? field.selectOption(value) : field.fill(String(value)));
  }
  await markScene(page);
  await page.click("#scene-form button[type=submit]");
  await nextScene(page, `generate ${JSON.stringify(fields)}`);
  if (fields.segments !== undefined) assert.equal(await page.evaluate(() => window.playground.state.scene.segments.length), fields.segments);
}

// Loads `path` as `as`, and waits for the scene it makes (failing on an error shown).
async function load(page, as, path) {
  await page.selectOption("#load-as", as);
  await markScene(page);
  await page.setInputFiles("#file", path);
  await nextScene(page, `${path} as ${as}`);
}

// The table and the WebGPU line of `segment`, set as a drag would set it.
async function answerFor(page, segment) {
  await page.evaluate((s) => window.playground.setSegment(s), segment);
  await page.waitForFunction((s) => window.playground.state.answeredFor?.join() === s, segment.join(), { timeout: 20_000 }).catch(async (e) => {
    throw new Error(`no answer for ${segment}: ${await page.textContent("#drag-gpu")} (${e.message})`);
  });
  const table = await page.$$eval("#pairs tbody tr", (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
  return { table, gpu: await page.textContent("#drag-gpu") };
}

const fmt = (n) => n.toLocaleString("en-US");

async function dragThroughTheCorner(page, what) {
  await generate(page, { kind: "bullet-hell", rects: 0, walls: 0, circles: 0, polygons: 0, segments: 0 });
  for (const [kind, path] of Object.entries(files)) {
    await load(page, kind, path);
    assert.equal(await page.evaluate((k) => window.playground.state.scene[k].length, kind), counts[kind]);
  }
  // The scene form shows what was loaded.
  const form = await page.$$eval("#scene-form input", (inputs) => Object.fromEntries(inputs.map((i) => [i.name, i.value])));
  assert.deepEqual([form.rects, form.walls, form.circles, form.polygons, form.segments], ["2", "2", "2", "1", "0"], `the scene form after the loads: ${JSON.stringify(form)}`);
  const at = (x, y) => page.evaluate(([x, y]) => window.playground.clientPoint(x, y), [x, y]);
  await page.mouse.move(...(await at(SEGMENT[0], SEGMENT[1])));
  await page.mouse.down();
  await page.mouse.move(...(await at(SEGMENT[2], SEGMENT[3])), { steps: 6 });
  await page.mouse.up();
  await page
    .waitForFunction((s) => window.playground.state.answeredFor?.join() === s, SEGMENT.join(), { timeout: 20_000 })
    .catch(async (e) => {
      throw new Error(`no answer for the dragged segment: ${await page.textContent("#segment")}: ${await page.textContent("#drag-gpu")}, answered ${await page.evaluate(() => JSON.stringify(window.playground.state.answeredFor))} (${e.message})`);
    });
  const table = await page.$$eval("#pairs tbody tr", (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
  sameRows(table, expectedTable(), what);
  // The corner, by hand: entering through min_x and leaving through min_y at the same t.
  assert.deepEqual(table.find((r) => r[0] === "rects" && r[1] === "0"), ["rects", "0", "cross", "0.5", "0.5", "min_x", "min_y"]);
  assert.equal(await page.textContent("#segment"), "(40, 160) → (160, 40)");
  return table;
}

// The canvas's share of pixels drawn (the canvas is transparent where nothing is), how many are
// red (hits), and how many have circles' colour (green) and polygons' (purple), fill or outline.
function inked(page) {
  return page.evaluate(() => {
    const canvas = document.getElementById("scene");
    const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    const near = (i, [r, g, b]) => Math.max(Math.abs(data[i] - r), Math.abs(data[i + 1] - g), Math.abs(data[i + 2] - b)) <= 25;
    let [ink, red, green, purple] = [0, 0, 0, 0];
    for (let i = 0; i < data.length; i += 4) {
      if (data[i + 3] === 0) continue;
      ink += 1;
      if (data[i] > 150 && data[i + 1] < 60 && data[i + 2] < 80) red += 1;
      if (near(i, [40, 160, 90])) green += 1;
      if (near(i, [150, 70, 190])) purple += 1;
    }
    return { ink: ink / (data.length / 4), red, green, purple };
  });
}

// Along `segment` from t = 0.2 to 0.8 on the canvas (each point the most opaque of its pixel and
// the two beside it across a level segment): the share drawn, and of blank ones (dashes' gaps).
function alongSegment(page, segment) {
  return page.evaluate(([x0, y0, x1, y1]) => {
    const canvas = document.getElementById("scene");
    const { x, y, k } = window.playground.state.view;
    const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    const steps = Math.ceil(Math.hypot(x1 - x0, y1 - y0) * k * 2);
    let [ink, blank] = [0, 0];
    for (let s = 0; s <= steps; s++) {
      const t = 0.2 + (0.6 * s) / steps;
      const px = Math.round((x0 + t * (x1 - x0) - x) * k - 0.5);
      const py = Math.round((y0 + t * (y1 - y0) - y) * k - 0.5);
      const alpha = Math.max(...[-1, 0, 1].map((d) => data[4 * ((py + d) * canvas.width + px) + 3]));
      if (alpha > 150) ink += 1;
      if (alpha === 0) blank += 1;
    }
    return { ink: ink / (steps + 1), blank: blank / (steps + 1) };
  }, segment);
}

let failed = false;
async function scenario(name, run) {
  try {
    await run();
    console.log(`ok: ${name}`);
  } catch (e) {
    failed = true;
    console.error(`FAILED: ${name}\n${e.stack ?? e}`);
  }
}

await scenario("a segment dragged through a rect's corner shows rectcast pairs' answer, and WebGPU's first hit is the server's", async () => {
  const page = await open({ webgpu: true });
  const adapter = await page.textContent("#webgpu");
  assert.doesNotMatch(adapter, /unavailable/, "this Chromium must have WebGPU (--enable-unsafe-webgpu)");
  assert.match(adapter, /^\S.*: first hits run here, checked against the server$/, "the adapter's name is shown");
  assert.match(await page.textContent("#grid-note"), /grid runs on the server only \(its segment_cells binds \d+ storage buffers; this browser allows \d+\)/);
  await dragThroughTheCorner(page, "with WebGPU");
  // A line through a corner is a tie no float filter certifies: the GPU leaves it to the server.
  assert.equal(await page.textContent("#drag-gpu"), "WebGPU first rect hit: rect 0 at t 0.5..0.5, decided by the server: the GPU could not certify it");
  await page.screenshot({ path: join(shots, "drag.png") });
  const { ink, red, green, purple } = await inked(page);
  assert.ok(ink > 0.01 && red > 0, `the drag's canvas is drawn (ink ${ink}, red ${red})`);
  assert.ok(green > 0 && purple > 0, `circles and polygons are drawn (green ${green}, purple ${purple})`);
  // The legend says what the colours, t, entry and exit are, and why a corner touch is a cross.
  assert.equal(await page.locator("#legend").count(), 1, "the page has a legend");
  const legend = await page.textContent("#legend");
  for (const words of [/rect/, /wall/, /circle/, /polygon/, /dragged segment/, /t = 0.*t = 1/, /t_enter/, /t_exit/, /entry/, /exit/, /corner.*cross|cross.*corner/]) {
    assert.match(legend.replace(/\s+/g, " "), words, "the legend");
  }
  const blank = await page.$$eval("#legend canvas.swatch", (swatches) =>
    swatches.filter((c) => !c.getContext("2d").getImageData(0, 0, c.width, c.height).data.some((v) => v > 0)).map((c) => c.dataset.swatch));
  assert.deepEqual(blank, [], "every swatch of the legend is drawn");
  // The dragged segment is dashed, unlike a wall: across empty space, gaps along its middle.
  const across = [300, 50, 480, 50];
  const empty = await answerFor(page, across);
  assert.deepEqual(empty.table, [], "nothing is hit at y = 50 beyond x = 300");
  const line = await alongSegment(page, across);
  assert.ok(line.ink > 0.3 && line.blank > 0.2, `the dragged segment is drawn dashed (inked ${line.ink}, gaps ${line.blank} of its middle)`);
  // t is written the same in the WebGPU line as in the table (float32 values, as rectcast pairs
  // writes them): a segment into rect 0 through its min_x side, which the GPU certifies.
  const into = [88, 128, 200, 160];
  const { table, gpu } = await answerFor(page, into);
  writeFileSync(segmentFile, `x0,y0,x1,y1\n${into.join(",")}\n`);
  const expected = expectedTable();
  writeFileSync(segmentFile, `x0,y0,x1,y1\n${SEGMENT.join(",")}\n`);
  sameRows(table, expected, "a segment into rect 0");
  const rect0 = table.find((r) => r[0] === "rects" && r[1] === "0");
  assert.ok(rect0 && !/^(0|1)$/.test(rect0[3]), `rect 0 is entered at an inexact t: ${JSON.stringify(rect0)}`);
  assert.equal(gpu, `WebGPU first rect hit: rect 0 at t ${rect0[3]}..${rect0[4]}, the same bytes as the server's`);
  noErrors(page);
  await page.close();
});

await scenario("bullet-hell frames on WebGPU match the server's engine byte for byte", async () => {
  const page = await open({ webgpu: true });
  // Adversarial pairs (corners and edges to the ulp, subnormals, 2^62) stand still: each frame
  // is the same, and the GPU must leave every pair it cannot certify to the server.
  for (const [kind, frames] of [["adversarial", 2], ["random", 4], ["bullet-hell", 8]]) {
    await generate(page, { kind, rects: 64, walls: 6, circles: 6, polygons: 4, segments: 4096 });
    await page.click("#mode-bullets");
    const before = await page.evaluate(() => ({ ...window.playground.state.stats }));
    const after = await page.evaluate((n) => window.playground.runFrames(n), frames);
    const compared = after.compared - before.compared;
    const uncertain = after.uncertain - before.uncertain;
    console.log(`  ${kind}: ${frames} frames of 4096 bullets x 64 rects: ${compared} first hits compared, ${uncertain} decided by the server, ${after.mismatches} mismatches`);
    assert.equal(after.mismatches, 0, `first mismatch: ${JSON.stringify(after.firstMismatch)}`);
    assert.equal(compared + uncertain, frames * 4096);
    assert.ok(compared > 0, "the GPU's answers were compared");
    if (kind !== "bullet-hell") assert.ok(uncertain > 0, `${kind}: some pairs left to the server`);
    assert.notEqual(await page.textContent("#gpu-ms"), "no WebGPU");
    assert.equal(await page.textContent("#mismatches"), "0");
    assert.ok(Number(await page.textContent("#hits")) > 0, "a frame with hits");
    const last = await page.evaluate(() => window.playground.state.lastFrame.check ?? null);
    assert.ok(last, "the frame says what it compared");
    const decided = last.uncertain ? `; ${fmt(last.uncertain)} uncertain on the GPU, decided by the server` : "";
    assert.equal(await page.textContent("#frame-check"), `this frame: compared ${fmt(last.compared)} of 4,096 bullets with the server's answers${decided}`);
  }
  // A frame over what one /api/first-hit takes (the limit /api/info gives) is asked in parts.
  const whole = await page.evaluate(() => ({ ...window.playground.state.stats }));
  await page.evaluate(() => (window.playground.state.limits.first_hit_pairs = 64 * 1000));
  const parts = await page.evaluate(() => window.playground.runFrames(1));
  assert.equal(parts.mismatches, 0, `a frame asked in parts: first mismatch ${JSON.stringify(parts.firstMismatch)}`);
  assert.equal(parts.compared + parts.uncertain - (whole.compared + whole.uncertain), 4096);
  await page.screenshot({ path: join(shots, "bullet-hell.png") });
  const { ink, red, green, purple } = await inked(page);
  assert.ok(ink > 0.05 && red > 20, `the frame's canvas is drawn, hits in red (ink ${ink}, red ${red})`);
  // Bullets meet the rects only: the scene's circles and polygons are not drawn, and the page
  // says why.
  assert.equal(green + purple, 0, `no circle or polygon is drawn in bullet hell (green ${green}, purple ${purple} pixels)`);
  assert.match(await page.locator("#legend .terms:visible").textContent(), /Bullets meet the rects only.*walls, circles and\s+polygons are not drawn in this mode/s);
  noErrors(page);
  await page.close();
});

await scenario("without WebGPU the page says so and the server answers the same, at 1,024 pixels wide", async () => {
  const page = await open({ webgpu: false, width: 1024 });
  assert.match(await page.textContent("#webgpu"), /unavailable \(this browser has no WebGPU/);
  // Nothing wider than the window: the scene and the side column side by side, in view.
  const layout = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    canvas: document.getElementById("scene").getBoundingClientRect().right,
    aside: document.querySelector("aside").getBoundingClientRect().right,
  }));
  assert.ok(layout.page <= 1024 && layout.canvas <= 1024 && layout.aside <= 1024, `the page fits 1,024 pixels: ${JSON.stringify(layout)}`);
  await dragThroughTheCorner(page, "without WebGPU");
  assert.match(await page.textContent("#drag-gpu"), /from the server: rect 0 at t 0.5..0.5 \(no WebGPU here\)/);
  await generate(page, { kind: "bullet-hell", rects: 64, walls: 0, circles: 0, polygons: 0, segments: 2048 });
  await page.click("#mode-bullets");
  const stats = await page.evaluate(() => window.playground.runFrames(3));
  assert.equal(stats.frames, 3);
  assert.equal(stats.compared, 0);
  assert.equal(await page.textContent("#gpu-ms"), "no WebGPU");
  assert.ok(Number(await page.textContent("#hits")) > 0, "the server's hits are drawn");
  await page.screenshot({ path: join(shots, "no-webgpu.png") });
  noErrors(page);
  await page.close();
});

await scenario("a bad file dropped on the page is named once with its line and column, and loads once fixed", async () => {
  const page = await open({ webgpu: false });
  const error = async () => {
    await page.waitForFunction(() => document.getElementById("load-error").textContent !== "");
    return page.textContent("#load-error");
  };
  await page.selectOption("#load-as", "rects");
  const boxes = file("boxes.csv", "min_x,min_y,max_x,max_y\n0,0,1,1\n0,0,x,1\n");
  await page.setInputFiles("#file", boxes);
  const bad = await error();
  assert.match(bad, /^boxes\.csv:3:3: /);
  assert.doesNotMatch(bad, /boxes\.csv.*boxes\.csv/, "the file is named once");
  // Fixed, the same file chosen again is read again.
  writeFileSync(boxes, "min_x,min_y,max_x,max_y\n0,0,1,1\n0,0,2,1\n");
  await markScene(page);
  await page.setInputFiles("#file", boxes);
  await page.waitForFunction(() => window.playground.state.scene !== window.markedScene, null, { timeout: 5_000 }).catch(async () => {
    throw new Error(`the fixed file chosen again was not loaded (the page shows ${JSON.stringify(await page.textContent("#load-error"))})`);
  });
  assert.equal(await page.textContent("#load-error"), "");
  assert.deepEqual(await page.evaluate(() => window.playground.state.scene.rects), [[0, 0, 1, 1], [0, 0, 2, 1]]);
  // WKT loaded as rects: what to do on this page, not the CLI's flags.
  await page.setInputFiles("#file", files.polygons);
  const wkt = await error();
  assert.equal(wkt, "polygons.wkt: WKT and GeoJSON hold line strings and polygons: load this file as segments or as polygons. Rects come from a CSV, NPY, .f32 or Parquet file");
  assert.equal(await page.evaluate(() => window.playground.state.scene.rects.length), 2, "the scene is as it was");
  noErrors(page);
  await page.close();
});

await scenario("scenes up to the server's limits load whole and run; a file over them is refused, the scene unchanged", async () => {
  const page = await open({ webgpu: true });
  const { limits } = await (await fetch(`${url}api/info`)).json();
  assert.match(await page.textContent("#limits"), new RegExp(`at most ${fmt(limits.targets)} of each target kind.* and ${fmt(limits.segments)} bullets`));
  // 100,000 adversarial bullets stand still: the view is fitted to them.
  await generate(page, { kind: "adversarial", rects: 64, walls: 0, circles: 0, polygons: 0, segments: 100_000 });
  await page.click("#mode-bullets");
  const stats = await page.evaluate(() => window.playground.runFrames(1));
  assert.equal(stats.mismatches, 0, `first mismatch: ${JSON.stringify(stats.firstMismatch)}`);
  assert.equal(stats.compared + stats.uncertain, 100_000);
  await page.click("#mode-drag");
  // 100,000 segments from a file, and as many rects as the server answers, in a grid of 256 x 256.
  const grid = 256;
  assert.equal(grid * grid, limits.targets, "the grid is the limit");
  const segments = Array.from({ length: 100_000 }, (_, i) => `${i % 2560},${i % 997},${(i % 2560) + 7},${(i % 997) + 3}`);
  await load(page, "segments", file("bullets.csv", `x0,y0,x1,y1\n${segments.join("\n")}\n`));
  assert.equal(await page.evaluate(() => window.playground.state.scene.segments.length), 100_000);
  const cells = [];
  for (let i = 0; i < grid * grid; i++) cells.push(`${10 * (i % grid)},${10 * Math.floor(i / grid)},${10 * (i % grid) + 5},${10 * Math.floor(i / grid) + 5}`);
  const rects = file("grid.csv", `min_x,min_y,max_x,max_y\n${cells.join("\n")}\n`);
  await load(page, "rects", rects);
  assert.equal(await page.evaluate(() => window.playground.state.scene.rects.length), limits.targets);
  // A drag across a row of the grid: every rect of it, as rectcast pairs finds them.
  const row = [1, 2.5, 2559, 2.5];
  const across = file("row.csv", `x0,y0,x1,y1\n${row.join(",")}\n`);
  const { table } = await answerFor(page, row);
  assert.equal(table.length, grid, `the row's ${grid} rects are hit: ${await page.textContent("#drag-gpu")}`);
  sameRows(table, expectedTable(across, { rects }), "a row of the grid");
  // One rect more than the server answers: refused whole, with the limit, the scene unchanged.
  const before = await page.evaluate(() => window.playground.state.scene);
  await page.evaluate(() => void (window.markedScene = window.playground.state.scene));
  await page.setInputFiles("#file", file("more.csv", `min_x,min_y,max_x,max_y\n${cells.join("\n")}\n0,0,1,1\n`));
  await page.waitForFunction(() => document.getElementById("load-error").textContent !== "");
  // The server refuses it first (/api/load takes no more targets than a query does).
  assert.equal(await page.textContent("#load-error"), `more.csv: more than ${limits.targets} records, what a query takes`);
  assert.ok(await page.evaluate(() => window.playground.state.scene === window.markedScene), "the scene is the one before");
  assert.equal(before.rects.length, limits.targets);
  const again = await answerFor(page, row);
  assert.equal(again.table.length, grid, `a drag after the refusal is answered: ${again.gpu}`);
  await page.screenshot({ path: join(shots, "limits.png") });
  noErrors(page);
  await page.close();
});

await scenario("a scene set while a bullet-hell frame is in flight is not compared with that frame", async () => {
  const page = await open({ webgpu: true });
  await generate(page, { kind: "bullet-hell", rects: 64, walls: 0, circles: 0, polygons: 0, segments: 4096 });
  await page.click("#mode-bullets");
  const first = await page.evaluate(() => window.playground.runFrames(1));
  // A slow GPU: the next frame's answer is held until a new scene has been generated.
  await page.evaluate(() => {
    const gpu = window.playground.state.gpu;
    const firstHits = gpu.firstHits;
    window.slow = {};
    window.slow.inFlight = new Promise((resolve) => (window.slow.started = resolve));
    window.slow.held = new Promise((resolve) => (window.slow.release = resolve));
    gpu.firstHits = async (...args) => {
      gpu.firstHits = firstHits;
      const answer = await firstHits.apply(gpu, args);
      window.slow.started();
      await window.slow.held;
      return answer;
    };
  });
  const held = page.evaluate(() => window.playground.runFrames(1));
  await page.evaluate(() => window.slow.inFlight);
  await generate(page, { rects: 200, segments: 3000, seed: 7 });
  await page.evaluate(() => window.slow.release());
  const stats = await held;
  assert.equal(stats.mismatches, 0, `the frame in flight was compared against the new scene: first mismatch ${JSON.stringify(stats.firstMismatch)}`);
  assert.equal(stats.frames, first.frames, "the frame in flight is not counted as compared");
  assert.equal(stats.skipped, (first.skipped ?? 0) + 1);
  assert.equal(await page.textContent("#frame-check"), "a frame not compared: the scene changed while it was in flight");
  const next = await page.evaluate(() => window.playground.runFrames(2));
  assert.equal(next.compared + next.uncertain - (stats.compared + stats.uncertain), 2 * 3000, "the new scene's frames are compared");
  // The user's way: Generate pressed while the frames run.
  await page.click("#run");
  for (const seed of [11, 12, 13]) {
    const frames = await page.evaluate(() => window.playground.state.stats.frames);
    await page.waitForFunction((n) => window.playground.state.stats.frames > n + 1, frames);
    await generate(page, { rects: 64 + seed, seed });
  }
  await page.click("#run");
  const end = await page.evaluate(() => window.playground.runFrames(1));
  console.log(`  generated while running: ${end.frames} frames compared, ${end.skipped} not (their scene changed in flight), ${end.mismatches} mismatches`);
  assert.equal(end.mismatches, 0, `first mismatch: ${JSON.stringify(end.firstMismatch)}`);
  assert.equal(await page.textContent("#first-mismatch"), "");
  noErrors(page);
  await page.close();
});

await scenario("an adversarial frame of 4,096 bullets x 4,096 rects is compared, and says what it compared and what overflowed", async () => {
  const page = await open({ webgpu: true });
  await generate(page, { kind: "adversarial", rects: 4096, walls: 0, circles: 0, polygons: 0, segments: 4096 });
  await page.click("#mode-bullets");
  // The GPU's list of uncertain pairs grows to what the frame lists, as the engine's does.
  const stats = await page.evaluate(() => window.playground.runFrames(1));
  console.log(`  adversarial 4096 x 4096: ${stats.compared} first hits compared, ${stats.uncertain} decided by the server, ${stats.mismatches} mismatches`);
  assert.equal(stats.mismatches, 0, `first mismatch: ${JSON.stringify(stats.firstMismatch)}`);
  assert.ok(stats.compared > 0, "the GPU's answers are compared");
  assert.equal(stats.overflowed ?? 0, 0);
  assert.equal(await page.textContent("#frame-check"), `this frame: compared ${fmt(stats.compared)} of 4,096 bullets with the server's answers; ${fmt(stats.uncertain)} uncertain on the GPU, decided by the server`);
  // A list that may not grow overflows: nothing is compared, and the page says so.
  await page.evaluate(() => (window.playground.state.gpu.maxFound = 1024));
  const after = await page.evaluate(() => window.playground.runFrames(1));
  assert.equal(after.compared, stats.compared);
  assert.equal(after.overflowed, 4096);
  assert.equal(await page.textContent("#frame-check"), "this frame: compared 0 of 4,096 bullets with the server's answers; 4,096 overflowed the uncertain list, decided by the server");
  assert.equal(await page.textContent("#overflowed"), "4096");
  noErrors(page);
  await page.close();
});

await browser.close();
server.kill();
clearTimeout(deadline);
if (failed) {
  process.exit(1);
}
console.log(`playground tests passed; screenshots in ${shots}`);
