"""SPIR-V (as `spirv-dis` prints it) lowered into the kernel IR.

A module is read in two passes: the declarations (types, constants, decorations, names, global
variables, entry points) into tables, then each GLCompute entry point's function, whose
structured control flow (`OpSelectionMerge`, `OpLoopMerge`) is rebuilt into the IR's `If` and
`Loop`. SSA values become IR expressions; a load becomes a temporary so that its access happens
where the load is; `OpPhi` becomes a variable assigned on each incoming edge. Function-storage
scalars (glslang's unoptimised locals) are IR variables; Function-storage composites are private
buffers. Vulkan's subgroup size is the device's (4 to 128) and its mapping of invocations to
subgroups is the driver's, so the kernel's warp size is 1: a subgroup barrier orders no two
invocations the analysis could tell apart.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import struct
from dataclasses import dataclass, field

from lark import Token, Tree

from analyzer import ir
from analyzer.frontend.lower import MAX_NESTING, Unsupported, _has_return, _returns_to_breaks, _add, _mul

# Scopes (SPIR-V `Scope` values).
CROSS_DEVICE, DEVICE, WORKGROUP, SUBGROUP, INVOCATION = 0, 1, 2, 3, 4
SCOPE_NAMES = {0: "CrossDevice", 1: "Device", 2: "Workgroup", 3: "Subgroup", 4: "Invocation", 5: "QueueFamily"}
# Memory semantics bits.
ORDERING = 0x2 | 0x4 | 0x8 | 0x10
UNIFORM_MEMORY, WORKGROUP_MEMORY = 0x40, 0x100
SEMANTIC_BITS = [(0x2, "Acquire"), (0x4, "Release"), (0x8, "AcquireRelease"), (0x10, "SequentiallyConsistent"),
                 (0x40, "UniformMemory"), (0x80, "SubgroupMemory"), (0x100, "WorkgroupMemory"),
                 (0x200, "CrossWorkgroupMemory"), (0x400, "AtomicCounterMemory"), (0x800, "ImageMemory"),
                 (0x1000, "OutputMemory"), (0x2000, "MakeAvailable"), (0x4000, "MakeVisible"), (0x8000, "Volatile")]

BUILTIN_VECTORS = {"LocalInvocationId": "tid", "WorkgroupId": "bid", "NumWorkgroups": "gdim", "WorkgroupSize": "bdim"}
DIMS = ("x", "y", "z")

BINOPS = {
    "OpIAdd": "+", "OpISub": "-", "OpIMul": "*", "OpSDiv": "/", "OpUDiv": "/", "OpSRem": "%", "OpUMod": "%",
    "OpSMod": "fmod", "OpShiftLeftLogical": "<<", "OpShiftRightLogical": ">>", "OpShiftRightArithmetic": ">>",
    "OpBitwiseAnd": "&", "OpBitwiseOr": "|", "OpBitwiseXor": "^", "OpIEqual": "==", "OpINotEqual": "!=",
    "OpSLessThan": "<", "OpULessThan": "<", "OpSLessThanEqual": "<=", "OpULessThanEqual": "<=",
    "OpSGreaterThan": ">", "OpUGreaterThan": ">", "OpSGreaterThanEqual": ">=", "OpUGreaterThanEqual": ">=",
    "OpLogicalAnd": "&&", "OpLogicalOr": "||", "OpLogicalEqual": "==", "OpLogicalNotEqual": "!=",
}
UNOPS = {"OpSNegate": "-", "OpNot": "~", "OpLogicalNot": "!"}
# Float comparisons: the analysis orders floats (assuming no NaN), as for the C dialects.
FCMP = {f"Op{kind}{name}": op for kind in ("FOrd", "FUnord")
        for name, op in (("LessThan", "<"), ("GreaterThan", ">"), ("LessThanEqual", "<="),
                         ("GreaterThanEqual", ">="), ("Equal", "=="), ("NotEqual", "!="))}
# Conversions that keep an integer's value (the analysis assumes no overflow).
SAME_VALUE = {"OpCopyObject", "OpUConvert", "OpSConvert", "OpSatConvertSToU", "OpSatConvertUToS"}
GLSL_INT = {"UMin": "min", "SMin": "min", "UMax": "max", "SMax": "max"}
# Instructions with effects the lowering does not model: never read as pure values.
EFFECTFUL_PREFIXES = ("OpImage", "OpCopyMemory", "OpEmit", "OpEnd", "OpKill", "OpTerminate", "OpDemote",
                      "OpIgnoreIntersection", "OpReportIntersection", "OpTrace", "OpExecuteCallable",
                      "OpCooperative", "OpPtr", "OpGenericCastToPtr", "OpControlBarrier", "OpMemoryBarrier")
IGNORED = {"OpLine", "OpNoLine", "OpSelectionMerge", "OpLoopMerge", "OpNop", "OpModuleProcessed"}

# The operands (after the result id) each instruction the lowering reads must have at least: an
# instruction with fewer is reported where it is, not met as an IndexError deep in the lowering.
MIN_OPERANDS = {
    "OpLine": 3, "OpName": 2, "OpMemberName": 3, "OpString": 1, "OpSource": 2, "OpSourceContinued": 1,
    "OpExtInstImport": 1, "OpDecorate": 2, "OpMemberDecorate": 3, "OpEntryPoint": 3, "OpExecutionMode": 2,
    "OpExecutionModeId": 2, "OpTypeInt": 2, "OpTypeFloat": 1, "OpTypeVector": 2, "OpTypeArray": 2,
    "OpTypeRuntimeArray": 1, "OpTypePointer": 2, "OpTypeFunction": 1, "OpConstant": 2, "OpSpecConstant": 2,
    "OpConstantComposite": 1, "OpSpecConstantComposite": 1, "OpVariable": 2, "OpFunction": 3,
    "OpFunctionCall": 2, "OpPhi": 3, "OpSelectionMerge": 2, "OpLoopMerge": 3, "OpBranch": 1,
    "OpBranchConditional": 3, "OpReturnValue": 1, "OpLoad": 2, "OpStore": 2, "OpAccessChain": 2,
    "OpInBoundsAccessChain": 2, "OpControlBarrier": 3, "OpMemoryBarrier": 2, "OpCompositeExtract": 2,
    "OpCompositeConstruct": 1, "OpCompositeInsert": 3, "OpVectorShuffle": 3, "OpVectorExtractDynamic": 3,
    "OpExtInst": 3, "OpArrayLength": 2, "OpSelect": 4, "OpBitcast": 2, "OpAtomicLoad": 4, "OpAtomicStore": 4,
    "OpUndef": 1, "OpConstantNull": 1, "OpConstantTrue": 1, "OpConstantFalse": 1, "OpSpecConstantTrue": 1,
    "OpSpecConstantFalse": 1, "OpTypeStruct": 0,
    **{op: 3 for op in BINOPS}, **{op: 3 for op in FCMP}, **{op: 2 for op in UNOPS},
    **{op: 2 for op in SAME_VALUE},
}
# Instructions whose result id the lowering keeps (SPIR-V requires one for each of them).
NEEDS_RESULT_PREFIXES = ("OpType", "OpConstant", "OpSpecConstant", "OpVariable", "OpLabel", "OpFunction",
                         "OpString", "OpExtInstImport", "OpPhi", "OpUndef", "OpLoad", "OpAccessChain",
                         "OpInBoundsAccessChain")
NOT_NEEDING_RESULT = {"OpFunctionEnd", "OpFunctionCall"}


def _number(text: str, what: str) -> int:
    """An integer literal operand; a word or string there is reported at the instruction."""
    try:
        return int(text, 0) if len(text) <= 40 else int("x")
    except ValueError:
        raise Unsupported(None, f"{what} '{text[:24]}' is not an integer literal of at most 40 digits") from None


@contextlib.contextmanager
def _at(node):
    """Give an Unsupported raised without a node (from the tables) this instruction's position."""
    try:
        yield
    except Unsupported as exc:
        if exc.node is None:
            exc.node = node
        raise


class _Types(dict):
    """Type id -> Type; looking up an id that no OpType* defined is reported, not a KeyError."""

    def __missing__(self, key):
        raise Unsupported(None, f"{key} is not a type defined before its use")


@dataclass
class Ins:
    op: str
    result: str | None
    args: list            # tokens: str ids start with %, numbers/strings/words as text
    line: int
    col: int
    node: Tree
    origin: tuple[str, int, int] | None = None   # OpLine in force


@dataclass
class Type:
    kind: str                 # void bool int float vector array rtarray struct pointer function other
    width: int = 0
    signed: bool = True
    elem: str | None = None
    count: int = 0
    members: tuple[str, ...] = ()
    storage: str = ""


@dataclass
class Ptr:
    kind: str                 # mem (a buffer), local (an IR variable), builtin, param (push constants)
    base: str
    space: str
    offset: ir.Expr
    ty: str                   # pointee type id
    path: tuple = ()          # constant indices taken so far (builtins and parameter blocks)


@dataclass
class Vec:
    lanes: tuple


@dataclass
class Block:
    label: str
    ins: list[Ins] = field(default_factory=list)
    phis: list[Ins] = field(default_factory=list)
    merge: Ins | None = None
    term: Ins | None = None


@dataclass
class Function:
    name: str
    params: list[str]
    blocks: dict[str, Block]
    entry: str
    ret_type: str

    @functools.cached_property
    def defs(self) -> dict[str, Ins]:
        """The instruction defining each id in the function's blocks."""
        return {x.result: x for b in self.blocks.values() for x in b.ins if x.result}

    @functools.cached_property
    def uses(self) -> dict[str, set[str]]:
        """Where each id is used: the label of the block whose body uses it, or `label!` for a
        use by a block's phis, merge or terminator."""
        uses: dict[str, set[str]] = {}
        for b in self.blocks.values():
            for ins in b.ins:
                for a in ins.args:
                    uses.setdefault(a, set()).add(b.label)
            for ins in [b.term, b.merge] + b.phis:
                for a in (ins.args if ins is not None else ()):
                    uses.setdefault(a, set()).add(b.label + "!")
        return uses


class Module:
    """The declarations of one SPIR-V module, and its functions split into basic blocks."""

    def __init__(self, tree: Tree, filename: str):
        self.filename = filename
        self.names: dict[str, str] = {}
        self.member_names: dict[tuple[str, int], str] = {}
        self.decorations: dict[str, dict[str, list]] = {}
        self.member_decorations: dict[tuple[str, int], dict[str, list]] = {}
        self.types: dict[str, Type] = _Types()
        self.constants: dict[str, object] = {}      # id -> int | float | bool | tuple of ids
        self.spec_constants: set[str] = set()
        self.variables: dict[str, tuple[str, str, Ins]] = {}   # id -> (pointer type id, storage, ins)
        self.entry_points: list[tuple[str, str, Ins]] = []     # (function id, name, ins)
        self.local_size: dict[str, tuple] = {}
        self.functions: dict[str, Function] = {}
        self.strings: dict[str, str] = {}
        self.sources: dict[str, str] = {}           # file name -> embedded source text (OpSource)
        self.ext_sets: dict[str, str] = {}
        self._read(tree)

    # ----- reading -----
    def _read(self, tree: Tree) -> None:
        fn: Function | None = None
        block: Block | None = None
        origin = None
        defined: set[str] = set()
        for node in tree.children:
            with _at(node):
                fn, block, origin = self._read_one(node, fn, block, origin, defined)

    def _read_one(self, node: Tree, fn, block, origin, defined: set[str]):
        toks = node.children
        result = None
        i = 0
        if isinstance(toks[0], Token) and toks[0].type == "ID":
            result, i = str(toks[0]), 1
        opt = toks[i]
        op = str(opt)
        args = [_arg(t) for t in toks[i + 1:]]
        first = toks[0]
        ins = Ins(op, result, args, first.line, first.column, node, origin)
        if len(args) < MIN_OPERANDS.get(op, 0):
            raise Unsupported(node, f"{op} with {len(args)} operand(s) (it needs at least {MIN_OPERANDS[op]})")
        if result is None and op.startswith(NEEDS_RESULT_PREFIXES) and op not in NOT_NEEDING_RESULT:
            raise Unsupported(node, f"{op} without a result id")
        if result is not None:
            if result in defined:
                raise Unsupported(node, f"{result} is defined twice")
            defined.add(result)
        return self._read_ins(ins, fn, block, origin)

    def _read_ins(self, ins: Ins, fn, block, origin):
        op, result, args, node = ins.op, ins.result, ins.args, ins.node
        if op == "OpLine":
            origin = (self.strings.get(args[0], args[0]), _number(args[1], "line"), _number(args[2], "column"))
            return fn, block, origin
        if op in ("OpNoLine", "OpFunctionEnd"):
            origin = None
            if op == "OpFunctionEnd":
                fn, block = None, None
            return fn, block, origin
        if fn is not None:
            if op == "OpFunctionParameter":
                fn.params.append(result)
                return fn, block, origin
            if op == "OpLabel":
                block = Block(result)
                fn.blocks[result] = block
                if fn.entry == "":
                    fn.entry = result
                return fn, block, origin
            if op == "OpFunction":
                raise Unsupported(node, "OpFunction inside a function (no OpFunctionEnd before it)")
            if block is None:
                raise Unsupported(node, f"{op} outside a block")
            if op == "OpPhi":
                block.phis.append(ins)
            elif op in ("OpSelectionMerge", "OpLoopMerge"):
                block.merge = ins
            elif op in ("OpBranch", "OpBranchConditional", "OpReturn", "OpReturnValue", "OpSwitch",
                        "OpUnreachable", "OpKill", "OpTerminateInvocation"):
                block.term = ins
                block = None
            else:
                block.ins.append(ins)
            return fn, block, origin
        self._declare(ins)
        if op == "OpFunction":
            fn = Function(self.names.get(result, result[1:]), [], {}, "", args[0])
            self.functions[result] = fn
        return fn, block, origin

    def _declare(self, ins: Ins) -> None:
        op, r, a = ins.op, ins.result, ins.args
        if op == "OpName":
            self.names[a[0]] = _unquote(a[1])
        elif op == "OpMemberName":
            self.member_names[(a[0], _number(a[1], "member index"))] = _unquote(a[2])
        elif op == "OpString":
            self.strings[r] = _unquote(a[0])
        elif op == "OpSource" and len(a) >= 4:
            # glslang -g embeds the source text: keep it to show the original lines.
            self.sources[self.strings.get(a[2], a[2])] = _unquote(a[3])
            self._last_source = self.strings.get(a[2], a[2])
        elif op == "OpSourceContinued" and getattr(self, "_last_source", None):
            self.sources[self._last_source] += _unquote(a[0])
        elif op == "OpExtInstImport":
            self.ext_sets[r] = _unquote(a[0])
        elif op == "OpDecorate":
            self.decorations.setdefault(a[0], {})[a[1]] = a[2:]
        elif op == "OpMemberDecorate":
            self.member_decorations.setdefault((a[0], _number(a[1], "member index")), {})[a[2]] = a[3:]
        elif op == "OpEntryPoint":
            if a[0] == "GLCompute":
                self.entry_points.append((a[1], _unquote(a[2]), ins))
        elif op in ("OpExecutionMode", "OpExecutionModeId"):
            if a[1] in ("LocalSize", "LocalSizeId"):
                if len(a) < 5:
                    raise Unsupported(ins.node, f"{a[1]} without three sizes")
                self.local_size[a[0]] = (a[1], tuple(a[2:5]))
        elif op == "OpTypeVoid":
            self.types[r] = Type("void")
        elif op == "OpTypeBool":
            self.types[r] = Type("bool", 1)
        elif op == "OpTypeInt":
            self.types[r] = Type("int", self._width(a[0], (8, 16, 32, 64), ins), a[1] == "1")
        elif op == "OpTypeFloat":
            self.types[r] = Type("float", self._width(a[0], (16, 32, 64), ins))
        elif op == "OpTypeVector":
            count = _number(a[1], "component count")
            if not 2 <= count <= 16:
                raise Unsupported(ins.node, f"vector of {count} components")
            self.types[r] = Type("vector", elem=self._element(a[0]), count=count)
        elif op == "OpTypeArray":
            count = self.const_int(a[1], ins)
            if count < 1:
                raise Unsupported(ins.node, f"array of {count} elements")
            self.types[r] = Type("array", elem=self._element(a[0]), count=count)
        elif op == "OpTypeRuntimeArray":
            self.types[r] = Type("rtarray", elem=self._element(a[0]))
        elif op == "OpTypeStruct":
            self.types[r] = Type("struct", members=tuple(self._element(m) for m in a))
        elif op == "OpTypePointer":
            self.types[r] = Type("pointer", elem=a[1], storage=a[0])   # may be forward
        elif op == "OpTypeFunction":
            self.types[r] = Type("function", elem=a[0])
        elif op.startswith("OpType"):
            self.types[r] = Type("other")
        elif op in ("OpConstant", "OpSpecConstant"):
            t = self.types.get(a[0])
            text = a[1]
            if t is not None and t.kind == "float":
                try:
                    self.constants[r] = float.fromhex(text) if "x" in text.lower() else float(text)
                except (ValueError, OverflowError):
                    raise Unsupported(ins.node, f"'{text[:24]}' is not a float literal") from None
            else:
                self.constants[r] = _number(text, "constant")
            if op == "OpSpecConstant":
                self.spec_constants.add(r)
        elif op in ("OpConstantTrue", "OpSpecConstantTrue"):
            self.constants[r] = True
        elif op in ("OpConstantFalse", "OpSpecConstantFalse"):
            self.constants[r] = False
        elif op in ("OpConstantComposite", "OpSpecConstantComposite"):
            for part in a[1:]:
                if part not in self.constants:
                    raise Unsupported(ins.node, f"{part} is not a constant defined before its use")
            self.constants[r] = tuple(a[1:])
        elif op == "OpConstantNull":
            self.constants[r] = 0
        elif op == "OpVariable":
            self.variables[r] = (a[0], a[1], ins)
        elif op == "OpUndef":
            self.constants[r] = None

    def _width(self, text: str, allowed: tuple, ins: Ins) -> int:
        width = _number(text, "width")
        if width not in allowed:
            raise Unsupported(ins.node, f"{ins.op} of width {width}")
        return width

    def _element(self, tid: str) -> str:
        """A type a composite or pointer type names: it must be defined before (no cycles)."""
        self.types[tid]
        return tid

    def const_int(self, ident: str, ins: Ins) -> int:
        v = self.constants.get(ident)
        if not isinstance(v, int) or isinstance(v, bool):
            raise Unsupported(ins.node, f"{ident} is not an integer constant")
        return v

    # ----- layout -----
    def size(self, tid: str) -> int:
        t = self.types[tid]
        if t.kind in ("int", "float"):
            return t.width // 8
        if t.kind == "bool":
            return 1
        if t.kind == "vector":
            return t.count * self.size(t.elem)
        if t.kind == "array":
            return t.count * self.stride(tid)
        if t.kind == "struct":
            end = 0
            for i, m in enumerate(t.members):
                mt = self.types[m]
                if mt.kind == "rtarray":
                    return max(end, self.member_offset(tid, i))
                end = max(end, self.member_offset(tid, i) + self.size(m))
            return end
        return 4

    def stride(self, tid: str) -> int:
        dec = self.decorations.get(tid, {}).get("ArrayStride")
        return _number(dec[0], "ArrayStride") if dec else self.size(self.types[tid].elem)

    def member_offset(self, tid: str, index: int) -> int:
        dec = self.member_decorations.get((tid, index), {}).get("Offset")
        if dec:
            return _number(dec[0], "Offset")
        t = self.types[tid]
        return sum(self.size(m) for m in t.members[:index])

    def scalar_of(self, tid: str) -> str:
        """The innermost scalar type id of a (possibly nested) composite."""
        t = self.types[tid]
        while t.kind in ("vector", "array", "rtarray", "struct"):
            if t.kind == "struct" and not t.members:
                raise Unsupported(None, f"{tid} is a struct without members")
            tid = t.members[-1] if t.kind == "struct" else t.elem
            t = self.types[tid]
        return tid

    def type_name(self, tid: str) -> str:
        t = self.types[tid]
        if t.kind == "float":
            return {16: "half", 32: "float", 64: "double"}.get(t.width, "float")
        if t.kind == "int":
            base = "int" if t.signed else "uint"
            return base if t.width == 32 else f"{base}{t.width}"
        return t.kind


def _arg(tok):
    if isinstance(tok, Tree):   # a mask: Volatile|Aligned
        return "|".join(str(t) for t in tok.children)
    return str(tok)


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == '"':
        return text[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return text


def semantics_text(bits: int) -> str:
    words = [name for bit, name in SEMANTIC_BITS if bits & bit]
    return "|".join(words) or "None"


class SpirvLowering:
    lang = "spirv"

    def __init__(self, tree: Tree, text: str, filename: str):
        self.tree = tree
        self.text = text
        self.filename = filename
        self.lines = text.splitlines()

    def lower(self) -> list[ir.Kernel]:
        # Read in lower(), not __init__: what the reading refuses is an Unsupported the caller reports.
        self.module = Module(self.tree, self.filename)
        out = []
        for fid, name, ins in self.module.entry_points:
            with _at(ins.node):
                out.append(KernelLowering(self, fid, name, ins).lower())
        return out


class KernelLowering:
    """One entry point: its buffers, parameters and body."""

    def __init__(self, outer: SpirvLowering, fid: str, name: str, ins: Ins):
        self.m = outer.module
        self.filename = outer.filename
        self.fid = fid
        self.entry = ins
        self.kernel = ir.Kernel(name, outer.filename, "spirv", [], {}, [], warp_size=1,
                                source_lines=outer.lines,
                                origin_lines={f: t.splitlines() for f, t in self.m.sources.items()})
        self.values: dict[str, object] = {}
        self.locals: dict[str, str] = {}      # Function-storage scalar variable id -> IR variable name
        self.counter = itertools.count()
        self.access_ids = itertools.count(1)
        self.loop_ids = itertools.count(1)
        self.opaque_ids = itertools.count(1)
        self.used: set[str] = set()
        self.depth = 0
        self._snapshot = False
        self.fence = 0                        # semantics of an OpMemoryBarrier waiting for a control barrier

    # ----- names -----
    def fresh(self, hint: str) -> str:
        base = hint.lstrip("%") or "v"
        name = base
        while name in self.used:
            name = f"{base}.{next(self.counter)}"
        self.used.add(name)
        return name

    def span(self, ins: Ins) -> ir.Span:
        origin = ir.Span(*ins.origin) if ins.origin else None
        return ir.Span(self.filename, ins.line, ins.col + 0, origin)

    # ----- the kernel -----
    def lower(self) -> ir.Kernel:
        k = self.kernel
        self._extents()
        self._globals()
        body = self.function(self.fid, [], top=True)
        k.body = _coalesce(body, self.fresh)
        return k

    def _extents(self) -> None:
        k = self.kernel
        dims: tuple | None = None
        # A WorkgroupSize builtin constant overrides the execution mode.
        for ident, decs in self.m.decorations.items():
            if decs.get("BuiltIn") == ["WorkgroupSize"] and isinstance(self.m.constants.get(ident), tuple):
                parts = self.m.constants[ident]
                dims = tuple(None if p in self.m.spec_constants else self.m.constants.get(p) for p in parts)
        if dims is None and self.fid in self.m.local_size:
            mode, parts = self.m.local_size[self.fid]
            if mode == "LocalSize":
                dims = tuple(_number(p, "LocalSize") for p in parts)
            else:
                dims = tuple(None if p in self.m.spec_constants else self.m.constants.get(p) for p in parts)
        for d, v in zip(DIMS, dims or (None, None, None)):
            k.block_dim[d] = v if isinstance(v, int) else None
            k.grid_dim[d] = None

    def _globals(self) -> None:
        m = self.m
        by_binding: dict[tuple, str] = {}
        for vid, (ptype, storage, ins) in m.variables.items():
            with _at(ins.node):
                self._global(vid, ptype, storage, ins, by_binding)

    def _global(self, vid: str, ptype: str, storage: str, ins: Ins, by_binding: dict) -> None:
        k, m = self.kernel, self.m
        pointee = m.types[ptype].elem
        if storage in ("StorageBuffer", "Uniform", "PushConstant", "Workgroup", "Private"):
            decs = m.decorations.get(vid, {})
            struct_decs = m.decorations.get(pointee, {})
            if storage == "PushConstant" or (storage == "Uniform" and "BufferBlock" not in struct_decs):
                self.values[vid] = Ptr("param", vid, ir.CONSTANT, ir.Const(0), pointee)
                self._declare_params(pointee)
                return
            if storage == "Private":
                self._local_variable(vid, pointee, ins)
                return
            space = ir.SHARED if storage == "Workgroup" else ir.GLOBAL
            key = ((decs.get("DescriptorSet") or ["0"])[0], (decs.get("Binding") or [vid])[0]) if space == ir.GLOBAL else None
            name = by_binding.get(key) if key else None
            if name is None:
                name = self.fresh(self._buffer_name(vid, pointee))
                if key:
                    by_binding[key] = name
                elem = m.scalar_of(pointee)
                size = None if _has_runtime_array(m, pointee) else m.size(pointee)
                k.buffers[name] = ir.Buffer(name, space, m.type_name(elem), m.size(elem), size,
                                            strides=_row_strides(m, pointee))
            self.values[vid] = Ptr("mem", name, space, ir.Const(0), pointee)
        elif storage == "Input":
            builtin = (m.decorations.get(vid, {}).get("BuiltIn") or [None])[0]
            self.values[vid] = Ptr("builtin", builtin or vid, ir.CONSTANT, ir.Const(0), pointee)

    def _declare_params(self, struct: str) -> None:
        t = self.m.types[struct]
        for i, mt in enumerate(t.members):
            name = self.m.member_names.get((struct, i), f"param{i}")
            if self.m.types[mt].kind in ("int", "float", "bool") and name not in self.kernel.params:
                self.kernel.params.append(name)

    def _buffer_name(self, vid: str, pointee: str) -> str:
        name = self.m.names.get(vid, "")
        if name:
            return name
        t = self.m.types[pointee]
        if t.kind == "struct" and len(t.members) == 1:
            member = self.m.member_names.get((pointee, 0))
            if member:
                return member
        return self.m.names.get(pointee, "") or vid[1:]

    def _local_variable(self, vid: str, pointee: str, ins: Ins) -> list[ir.Stmt]:
        """A per-invocation variable: scalars and vectors are IR variables (a vector's lanes are
        `v.0`, `v.1`, ...), other composites private buffers."""
        m = self.m
        t = m.types[pointee]
        hint = m.names.get(vid, "") or vid[1:]
        init = ins.args[2] if len(ins.args) > 2 else None
        if t.kind in ("int", "float", "bool", "vector"):
            name = self.fresh(hint)
            self.locals[vid] = name
            ptr = Ptr("local", name, ir.PRIVATE, ir.Const(0), pointee)
            self.values[vid] = ptr
            if init is not None:
                return self.store(ptr, self.value(init, ins), ins)
            return []
        name = self.fresh(hint)
        elem = m.scalar_of(pointee)
        self.kernel.buffers[name] = ir.Buffer(name, ir.PRIVATE, m.type_name(elem), m.size(elem), m.size(pointee),
                                              strides=_row_strides(m, pointee))
        ptr = Ptr("mem", name, ir.PRIVATE, ir.Const(0), pointee)
        self.values[vid] = ptr
        if init is not None:
            return self.store(ptr, self.value(init, ins), ins)
        return []

    # ----- values -----
    def value(self, ident: str, ins: Ins):
        v = self.values.get(ident)
        if v is not None:
            return v
        m = self.m
        if ident in m.constants:
            c = m.constants[ident]
            if ident in m.spec_constants:
                return ir.Param(m.names.get(ident, "") or ident[1:])
            if c is None:
                return ir.Opaque("undefined value", next(self.opaque_ids))
            if isinstance(c, tuple):
                return Vec(tuple(self.value(p, ins) for p in c))
            if isinstance(c, bool):
                return ir.Const(int(c))
            if isinstance(c, float):
                return ir.Call("fbits", (ir.Const(struct.unpack("<q", struct.pack("<d", c))[0]),))
            return ir.Const(c)
        raise Unsupported(ins.node, f"use of {ident}, which is not defined before its use")

    def scalar(self, ident: str, ins: Ins) -> ir.Expr:
        v = self.value(ident, ins)
        if isinstance(v, Vec):
            return ir.Call("vec", tuple(self._flat(v)))
        if isinstance(v, Ptr):
            raise Unsupported(ins.node, f"pointer {ident} used as a value")
        return v

    def _flat(self, v) -> list:
        if isinstance(v, Vec):
            return [x for lane in v.lanes for x in self._flat(lane)]
        return [v]

    def bind(self, ins: Ins, v) -> None:
        self.values[ins.result] = v

    # ----- functions and control flow -----
    def function(self, fid: str, args: list, top: bool = False) -> list[ir.Stmt]:
        fn = self.m.functions.get(fid)
        if fn is None:
            raise Unsupported(self.entry.node, f"entry point {fid} has no function body")
        if self.depth > 16:
            raise Unsupported(self.entry.node, f"recursion through {fn.name}")
        for p, a in zip(fn.params, args):
            self.values[p] = a
        self.fn = fn
        saved = getattr(self, "ret_var", None)
        self.ret_var = None if top else self.fresh(f"{fn.name}.ret")
        out: list[ir.Stmt] = []
        entry = fn.blocks.get(fn.entry)
        if entry is None:
            raise Unsupported(self.entry.node, f"function {fn.name} has no blocks")
        # Variables sit at the top of the entry block.
        for ins in entry.ins:
            if ins.op == "OpVariable":
                with _at(ins.node):
                    pointee = self.m.types[ins.args[0]].elem
                    out.extend(self._local_variable(ins.result, pointee, ins))
        body = self.region(fn.entry, None, None)
        out.extend(body)
        ret = self.ret_var
        self.ret_var = saved
        if top:
            return out
        while out and isinstance(out[-1], ir.Return):
            out.pop()
        if _has_return(out):
            if any(isinstance(s, ir.Loop) and _has_return(s.body) for s in ir.walk_stmts(out, into_loops=False)):
                raise Unsupported(self.entry.node, f"'return' inside a loop of called function {fn.name}")
            span = out[0].span if out else self.span(self.entry)
            out = _returns_to_breaks(out) + [ir.Break(span)]
            out = [ir.Loop([], None, [], out, span, next(self.loop_ids))]
        self.last_return = ret
        return out

    def region(self, label: str | None, stop: str | None, loop: tuple | None) -> list[ir.Stmt]:
        """Statements from block `label` until `stop` (a merge block). `loop` is the innermost
        loop's (merge, continue) pair: branches there are `break` and `continue`."""
        out: list[ir.Stmt] = []
        fn = self.fn
        self.nesting = getattr(self, "nesting", 0) + 1
        entered: list[str] = []
        try:
            if self.nesting > MAX_NESTING:
                raise Unsupported(self.entry.node if label not in fn.blocks else _first_node(fn.blocks[label], self.entry),
                                  f"control flow nested too deeply (more than {MAX_NESTING} constructs)")
            return self._region(label, stop, loop, out, entered)
        finally:
            self.nesting -= 1
            for x in entered:
                self.path.discard(x)

    def _region(self, label, stop, loop, out: list, entered: list) -> list[ir.Stmt]:
        fn = self.fn
        if not hasattr(self, "path"):
            self.path: set[str] = set()   # blocks being lowered by the active regions: a cycle check
        while label is not None and label != stop:
            if loop is not None and label == loop[0]:
                out.append(ir.Break(_span_of(out[-1]) if out else self._label_span(label)))
                return out
            if loop is not None and label == loop[1]:
                out.append(ir.Continue(_span_of(out[-1]) if out else self._label_span(label)))
                return out
            block = fn.blocks.get(label)
            if block is None:
                raise Unsupported(self.entry.node, f"branch to unknown block {label}")
            if label in self.path:
                raise Unsupported(_first_node(block, self.entry),
                                  f"branch back to block {label} outside a loop's back edge (unstructured control flow)")
            self.path.add(label)
            entered.append(label)
            if block.merge is not None and block.merge.op == "OpLoopMerge":
                out.append(self.loop(block, loop))
                label = block.merge.args[0]
                continue
            out.extend(self.instructions(block))
            label = self.terminator(block, out, stop, loop)
        return out

    def _label_span(self, label: str) -> ir.Span:
        block = self.fn.blocks.get(label)
        first = (block.ins or block.phis or [block.term])[0] if block else None
        return self.span(first) if first is not None else ir.Span(self.filename, 0, 0)

    def terminator(self, block: Block, out: list, stop, loop) -> str | None:
        term = block.term
        if term is None:
            raise Unsupported(self.entry.node, f"block {block.label} has no terminator")
        with _at(term.node):
            return self._terminator(block, term, out, stop, loop)

    def _terminator(self, block: Block, term: Ins, out: list, stop, loop) -> str | None:
        span = self.span(term)
        op, a = term.op, term.args
        if op == "OpBranch":
            out.extend(self.edge(block.label, a[0]))
            return a[0]
        if op == "OpBranchConditional":
            cond = self.scalar(a[0], term)
            merge = block.merge.args[0] if block.merge is not None and block.merge.op == "OpSelectionMerge" else None
            if a[1] == a[2]:
                out.extend(self.edge(block.label, a[1]))
                return a[1]
            then = self.arm(block.label, a[1], merge or stop, loop)
            orelse = self.arm(block.label, a[2], merge or stop, loop)
            if merge is None:
                # Without a merge, the arms leave the construct or run to the region's end: an arm
                # that leaves becomes `if (...) break;` and the other one follows it.
                if _leaves(orelse):
                    out.append(ir.If(ir.UnOp("!", cond), orelse, [], span))
                    out.extend(then)
                    return stop
                if _leaves(then):
                    out.append(ir.If(cond, then, [], span))
                    out.extend(orelse)
                    return stop
                out.append(ir.If(cond, then, orelse, span))
                return stop
            out.append(ir.If(cond, then, orelse, span))
            return merge
        if op in ("OpReturn", "OpReturnValue"):
            if op == "OpReturnValue":
                out.append(ir.Assign(self.ret_var, self.scalar(a[0], term), span))
            out.append(ir.Return(span))
            return None
        if op in ("OpKill", "OpTerminateInvocation", "OpUnreachable"):
            out.append(ir.Return(span))
            return None
        raise Unsupported(term.node, op)

    def arm(self, src: str, target: str, stop, loop) -> list[ir.Stmt]:
        copies = self.edge(src, target)
        if target == stop:
            return copies
        return copies + self.region(target, stop, loop)

    def edge(self, src: str, dst: str) -> list[ir.Stmt]:
        """Assignments for the phis of `dst` on the edge from `src` (parallel-copy semantics)."""
        block = self.fn.blocks.get(dst)
        if block is None or not block.phis:
            return []
        moves = []
        for phi in block.phis:
            var = self._phi_var(phi)
            pairs = phi.args[1:]
            if len(pairs) % 2:
                raise Unsupported(phi.node, "OpPhi with an odd number of value/block operands")
            incoming = next((pairs[i] for i in range(0, len(pairs), 2) if pairs[i + 1] == src), None)
            if incoming is None:
                raise Unsupported(phi.node, f"OpPhi without a value for predecessor {src}")
            moves.append((var, self.scalar(incoming, phi), self.span(phi)))
        targets = {v for v, _, _ in moves}
        if len(moves) > 1 and any(_mentions(e, targets) for _, e, _ in moves):
            temps = [(self.fresh(f"{v}.in"), e, s) for v, e, s in moves]
            return ([ir.Assign(t, e, s) for t, e, s in temps]
                    + [ir.Assign(v, ir.Var(t), s) for (v, _, s), (t, _, _) in zip(moves, temps)])
        return [ir.Assign(v, e, s) for v, e, s in moves]

    def _phi_var(self, phi: Ins) -> str:
        v = self.values.get(phi.result)
        if isinstance(v, ir.Var):
            return v.name
        name = self.fresh(self.m.names.get(phi.result, "") or phi.result[1:])
        self.values[phi.result] = ir.Var(name)
        return name

    def loop(self, header: Block, outer: tuple | None) -> ir.Loop:
        merge_ins = header.merge
        merge, cont = merge_ins.args[0], merge_ins.args[1]
        for phi in header.phis:
            self._phi_var(phi)
        span = self.span(merge_ins)
        inner = (merge, cont)
        body: list[ir.Stmt] = self.instructions(header)
        nxt = self.terminator(header, body, cont, inner)
        if nxt is not None and nxt != cont:
            body.extend(self.region(nxt, cont, inner))
        update: list[ir.Stmt] = []
        if cont != header.label:
            update = self.continue_construct(cont, header.label, inner)
        cond = None
        # `if (!c) break;` first in the body is the loop's own condition (a for/while loop).
        if body and isinstance(body[0], ir.If) and body[0].then and isinstance(body[0].then[0], ir.Break) \
                and len(body[0].then) == 1 and not body[0].orelse:
            cond = _negate(body[0].cond)
            body = body[1:]
        return ir.Loop([], cond, update, body, span, next(self.loop_ids))

    def continue_construct(self, cont: str, header: str, loop: tuple) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        label = cont
        seen: set[str] = set()
        while label != header:
            block = self.fn.blocks.get(label)
            if block is None:
                raise Unsupported(self.entry.node, f"branch to unknown block {label}")
            if label in seen:
                raise Unsupported(_first_node(block, self.entry), f"continue construct of {header} loops without it")
            seen.add(label)
            if block.merge is not None:
                raise Unsupported(block.merge.node, "structured control flow inside a loop's continue block")
            out.extend(self.instructions(block))
            term = block.term
            if term is None:
                raise Unsupported(self.entry.node, f"block {block.label} has no terminator")
            if term.op != "OpBranch":
                raise Unsupported(term.node, "a loop whose continue block exits the loop (do-while)")
            out.extend(self.edge(label, term.args[0]))
            label = term.args[0]
        return out

    # ----- instructions -----
    def instructions(self, block: Block) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for i, ins in enumerate(block.ins):
            if ins.op in IGNORED or ins.op == "OpVariable":
                continue
            with _at(ins.node):
                self._snapshot = (ins.op == "OpLoad" and self._local_root(ins.args[1]) is not None
                                  and self._used_after_store(block, i))
                out.extend(self.instruction(ins))
        return out

    def _used_after_store(self, block: Block, i: int) -> bool:
        """Whether the value loaded from a local variable at `block.ins[i]` (or anything computed
        from it) is used after a later store to that variable: then the load must copy it."""
        var = self._local_root(block.ins[i].args[1])
        tainted = {block.ins[i].result}
        stored = False
        for ins in block.ins[i + 1:]:
            uses = any(a in tainted for a in ins.args)
            if uses and stored:
                return True
            if uses and ins.result is not None:
                tainted.add(ins.result)
            if ins.op == "OpStore" and self._local_root(ins.args[0]) == var:
                stored = True
        if not stored:
            return False
        # Used by the terminator, a phi, or another block: conservatively, after the store.
        return any(self.fn.uses.get(t, set()) - {block.label} for t in tainted)

    def _local_root(self, ptr_id: str) -> str | None:
        """The IR variable a pointer into a local variable refers to (also for access chains of
        this block not lowered yet)."""
        v = self.values.get(ptr_id)
        if isinstance(v, Ptr):
            return v.base if v.kind == "local" else None
        d = self.fn.defs.get(ptr_id)
        if d is not None and d.op in ("OpAccessChain", "OpInBoundsAccessChain"):
            return self._local_root(d.args[1])
        return None

    def instruction(self, ins: Ins) -> list[ir.Stmt]:
        op, a, r = ins.op, ins.args, ins.result
        if op in BINOPS:
            self.bind(ins, self._lanes(ins, lambda x, y: ir.BinOp(BINOPS[op], x, y), a[1], a[2]))
            return []
        if op in FCMP:
            self.bind(ins, self._lanes(ins, lambda x, y: ir.Call("fcmp" + FCMP[op], (x, y)), a[1], a[2]))
            return []
        if op in UNOPS:
            self.bind(ins, self._lanes(ins, lambda x: ir.UnOp(UNOPS[op], x), a[1]))
            return []
        if op in SAME_VALUE or (op == "OpBitcast" and self._int_like(a[0]) and self._int_like_value(a[1], ins)):
            self.bind(ins, self.value(a[1], ins))
            return []
        if op == "OpSelect":
            self.bind(ins, self._lanes(ins, lambda c, x, y: ir.Select(c, x, y), a[1], a[2], a[3]))
            return []
        if op == "OpLoad":
            return self.load(ins)
        if op == "OpStore":
            ptr = self.value(a[0], ins)
            if not isinstance(ptr, Ptr):
                raise Unsupported(ins.node, "store through a value that is not a pointer")
            return self.store(ptr, self.value(a[1], ins), ins)
        if op in ("OpAccessChain", "OpInBoundsAccessChain"):
            self.bind(ins, self.access_chain(ins))
            return []
        if op == "OpControlBarrier":
            return self.control_barrier(ins)
        if op == "OpMemoryBarrier":
            # A fence synchronises no one by itself; before a control barrier it widens what that
            # barrier orders (`memoryBarrierBuffer(); barrier();`).
            scope, sem = self._const(a[0], ins), self._const(a[1], ins)
            if scope in (CROSS_DEVICE, DEVICE, WORKGROUP):
                self.fence |= sem
            return []
        if op.startswith("OpAtomic"):
            return self.atomic(ins)
        if op == "OpCompositeExtract":
            v = self.value(a[1], ins)
            for idx in a[2:]:
                i = _number(idx, "index")
                if not isinstance(v, Vec) or not 0 <= i < len(v.lanes):
                    raise Unsupported(ins.node, "OpCompositeExtract of a non-composite value or out of its range")
                v = v.lanes[i]
            self.bind(ins, v)
            return []
        if op == "OpCompositeConstruct":
            self.bind(ins, Vec(tuple(self.value(x, ins) for x in a[1:])))
            return []
        if op == "OpCompositeInsert":
            v = self.value(a[2], ins)
            self.bind(ins, _insert(v, [_number(x, "index") for x in a[3:]], self.value(a[1], ins), ins))
            return []
        if op == "OpVectorShuffle":
            x, y = self.value(a[1], ins), self.value(a[2], ins)
            if not isinstance(x, Vec) or not isinstance(y, Vec):
                raise Unsupported(ins.node, "OpVectorShuffle of a value that is not a vector")
            lanes = list(x.lanes) + list(y.lanes)
            picks = [_number(i, "component") for i in a[3:]]
            if any(not 0 <= i < len(lanes) and i != 0xFFFFFFFF for i in picks):
                raise Unsupported(ins.node, "OpVectorShuffle component out of range")
            self.bind(ins, Vec(tuple(lanes[i] if i != 0xFFFFFFFF else ir.Const(0) for i in picks)))
            return []
        if op == "OpVectorExtractDynamic":
            v, idx = self.value(a[1], ins), self.scalar(a[2], ins)
            if not isinstance(v, Vec) or not v.lanes:
                raise Unsupported(ins.node, "OpVectorExtractDynamic of a value that is not a vector")
            out = v.lanes[-1]
            for i in range(len(v.lanes) - 2, -1, -1):
                out = ir.Select(ir.BinOp("==", idx, ir.Const(i)), v.lanes[i], out)
            self.bind(ins, out)
            return []
        if op == "OpFunctionCall":
            return self.call(ins)
        if op == "OpExtInst":
            return self.ext_inst(ins)
        if op == "OpArrayLength":
            ptr = self.value(a[1], ins)
            self.bind(ins, ir.Param(f"{getattr(ptr, 'base', a[1])}.length"))
            return []
        if op.startswith(("OpGroup", "OpSubgroup")):
            # Subgroup operations exchange values between invocations: per invocation, unknown.
            self.bind(ins, self._opaque(ins, f"result of {op}"))
            return []
        if op == "OpUndef":
            self.bind(ins, ir.Opaque("undefined value", next(self.opaque_ids)))
            return []
        if r is not None and not op.startswith(EFFECTFUL_PREFIXES):
            # Float arithmetic, conversions, math: a pure function of its operands.
            args = [x for x in a[1:] if x.startswith("%")]
            vals = [self.value(x, ins) for x in args]
            if any(isinstance(v, Ptr) for v in vals):
                raise Unsupported(ins.node, f"{op} on a pointer")
            n = max((len(v.lanes) for v in vals if isinstance(v, Vec)), default=0)
            rt = self.m.types.get(a[0]) if a else None
            if rt is not None and rt.kind == "vector" and all(len(v.lanes) == n == rt.count for v in vals
                                                              if isinstance(v, Vec)):
                self.bind(ins, Vec(tuple(ir.Call(op, tuple(v.lanes[i] if isinstance(v, Vec) else v for v in vals))
                                         for i in range(n))))
            else:
                self.bind(ins, ir.Call(op, tuple(self.scalar(x, ins) for x in args)))
            return []
        raise Unsupported(ins.node, op)

    def _opaque(self, ins: Ins, why: str):
        rt = self.m.types.get(ins.args[0])
        if rt is not None and rt.kind == "vector":
            return Vec(tuple(ir.Opaque(why, next(self.opaque_ids)) for _ in range(rt.count)))
        return ir.Opaque(why, next(self.opaque_ids))

    def _int_like(self, tid: str) -> bool:
        t = self.m.types.get(tid)
        if t is not None and t.kind == "vector":
            t = self.m.types.get(t.elem)
        return t is not None and t.kind == "int"

    def _int_like_value(self, ident: str, ins: Ins) -> bool:
        v = self.values.get(ident)
        if isinstance(v, Ptr):
            return False
        return True if ident not in self.m.constants else isinstance(self.m.constants[ident], int)

    def _lanes(self, ins: Ins, fn, *idents):
        vals = [self.value(x, ins) for x in idents]
        n = max((len(v.lanes) for v in vals if isinstance(v, Vec)), default=0)
        if n == 0:
            if any(isinstance(v, Ptr) for v in vals):
                raise Unsupported(ins.node, f"{ins.op} on a pointer")
            return fn(*vals)
        if any(isinstance(v, Vec) and len(v.lanes) != n for v in vals):
            raise Unsupported(ins.node, f"{ins.op} on vectors of different lengths")
        return Vec(tuple(fn(*[v.lanes[i] if isinstance(v, Vec) else v for v in vals]) for i in range(n)))

    def _const(self, ident: str, ins: Ins) -> int:
        v = self.m.constants.get(ident)
        if not isinstance(v, int) or isinstance(v, bool) or ident in self.m.spec_constants:
            raise Unsupported(ins.node, f"scope or semantics {ident} is not a constant")
        return v & 0xFFFFFFFF   # TVM writes them as signed int constants

    def control_barrier(self, ins: Ins) -> list[ir.Stmt]:
        a = ins.args
        exec_scope, mem_scope, sem = (self._const(x, ins) for x in a[:3])
        sem |= self.fence
        self.fence = 0
        if exec_scope == INVOCATION:
            return []
        scope = ir.WARP if exec_scope == SUBGROUP else ir.BLOCK
        spaces = set()
        # Memory is ordered only with an ordering bit and a memory scope wider than one subgroup.
        if sem & ORDERING and mem_scope in (CROSS_DEVICE, DEVICE, WORKGROUP, 5):
            if sem & WORKGROUP_MEMORY:
                spaces.add(ir.SHARED)
            if sem & UNIFORM_MEMORY:
                spaces.add(ir.GLOBAL)
        text = (f"OpControlBarrier {SCOPE_NAMES.get(exec_scope, exec_scope)} {SCOPE_NAMES.get(mem_scope, mem_scope)} "
                f"{semantics_text(sem)}")
        return [ir.Barrier(scope, frozenset(spaces), self.span(ins), text)]

    # ----- memory -----
    def access_chain(self, ins: Ins) -> Ptr:
        base = self.value(ins.args[1], ins)
        if not isinstance(base, Ptr):
            raise Unsupported(ins.node, "access chain on a value that is not a pointer")
        m = self.m
        ty, offset, path = base.ty, base.offset, base.path
        if base.kind == "local":
            if len(ins.args) != 3 or m.types[ty].kind != "vector":
                raise Unsupported(ins.node, "access chain into a local that is not a vector")
            idx = self.scalar(ins.args[2], ins)
            if not isinstance(idx, ir.Const):
                raise Unsupported(ins.node, "vector lane selected by a variable")
            return Ptr("local", base.base, base.space, offset, m.types[ty].elem, (idx.value,))
        for ident in ins.args[2:]:
            t = m.types[ty]
            if t.kind == "struct":
                i = m.const_int(ident, ins)
                if not 0 <= i < len(t.members):
                    raise Unsupported(ins.node, f"member {i} of a struct of {len(t.members)}")
                offset = _add(offset, ir.Const(m.member_offset(ty, i)))
                path, ty = path + (i,), t.members[i]
                continue
            idx = self.scalar(ident, ins)
            if t.kind in ("array", "rtarray"):
                step, ty = m.stride(ty), t.elem
            elif t.kind == "vector":
                step, ty = m.size(t.elem), t.elem
            else:
                raise Unsupported(ins.node, f"access chain into a {t.kind}")
            offset = _add(offset, _mul(idx, step))
            path = path + (idx.value if isinstance(idx, ir.Const) else idx,)
        return Ptr(base.kind, base.base, base.space, offset, ty, path)

    def load(self, ins: Ins) -> list[ir.Stmt]:
        ptr = self.value(ins.args[1], ins)
        if not isinstance(ptr, Ptr):
            raise Unsupported(ins.node, "load through a value that is not a pointer")
        span = self.span(ins)
        if ptr.kind == "local":
            names = _lane_names(ptr, self.m)
            if not self._snapshot:
                vals = [ir.Var(n) for n in names]
                self.bind(ins, vals[0] if names == [_local_name(ptr)] else Vec(tuple(vals)))
                return []
            # A later store to the variable in this block would change what this load saw.
            temps = [self.fresh(f"{n}.old") for n in names]
            vals = [ir.Var(t) for t in temps]
            self.bind(ins, vals[0] if names == [_local_name(ptr)] else Vec(tuple(vals)))
            return [ir.Assign(t, ir.Var(n), span) for t, n in zip(temps, names)]
        if ptr.kind == "builtin":
            self.bind(ins, self._builtin(ptr, ins))
            return []
        if ptr.kind == "param":
            self.bind(ins, self._param(ptr, ins))
            return []
        t = self.m.types[ptr.ty]
        if t.kind in ("struct", "array"):
            raise Unsupported(ins.node, "load of a whole struct or array")
        acc = self._access(ptr, False, ins)
        tmp = self.fresh(f"{ptr.base}.ld")
        if t.kind == "vector":
            self.bind(ins, Vec(tuple(ir.Call(f"lane{i}", (ir.Var(tmp),)) for i in range(t.count))))
        else:
            self.bind(ins, ir.Var(tmp))
        return [ir.Assign(tmp, ir.Read(acc), span)]

    def store(self, ptr: Ptr, val, ins: Ins) -> list[ir.Stmt]:
        span = self.span(ins)
        if ptr.kind == "local":
            names = _lane_names(ptr, self.m)
            if names == [_local_name(ptr)]:
                return [ir.Assign(names[0], self._as_expr(val), span)]
            lanes = val.lanes if isinstance(val, Vec) else tuple(ir.Call(f"lane{i}", (val,)) for i in range(len(names)))
            return [ir.Assign(n, self._as_expr(v), span) for n, v in zip(names, lanes)]
        if ptr.kind != "mem":
            raise Unsupported(ins.node, f"store to a {ptr.kind} variable")
        t = self.m.types[ptr.ty]
        if t.kind in ("struct", "array"):
            raise Unsupported(ins.node, "store of a whole struct or array")
        acc = self._access(ptr, True, ins)
        acc.value = self._as_expr(val)
        return [ir.MemOp(acc)]

    def _as_expr(self, val) -> ir.Expr:
        if isinstance(val, Vec):
            return ir.Call("vec", tuple(self._flat(val)))
        return val

    def _access(self, ptr: Ptr, is_write: bool, ins: Ins, atomic: bool = False) -> ir.Access:
        buf = self.kernel.buffers[ptr.base]
        self.fence = 0   # a fence followed by an access no longer sits right before a barrier
        return ir.Access(ptr.base, ptr.space, ptr.offset, self.m.size(ptr.ty), is_write, self.span(ins),
                         elem_size=buf.elem_size, atomic=atomic, id=next(self.access_ids))

    def atomic(self, ins: Ins) -> list[ir.Stmt]:
        op, a = ins.op, ins.args
        ptr_id = a[0] if op == "OpAtomicStore" else a[1]
        ptr = self.value(ptr_id, ins)
        if not isinstance(ptr, Ptr) or ptr.kind != "mem":
            raise Unsupported(ins.node, f"{op} on something other than buffer memory")
        is_write = op != "OpAtomicLoad"
        acc = self._access(ptr, is_write, ins, atomic=True)
        if op == "OpAtomicStore":
            acc.value = self.scalar(a[3], ins)
        elif is_write:
            acc.value = ir.Call(op, tuple(self.scalar(x, ins) for x in a[4:]))
        if ins.result is not None:
            self.bind(ins, ir.Opaque(f"result of {op}", next(self.opaque_ids)))
        return [ir.MemOp(acc)]

    def _builtin(self, ptr: Ptr, ins: Ins):
        name = ptr.base
        t = self.m.types[ptr.ty]

        def comp(i):
            if not isinstance(i, int) or not 0 <= i < len(DIMS):
                raise Unsupported(ins.node, f"component {i} of builtin {name}")
            d = DIMS[i]
            if name in BUILTIN_VECTORS:
                return ir.Builtin(f"{BUILTIN_VECTORS[name]}.{d}")
            if name == "GlobalInvocationId":
                return ir.BinOp("+", ir.BinOp("*", ir.Builtin(f"bid.{d}"), ir.Builtin(f"bdim.{d}")),
                                ir.Builtin(f"tid.{d}"))
            raise Unsupported(ins.node, f"builtin {name}")

        if name == "LocalInvocationIndex":
            x, y, z = (ir.Builtin(f"tid.{d}") for d in DIMS)
            bx, by = ir.Builtin("bdim.x"), ir.Builtin("bdim.y")
            return ir.BinOp("+", x, ir.BinOp("*", bx, ir.BinOp("+", y, ir.BinOp("*", by, z))))
        if name in ("SubgroupLocalInvocationId", "SubgroupId"):
            return ir.Opaque(f"{name} (which invocations share a subgroup is the device's choice)",
                             next(self.opaque_ids))
        if name in ("SubgroupSize", "NumSubgroups"):
            return ir.Param(f"gl_{name}")
        if ptr.path:
            return comp(ptr.path[0])
        if t.kind == "vector":
            return Vec(tuple(comp(i) for i in range(t.count)))
        raise Unsupported(ins.node, f"builtin {name}")

    def _param(self, ptr: Ptr, ins: Ins):
        m = self.m
        var_type = m.types[m.variables[ptr.base][0]].elem
        if not ptr.path or not isinstance(ptr.path[0], int):
            raise Unsupported(ins.node, "load of a whole parameter block")
        name = m.member_names.get((var_type, ptr.path[0]), f"param{ptr.path[0]}")
        rest = "".join(f"[{p}]" for p in ptr.path[1:])
        if any(not isinstance(p, int) for p in ptr.path[1:]):
            raise Unsupported(ins.node, "parameter block indexed by a variable")
        t = m.types[ptr.ty]
        if t.kind == "vector":
            return Vec(tuple(ir.Param(f"{name}{rest}[{i}]") for i in range(t.count)))
        if t.kind in ("int", "float", "bool"):
            return ir.Param(name + rest)
        raise Unsupported(ins.node, f"load of a {t.kind} parameter")

    def call(self, ins: Ins) -> list[ir.Stmt]:
        fid = ins.args[1]
        args = [self.value(x, ins) for x in ins.args[2:]]
        saved_fn = self.fn
        self.depth += 1
        try:
            stmts = self.function(fid, args)
        finally:
            self.depth -= 1
            self.fn = saved_fn
        if ins.result is not None and self.m.types[ins.args[0]].kind != "void":
            self.bind(ins, ir.Var(self.last_return))
        return stmts

    def ext_inst(self, ins: Ins) -> list[ir.Stmt]:
        a = ins.args
        inst = a[2]
        args = a[3:]
        if self.m.ext_sets.get(a[1], "").startswith("NonSemantic"):
            return []
        if inst in GLSL_INT and len(args) == 2:
            self.bind(ins, self._lanes(ins, lambda x, y: ir.Call(GLSL_INT[inst], (x, y)), *args))
            return []
        self.bind(ins, self._lanes(ins, lambda *xs: ir.Call(inst, tuple(xs)), *args))
        return []


def _has_runtime_array(m: Module, tid: str) -> bool:
    t = m.types[tid]
    if t.kind == "rtarray":
        return True
    if t.kind == "struct":
        return any(_has_runtime_array(m, x) for x in t.members)
    return False


def _row_strides(m: Module, tid: str) -> tuple[int, ...]:
    """Row strides in elements of a fixed multi-dimensional array (in-bounds facts)."""
    t = m.types[tid]
    while t.kind == "struct" and len(t.members) == 1:
        tid, t = t.members[0], m.types[t.members[0]]
    strides = []
    if t.kind in ("array", "rtarray"):
        inner = m.types[t.elem]
        elem = m.size(m.scalar_of(tid))
        while inner.kind == "array":
            strides.append(m.stride(t.elem) // elem)
            t = inner
            inner = m.types[inner.elem]
    return tuple(s for s in strides if s > 1)


def _insert(v, path: list[int], x, ins: Ins):
    if not path:
        return x
    if not isinstance(v, Vec):
        raise Unsupported(ins.node, "OpCompositeInsert into a non-composite value")
    lanes = list(v.lanes)
    if not 0 <= path[0] < len(lanes):
        raise Unsupported(ins.node, "OpCompositeInsert out of the composite's range")
    lanes[path[0]] = _insert(lanes[path[0]], path[1:], x, ins)
    return Vec(tuple(lanes))


def _span_of(stmt) -> ir.Span:
    """A statement's span (a MemOp keeps its span on its access)."""
    return stmt.access.span if isinstance(stmt, ir.MemOp) else stmt.span


def _first_node(block: Block, fallback: Ins) -> Tree:
    first = (block.phis or block.ins or [block.merge or block.term or fallback])[0]
    return first.node


def _negate(c: ir.Expr) -> ir.Expr:
    return c.a if isinstance(c, ir.UnOp) and c.op == "!" else ir.UnOp("!", c)


def _leaves(stmts: list) -> bool:
    return bool(stmts) and isinstance(stmts[-1], (ir.Break, ir.Continue, ir.Return))


def _mentions(e, names: set[str]) -> bool:
    if isinstance(e, ir.Var):
        return e.name in names
    return any(_mentions(x, names) for x in ir.operands(e))




# ----- vector accesses -----
# GLSL has no vector view of a scalar array, so a vector load or store becomes one access per lane
# (`Q_smem[i] = v.x; Q_smem[i + 1] = v.y; ...`). Adjacent lanes with nothing in between are one
# access again: the same bytes, the same program point, a quarter of the pairs to check.
MAX_VECTOR_BYTES = 16


def _split_const(e: ir.Expr) -> tuple[ir.Expr | None, int]:
    """`e` as (base, constant): (x + 2) * 2 -> (x * 2, 4)."""
    if isinstance(e, ir.Const):
        return None, e.value
    if isinstance(e, ir.BinOp) and e.op in ("+", "-") and isinstance(e.b, ir.Const):
        inner, c = _split_const(e.a)
        return inner, c + (e.b.value if e.op == "+" else -e.b.value)
    if isinstance(e, ir.BinOp) and e.op == "*" and isinstance(e.b, ir.Const):
        inner, c = _split_const(e.a)
        return (ir.BinOp("*", inner, e.b) if inner is not None else None), c * e.b.value
    return e, 0


def _lane_access(s) -> ir.Access | None:
    if isinstance(s, ir.MemOp) and s.access.is_write and not s.access.atomic:
        return s.access
    if isinstance(s, ir.Assign) and isinstance(s.value, ir.Read) and not s.value.access.atomic:
        return s.value.access
    return None


def _coalesce(stmts: list, fresh) -> list:
    out: list = []
    i = 0
    while i < len(stmts):
        s = stmts[i]
        if isinstance(s, ir.If):
            s.then, s.orelse = _coalesce(s.then, fresh), _coalesce(s.orelse, fresh)
        elif isinstance(s, ir.Loop):
            s.body, s.update = _coalesce(s.body, fresh), _coalesce(s.update, fresh)
        acc = _lane_access(s)
        run = [s]
        if acc is not None:
            base, c = _split_const(acc.offset)
            j = i + 1
            while j < len(stmts) and (len(run) + 1) * acc.width <= MAX_VECTOR_BYTES:
                nxt = _lane_access(stmts[j])
                if nxt is None or type(stmts[j]) is not type(s) or nxt.buffer != acc.buffer \
                        or nxt.width != acc.width or _split_const(nxt.offset) != (base, c + len(run) * acc.width):
                    break
                run.append(stmts[j])
                j += 1
        if len(run) < 2:
            out.append(s)
            i += 1
            continue
        lanes = [_lane_access(x) for x in run]
        wide = ir.Access(acc.buffer, acc.space, acc.offset, acc.width * len(run), acc.is_write, acc.span,
                         elem_size=acc.elem_size, id=acc.id)
        if isinstance(s, ir.MemOp):
            wide.value = ir.Call("vec", tuple(a.value for a in lanes))
            out.append(ir.MemOp(wide))
        else:
            tmp = fresh(f"{acc.buffer}.vec")
            out.append(ir.Assign(tmp, ir.Read(wide), s.span))
            out.extend(ir.Assign(x.target, ir.Call(f"lane{k}", (ir.Var(tmp),)), x.span) for k, x in enumerate(run))
        i += len(run)
    return out


def _local_name(ptr: Ptr) -> str:
    return f"{ptr.base}.{ptr.path[0]}" if ptr.path else ptr.base


def _lane_names(ptr: Ptr, m: Module) -> list[str]:
    """The IR variables a local pointer covers: one scalar, or each lane of a vector."""
    t = m.types[ptr.ty]
    if t.kind == "vector" and not ptr.path:
        return [f"{ptr.base}.{i}" for i in range(t.count)]
    return [_local_name(ptr)]
