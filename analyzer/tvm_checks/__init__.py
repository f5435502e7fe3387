"""Checking what TVM builds, for builder authors: the build hook (`hook.py`, also importable as
`analyzer.tvm_hook`), the pytest plugin, and the sweeps over model shapes (`kernelrace llm`,
`kernelrace model`)."""
