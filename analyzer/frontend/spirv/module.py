"""A SPIR-V module read into tables: its declarations (types, constants, decorations, names, global
variables, entry points), its functions split into basic blocks, and the layout (sizes, strides,
member offsets) of its types. Separate from the lowering: reading knows nothing of the IR, and
every part of the lowering looks the module up here."""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass, field

from lark import Token, Tree

from analyzer.frontend.lower import Unsupported
from analyzer.frontend.spirv.opcodes import BINOPS, FCMP, SAME_VALUE, UNOPS

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
    "OpSpecConstantFalse": 1, "OpTypeStruct": 0, "OpSpecConstantOp": 3,
    "OpSampledImage": 3, "OpImage": 2, "OpImageWrite": 3, "OpImageRead": 3, "OpImageFetch": 3,
    "OpImageSampleImplicitLod": 3, "OpImageSampleExplicitLod": 3, "OpImageGather": 4, "OpImageDrefGather": 4,
    "OpImageQuerySize": 2, "OpImageQuerySizeLod": 3, "OpImageQueryLevels": 2, "OpImageQuerySamples": 2,
    **{op: 3 for op in BINOPS}, **{op: 3 for op in FCMP}, **{op: 2 for op in UNOPS},
    **{op: 2 for op in SAME_VALUE},
}
# Instructions whose result id the lowering keeps (SPIR-V requires one for each of them).
NEEDS_RESULT_PREFIXES = ("OpType", "OpConstant", "OpSpecConstant", "OpVariable", "OpLabel", "OpFunction",
                         "OpString", "OpExtInstImport", "OpPhi", "OpUndef", "OpLoad", "OpAccessChain",
                         "OpInBoundsAccessChain")
NOT_NEEDING_RESULT = {"OpFunctionEnd", "OpFunctionCall", "OpTypeForwardPointer"}


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
        # OpSpecConstantOp: id -> (opcode without `Op`, operand ids), computed from the
        # specialization constants the host sets (values.py lowers them into expressions).
        self.spec_ops: dict[str, tuple[str, tuple[str, ...]]] = {}
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
        elif op == "OpTypeMatrix":
            # Columns of vectors; in per-invocation memory and parameter blocks only (memory.py):
            # in a buffer its layout (MatrixStride, RowMajor) is the struct member's.
            self.types[r] = Type("matrix", elem=self._element(a[0]), count=_number(a[1], "column count"))
        elif op == "OpTypeArray":
            elem = self._element(a[0])
            if self.types[elem].kind == "rtarray":
                raise Unsupported(ins.node, "an array of arrays whose length is a specialization constant")
            if self.specialised(a[1]):
                # A length the host sets (`shared float t[SIZE]`, SIZE a specialization constant):
                # unknown here, so the array is sized as a runtime array is, and only where that
                # is its outermost dimension (`t[SIZE][4]`: rows of a known stride); an inner one
                # would make a row stride unknown.
                self.types[r] = Type("rtarray", elem=elem)
                return
            count = self.const_int(a[1], ins)
            if count < 1:
                raise Unsupported(ins.node, f"array of {count} elements")
            self.types[r] = Type("array", elem=elem, count=count)
        elif op == "OpTypeRuntimeArray":
            self.types[r] = Type("rtarray", elem=self._element(a[0]))
        elif op == "OpTypeStruct":
            self.types[r] = Type("struct", members=tuple(self._element(m) for m in a))
        elif op == "OpTypeForwardPointer":
            # A pointer type used before its OpTypePointer (a buffer_reference in a struct, or
            # naming itself): its pointee comes with that declaration.
            self.types[a[0]] = Type("pointer", storage=a[1])
        elif op == "OpTypePointer":
            self.types[r] = Type("pointer", elem=a[1], storage=a[0])   # may be forward
        elif op == "OpTypeFunction":
            self.types[r] = Type("function", elem=a[0])
        elif op == "OpTypeImage":   # Dim Depth Arrayed MS Sampled Format (spirv/images.py)
            # the lexer reads `2D` as a number and a word
            if len(a) < 7:
                raise Unsupported(ins.node, "OpTypeImage with too few operands")
            dim, rest = (a[1] + a[2], a[3:]) if a[1].isdigit() and a[2] == "D" else (a[1], a[2:])
            if len(rest) < 5:
                raise Unsupported(ins.node, "OpTypeImage with too few operands")
            self.types[r] = Type("image", elem=a[0], storage=f"{dim}:{rest[1]}:{rest[3]}:{rest[4]}")
        elif op == "OpTypeSampledImage":
            self.types[r] = Type("sampled_image", elem=a[0])
        elif op == "OpTypeSampler":
            self.types[r] = Type("sampler")
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
            if op == "OpSpecConstantTrue":
                self.spec_constants.add(r)
        elif op in ("OpConstantFalse", "OpSpecConstantFalse"):
            self.constants[r] = False
            if op == "OpSpecConstantFalse":
                self.spec_constants.add(r)
        elif op == "OpSpecConstantOp":
            for part in a[2:]:
                if part not in self.constants and part not in self.spec_ops:
                    raise Unsupported(ins.node, f"{part} is not a constant defined before its use")
            self.spec_ops[r] = (a[1], tuple(a[2:]))
        elif op in ("OpConstantComposite", "OpSpecConstantComposite"):
            for part in a[1:]:
                if part not in self.constants and part not in self.spec_ops:
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

    def specialised(self, ident: str) -> bool:
        """Whether a constant's value is the host's to set: a specialization constant, or a
        composite or operation built from one."""
        if ident in self.spec_constants:
            return True
        if ident in self.spec_ops:
            return True
        c = self.constants.get(ident)
        return isinstance(c, tuple) and any(self.specialised(p) for p in c)

    def const_int(self, ident: str, ins: Ins) -> int:
        v = self.constants.get(ident)
        if not isinstance(v, int) or isinstance(v, bool):
            raise Unsupported(ins.node, f"{ident} is not an integer constant")
        return v

    # ----- layout -----
    def size(self, tid: str) -> int:
        t = self.types[tid]
        if t.kind == "pointer" and t.storage == "PhysicalStorageBuffer":
            return 8   # a device address (PhysicalStorageBuffer64)
        if t.kind in ("int", "float"):
            return t.width // 8
        if t.kind == "bool":
            return 1
        if t.kind in ("vector", "matrix"):
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
        while t.kind in ("vector", "matrix", "array", "rtarray", "struct"):
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
