// The playground's built-in plot: one line plot {title, xs, ys} on a <canvas>, axes with their
// ranges, no library. plot.py's plot() in the worker sends the data.
const fmt = (v) => (Math.abs(v) >= 1e4 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(1) : +v.toPrecision(3) + "");

export function drawFigure(canvas, { title = "", xs, ys }) {
  const g = canvas.getContext("2d"), W = canvas.width, H = canvas.height;
  const L = 52, R = 12, T = 22, B = 24;
  g.clearRect(0, 0, W, H);
  g.fillStyle = "#222"; g.font = "12px system-ui,sans-serif"; g.textAlign = "center";
  g.fillText(title, W / 2, 14);
  const finite = (a) => a.filter(Number.isFinite);
  let [x0, x1] = [Math.min(...finite(xs)), Math.max(...finite(xs))];
  let [y0, y1] = [Math.min(...finite(ys)), Math.max(...finite(ys))];
  if (!(x1 > x0)) { x0 -= 0.5; x1 += 0.5; }
  if (!(y1 > y0)) { y0 -= 0.5; y1 += 0.5; }
  const px = (x) => L + (W - L - R) * (x - x0) / (x1 - x0);
  const py = (y) => T + (H - T - B) * (1 - (y - y0) / (y1 - y0));
  g.strokeStyle = "#999"; g.lineWidth = 1;
  g.beginPath(); g.moveTo(L, T); g.lineTo(L, H - B); g.lineTo(W - R, H - B); g.stroke();
  g.fillStyle = "#444"; g.font = "11px system-ui,sans-serif";
  g.textAlign = "right"; for (const y of [y0, (y0 + y1) / 2, y1]) g.fillText(fmt(y), L - 4, py(y) + 4);
  g.textAlign = "center"; for (const x of [x0, (x0 + x1) / 2, x1]) g.fillText(fmt(x), px(x), H - B + 14);
  g.strokeStyle = "#c0392b"; g.lineWidth = 1.5; g.beginPath();
  let pen = false;
  xs.forEach((x, i) => {
    if (!Number.isFinite(x) || !Number.isFinite(ys[i])) { pen = false; return; }
    pen ? g.lineTo(px(x), py(ys[i])) : g.moveTo(px(x), py(ys[i])); pen = true;
  });
  g.stroke();
  if (xs.length === 1) { g.fillStyle = "#c0392b"; g.beginPath(); g.arc(px(xs[0]), py(ys[0]), 3, 0, 7); g.fill(); }
}
