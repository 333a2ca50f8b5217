// The landing page's drawing pad: strokes drawn with a pointer (mouse, pen or finger) become an
// 8x8 digit the way scikit-learn's digits were made (UCI optdigits: a 32x32 bitmap, the digit
// scaled to fill it, then each 4x4 block's count of ink, 0..16). The strokes are kept as points
// and drawn again at 32x32 with a fixed pen, so a small drawing gives the same strokes as a big one.
const SIZE = 32, FILL = 28, PEN = 3.4;

export class Pad {
  constructor(canvas, onDigit) {
    this.canvas = canvas; this.g = canvas.getContext("2d"); this.onDigit = onDigit;
    this.strokes = []; this.image = null;
    canvas.addEventListener("pointerdown", (e) => {
      if (this.image) this.clear();
      canvas.setPointerCapture(e.pointerId);
      this.strokes.push([this.point(e)]); this.redraw();
    });
    canvas.addEventListener("pointermove", (e) => {
      if (!canvas.hasPointerCapture(e.pointerId)) return;
      this.strokes[this.strokes.length - 1].push(this.point(e)); this.redraw();
    });
    const end = (e) => {
      if (!canvas.hasPointerCapture(e.pointerId)) return;
      canvas.releasePointerCapture(e.pointerId);
      this.onDigit(this.digit());
    };
    this.redraw();
    canvas.addEventListener("pointerup", end);
    canvas.addEventListener("pointercancel", end);
    // the ink follows the page's colours: drawn again when the system turns dark or light
    matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => this.redraw());
  }

  // the pointer's position in the canvas's own pixels (it is shown scaled by CSS)
  point(e) {
    const r = this.canvas.getBoundingClientRect();
    return { x: (e.clientX - r.left) * this.canvas.width / r.width, y: (e.clientY - r.top) * this.canvas.height / r.height };
  }

  ink() { return getComputedStyle(this.canvas).color || "#000"; }

  clear() { this.strokes = []; this.image = null; this.redraw(); }

  redraw() {
    const { g, canvas } = this;
    g.clearRect(0, 0, canvas.width, canvas.height);
    if (this.image) return this.drawImage();
    if (!this.strokes.length) {        // empty: say what the pad is for
      g.fillStyle = this.ink(); g.globalAlpha = 0.35; g.textAlign = "center";
      g.font = `${Math.round(canvas.width / 14)}px system-ui, sans-serif`;
      g.fillText("draw a digit here", canvas.width / 2, canvas.height / 2);
      g.globalAlpha = 1;
      return;
    }
    g.strokeStyle = this.ink(); g.lineCap = g.lineJoin = "round"; g.lineWidth = canvas.width / 14;
    this.path(g, (p) => p);
  }

  path(g, map) {
    for (const s of this.strokes) {
      g.beginPath();
      const a = map(s[0]); g.moveTo(a.x, a.y);
      for (const p of s.length > 1 ? s.slice(1) : [{ x: s[0].x + 0.01, y: s[0].y }]) { const q = map(p); g.lineTo(q.x, q.y); }
      g.stroke();
    }
  }

  // a digit of the data set (64 values 0..16) shown as big pixels; digit() then returns it
  showImage(pixels) { this.strokes = []; this.image = pixels; this.redraw(); }

  drawImage() {
    const { g, canvas } = this, cell = canvas.width / 8;
    g.fillStyle = this.ink();
    this.image.forEach((v, i) => { g.globalAlpha = v / 16; g.fillRect((i % 8) * cell, Math.floor(i / 8) * cell, cell, cell); });
    g.globalAlpha = 1;
  }

  // The 64 values 0..16 of what is drawn: the strokes' box scaled to FILL of SIZE, centred.
  digit() {
    if (this.image) return this.image.slice();
    const pts = this.strokes.flat();
    if (!pts.length) return new Array(64).fill(0);
    const xs = pts.map((p) => p.x), ys = pts.map((p) => p.y);
    const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
    const scale = FILL / Math.max(x1 - x0, y1 - y0, 1e-3);
    const ox = (SIZE - (x1 - x0) * scale) / 2, oy = (SIZE - (y1 - y0) * scale) / 2;
    const c = new OffscreenCanvas(SIZE, SIZE), g = c.getContext("2d");
    g.strokeStyle = "#000"; g.lineCap = g.lineJoin = "round"; g.lineWidth = PEN;
    this.path(g, (p) => ({ x: ox + (p.x - x0) * scale, y: oy + (p.y - y0) * scale }));
    const a = g.getImageData(0, 0, SIZE, SIZE).data, out = new Array(64).fill(0);
    for (let y = 0; y < SIZE; y++) for (let x = 0; x < SIZE; x++) out[(y >> 2) * 8 + (x >> 2)] += a[4 * (y * SIZE + x) + 3] / 255;
    return out.map((v) => Math.min(16, Math.round(v)));
  }
}
