"""The LLVM backend (llvmlite): IR emission, target machine, execution engine."""
