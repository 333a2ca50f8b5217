// A module Web Worker that loads Pyodide + torchweb and runs one Python file with
// runPythonAsync (so JSPI blocking readback works here too). Messages out: {type: "log"|"done"|"error"}.
import { runHere } from "./run.mjs";

self.onmessage = async ({ data }) => {
  const log = (text) => self.postMessage({ type: "log", text });
  try {
    const result = await runHere(data.script, { ...data, log });
    self.postMessage({ type: "done", result });
  } catch (err) {
    self.postMessage({ type: "error", text: String((err && err.message) || err) });
  }
};
