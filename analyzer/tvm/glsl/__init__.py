"""The pieces of the TIR -> GLSL translator (`analyzer/tvm/tir_glsl.py`), one concern per module.

`syntax` holds the GLSL vocabulary (types, reserved words, extensions), `tir_walk` the generic
walks over TIR expressions; the translator's methods come as mixins: `emitter` (names, types,
output lines, literals, helper functions), `buffers`, `expressions`, `intrinsics` and
`statements`. `tir_glsl._Translator` composes them with the translation state, the parameter
bindings and the assembly of the shader text.
"""
