// The playground in a real Chromium (headless, WebGPU through SwiftShader), against a real
// `rectcast serve`: a segment dragged through a rect's corner shows the native answer, bullet-hell
// frames on WebGPU match the server's engine byte for byte, the page without WebGPU answers from
// the server, a bad file is named with its line and column, and screenshots show the scene.
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
function expectedTable() {
  const rows = [];
  for (const kind of ["rects", "walls", "circles", "polygons"]) {
    const csv = execFileSync(bin, ["pairs", "--segments", segmentFile, `--${kind}`, files[kind]]).toString();
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

async function open({ webgpu }) {
  const page = await browser.newPage({ viewport: { width: 1300, height: 1000 } });
  page.on("pageerror", (e) => console.error("page error:", e.message));
  page.on("console", (m) => m.type() === "error" && console.error("page console:", m.text()));
  if (!webgpu) {
    // A browser without WebGPU: no navigator.gpu at all.
    await page.addInitScript(() => delete Navigator.prototype.gpu);
  }
  await page.goto(url);
  await page.evaluate(() => window.playground.ready);
  return page;
}

async function generate(page, fields) {
  for (const [name, value] of Object.entries(fields)) {
    const field = page.locator(`#scene-form [name=${name}]`);
    await (name === "kind" ? field.selectOption(value) : field.fill(String(value)));
  }
  await page.click("#scene-form button[type=submit]");
  await page.waitForFunction((n) => window.playground.state.scene.segments.length === n, fields.segments);
}

async function dragThroughTheCorner(page, what) {
  await generate(page, { kind: "bullet-hell", rects: 0, walls: 0, circles: 0, polygons: 0, segments: 0 });
  for (const [kind, path] of Object.entries(files)) {
    await page.selectOption("#load-as", kind);
    await page.setInputFiles("#file", path);
    await page.waitForFunction(([k, n]) => window.playground.state.scene[k].length === n, [kind, counts[kind]]);
  }
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

// The canvas's share of pixels that are not white, and of red ones (hits).
function inked(page) {
  return page.evaluate(() => {
    const canvas = document.getElementById("scene");
    const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    let ink = 0;
    let red = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i] < 240 || data[i + 1] < 240 || data[i + 2] < 240) ink += 1;
      if (data[i] > 150 && data[i + 1] < 60 && data[i + 2] < 80) red += 1;
    }
    return { ink: ink / (data.length / 4), red };
  });
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
  const { ink, red } = await inked(page);
  assert.ok(ink > 0.01 && red > 0, `the drag's canvas is drawn (ink ${ink}, red ${red})`);
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
  }
  await page.screenshot({ path: join(shots, "bullet-hell.png") });
  const { ink, red } = await inked(page);
  assert.ok(ink > 0.05 && red > 20, `the frame's canvas is drawn, hits in red (ink ${ink}, red ${red})`);
  await page.close();
});

await scenario("without WebGPU the page says so and the server answers the same", async () => {
  const page = await open({ webgpu: false });
  assert.match(await page.textContent("#webgpu"), /unavailable \(this browser has no WebGPU/);
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
  await page.close();
});

await scenario("a bad file dropped on the page is named with its line and column", async () => {
  const page = await open({ webgpu: false });
  await page.selectOption("#load-as", "rects");
  await page.setInputFiles("#file", file("boxes.csv", "min_x,min_y,max_x,max_y\n0,0,1,1\n0,0,x,1\n"));
  await page.waitForFunction(() => document.getElementById("load-error").textContent !== "");
  assert.match(await page.textContent("#load-error"), /^boxes\.csv: boxes\.csv:3:3: /);
  await page.close();
});

await browser.close();
server.kill();
clearTimeout(deadline);
if (failed) {
  process.exit(1);
}
console.log(`playground tests passed; screenshots in ${shots}`);
