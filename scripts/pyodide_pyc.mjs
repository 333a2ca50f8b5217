// Compile a package's .py files to bytecode with Pyodide's own Python (run by Node), so the page
// skips compiling torchweb's source on every visit. Used by scripts/wheel.py (build_pyodide).
//
//   node scripts/pyodide_pyc.mjs PYODIDE_DIR SRC_DIR PACKAGE
//
// Writes SRC_DIR/PACKAGE/**/NAME.pyc beside each NAME.py (the sourceless layout Pyodide's own
// packages and standard library use: the wheel then ships the .pyc instead of the .py). Prints
// Python's "major.minor", which the .pyc files need.
import path from "node:path";

const [pyodideDir, srcDir, pkg] = process.argv.slice(2);
if (!pkg) {
  console.error("usage: node pyodide_pyc.mjs PYODIDE_DIR SRC_DIR PACKAGE");
  process.exit(2);
}
const { loadPyodide } = await import(path.resolve(pyodideDir, "pyodide.mjs"));
const py = await loadPyodide({ indexURL: path.resolve(pyodideDir) + "/" });
py.FS.mkdirTree("/mnt/src");
py.FS.mount(py.FS.filesystems.NODEFS, { root: path.resolve(srcDir) }, "/mnt/src");
py.globals.set("PKG", pkg);
const out = py.runPython(`
import compileall, py_compile, site, sys
sys.dont_write_bytecode = False
ok = compileall.compile_dir("/mnt/src/" + PKG, ddir=site.getsitepackages()[0] + "/" + PKG, quiet=1, legacy=True,
                            invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
f"{sys.version_info[0]}.{sys.version_info[1]} {int(ok)}"
`);
const [version, ok] = out.split(" ");
console.log(version);
process.exit(ok === "1" ? 0 : 1);
