// What the digits workers (demos/digits/worker.mjs for train.html, index_worker.mjs for the landing
// page) hand to Pyodide: the digits, train.py and page_setup.py, fetched together, set as globals.
import { fetchText } from "../../boot.mjs";

export async function setDigitsGlobals(pyodide, extra) {
  const [digits, train, setup] = await Promise.all([
    fetchText("data/digits.json").catch((e) => {
      throw new Error(`${e.message}: the digits are missing (scripts/fetch_digits.py, then scripts/wheel.py copies them into site/data/)`);
    }),
    fetchText("demos/digits/train.py"),
    fetchText("demos/digits/page_setup.py"),
  ]);
  const globals = { DIGITS_JSON: digits, TRAIN_SRC: train, SETUP_SRC: setup, ...extra };
  for (const [name, value] of Object.entries(globals)) pyodide.globals.set(name, value);
}
