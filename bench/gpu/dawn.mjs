// The browser suite's page (bench/browser/page.mjs: torchweb in Pyodide, eager and compiled,
// against TensorFlow.js, jax-js and webgpu-torch) in node on Dawn, the WebGPU implementation of
// Chrome, through the npm `webgpu` bindings: on a GPU machine where headless Chromium gets no
// hardware adapter, this is the browser path on the real GPU. bench/gpu/run.sh calls it after
// bench/gpu/browser_build.py has filled bench/browser/build.
//
//   node --experimental-wasm-jspi bench/gpu/dawn.mjs --dawn DIR --out FILE [--reps N] [--warm N] [--only S] [--libs a,b]
//
// DIR holds the bindings (index.js, dist/linux-x64/dawn.node). What the page reads with fetch is
// read from bench/browser/; the UMD builds index.html loads with script tags are run the same way.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import vm from "node:vm";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PAGE_DIR = path.resolve(HERE, "..", "browser");
const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) =>
  (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
const dawnDir = path.resolve(args.dawn || "/tmp/dawn");
const search = new URLSearchParams(Object.fromEntries(
  ["reps", "warm", "only", "libs"].filter((k) => args[k] !== undefined).map((k) => [k, args[k]])));

// The page's world: its location (for relative URLs), a fetch that reads local files, an
// element for its log.
const pageURL = pathToFileURL(path.join(PAGE_DIR, "index.html"));
pageURL.search = search.toString();
globalThis.location = pageURL;
const netFetch = globalThis.fetch;
globalThis.fetch = async (url, opts) => {
  const u = new URL(url, pageURL);
  if (u.protocol !== "file:") return netFetch(url, opts);
  return new Response(fs.readFileSync(fileURLToPath(u)));
};
const output = { textContent: "", dataset: {} };
globalThis.document = { getElementById: () => output };
const logged = { length: 0 };
setInterval(() => {   // the page's log, as it grows
  const text = output.textContent;
  if (text.length > logged.length) { process.stdout.write(text.slice(logged.length)); logged.length = text.length; }
}, 200).unref();

// Pyodide first (torchweb's peer takes this one), then navigator.gpu from Dawn.
const { loadPyodide } = await import(pathToFileURL(path.join(PAGE_DIR, "build", "pyodide", "pyodide.mjs")).href);
globalThis.__benchPyodide = await loadPyodide({ indexURL: path.join(PAGE_DIR, "build", "pyodide") + "/" });
const dawn = await import(pathToFileURL(path.join(dawnDir, "index.js")).href);
Object.assign(globalThis, dawn.globals);
const dawnVersion = JSON.parse(fs.readFileSync(path.join(dawnDir, "package.json"), "utf8")).version;
Object.defineProperty(globalThis, "navigator", {
  value: { gpu: dawn.create([]), userAgent: `node ${process.version}; Dawn (npm webgpu ${dawnVersion})` },
  configurable: true,
});

// The scripts index.html loads before the page (UMD builds that set globals: tf, torch); in
// node they reach for require (TF.js's node platform)
globalThis.require = createRequire(import.meta.url);
for (const f of ["node_modules/@tensorflow/tfjs/dist/tf.min.js",
                 "node_modules/@tensorflow/tfjs-backend-webgpu/dist/tf-backend-webgpu.min.js",
                 "node_modules/webgpu-torch/torch.js"]) {
  const file = path.join(PAGE_DIR, f);
  if (fs.existsSync(file)) vm.runInThisContext(fs.readFileSync(file, "utf8"), { filename: file });
}

await import(pathToFileURL(path.join(PAGE_DIR, "page.mjs")).href);
while (!("benchResult" in globalThis)) await new Promise((r) => setTimeout(r, 100));
const result = globalThis.benchResult;
if (!result) { console.error("the page failed (its log above)"); process.exit(1); }
result.runtime = { node: process.version, dawn_npm_webgpu: dawnVersion };
if (args.out) fs.writeFileSync(args.out, JSON.stringify(result, null, 1));
console.log(`\nwrote ${args.out || "(no --out)"}`);
process.exit(0);
