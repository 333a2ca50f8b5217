// What the Playground's editor takes from npm's CodeMirror 6: scripts/build_site.py bundles this
// file with esbuild into site/vendor/codemirror.js (gitignored, no CDN); playground.mjs imports it.
export { EditorView, basicSetup } from "codemirror";
export { keymap } from "@codemirror/view";
export { EditorState } from "@codemirror/state";
export { indentWithTab } from "@codemirror/commands";
export { indentUnit } from "@codemirror/language";
export { python } from "@codemirror/lang-python";
export { oneDark } from "@codemirror/theme-one-dark";
