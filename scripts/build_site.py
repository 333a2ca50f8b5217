"""Build the site's generated parts (issue 23): the header every page shares, the Playground's
code editor, and the docs as pages.

    site/*.html        the <header class="site"> block of each page is rewritten from NAV below
                       (committed: the pages read fine unbuilt; tests/test_site_design.py checks
                       that every page carries the header this script writes)
    site/vendor/codemirror.js
                       CodeMirror 6 with Python highlighting, bundled by esbuild from npm's
                       codemirror, @codemirror/lang-python (scripts/codemirror_entry.mjs; no CDN).
                       Without node_modules the Playground keeps its plain textarea.
    site/docs/*.html   README.md and docs/*.md rendered with markdown-it-py (a build dependency,
                       not a runtime one), in the site's design; each runnable Python example
                       (whole: every name it reads defined in it) gets an "Open in playground" link (its code in the link's #code=, which the
                       Playground shows and never runs before Run is pressed).

scripts/wheel.py (so scripts/run.sh and scripts/test.sh) and the page tests run it.

    .venv/bin/python scripts/build_site.py [--headers-only]
"""

import argparse
import ast
import base64
import builtins
import glob
import html
import os
import re
import shutil
import subprocess
import sys
import zlib

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SITE = os.path.join(REPO, "site")
DOCS = os.path.join(REPO, "docs")
EDITOR_ENTRY = os.path.join(REPO, "scripts", "codemirror_entry.mjs")
EDITOR_BUNDLE = os.path.join(SITE, "vendor", "codemirror.js")
ESBUILD = os.path.join(REPO, "node_modules", ".bin", "esbuild")
CSP = ("default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data: blob:; connect-src 'self' https: blob:; worker-src 'self'; "
       "object-src 'none'; base-uri 'self'; form-action 'none'")   # serve.CSP (a test checks)

# The site's sections, in the header's order: (path under site/, label, the pages it covers).
NAV = [
    ("index.html", "Home", ("index.html", "hello.html")),
    ("train.html", "Train", ("train.html",)),
    ("gpt.html", "GPT", ("gpt.html",)),
    ("minilm.html", "Search", ("minilm.html",)),
    ("lm.html", "Complete", ("lm.html",)),
    ("playground.html", "Playground", ("playground.html",)),
    ("docs/index.html", "Docs", ("docs/",)),
]
HEADER = re.compile(r'<header class="site">.*?</header>\n', re.S)


def header_html(page, prefix=""):
    """The shared header for page (a path under site/); prefix leads back to site/ ("../")."""
    links = []
    for path, label, covers in NAV:
        here = any(page == c or (c.endswith("/") and page.startswith(c)) for c in covers)
        current = ' aria-current="page"' if here else ""
        href = prefix + ("./" if path == "index.html" else path)
        links.append(f'<a href="{href}"{current}>{label}</a>')
    return ('<header class="site"><div>'
            f'<a class="brand" href="{prefix or "./"}">torch<span>web</span></a>'
            f'<nav aria-label="site">{"".join(links)}</nav></div></header>\n')


def stamp_headers(site=SITE):
    """Rewrite the header block of each site/*.html; returns the pages changed."""
    changed = []
    for path in sorted(glob.glob(os.path.join(site, "*.html"))):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        want = header_html(os.path.basename(path))
        new = HEADER.sub(lambda _: want, text, count=1) if HEADER.search(text) else text
        if new != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
            changed.append(path)
    return changed


def bundle_editor():
    """site/vendor/codemirror.js from npm's CodeMirror; None (with a note) without esbuild."""
    if not os.path.exists(ESBUILD):
        print("build_site: no node_modules/.bin/esbuild (scripts/setup.sh installs it): "
              "the Playground keeps its plain textarea", file=sys.stderr)
        return None
    os.makedirs(os.path.dirname(EDITOR_BUNDLE), exist_ok=True)
    subprocess.run([ESBUILD, EDITOR_ENTRY, "--bundle", "--format=esm", "--minify", "--log-level=warning",
                    "--legal-comments=none", f"--outfile={EDITOR_BUNDLE}"], check=True, cwd=REPO)
    return EDITOR_BUNDLE


# ---- docs

def playground_link(code, prefix="../"):
    """The Playground link that opens code (site/demos/playground/share.mjs's #code= format:
    base64url of the raw-deflated UTF-8 text), shown there and run only on Run."""
    z = zlib.compressobj(9, zlib.DEFLATED, -15)
    raw = z.compress(code.encode("utf-8")) + z.flush()
    return prefix + "playground.html#code=" + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def free_names(code):
    """Names the code reads but neither defines, imports nor finds among the builtins; None if
    it is not Python (top-level await allowed, as in the Playground)."""
    try:
        tree = compile(code, "<doc>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    except SyntaxError:
        return None
    bound, read = set(dir(builtins)) | {"WEIGHTS_URL"}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return read - bound


def is_python_example(info, code):
    """A runnable example: a block marked python (or unmarked and using torch) whose code is
    whole, every name it reads defined in it. Fragments (a training step that uses a `model`
    from elsewhere) get no playground link: opened there they would only fail."""
    lang = (info or "").split()[0].lower() if info else ""
    if lang not in ("python", "py", ""):
        return False
    if not lang and "torch" not in code:
        return False
    return free_names(code) == set()


def highlighted(code, lang):
    """Code as HTML, Python and shell coloured by Pygments (site.css gives its classes colours
    for light and dark) where it is installed; plain text otherwise."""
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import get_lexer_by_name
        from pygments.util import ClassNotFound
    except ImportError:
        return html.escape(code)
    try:
        lexer = get_lexer_by_name(lang or "text")
    except ClassNotFound:
        return html.escape(code)
    return highlight(code, lexer, HtmlFormatter(nowrap=True))


def markdown_renderer(doc_names):
    """A markdown-it renderer with tables, links to .md rewritten to .html, and the playground
    link after each Python example."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")

    def code_block(_renderer, tokens, idx, options, env):
        tok = tokens[idx]
        info = tok.info.strip() if tok.type == "fence" else ""
        lang = info.split()[0] if info else ""
        cls = f' class="language-{html.escape(lang)}"' if lang else ""
        out = f"<pre><code{cls}>{highlighted(tok.content, lang)}</code></pre>\n"
        if is_python_example(info, tok.content):
            out += (f'<a class="open-in-playground" href="{html.escape(playground_link(tok.content))}">'
                    "Open in playground &rarr;</a>\n")
            env.setdefault("examples", 0)
            env["examples"] += 1
        return out

    md.add_render_rule("fence", code_block)
    md.add_render_rule("code_block", code_block)

    def link_open(renderer, tokens, idx, options, env):
        href = tokens[idx].attrGet("href") or ""
        base, _, frag = href.partition("#")
        name = os.path.basename(base)
        if base.endswith(".md") and "://" not in base and name[:-3] in doc_names:
            tokens[idx].attrSet("href", doc_names[name[:-3]] + (f"#{frag}" if frag else ""))
        return renderer.renderToken(tokens, idx, options, env)

    md.add_render_rule("link_open", link_open)
    return md


def doc_sources():
    """[(name, title, path)]: README.md as the docs' front page, then docs/*.md."""
    out = [("index", "Overview", os.path.join(REPO, "README.md"))]
    for path in sorted(glob.glob(os.path.join(DOCS, "*.md"))):
        out.append((os.path.splitext(os.path.basename(path))[0], None, path))
    return out


def docs_nav(sources, titles, current):
    """The line of links to every document, atop each docs page."""
    links = []
    for name, _, _ in sources:
        label = "Overview" if name == "index" else name
        cur = ' aria-current="page"' if name == current else ""
        links.append(f'<a href="{name}.html" title="{html.escape(titles[name])}"{cur}>{label}</a>')
    return f'<nav class="doc-nav" aria-label="documents">{"".join(links)}</nav>\n'


def page_html(title, body, page, prefix):
    return (f'<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>torchweb docs: {html.escape(title)}</title>\n"
            f'<link rel="stylesheet" href="{prefix}site.css">\n</head>\n<body>\n'
            f"{header_html(page, prefix)}<main class=\"doc\">\n{body}</main>\n"
            f'<footer class="site">Rendered from the repository\'s Markdown by scripts/build_site.py.</footer>\n'
            "</body>\n</html>\n")


def render_docs(out_dir=os.path.join(SITE, "docs")):
    """Write site/docs/NAME.html for README.md (index) and each docs/*.md; returns
    {name: number of Python examples linked to the playground}."""
    sources = doc_sources()
    names = {n: f"{n}.html" for n, _, _ in sources}
    names["README"] = "index.html"
    md = markdown_renderer(names)
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    # the screenshots the docs show, beside the pages (docs/screenshots/ -> site/docs/screenshots/)
    shots = os.path.join(DOCS, "screenshots")
    if os.path.isdir(shots):
        shutil.copytree(shots, os.path.join(out_dir, "screenshots"))
    texts, titles, counts = {}, {}, {}
    for name, title, path in sources:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if name == "index":   # the README's links into docs/ are siblings here
            text = re.sub(r"\]\(docs/", "](", text)
        first = re.search(r"^# (.+)$", text, re.M)
        texts[name], titles[name] = text, title or (first.group(1).strip() if first else name)
    for name, _, _ in sources:
        env = {}
        body = md.render(texts[name], env)
        if name == "index":
            body += "<h2>All documents</h2>\n<ul class=\"cards\">\n" + "".join(
                f'<li><a class="card" href="{n}.html"><b>{html.escape(titles[n])}</b>'
                f"<span>docs/{n}.md</span></a></li>\n" for n, _, _ in sources[1:]) + "</ul>\n"
        counts[name] = env.get("examples", 0)
        with open(os.path.join(out_dir, f"{name}.html"), "w", encoding="utf-8") as f:
            f.write(page_html(titles[name], docs_nav(sources, titles, name) + body, f"docs/{name}.html", "../"))
    return counts


def build(headers_only=False):
    changed = stamp_headers()
    if headers_only:
        return {"headers": changed}
    return {"headers": changed, "editor": bundle_editor(), "docs": render_docs()}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--headers-only", action="store_true", help="only rewrite the pages' shared header")
    r = build(ap.parse_args().headers_only)
    for path in r["headers"]:
        print("header rewritten:", os.path.relpath(path, REPO))
    if "docs" in r:
        print(f"editor: {r['editor'] and os.path.relpath(r['editor'], REPO)}; docs: {len(r['docs'])} pages, "
              f"{sum(r['docs'].values())} examples linked to the playground")
