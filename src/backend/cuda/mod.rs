//! CUDA backend (issue 3).
