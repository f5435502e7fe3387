"""WGSL ray queries (wgpu's `wgpu_ray_query`): an `acceleration_structure` is read-only in a
dispatch, a `ray_query` a per-invocation traversal over it. Neither touches buffer memory, so
for races they are values: each intersection read is a value of its own the analysis does not know
(two invocations tracing the same ray are not assumed to see the same hit), `rayQueryProceed`
a boolean likewise; initialising, confirming or terminating a query does nothing it can see.
"""

from __future__ import annotations

from analyzer import ir
from analyzer.frontend.wgsl.types import BOOL, F32, U32, Scalar, Struct, StructVal, Ty, Vec

ACCELERATION = Ty("sampler", name="acceleration_structure")   # a read-only handle, as a sampler
RAY_QUERY = Ty("ray_query")

_VEC3 = Ty("vec", elem=F32, n=3)
_MAT4X3 = Ty("mat", elem=_VEC3, n=4)
STRUCTS = {
    "RayDesc": [("flags", U32), ("cull_mask", U32), ("t_min", F32), ("t_max", F32), ("origin", _VEC3),
                ("dir", _VEC3)],
    "RayIntersection": [("kind", U32), ("t", F32), ("instance_custom_data", U32), ("instance_index", U32),
                        ("sbt_record_offset", U32), ("geometry_index", U32), ("primitive_index", U32),
                        ("barycentrics", Ty("vec", elem=F32, n=2)), ("front_face", BOOL),
                        ("object_to_world", _MAT4X3), ("world_to_object", _MAT4X3)],
}
CONSTANTS = {
    "RAY_FLAG_NONE": 0x0, "RAY_FLAG_FORCE_OPAQUE": 0x1, "RAY_FLAG_FORCE_NO_OPAQUE": 0x2,
    "RAY_FLAG_TERMINATE_ON_FIRST_HIT": 0x4, "RAY_FLAG_SKIP_CLOSEST_HIT_SHADER": 0x8,
    "RAY_FLAG_CULL_BACK_FACING": 0x10, "RAY_FLAG_CULL_FRONT_FACING": 0x20, "RAY_FLAG_CULL_OPAQUE": 0x40,
    "RAY_FLAG_CULL_NO_OPAQUE": 0x80, "RAY_FLAG_SKIP_TRIANGLES": 0x100, "RAY_FLAG_SKIP_AABBS": 0x200,
    "RAY_QUERY_INTERSECTION_NONE": 0, "RAY_QUERY_INTERSECTION_TRIANGLE": 1,
    "RAY_QUERY_INTERSECTION_GENERATED": 2, "RAY_QUERY_INTERSECTION_AABB": 3,
}
# Built-ins with no value the analysis sees.
EFFECTS = frozenset({"rayQueryInitialize", "rayQueryConfirmIntersection", "rayQueryGenerateIntersection",
                     "rayQueryTerminate"})
INTERSECTIONS = frozenset({"rayQueryGetCommittedIntersection", "rayQueryGetCandidateIntersection"})


def declare(structs: dict) -> None:
    """The built-in structs, unless the module declares its own of the same name."""
    for name, members in STRUCTS.items():
        structs.setdefault(name, Struct(name, [(n, t, {}) for n, t in members]))


def constant(name: str):
    v = CONSTANTS.get(name)
    return None if v is None else Scalar(ir.Const(v), U32)


def value_of(ty: Ty, why: str, ids, structs: dict):
    """A value of type `ty` the analysis does not know, lane by lane."""
    def one(t: Ty):
        if t.kind == "vec":
            return Vec(tuple(ir.Opaque(why, next(ids)) for _ in range(t.n)), t)
        if t.kind == "mat":   # a matrix value: its columns
            from analyzer.frontend.wgsl.types import ArrayVal
            return ArrayVal(tuple(one(t.elem) for _ in range(t.n)), t)
        if t.kind == "struct":
            return StructVal({n: one(mt) for n, mt, _ in structs[t.name].members}, t)
        return Scalar(ir.Opaque(why, next(ids)), t)
    return one(ty)


def call(fn: str, ids, structs: dict):
    """The value of a ray-query built-in (its arguments already evaluated for their effects)."""
    if fn in EFFECTS:
        return Scalar(ir.Const(0), U32)
    if fn == "rayQueryProceed":
        return Scalar(ir.Opaque("result of rayQueryProceed", next(ids)), BOOL)
    if fn in INTERSECTIONS:
        return value_of(Ty("struct", "RayIntersection"), f"result of {fn}", ids, structs)
    return None
