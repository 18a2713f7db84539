"""The house rules of docs/design.md, checked on the source tree: no file of library, tool or
package code over 800 lines, no function over 80, every such file opening with a comment on
what it holds, and core's layers calling only down (objects <- movement <- primitives, by the
functions each file defines and calls).

    python3 tests/house.py SOURCE_DIR

C functions are found as this code base writes them: a definition's name and parameters from
column 0, its body from a line "{" to a line "}" at column 0. Prints every breach; exit status 1
when there is one."""
import ast
import os
import re
import sys

MAX_FILE, MAX_FUNCTION = 800, 80
LAYERS = ["objects", "movement", "primitives"]  # src/core/<layer>/, lowest first


def sources(root):
    for top in ["src", "bench", "tools", "python"]:
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                path = os.path.join(folder, name)
                if name.endswith((".c", ".h", ".py", ".cu")) or (top == "tools" and "." not in name):
                    yield path


def c_functions(text, exported=False):
    """(name, first line, lines) of each function definition (with exported, only those that are
    not static)."""
    lines, found, start, name = text.split("\n"), [], None, None
    for i, line in enumerate(lines):
        if start is None and line == "{":
            j = i - 1
            while j > 0 and not re.match(r"^[A-Za-z_].*\(", lines[j]):
                j -= 1
            m = re.search(r"([A-Za-z_][A-Za-z_0-9]*)\s*\(", lines[j])
            start, name, static = j, m.group(1) if m else "?", lines[j].startswith("static")
        elif start is not None and line.startswith("}"):
            if not (exported and static):
                found.append((name, start + 1, i - start + 1))
            start = None
    return found


def py_functions(text):
    return [(n.name, n.lineno, n.end_lineno - n.lineno + 1) for n in ast.walk(ast.parse(text))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def opens_with_comment(path, text):
    first = text.lstrip("\n")
    if path.endswith((".c", ".h", ".cu")):
        return first.startswith(("/*", "//"))
    if first.startswith("#!"):
        first = first.split("\n", 1)[1].lstrip("\n")
    return first.startswith(('"""', "#"))


def layer_breaches(root):
    """Calls from a lower layer of core to a function defined in a higher one."""
    defined, texts = {}, {}
    for layer in LAYERS:
        folder = os.path.join(root, "src", "core", layer)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".c"):
                text = open(os.path.join(folder, name)).read()
                texts[(layer, name)] = text
                for fn, _, _ in c_functions(text, exported=True):
                    defined.setdefault(fn, layer)
    breaches = []
    for (layer, name), text in texts.items():
        body = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        for fn, home in defined.items():
            if LAYERS.index(home) > LAYERS.index(layer) and re.search(r"(?<![.>\w])%s\s*\(" % re.escape(fn), body):
                breaches.append("src/core/%s/%s calls %s of %s/, a higher layer" % (layer, name, fn, home))
    return breaches


def main(root):
    breaches = []
    for path in sources(root):
        text = open(path, encoding="utf-8").read()
        rel = os.path.relpath(path, root)
        if rel.endswith("_api.py"):  # generated from gpuport.h by the build
            continue
        n = text.count("\n")
        if n > MAX_FILE:
            breaches.append("%s: %d lines (at most %d)" % (rel, n, MAX_FILE))
        if not opens_with_comment(path, text):
            breaches.append("%s: does not open with a comment on what it holds" % rel)
        is_python = path.endswith(".py") or text.startswith("#!/usr/bin/env python")
        for name, line, length in (py_functions(text) if is_python else
                                   c_functions(text) if path.endswith((".c", ".cu")) else []):
            if length > MAX_FUNCTION:
                breaches.append("%s:%d: %s is %d lines (at most %d)" % (rel, line, name, length, MAX_FUNCTION))
    breaches += layer_breaches(root)
    for b in breaches:
        print(b)
    print("%d breaches of the house rules" % len(breaches))
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
