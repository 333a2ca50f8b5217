// The Playground's code editor: CodeMirror 6 with Python highlighting (site/vendor/codemirror.js,
// bundled from npm by scripts/build_site.py), mounted over the page's <textarea id="editor">, which
// stays as a mirror of the code (its value is always the editor's). Without the bundle the textarea
// itself is the editor (Tab indents, Ctrl/Cmd+Enter runs). Returns {kind, get(), set(code), focus()}.
export async function makeEditor(textarea, { onRun }) {
  let cm = null;
  try {
    cm = await import("./vendor/codemirror.js");
  } catch (e) {
    console.warn("the CodeMirror bundle did not load (scripts/build_site.py builds it): a plain textarea", e);
  }
  return cm ? codeMirror(cm, textarea, onRun) : plainTextarea(textarea, onRun);
}

function codeMirror(cm, textarea, onRun) {
  const { EditorView, EditorState, basicSetup, keymap, indentWithTab, indentUnit, python, oneDark } = cm;
  const dark = matchMedia("(prefers-color-scheme: dark)").matches;
  const view = new EditorView({
    parent: textarea.parentNode,
    state: EditorState.create({
      doc: textarea.value,
      extensions: [
        keymap.of([{ key: "Mod-Enter", run: () => { onRun(); return true; } }, indentWithTab]),
        basicSetup, python(), indentUnit.of("    "), EditorState.tabSize.of(4),
        EditorView.contentAttributes.of({ "aria-label": "Python code", autocapitalize: "off", spellcheck: "false" }),
        EditorView.updateListener.of((u) => { if (u.docChanged) textarea.value = u.state.doc.toString(); }),
        ...(dark ? [oneDark] : []),
      ],
    }),
  });
  textarea.after(view.dom);
  textarea.hidden = true;
  return {
    kind: "codemirror",
    get: () => view.state.doc.toString(),
    set: (code) => {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: code } });
      textarea.value = code;
    },
    focus: () => view.focus(),
  };
}

function plainTextarea(textarea, onRun) {
  textarea.addEventListener("keydown", (e) => {
    if (e.key === "Tab" && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      const { selectionStart: a, selectionEnd: b, value: v } = textarea;
      textarea.value = v.slice(0, a) + "    " + v.slice(b);
      textarea.selectionStart = textarea.selectionEnd = a + 4;
    } else if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); onRun(); }
  });
  return { kind: "textarea", get: () => textarea.value, set: (code) => { textarea.value = code; }, focus: () => textarea.focus() };
}
