"""WGSL (WebGPU) compute shaders lowered into the kernel IR: `parse` holds the parser and its
template-list post-lexer, `lower` the lowering."""
