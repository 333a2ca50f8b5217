// A small line plot on a <canvas> (no library): plot(canvas, values, {xmax, ymin, ymax, color, label}).
// x runs over 1..xmax (epochs); y bounds default to the values' range.
export function plot(canvas, ys, { xmax = ys.length, ymin, ymax, color = "#333", label = String } = {}) {
  const g = canvas.getContext("2d"), W = canvas.width, H = canvas.height;
  const L = 44, R = 10, T = 10, B = 24;
  g.clearRect(0, 0, W, H);
  let lo = ymin ?? Math.min(...ys), hi = ymax ?? Math.max(...ys);
  if (!ys.length && (ymin === undefined || ymax === undefined)) { lo = 0; hi = 1; }
  if (hi - lo < 1e-9) { lo -= 0.5; hi += 0.5; }
  if (ymin === undefined) lo = Math.max(0, lo - 0.05 * (hi - lo));
  const xs = (i) => L + (W - L - R) * (xmax <= 1 ? 0.5 : (i - 1) / (xmax - 1));
  const yv = (v) => T + (H - T - B) * (1 - (v - lo) / (hi - lo));
  g.strokeStyle = "#999"; g.fillStyle = "#444"; g.font = "11px system-ui,sans-serif"; g.lineWidth = 1;
  g.beginPath(); g.moveTo(L, T); g.lineTo(L, H - B); g.lineTo(W - R, H - B); g.stroke();
  for (const v of [lo, (lo + hi) / 2, hi]) { g.textAlign = "right"; g.fillText(label(v), L - 4, yv(v) + 4); }
  g.textAlign = "center";
  const step = Math.max(1, Math.ceil(xmax / 10));
  for (let i = 1; i <= xmax; i += step) g.fillText(String(i), xs(i), H - B + 14);
  if (!ys.length) return;
  g.strokeStyle = color; g.fillStyle = color; g.lineWidth = 2;
  g.beginPath(); ys.forEach((v, i) => (i ? g.lineTo : g.moveTo).call(g, xs(i + 1), yv(v))); g.stroke();
  ys.forEach((v, i) => { g.beginPath(); g.arc(xs(i + 1), yv(v), 3, 0, 2 * Math.PI); g.fill(); });
  g.textAlign = "left"; g.fillText(label(ys[ys.length - 1]), Math.min(xs(ys.length) + 6, W - 40), yv(ys[ys.length - 1]) - 6);
}
