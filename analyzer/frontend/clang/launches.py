"""Launch facts in the source: `__launch_bounds__(N)` and Metal's
`[[max_total_threads_per_threadgroup(N)]]` (the most threads a block may have), OpenCL's
`reqd_work_group_size(x, y, z)` (the block's extents), and host code's launches
`k<args><<<grid, block>>>(...)` and `cudaLaunchKernel((void *)k, grid, block, ...)` with the extents
clang can evaluate, and a kernel under those launches (one copy a launch).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

from analyzer import ir

from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.clang.cursors import CK, canonical, children, strip
from analyzer.frontend.clang.reader import evaluate_int

_BOUNDS = re.compile(r"__launch_bounds__\s*\(\s*([^,)]+)")
_WG = re.compile(r"reqd_work_group_size\s*\(([^)]*)\)")
_CONFIG = ("cudaConfigureCall", "__cudaPushCallConfiguration")


@dataclass(frozen=True)
class FunctionArg:
    """A function given as a template argument (`k<32, vec_dot_q8_0><<<g, b>>>`): calls through the
    template's parameter are calls of it."""
    name: str
    usr: str
    cursor: object = field(compare=False, hash=False, repr=False)

    def __str__(self) -> str:
        return self.name


def _function_args(launch, ref) -> list:
    """The functions a launch names among its kernel's template arguments, in order."""
    callee = next((n for n in launch.walk_preorder() if n.kind == CK.DECL_REF_EXPR and n.referenced is not None
                   and n.referenced.hash == ref.hash), None)
    return [FunctionArg(k.spelling, k.referenced.get_usr(), k.referenced) for k in children(callee)
            if k.kind == CK.DECL_REF_EXPR and k.referenced is not None and k.referenced.kind == CK.FUNCTION_DECL] \
        if callee is not None else []


@dataclass
class Launch:
    targs: tuple            # the kernel template's arguments (ints, type names), () for a plain kernel
    grid: tuple | None      # (x, y, z) when every extent evaluates, else None
    block: tuple | None
    line: int
    col: int = 0


def _head(lowering, fn) -> str:
    """The function's text up to its body."""
    body = next((k for k in fn.get_children() if k.kind == CK.COMPOUND_STMT), None)
    text = lowering.source.text(fn)
    if body is not None:
        text = text[:max(0, body.extent.start.offset - fn.extent.start.offset)]
    return text


def launch_bounds(lowering, fn) -> int | None:
    if lowering.lang == "cuda":
        m = _BOUNDS.search(_head(lowering, fn))
        if m is None:
            return None
        return _number(lowering, m.group(1))
    if lowering.lang == "metal":
        for k in fn.get_children():
            if k.kind == CK.ANNOTATE_ATTR and k.spelling == "kr:max_total_threads_per_threadgroup":
                # the attribute's argument, kept as a string by the renaming (reader.metal_attributes)
                arg = next((x.spelling for x in k.walk_preorder() if x.kind == CK.STRING_LITERAL), '""')
                return _number(lowering, arg[1:-1])
    return None


def work_group_size(lowering, fn) -> tuple | None:
    """`reqd_work_group_size(x, y, z)`: each extent a number, or the name of a macro the build was to
    define (MNN's `reqd_work_group_size(MDIMC, NDIMC, 1)`), which the file reads as a symbolic
    parameter: the block's extent is then that parameter."""
    m = _WG.search(_head(lowering, fn))
    if m is None:
        return None
    args = [a.strip() for a in m.group(1).split(",")]
    sizes = [_number(lowering, a) if a not in lowering.parsed.params else a for a in args]
    if len(sizes) != 3 or any(s is None or isinstance(s, int) and s < 1 for s in sizes):
        raise Unsupported(fn, "reqd_work_group_size that is not three positive constants or build macros")
    return tuple(sizes)


def _number(lowering, text: str) -> int | None:
    text = text.strip().rstrip("uUlL")
    try:
        return int(text, 0)
    except ValueError:
        pass
    given = lowering.parsed.defines.get(text)   # -D NAME=VALUE
    if given is not None:
        return _number(lowering, given) if given != text else None
    m = re.search(rf"^\s*#\s*define\s+{re.escape(text)}\s+\(?\s*(\d+)[uUlL]*\s*\)?\s*(?://.*|/\*.*)?$", lowering.parsed.text,
                  re.MULTILINE)
    if m:
        return int(m.group(1))
    m = re.search(rf"\bconst(?:expr)?\s+(?:unsigned\s+)?int\s+{re.escape(text)}\s*=\s*(\d+)\s*;", lowering.parsed.text)
    return int(m.group(1)) if m else None


def host_launches(lowering) -> dict:
    """Kernel (its cursor's hash) -> the launches host code in the file makes of it."""
    out: dict = {}
    for fn in _launch_candidates(lowering):
        if fn.kind != CK.CALL_EXPR or lowering.in_headers(fn):
            continue
        kids = children(fn)
        if fn.spelling == "cudaLaunchKernel" and lowering.from_headers(fn):
            # cudaLaunchKernel((void *)k, grid, block, args, ...): the kernel named in the first argument
            args = list(fn.get_arguments())
            ref = next((n.referenced for n in args[0].walk_preorder() if n.kind == CK.DECL_REF_EXPR and
                        n.referenced is not None and n.referenced.kind in (CK.FUNCTION_DECL, CK.FUNCTION_TEMPLATE)),
                       None) if len(args) >= 3 else None
            if ref is not None:
                _record(lowering, out, ref, args[1], args[2], fn)
            continue
        if len(kids) < 2 or strip(kids[1]).kind != CK.CALL_EXPR or strip(kids[1]).spelling not in _CONFIG:
            continue
        callee = strip(kids[0])
        ref = callee.referenced
        if ref is None:
            continue
        config = list(strip(kids[1]).get_arguments())
        _record(lowering, out, ref, config[0] if config else None, config[1] if len(config) > 1 else None, fn)
    return out


_LAUNCH_WORDS = (b"<<<", b"cudaLaunchKernel")
_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+(\w+)(.*(?:\\\r?\n.*)*)", re.MULTILINE)


def _launch_candidates(lowering):
    """Every cursor of the declarations whose text could hold a launch: `<<<`, cudaLaunchKernel, or
    a macro whose definition holds one. Walking only those keeps a file that includes thousands of
    lines of device templates (llama.cpp's mmq.cuh) from spending seconds on cursors with no launch."""
    texts: dict = {lowering.filename: lowering.parsed.text.encode("utf-8")}

    def text_of(name: str) -> bytes | None:
        if name not in texts:
            try:
                with open(name, "rb") as fh:
                    texts[name] = fh.read()
            except OSError:
                texts[name] = None
        return texts[name]
    words = set(_LAUNCH_WORDS)
    for name in [lowering.filename] + [f.include.name for f in lowering.parsed.tu.get_includes()]:
        for m in _DEFINE.finditer(text_of(name) or b""):
            if any(w in m.group(2) for w in _LAUNCH_WORDS):
                words.add(m.group(1))
    if not any(w in text for text in texts.values() if text for w in words):
        return    # no file of the unit spells a launch: its cursors need no walk at all
    stack = list(lowering.parsed.tu.cursor.get_children())
    while stack:
        c = stack.pop()
        if c.kind in (CK.NAMESPACE, CK.LINKAGE_SPEC, CK.UNEXPOSED_DECL):
            stack.extend(c.get_children())
            continue
        f = c.extent.start.file
        text = text_of(f.name) if f is not None else None
        if text is None or any(w in text[c.extent.start.offset:c.extent.end.offset + 1] for w in words):
            yield from c.walk_preorder()


def _record(lowering, out: dict, ref, grid_c, block_c, fn) -> None:
    """One launch of the kernel `ref` names (a template's specialisation or a plain kernel)."""
    tmpl = ref.specialized_template
    kernel = tmpl if tmpl is not None else ref
    kernel = kernel.get_definition() or kernel
    targs = []
    functions = _function_args(fn, ref) if ref.get_num_template_arguments() > 0 else []
    for i in range(max(ref.get_num_template_arguments(), 0)):
        kind = ref.get_template_argument_kind(i).name
        if kind == "INTEGRAL":
            targs.append(ref.get_template_argument_value(i))
        elif kind == "TYPE":
            targs.append(lowering.note_type(ref.get_template_argument_type(i)))
        elif kind == "DECLARATION" and functions:
            targs.append(functions.pop(0))
        else:
            targs.append(None)
    grid = _dims(grid_c, fn) if grid_c is not None else None
    block = _dims(block_c, fn) if block_c is not None else None
    out.setdefault(kernel.hash, []).append(Launch(tuple(targs), grid, block, fn.extent.start.line,
                                                  fn.extent.start.column))


def _dims(c, launch=None) -> tuple | None:
    """(x, y, z) of a dim3 argument clang can evaluate, or of a local `dim3` the host function sets
    member by member before `launch` (`_set_members`)."""
    s = strip(c)
    if s.kind == CK.DECL_REF_EXPR and launch is not None:
        var = s.referenced
        return _set_members(var, launch) if var is not None and var.kind == CK.VAR_DECL else None
    while s.kind in (CK.UNEXPOSED_EXPR, CK.CXX_FUNCTIONAL_CAST_EXPR, CK.CALL_EXPR) and len(
            [k for k in children(s) if k.kind != CK.TYPE_REF]) == 1 and s.spelling in ("", "dim3") and not (
            s.kind == CK.CALL_EXPR and evaluate_int(list(s.get_arguments())[0]) is not None):
        s = [k for k in children(s) if k.kind != CK.TYPE_REF][0]
    if s.kind == CK.CALL_EXPR and s.spelling == "dim3":
        args = list(s.get_arguments())
        vals = [evaluate_int(a) for a in args]
        if len(args) == 1 and vals[0] is None:
            return _dims(args[0])
        vals = (vals + [1, 1, 1])[:3]
        return tuple(vals) if None not in vals else None
    n = evaluate_int(s)
    return (n, 1, 1) if n is not None else None


def explicit_instances(lowering, fn) -> list[tuple]:
    """The arguments of each explicit instantiation of a kernel template in the file
    (`template __global__ void k<1, float>(float *);`): integers, and type names as written."""
    name = re.escape(fn.spelling)
    out = []
    for m in re.finditer(rf"\btemplate\s+(?!<)[^;{{}}]*?\b{name}\s*<([^<>]*)>\s*\(", lowering.parsed.text):
        args = []
        for a in m.group(1).split(","):
            a = a.strip()
            try:
                args.append(int(a.rstrip("uUlL"), 0))
            except ValueError:
                args.append(a)
        out.append(tuple(args))
    return out


def under_launches(kernel: ir.Kernel, launches) -> list[ir.Kernel]:
    """The kernel under the launches host code makes of it with constant block extents: one launch
    gives the kernel its extents (a --block-dim or --grid-dim given still wins); several different
    ones give one copy per launch, named after the host line (`k@88`)."""
    configs = list(dict.fromkeys((x.block, x.grid) for x in launches if x.block is not None))
    if not configs:
        return [kernel]
    # A launch whose block is not read is one copy more, its launch symbolic: the others' extents
    # are no fact of it.
    if any(x.block is None for x in launches):
        configs.append((None, None))
    at = {}
    for x in launches:
        at.setdefault((x.block, x.grid) if x.block is not None else (None, None), (x.line, x.col))
    lines = {key: (f"{line}" if sum(1 for v in at.values() if v[0] == line) == 1 else f"{line}:{col}")
             for key, (line, col) in at.items()}
    out = []
    for block, grid in configs:
        k = kernel if len(configs) == 1 else copy.copy(kernel)
        if len(configs) > 1:
            k.name = f"{kernel.name}@{lines[(block, grid)]}"
        if block is None:
            out.append(k)
            continue
        k.block_dim = dict(zip("xyz", block))
        if grid is not None:
            k.grid_dim = dict(zip("xyz", grid))
        k.host_launch = (at[(block, grid)][0], block, grid)
        out.append(k)
    return out


def _set_members(var, launch) -> tuple | None:
    """The extents of a local `dim3 v` at `launch`: its initialiser (`dim3 v;` is (1, 1, 1)), then
    the assignments `v.x = N;` (chains `v.y = v.z = 1;` too) that are statements of the function's
    own block before the launch, in order. Only where every other use of `v` is the argument of a
    launch: an assignment under a condition or in a loop, `&v` or `v = ...` leave the launch symbolic."""
    fn = var.semantic_parent
    body = next((k for k in children(fn) if k.kind == CK.COMPOUND_STMT), None) if fn is not None else None
    if body is None or canonical(var.type).spelling not in ("dim3", "struct dim3"):
        return None
    init = [k for k in children(var) if k.kind not in (CK.TYPE_REF, CK.NAMESPACE_REF)]
    dims = list(_dims(init[0]) or (None,)) if init else [1, 1, 1]
    if len(dims) != 3 or None in dims:
        return None
    sets, assigned = [], set()      # (offset, member, value) of each top-level member assignment
    for stmt in children(body):
        e = strip(stmt)
        while e.kind == CK.BINARY_OPERATOR and e.binary_operator.name == "Assign":
            lhs, rhs = (strip(k) for k in children(e))
            base = [strip(k) for k in children(lhs)] if lhs.kind == CK.MEMBER_REF_EXPR else []
            if len(base) == 1 and base[0].kind == CK.DECL_REF_EXPR and base[0].referenced == var:
                value = _assigned_value(rhs)
                if lhs.spelling not in ("x", "y", "z") or value is None:
                    return None
                sets.append((stmt.extent.start.offset, "xyz".index(lhs.spelling), value))
                assigned.add(base[0].hash)
            e = rhs     # a chain's next link (`b.y = g.z = 1`)
    # One walk of the body: v's uses, and the references inside launch configurations.
    uses, allowed = [], set(assigned)
    for n in body.walk_preorder():
        if n.kind == CK.DECL_REF_EXPR and n.referenced == var:
            uses.append(n.hash)
        elif n.kind == CK.CALL_EXPR and n.spelling in _CONFIG:
            allowed.update(r.hash for r in n.walk_preorder() if r.kind == CK.DECL_REF_EXPR)
        elif n.kind == CK.CALL_EXPR and n.spelling == "cudaLaunchKernel":
            # its grid and block, passed by value (`&v` or a call there leaves v's value unfollowed)
            for a in list(n.get_arguments())[1:3]:
                if not any(r.kind in (CK.UNARY_OPERATOR, CK.CALL_EXPR) and r.spelling != "dim3"
                           for r in a.walk_preorder()):
                    allowed.update(r.hash for r in a.walk_preorder() if r.kind == CK.DECL_REF_EXPR)
    if any(h not in allowed for h in uses):
        return None     # another use of v: its value is not followed
    at = launch.extent.start.offset
    for offset, d, value in sorted(sets):
        if offset < at:
            dims[d] = value
    return tuple(dims)


def _assigned_value(rhs) -> int | None:
    """The number an assignment's right side stores: a constant, or a chain's last right side."""
    while rhs.kind == CK.BINARY_OPERATOR and rhs.binary_operator.name == "Assign":
        rhs = strip(children(rhs)[1])
    return evaluate_int(rhs)
