//! Dirac operators built from the backend's hopping term, and the linear
//! operators a Krylov solver inverts (`M`, `M̂`, their normal forms).

pub mod clover;
pub mod even_odd;
mod fields;
mod operator;
pub mod staggered;
pub mod wilson;

pub use fields::WilsonFields;
pub use operator::*;
