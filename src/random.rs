//! Reproducible random fields for tests, examples and benchmarks: Haar-like
//! random SU(3) links (a "hot" field), links near the identity (a smooth
//! field, close to the free theory, so κ_c is near 1/8), and Gaussian
//! spinors. ChaCha8 seeded explicitly, so a seed names one field everywhere.

use std::sync::Arc;

use num_complex::Complex64 as C64;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::field::{GaugeField, HostSpinor};
use crate::lattice::{Lattice, Subset};
use crate::su3::Su3;

/// The generator every field of this module is drawn from.
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// A standard complex Gaussian (variance 1/2 per real part).
pub fn gaussian(rng: &mut impl Rng) -> C64 {
    // Box–Muller.
    let u1: f64 = rng.gen_range(f64::MIN_POSITIVE..1.0);
    let u2: f64 = rng.gen();
    let r = (-u1.ln()).sqrt();
    let phi = 2.0 * std::f64::consts::PI * u2;
    C64::new(r * phi.cos(), r * phi.sin())
}

/// A random SU(3) matrix: Gaussian entries projected onto SU(3).
pub fn su3(rng: &mut impl Rng) -> Su3 {
    let mut m = Su3::zero();
    m.0.iter_mut().flatten().for_each(|z| *z = gaussian(rng));
    m.project_su3()
}

/// An SU(3) matrix within about `eps` of the identity.
pub fn su3_near_identity(rng: &mut impl Rng, eps: f64) -> Su3 {
    let mut m = Su3::identity();
    m.0.iter_mut()
        .flatten()
        .for_each(|z| *z += eps * gaussian(rng));
    m.project_su3()
}

/// A hot gauge field: every link independent and random in SU(3).
pub fn hot_gauge(lattice: &Arc<Lattice>, seed: u64) -> GaugeField {
    try_hot_gauge(lattice, seed).expect("the field fits in memory")
}

/// `hot_gauge`, or `OutOfMemory` when the field does not fit.
pub fn try_hot_gauge(lattice: &Arc<Lattice>, seed: u64) -> crate::error::Result<GaugeField> {
    let mut rng = rng(seed);
    let mut g = GaugeField::try_unit(lattice.clone())?;
    g.links_mut().iter_mut().for_each(|u| *u = su3(&mut rng));
    Ok(g)
}

/// A smooth gauge field: every link within about `eps` of the identity.
pub fn smooth_gauge(lattice: &Arc<Lattice>, eps: f64, seed: u64) -> GaugeField {
    try_smooth_gauge(lattice, eps, seed).expect("the field fits in memory")
}

/// `smooth_gauge`, or `OutOfMemory` when the field does not fit.
pub fn try_smooth_gauge(
    lattice: &Arc<Lattice>,
    eps: f64,
    seed: u64,
) -> crate::error::Result<GaugeField> {
    let mut rng = rng(seed);
    let mut g = GaugeField::try_unit(lattice.clone())?;
    g.links_mut()
        .iter_mut()
        .for_each(|u| *u = su3_near_identity(&mut rng, eps));
    Ok(g)
}

/// A Gaussian spinor field.
pub fn spinor(lattice: &Arc<Lattice>, subset: Subset, seed: u64) -> HostSpinor {
    let mut rng = rng(seed);
    let mut s = HostSpinor::zeros(lattice.clone(), subset);
    s.data_mut()
        .iter_mut()
        .for_each(|z| *z = gaussian(&mut rng));
    s
}
