"""The opcode tables of SPIR-V instructions the lowering maps onto IR operators, and the opcodes it
skips or must not read as pure values. Separate so that the module reader (its operand counts) and
the instruction lowering share one spelling of each table."""

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
# Conversions that keep an integer's value (the analysis assumes no overflow), and copies.
SAME_VALUE = {"OpCopyObject", "OpCopyLogical", "OpUConvert", "OpSConvert", "OpSatConvertSToU", "OpSatConvertUToS"}
GLSL_INT = {"UMin": "min", "SMin": "min", "UMax": "max", "SMax": "max"}
# Instructions with effects the lowering does not model: never read as pure values.
EFFECTFUL_PREFIXES = ("OpImage", "OpCopyMemory", "OpEmit", "OpEnd", "OpKill", "OpTerminate", "OpDemote",
                      "OpIgnoreIntersection", "OpReportIntersection", "OpTrace", "OpExecuteCallable",
                      "OpCooperative", "OpPtr", "OpGenericCastToPtr", "OpControlBarrier", "OpMemoryBarrier")
IGNORED = {"OpLine", "OpNoLine", "OpSelectionMerge", "OpLoopMerge", "OpNop", "OpModuleProcessed"}
