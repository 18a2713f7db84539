#!/usr/bin/env python3
"""Reads include/gpuport.h and writes what the Python package needs from it, so that nothing is
copied by hand and nothing can drift:

  gen_api.py HEADER OUT_PY OUT_C
    OUT_PY  _api.py: every constant, enum, struct and union, and every function's prototype,
            as plain Python data that gpuport._ffi turns into ctypes declarations;
    OUT_C   a C program that prints, from the real header through the C compiler, the value of
            every enum constant and the size and field offsets of every struct as JSON; the
            test suite compares that with the ctypes layouts.

The header is gpuport's own and regular: one declaration per statement, GP_API before every
function, enums and structs as typedefs. Anything else it meets is an error, not a guess."""
import json
import re
import sys

# C types of the header, as gpuport._ffi names their ctypes.
SCALARS = {
    "int": "int", "unsigned": "uint", "unsigned int": "uint", "size_t": "size_t", "double": "double",
    "float": "float", "char": "char", "uint32_t": "uint32", "uint64_t": "uint64", "int64_t": "int64",
}



def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def ctype(decl, enums, records):
    """The _ffi type name of a declaration's type: 'int', 'ptr', 'char_p', 'struct:gp_view',
    'ptr:gp_view' (pointer to a record), 'handle' (pointer to an opaque object)."""
    decl = decl.replace("const ", "").strip()
    stars = decl.count("*")
    base = decl.replace("*", "").strip()
    if stars == 0:
        if base in SCALARS:
            return SCALARS[base]
        if base in enums or base == "gp_status":
            return "int"
        if base in records:
            return "struct:" + base
        raise SystemExit("gen_api.py: unknown type '%s'" % decl)
    if stars == 1 and base == "char":
        return "char_p"
    if stars == 1 and base in records:
        return "ptr:" + base
    if stars == 1 and base in SCALARS:
        return "ptr:" + SCALARS[base]
    if stars == 1 and base in enums:
        return "ptr:int"
    if stars == 1 and base == "void":
        return "ptr"
    if stars == 2 and base == "void":
        return "ptr:ptr"
    if stars <= 2 and base.startswith("gp_"):
        return "handle" if stars == 1 else "ptr:handle"
    raise SystemExit("gen_api.py: unknown type '%s'" % decl)


def main():
    header, out_py, out_c = sys.argv[1:4]
    raw = open(header).read()
    text = strip_comments(raw)

    constants = {}
    for name, value in re.findall(r"#define (GP_VERSION_(?:MAJOR|MINOR|PATCH)) (\d+)", text):
        constants[name] = int(value)

    statuses = [(n, int(v), t) for n, v, t in re.findall(r'X\((GP_[A-Z_]+), (-?\d+), "([^"]*)"\)', raw)]
    if not statuses:
        raise SystemExit("gen_api.py: no GP_STATUS_LIST in %s" % header)

    enums = {}
    for body, name in re.findall(r"typedef enum \w+\s*\{(.*?)\}\s*(\w+);", text, flags=re.S):
        if "GP__STATUS_ENUM" in body:
            continue
        values, nxt = [], 0
        for item in [i.strip() for i in body.split(",") if i.strip()]:
            m = re.match(r"(\w+)(?:\s*=\s*(-?\w+))?$", item)
            if not m:
                raise SystemExit("gen_api.py: cannot read enum item '%s' of %s" % (item, name))
            if m.group(2) is not None:
                nxt = int(m.group(2), 0)
            values.append((m.group(1), nxt))
            nxt += 1
        enums[name] = values

    records = {}
    for kind, body, name in re.findall(r"typedef (struct|union) \w+\s*\{(.*?)\}\s*(\w+);", text, flags=re.S):
        records[name] = (kind, body)
    layouts = {}
    for name, (kind, body) in records.items():
        fields = []
        for decl in [d.strip() for d in body.split(";") if d.strip()]:
            m = re.match(r"(.+?)\s*((?:\*\s*)*)(\w+)\s*((?:,\s*\w+\s*)*)(\[\s*(\d+)\s*\])?$", decl)
            if not m:
                raise SystemExit("gen_api.py: cannot read field '%s' of %s" % (decl, name))
            base, stars, first, more, _, count = m.groups()
            names = [first] + [n.strip() for n in more.split(",") if n.strip()]
            for field in names:
                t = ctype(base + " " + stars, enums, records)
                fields.append((field, t, int(count) if count else 0))
        layouts[name] = (kind, fields)

    functions = []
    for ret, fname, params in re.findall(r"GP_API\s+([\w\s\*]+?)\s*\b(gp_\w+)\s*\(([^)]*)\)\s*;", text, flags=re.S):
        args = []
        params = " ".join(params.split())
        if params != "void":
            for p in params.split(","):
                p = re.sub(r"(\w+)\s*\[\s*\d*\s*\]$", r"* \1", p.strip())  # an array parameter is a pointer
                m = re.match(r"(.+?)\s*(\w+)$", p.strip().replace("*", "* ").replace("*  ", "* "))
                decl = p.strip()[: -len(m.group(2))] if m else p
                args.append(ctype(decl, enums, records))
        functions.append((fname, ctype(ret, enums, records), args))

    with open(out_py, "w") as f:
        f.write("# Generated from gpuport.h by python/gen_api.py at build time: do not edit.\n")
        f.write("CONSTANTS = %r\n" % constants)
        f.write("STATUSES = %r\n" % statuses)
        f.write("ENUMS = %r\n" % enums)
        f.write("RECORDS = %r\n" % {n: (k, fl) for n, (k, fl) in layouts.items()})
        f.write("FUNCTIONS = %r\n" % functions)

    with open(out_c, "w") as f:
        f.write("/* Generated by python/gen_api.py: prints gpuport.h's enums and record layouts as JSON. */\n")
        f.write("#include <gpuport.h>\n#include <stddef.h>\n#include <stdio.h>\n\nint main(void)\n{\n")
        f.write('    printf("{\\"enums\\": {");\n')
        items = [(n, v) for name in sorted(enums) for n, _ in enums[name] for v in [n]]
        items += [(n, n) for n, _, _ in statuses]
        for i, (n, _) in enumerate(items):
            f.write('    printf("%s\\"%s\\": %%d", (int)%s);\n' % (", " if i else "", n, n))
        f.write('    printf("}, \\"records\\": {");\n')
        for i, (name, (kind, fields)) in enumerate(sorted(layouts.items())):
            f.write('    printf("%s\\"%s\\": {\\"size\\": %%zu, \\"offsets\\": {", sizeof(%s));\n' % (", " if i else "", name, name))
            for j, (field, _, _) in enumerate(fields):
                f.write('    printf("%s\\"%s\\": %%zu", offsetof(%s, %s));\n' % (", " if j else "", field, name, field))
            f.write('    printf("}}");\n')
        f.write('    printf("}}\\n");\n    return 0;\n}\n')


if __name__ == "__main__":
    main()
