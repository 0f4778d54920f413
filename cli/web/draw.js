// The playground's drawing: each kind of target, the dragged segment and the legend's swatches,
// drawn on a 2-d canvas context in scene units (k canvas pixels a unit), in one set of colours.

// The colours of the scene, its legend's swatches drawn with the same.
export const STYLE = {
  rect: { fill: "rgba(70,110,200,0.12)", stroke: "#4668c8" },
  wall: "#333",
  circle: { fill: "rgba(40,160,90,0.15)", stroke: "#28a05a" },
  polygon: { fill: "rgba(150,70,190,0.15)", stroke: "#9646be" },
  hit: { fill: "rgba(224,123,36,0.55)", stroke: "#e07b24" },
  segment: "#111",
  entry: "#1a9c3c",
  exit: "#c8102e",
  bullet: "rgba(60,60,60,0.45)",
  bulletHit: "#c8102e",
};

export function drawRect(ctx, r, k, isHit) {
  ctx.lineWidth = 1 / k;
  ctx.fillStyle = isHit ? STYLE.hit.fill : STYLE.rect.fill;
  ctx.fillRect(r[0], r[1], r[2] - r[0], r[3] - r[1]);
  ctx.strokeStyle = STYLE.rect.stroke;
  ctx.strokeRect(r[0], r[1], r[2] - r[0], r[3] - r[1]);
}

export function drawWall(ctx, w, k, isHit) {
  ctx.strokeStyle = isHit ? STYLE.hit.stroke : STYLE.wall;
  ctx.lineWidth = 3 / k;
  line(ctx, w);
}

export function drawCircle(ctx, c, k, isHit) {
  ctx.lineWidth = 1 / k;
  ctx.beginPath();
  ctx.arc(c[0], c[1], c[2], 0, 2 * Math.PI);
  ctx.fillStyle = isHit ? STYLE.hit.fill : STYLE.circle.fill;
  ctx.fill();
  ctx.strokeStyle = STYLE.circle.stroke;
  ctx.stroke();
}

export function drawPolygon(ctx, rings, k, isHit) {
  ctx.lineWidth = 1 / k;
  ctx.beginPath();
  for (const ring of rings) {
    ring.forEach(([x, y], v) => (v === 0 ? ctx.moveTo(x, y) : ctx.lineTo(x, y)));
    ctx.closePath();
  }
  ctx.fillStyle = isHit ? STYLE.hit.fill : STYLE.polygon.fill;
  ctx.fill("evenodd");
  ctx.strokeStyle = STYLE.polygon.stroke;
  ctx.stroke();
}

export function line(ctx, [x0, y0, x1, y1]) {
  ctx.beginPath();
  ctx.moveTo(x0, y0);
  ctx.lineTo(x1, y1);
  ctx.stroke();
}

export function pointAt([x0, y0, x1, y1], t) {
  return [x0 + t * (x1 - x0), y0 + t * (y1 - y0)];
}

export function dot(ctx, [x, y], radius, colour) {
  ctx.beginPath();
  ctx.arc(x, y, radius, 0, 2 * Math.PI);
  ctx.fillStyle = colour;
  ctx.fill();
}

// The dragged segment, unlike a wall: dashed, a ring at its start (t = 0) and an arrowhead at
// its end (t = 1).
export function drawDragged(ctx, s, k) {
  const [x0, y0, x1, y1] = s;
  ctx.strokeStyle = STYLE.segment;
  ctx.lineWidth = 1.5 / k;
  ctx.setLineDash([7 / k, 5 / k]);
  line(ctx, s);
  ctx.setLineDash([]);
  ctx.beginPath();
  ctx.arc(x0, y0, 4 / k, 0, 2 * Math.PI);
  ctx.stroke();
  const length = Math.hypot(x1 - x0, y1 - y0);
  if (length * k < 1) return;
  const [ux, uy] = [(x1 - x0) / length, (y1 - y0) / length];
  const [size, half] = [11 / k, 4.5 / k];
  ctx.beginPath();
  ctx.moveTo(x1, y1);
  ctx.lineTo(x1 - size * ux - half * uy, y1 - size * uy + half * ux);
  ctx.lineTo(x1 - size * ux + half * uy, y1 - size * uy - half * ux);
  ctx.closePath();
  ctx.fillStyle = STYLE.segment;
  ctx.fill();
}
