// The browser's WebGPU running rectcast's own first-hit kernel (shaders/rect_queries.wgsl's
// `segment_rects` with QUERY = QUERY_FIRST_HIT), compiled from /kernels.json: the source, the
// override constants and the bindings come from the crate, nothing is copied here.
//
// A segment the kernel could not decide with certainty (an uncertain pair, an uncertain order
// of two hits, or a t it could not round) is listed in `found`; its answer is the server's, as
// the native Engine decides such pairs on the host. A frame that lists more than `found` holds
// is run again with the list grown to what it listed, as the engine grows it, up to what one
// binding holds (`maxFound`); past that it overflows, and every segment is the server's.

const FIRST_HIT_BYTES = 16; // FirstHit: u32 rect, f32 t_enter, f32 t_exit, u32 flags
const HIT_BYTES = 20; // Hit: u32 segment, u32 rect, PairResult
const FILTER_BYTES = 8; // Filter: u32 category, u32 mask

// Opens a device and builds the first-hit pipeline; { error } when the browser has no WebGPU.
export async function openGpu(kernels) {
  if (!navigator.gpu) {
    return { error: "this browser has no WebGPU (navigator.gpu is missing)" };
  }
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) {
    return { error: "WebGPU found no adapter" };
  }
  const info = adapter.info ?? {};
  const adapterName = [info.vendor, info.architecture, info.device, info.description]
    .filter((part) => part)
    .join(" ") || "unnamed adapter";
  // WebGPU's default limits: the kernels meant for the browser fit them.
  const device = await adapter.requestDevice();
  const kernel = kernels.kernels.find((k) => k.file === "rect_queries.wgsl");
  const entry = kernel.entry_points.find((e) => e.name === "segment_rects");
  const constants = { ...kernel.constants, QUERY: kernel.constants.QUERY_FIRST_HIT };
  device.pushErrorScope("validation");
  const module = device.createShaderModule({ label: "rect_queries.wgsl", code: kernel.source });
  const pipeline = await device.createComputePipelineAsync({
    label: "segment_rects (first hit)",
    layout: "auto",
    compute: { module, entryPoint: "segment_rects", constants },
  });
  const error = await device.popErrorScope();
  if (error) {
    return { error: `the first-hit kernel did not build: ${error.message}` };
  }
  return new FirstHits(device, pipeline, entry, adapterName, constants);
}

class FirstHits {
  constructor(device, pipeline, entry, adapterName, constants) {
    this.device = device;
    this.pipeline = pipeline;
    this.entry = entry;
    this.adapterName = adapterName;
    this.noRect = constants.NO_RECT;
    this.workgroupSize = entry.workgroup_size[0];
    this.buffers = {};
    this.sizes = {};
    this.rectsUploaded = null;
    // The most entries the found list may hold, and what the frames so far needed.
    const binding = Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
    this.maxFound = Math.floor((binding - 4) / HIT_BYTES);
    this.foundCapacity = 0;
    // One run at a time: the runs share their buffers (a frame's, and a dragged segment's).
    this.running = Promise.resolve();
  }

  // A buffer `name` of at least `bytes`, made again only when it must grow.
  buffer(name, bytes, usage) {
    bytes = Math.max(16, Math.ceil(bytes / 16) * 16);
    if (!this.buffers[name] || this.sizes[name] < bytes) {
      this.buffers[name]?.destroy();
      this.buffers[name] = this.device.createBuffer({ label: `rectcast.${name}`, size: bytes, usage });
      this.sizes[name] = bytes;
      this.group = null;
    }
    return this.buffers[name];
  }

  // Each segment's first hit among `rects` (Float32Arrays of 4 values each): { words, found,
  // overflow, listed, room, ms }, where words is a Uint32Array of 4 words a segment (FirstHit),
  // found the set of segments the GPU left to the host, and overflow whether the found list
  // (room entries) could not hold the listed entries even grown, when found is not all of them.
  firstHits(segments, rects) {
    const run = this.running.then(() => this.grown(segments, rects));
    this.running = run.catch(() => {});
    return run;
  }

  async grown(segments, rects) {
    const n = segments.length / 4;
    let capacity = Math.min(this.maxFound, Math.max(this.foundCapacity, n + 1024));
    for (;;) {
      const answer = await this.run(segments, rects, capacity);
      if (!answer.overflow || answer.room >= this.maxFound) return answer;
      // The kernel counts every entry past the end: the next run holds them all.
      capacity = Math.min(this.maxFound, answer.listed);
      this.foundCapacity = capacity;
    }
  }

  async run(segments, rects, capacity) {
    const n = segments.length / 4;
    const m = rects.length / 4;
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
    const buffers = {
      params: this.buffer("params", 16, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST),
      segments: this.buffer("segments", 16 * n, storage),
      rects: this.buffer("rects", 16 * m, storage),
      segment_filters: this.buffer("segment_filters", FILTER_BYTES, storage),
      rect_filters: this.buffer("rect_filters", FILTER_BYTES, storage),
      first_hits: this.buffer("first_hits", FIRST_HIT_BYTES * n, storage),
      segment_hits: this.buffer("segment_hits", 4 * n, storage),
      rect_hits: this.buffer("rect_hits", 4 * m, storage),
      found: this.buffer("found", 4 + HIT_BYTES * capacity, storage),
    };
    // The first `capacity` entries are read: a buffer kept from a larger run may hold more.
    const foundBytes = 4 + HIT_BYTES * capacity;
    const read = GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST;
    const hitsRead = this.buffer("first_hits.read", FIRST_HIT_BYTES * n, read);
    const foundRead = this.buffer("found.read", foundBytes, read);
    if (!this.group) {
      // Bound by the names the kernel gives its bindings (rectcast shaders --json).
      this.group = this.device.createBindGroup({
        layout: this.pipeline.getBindGroupLayout(0),
        entries: this.entry.bindings.map((b) => ({ binding: b.binding, resource: { buffer: buffers[b.name] } })),
      });
      this.rectsUploaded = null;
    }
    const queue = this.device.queue;
    const started = performance.now();
    queue.writeBuffer(buffers.params, 0, new Uint32Array([n, m, 0, 0]));
    queue.writeBuffer(buffers.segments, 0, segments);
    if (this.rectsUploaded !== rects) {
      queue.writeBuffer(buffers.rects, 0, rects);
      this.rectsUploaded = rects;
    }
    queue.writeBuffer(buffers.found, 0, new Uint32Array([0]));
    const encoder = this.device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, this.group);
    pass.dispatchWorkgroups(Math.max(1, Math.ceil(n / this.workgroupSize)));
    pass.end();
    encoder.copyBufferToBuffer(buffers.first_hits, 0, hitsRead, 0, FIRST_HIT_BYTES * Math.max(n, 1));
    encoder.copyBufferToBuffer(buffers.found, 0, foundRead, 0, foundBytes);
    queue.submit([encoder.finish()]);
    await Promise.all([hitsRead.mapAsync(GPUMapMode.READ), foundRead.mapAsync(GPUMapMode.READ)]);
    const words = new Uint32Array(hitsRead.getMappedRange(0, FIRST_HIT_BYTES * n).slice(0));
    const foundWords = new Uint32Array(foundRead.getMappedRange(0, foundBytes));
    const count = foundWords[0];
    const found = new Set();
    for (let k = 0; k < Math.min(count, capacity); k++) {
      found.add(foundWords[1 + 5 * k]);
    }
    hitsRead.unmap();
    foundRead.unmap();
    return { words, found, overflow: count > capacity, listed: count, room: capacity, ms: performance.now() - started };
  }
}
