#!/usr/bin/env python3
"""Writes files/onnx_schemas.inc, the ONNX operator schemas files/onnx_schema.c looks up
(files/onnx_schema.h), from the installed onnx package's onnx.defs:

    python files/onnx_schemas.py [-o files/onnx_schemas.inc]      (default: stdout)

`make onnx-schemas` runs it with the test virtual environment's python (whose onnx is pinned
in tests/python/constraints.txt); tests/python/test_onnx_schemas.py checks that the committed
file is what it writes.

Every schema of every since_version (onnx.defs.get_all_schemas_with_history()) of the default
domain ("", which "ai.onnx" names too) and of "ai.onnx.ml", deprecated ones included (with their
flag); not the preview domains. Each domain's schemas are sorted by (op_type as bytes,
since_version), the order dt_onnx_schema_find's binary search relies on.

Type strings are parsed exactly: a formal parameter's type_str is one of its schema's constraint
names or a literal type; a literal or allowed type "tensor(X)" is the bit TensorProto.DataType
of X (the enum's names lowercased: float -> FLOAT = 1, float16 -> FLOAT16 = 10, ...), any other
well-formed type (seq(...), optional(...), map(K, V), sparse_tensor(X)) is "other". A string
that is neither, an element type onnx's enum does not name, a count that does not fit the C
table's field: the generator stops with an error rather than write a table that is wrong.

The output depends only on onnx's schemas: identical arrays are written once (named by their
first use in the sorted order), so two runs write the same bytes."""

import argparse
import re
import sys

import onnx
import onnx.defs
from onnx import TensorProto

# The domains in the table, as the C lookup keys them.
DOMAINS = ("", "ai.onnx.ml")
INT32_MAX = 2**31 - 1

# "float" -> 1, "float16" -> 10, ... (UNDEFINED is no element type)
ELEM_BITS = {name.lower(): int(value) for name, value in TensorProto.DataType.items()
             if int(value) != TensorProto.UNDEFINED}
if max(ELEM_BITS.values()) >= 64:
    raise SystemExit("onnx_schemas.py: a TensorProto.DataType >= 64: the uint64_t masks miss it")

OPTION = {
    onnx.defs.OpSchema.FormalParameterOption.Single: "DT_ONNX_SINGLE",
    onnx.defs.OpSchema.FormalParameterOption.Optional: "DT_ONNX_OPTIONAL",
    onnx.defs.OpSchema.FormalParameterOption.Variadic: "DT_ONNX_VARIADIC",
}


class TypeStringError(ValueError):
    pass


def _elem(s, pos):
    """An element type name at s[pos:]: (its TensorProto.DataType, the position after it)."""
    m = re.compile(r"[a-z][a-z0-9_]*").match(s, pos)
    if not m or m.group(0) not in ELEM_BITS:
        raise TypeStringError(f"unknown element type at {pos} in {s!r}")
    return ELEM_BITS[m.group(0)], m.end()


def _type(s, pos):
    """A type at s[pos:] (ONNX's type string notation): ((tensor element type or None), the
    position after it). The element type is given for tensor(X) only."""
    m = re.compile(r"(tensor|sparse_tensor|seq|optional|map)\(").match(s, pos)
    if not m:
        raise TypeStringError(f"unknown type at {pos} in {s!r}")
    kind, pos = m.group(1), m.end()
    elem = None
    if kind in ("tensor", "sparse_tensor"):
        t, pos = _elem(s, pos)
        elem = t if kind == "tensor" else None
    elif kind in ("seq", "optional"):
        _, pos = _type(s, pos)
    else:  # map(key, value): the key an element type, the value a type or an element type
        _, pos = _elem(s, pos)
        if not s.startswith(",", pos):
            raise TypeStringError(f"',' expected at {pos} in {s!r}")
        pos += 1
        while s.startswith(" ", pos):
            pos += 1
        try:
            _, pos = _type(s, pos)
        except TypeStringError:
            _, pos = _elem(s, pos)
    if not s.startswith(")", pos):
        raise TypeStringError(f"')' expected at {pos} in {s!r}")
    return elem, pos + 1


def parse_type(s):
    """A whole type string: the TensorProto.DataType of tensor(X), None for any other type."""
    elem, end = _type(s, 0)
    if end != len(s):
        raise TypeStringError(f"trailing characters at {end} in {s!r}")
    return elem


def mask_of(type_strs):
    """(the bits of the tensor(X) types among type_strs, 1 if any other type is among them)."""
    bits, other = 0, 0
    for t in type_strs:
        elem = parse_type(t)
        if elem is None:
            other = 1
        else:
            bits |= 1 << elem
    return bits, other


def c_string(s):
    if not re.fullmatch(r"[A-Za-z0-9_.]*", s):
        raise SystemExit(f"onnx_schemas.py: {s!r} is not a plain identifier")
    return f'"{s}"'


def fits(value, lo, hi, what):
    if not lo <= value <= hi:
        raise SystemExit(f"onnx_schemas.py: {what} = {value} does not fit [{lo}, {hi}]")
    return value


def schema_rows(schema):
    """The constraints and formals of one schema, as C initializer rows."""
    where = f"{schema.domain or 'ai.onnx'} {schema.name}-{schema.since_version}"
    constraints, index = [], {}
    for c in schema.type_constraints:
        if c.type_param_str in index:
            raise SystemExit(f"onnx_schemas.py: {where}: constraint {c.type_param_str} twice")
        index[c.type_param_str] = len(constraints)
        try:
            bits, other = mask_of(c.allowed_type_strs)
        except TypeStringError as e:
            raise SystemExit(f"onnx_schemas.py: {where}: constraint {c.type_param_str}: {e}")
        constraints.append((c.type_param_str, bits, other))
    fits(len(constraints), 0, 255, f"{where}: constraints")

    def formals(params, what):
        rows = []
        for f in params:
            if f.option not in OPTION:
                raise SystemExit(f"onnx_schemas.py: {where}: {what} {f.name}: option {f.option}")
            if f.type_str in index:
                k = index[f.type_str]
                types, other = constraints[k][1], constraints[k][2]
            else:
                k = -1
                try:
                    elem = parse_type(f.type_str)
                except TypeStringError as e:
                    raise SystemExit(f"onnx_schemas.py: {where}: {what} {f.name}: {e}")
                types, other = (0, 1) if elem is None else (1 << elem, 0)
            # onnx's own resolution of the formal's types (its strings normalized: no space in
            # map(K,V), the value a tensor): the same types
            try:
                onnx_mask = mask_of(f.types)
            except TypeStringError as e:
                raise SystemExit(f"onnx_schemas.py: {where}: {what} {f.name}: types: {e}")
            if onnx_mask != (types, other):
                raise SystemExit(f"onnx_schemas.py: {where}: {what} {f.name}: onnx's types "
                                 f"{sorted(f.types)} are not those of {f.type_str!r}")
            rows.append(f"{{{c_string(f.name)}, {k}, {OPTION[f.option]}, "
                        f"{1 if f.is_homogeneous else 0}, {types:#x}}}")
        fits(len(rows), 0, 255, f"{where}: {what}s")
        return tuple(rows)

    con_rows = tuple(f"{{{c_string(n)}, {bits:#x}, {other}}}" for n, bits, other in constraints)
    return con_rows, formals(schema.inputs, "input"), formals(schema.outputs, "output")


def wrap(head, rows, tail, width=100):
    """head rows... tail on one line when it fits width, else rows packed into lines of at most
    width columns (a row is never split), indented by 4."""
    line = head + ", ".join(rows) + tail
    if len(line) <= width:
        return line
    lines, cur = [head], ""
    for r in rows:
        item = r + ","
        if cur and len(cur) + 1 + len(item) > width:
            lines.append(cur)
            cur = ""
        cur = f"{cur} {item}" if cur else "    " + item
    lines.append(cur)
    lines.append(tail)
    return "\n".join(lines)


def generate():
    """The text of files/onnx_schemas.inc."""
    by_domain = {d: [] for d in DOMAINS}
    seen = set()
    for s in onnx.defs.get_all_schemas_with_history():
        domain = "" if s.domain == "ai.onnx" else s.domain
        if domain not in by_domain:
            continue
        key = (domain, s.name, s.since_version)
        if key in seen:
            raise SystemExit(f"onnx_schemas.py: {key} twice in onnx.defs")
        seen.add(key)
        by_domain[domain].append(s)
    for d in DOMAINS:
        by_domain[d].sort(key=lambda s: (s.name.encode("utf-8"), s.since_version))

    arrays = {}  # (C type, rows) -> the array's C name; named in the order of first use
    formal_lines, constraint_lines = [], []

    def array(rows, ctype, prefix, out):
        if not rows:
            return "NULL"
        if (ctype, rows) not in arrays:
            name = f"{prefix}{len(out)}"
            arrays[ctype, rows] = name
            out.append(wrap(f"static const {ctype} {name}[] = {{", rows, "};"))
        return arrays[ctype, rows]

    tables = []
    for d in DOMAINS:
        lines = []
        for s in by_domain[d]:
            where = f"{d or 'ai.onnx'} {s.name}-{s.since_version}"
            con_rows, in_rows, out_rows = schema_rows(s)
            con = array(con_rows, "dt_onnx_constraint", "c", constraint_lines)
            fin = array(in_rows, "dt_onnx_formal", "f", formal_lines)
            fout = array(out_rows, "dt_onnx_formal", "f", formal_lines)
            counts = [fits(min(v, INT32_MAX), 0, INT32_MAX, f"{where}: {n}")
                      for n, v in (("min_input", s.min_input), ("max_input", s.max_input),
                                   ("min_output", s.min_output), ("max_output", s.max_output))]
            fits(s.since_version, 1, INT32_MAX, f"{where}: since_version")
            fields = [c_string(s.name), s.since_version, 1 if s.deprecated else 0, len(in_rows),
                      len(out_rows), len(con_rows), fin, fout, con, *counts]
            lines.append(f"    {{{', '.join(map(str, fields))}}},")
        tables.append((d, lines))

    total = sum(len(lines) for _, lines in tables)
    counts = ", ".join(f'"{d}" {len(lines)}' for d, lines in tables)
    version = onnx.__version__
    out = [
        f"/* Generated by files/onnx_schemas.py from onnx {version} (onnx.defs): do not edit;",
        " * `make onnx-schemas` writes it anew. The ONNX operator schemas of",
        " * files/onnx_schema.h, included by files/onnx_schema.c only: every since_version,",
        f" * deprecated ones flagged; {total} schemas ({counts}). Per domain, sorted",
        " * by (op_type, since_version). Types as bits: bit t is TensorProto.DataType t. */",
        f'#define DT_ONNX_SCHEMAS_ONNX_VERSION "{version}"',
        "",
        "/* type constraints: name, tensor types, other types */",
        *constraint_lines,
        "",
        "/* formal parameters: name, constraint, option, homogeneous, types */",
        *formal_lines,
    ]
    for i, (d, lines) in enumerate(tables):
        out += ["", f'/* domain "{d}": op, since, deprecated, n_in, n_out, n_con, in, out, con,',
                " * min_in, max_in, min_out, max_out */",
                f"static const dt_onnx_schema dt_onnx_schemas_{i}[] = {{", *lines, "};"]
    out += ["", "static const dt_onnx_schema_table dt_onnx_schema_tables[] = {"]
    out += [f"    {{{c_string(d)}, {len(d)}, dt_onnx_schemas_{i}, {len(lines)}}},"
            for i, (d, lines) in enumerate(tables)]
    out += ["};", ""]
    return "\n".join(out)


def write_main(generate_fn, doc, argv=None):
    """The command line of a table generator: generate_fn()'s text into -o FILE or stdout."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("-o", "--output", help="the file to write (default: stdout)")
    args = p.parse_args(argv)
    text = generate_fn()
    if args.output:
        with open(args.output, "w", encoding="ascii", newline="\n") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def main(argv=None):
    return write_main(generate, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
