"""TVM: from a builder (`module:function`) to the source TVM emits, the device TIR and the launch.

`builders.py` loads, calls, schedules and lowers a builder; `build.py` builds it for a target and
collects the emitted source, launch extents, buffer shapes and host-side parameter values;
`tir_glsl.py` translates device TIR to GLSL for the Vulkan path; `corpus.py` and `workloads.py`
hold the LLM kernel corpus and dlight-scheduled workloads. Produces input for the front ends.
"""
