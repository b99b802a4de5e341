//! Storage formats shared by both backends and the clover storage, beside
//! `precision.rs`: the host floats (`float`), the fixed-point integers (`fixed`) and the packed 20- and
//! 30-bit shared-exponent spinor words (`packed`, seed clark2022 §4). They
//! say how numbers are stored, never where: the CPU backend keeps them in
//! host vectors, the CUDA backend in device memory, with the same bits.

pub mod fixed;
pub mod float;
pub mod packed;

pub use fixed::Fixed;
pub use float::Float;
