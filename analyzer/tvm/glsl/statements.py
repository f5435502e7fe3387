"""Statements: one method per TIR statement node, emitting GLSL lines into `main`.

Separate from expressions: statements bind names, open scopes, launch extents and barriers.
"""

from __future__ import annotations

import re

from analyzer.tvm.glsl.syntax import _EXT_SUBGROUP, _SWIZZLE, _strip
from analyzer.tvm.glsl.tir_walk import _has_load, _needs_ordering, _op_name, _short

# AttrStmt keys that only annotate: kept as a comment, their body translated as is.
_ATTR_PASS = ("reduce_scope", "storage_alignment", "pragma_unroll_explicit",
              "pragma_auto_unroll_max_step", "pragma_vectorize", "compute_scope", "device_scope")


class StatementMixin:
    """Statement nodes of a `_Translator`."""

    def st(self, s) -> None:
        kind = type(s).__name__
        fn = getattr(self, f"st_{kind}", None)
        if fn is None:
            raise self.fail(f"statement node {kind}")
        fn(s)
        body = getattr(s, "body", None) if kind in ("DeclBuffer", "AllocBuffer", "Bind", "LetStmt") else None
        if body is not None:
            self.st(body)

    def st_SeqStmt(self, s):
        for c in s.seq:
            self.st(c)

    def st_Bind(self, s):
        var = s.var
        ty = getattr(var, "ty", None)
        if type(ty).__name__ != "PrimType":
            raise self.fail(f"Bind of {var.name} of type {ty}")
        t = self.type_of(var)
        v = self.value(s.value)
        name = self.ident(var.name)
        self.emit(f"{t.glsl} {name} = {_strip(v)};")
        self.bind(var, name)

    st_LetStmt = st_Bind

    def st_DeclBuffer(self, s):
        self.declare_view(s.buffer, s.data)

    def st_AllocBuffer(self, s):
        self.allocate(s)

    def st_AttrStmt(self, s):
        key = str(s.attr_key)
        if key == "thread_extent":
            iv = s.node
            tag = str(iv.thread_tag)
            m = re.fullmatch(r"(threadIdx|blockIdx)\.([xyz])", tag)
            if not m:
                raise self.fail(f"thread_extent of '{tag}'")
            var = iv.var
            vt = self.type_of(var)
            builtin = "gl_LocalInvocationID" if m.group(1) == "threadIdx" else "gl_WorkGroupID"
            self.bind(var, f"{vt.glsl}({builtin}.{m.group(2)})")
            value = s.value
            if m.group(1) == "threadIdx":
                if type(value).__name__ != "IntImm":
                    raise self.fail(f"symbolic {tag} extent {value}")
                ext = int(value.value)
                if self.local_size.get(m.group(2), ext) != ext:
                    raise self.fail(f"{tag} launched with extents {self.local_size[m.group(2)]} and {ext}")
                self.local_size[m.group(2)] = ext
            else:
                self.grid[tag] = str(value)
            self.emit(f"// {tag}: extent {value}")
            self.st(s.body)
            return
        if key in _ATTR_PASS:
            self.emit(f"// attr {key}")
            self.st(s.body)
            return
        raise self.fail(f"AttrStmt '{key}'")

    def st_IfThenElse(self, s):
        c = self.value(s.condition)
        self.emit(f"if ({_strip(c)}) {{")
        with self.block():
            self.st(s.then_case)
        if s.else_case is not None:
            self.emit("} else {")
            with self.block():
                self.st(s.else_case)
        self.emit("}")

    def st_For(self, s):
        kinds = {0: "serial", 1: "parallel", 2: "vectorized", 3: "unrolled", 4: "thread_binding"}
        kind = kinds.get(int(s.kind), str(s.kind))
        if kind not in ("serial", "vectorized", "unrolled"):
            raise self.fail(f"{kind} For loop over {s.loop_var.name}")
        if getattr(s, "thread_binding", None) is not None:
            raise self.fail(f"For loop over {s.loop_var.name} bound to a thread")
        var = s.loop_var
        t = self.type_of(var)
        if not t.is_int or t.lanes != 1:
            raise self.fail(f"For loop over {var.name} of type {t.tir}")
        step = getattr(s, "step", None)
        step_text = "1"
        if step is not None:
            if type(step).__name__ != "IntImm" or int(step.value) <= 0:
                raise self.fail(f"For loop over {var.name} with step {step}")
            step_text = self.int_lit(int(step.value), t)
        name = self.ident(var.name)
        lo_e, ext_e = s.min, s.extent
        # TIR evaluates min and extent once, before the loop: keep loads there.
        lo = self.value(lo_e)
        if _has_load(lo_e, self.memo):
            lo = self.named_temp(t, lo, f"{name}_min")
        ext = self.value(ext_e)
        if _has_load(ext_e, self.memo):
            ext = self.named_temp(t, ext, f"{name}_extent")
        zero = type(lo_e).__name__ == "IntImm" and int(lo_e.value) == 0
        bound = _strip(ext) if zero else f"{lo} + {ext}"
        inc = f"++{name}" if step is None or int(step.value) == 1 else f"{name} += {step_text}"
        note = "" if kind == "serial" else f"  // {kind}"
        self.emit(f"for ({t.glsl} {name} = {_strip(lo)}; {name} < {bound}; {inc}) {{{note}")
        with self.block():
            self.bind(var, name)
            self.st(s.body)
        self.emit("}")

    def st_While(self, s):
        saved = self.out
        self.out = []
        self.indent += 1
        try:
            c = self.value(s.condition)
        finally:
            self.indent -= 1
            pre, self.out = self.out, saved
        if not pre:
            self.emit(f"while ({_strip(c)}) {{")
            with self.block():
                self.st(s.body)
            self.emit("}")
            return
        # The condition needs statements of its own: evaluate it at the top of every iteration.
        self.emit("while (true) {")
        with self.block():
            self.out.extend(pre)
            self.emit(f"if (!({_strip(c)})) {{")
            with self.block():
                self.emit("break;")
            self.emit("}")
            self.st(s.body)
        self.emit("}")

    def st_Break(self, s):
        self.emit("break;")

    def st_Continue(self, s):
        self.emit("continue;")

    def st_Evaluate(self, s):
        v = s.value
        if type(v).__name__ == "Call" and _short(_op_name(v)) == "tvm_storage_sync":
            args = list(v.args)
            scope = str(getattr(args[0], "value", args[0])) if args else ""
            if scope in ("shared", "shared.dyn"):
                self.emit("barrier();")
            elif scope == "warp":
                self.ext.add(_EXT_SUBGROUP)
                self.emit("subgroupBarrier();")
            else:
                raise self.fail(f"tvm_storage_sync(\"{scope}\")")
            return
        if type(v).__name__ in ("IntImm", "FloatImm"):
            self.emit(f"// T.evaluate({v})")
            return
        text = self.value(v)
        self.emit(f"{_strip(text)};")

    def st_BufferStore(self, s):
        buf = s.buffer
        vt = self.type_of(s.value)
        predicate = getattr(s, "predicate", None)
        if predicate is not None:
            raise self.fail(f"predicated store to {buf.name}")
        v = self.value(s.value)
        indices = list(s.indices)
        if len(indices) == 1 and self.type_of(indices[0]).lanes > 1 and not v.isidentifier():
            v = self.temp(vt, v)   # the whole value first, then the lane-by-lane stores
        saved = self.hoist
        self.hoist = any(_needs_ordering(i, self.memo) for i in s.indices)
        try:
            st, idx, _ = self.access(buf, s.indices, vt, "store")
        finally:
            self.hoist = saved
        if len(idx) == 1:
            self.emit(f"{st.name}[{idx[0]}] = {_strip(v)};")
            return
        if not v.isidentifier():
            v = self.temp(vt, v)
        for k, i in enumerate(idx):
            self.emit(f"{st.name}[{i}] = {v}.{_SWIZZLE[k]};")
