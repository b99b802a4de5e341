//! latsol-gpu-check, shared helpers: the formats, their error bounds, the
//! relative-error comparisons, poisoned (NaN) fields, uploads and downloads,
//! and the CPU/GPU field pairs the checks compare through. Imports only
//! `report` of the binary's modules.

use std::sync::Arc;

use latsol::backend::cpu::CpuBackend;
use latsol::backend::{Backend, SpinorField};
use latsol::field::HostSpinor;
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::precision::{Precision, Reconstruct};
use num_complex::Complex64 as C64;

use crate::report::Report;

pub type R<T> = Result<T, String>;

pub const ALL_PRECISIONS: [Precision; 6] = Precision::ALL;
pub const ALL_RECONSTRUCTS: [Reconstruct; 3] =
    [Reconstruct::Full18, Reconstruct::Twelve, Reconstruct::Eight];

pub fn e<T: std::fmt::Display>(x: T) -> String {
    x.to_string()
}

/// Relative error allowed between the backends: a few roundings of the
/// storage format. Fixed point (half, quarter) and the packed formats
/// round once per stored number on both sides, so the GPU (single
/// arithmetic for half, quarter and 20-bit; double in another order for
/// 30-bit) and the CPU (double) differ by at most one unit of a site's
/// scale (2 ε of its largest number for packed) in a few numbers. The
/// links are the same integers on both backends (`upload_gauge` rounds
/// by the CPU's rule), so `link_epsilon` does not enter.
pub fn tolerance(p: Precision) -> f64 {
    if is_per_site(p) {
        8.0 * p.epsilon()
    } else {
        64.0 * p.epsilon()
    }
}

/// Formats with a per-site norm or exponent.
pub fn is_per_site(p: Precision) -> bool {
    matches!(
        p,
        Precision::Half | Precision::Quarter | Precision::Packed20 | Precision::Packed30
    )
}

pub fn is_packed(p: Precision) -> bool {
    matches!(p, Precision::Packed20 | Precision::Packed30)
}

/// ‖a − b‖ / ‖b‖ over all numbers (NaN anywhere gives NaN).
pub fn rel(a: &[C64], b: &[C64]) -> f64 {
    let (mut d, mut n) = (0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        d += (x - y).norm_sqr();
        n += y.norm_sqr();
    }
    (d / n.max(f64::MIN_POSITIVE)).sqrt()
}

pub fn rel_scalar(a: C64, b: C64) -> f64 {
    (a - b).norm() / b.norm().max(f64::MIN_POSITIVE)
}

pub fn nan_field(lat: &Arc<Lattice>, subset: Subset) -> HostSpinor {
    let mut h = HostSpinor::zeros(lat.clone(), subset);
    h.data_mut()
        .iter_mut()
        .for_each(|z| *z = C64::new(f64::NAN, f64::NAN));
    h
}

pub fn down<B: Backend>(b: &B, s: &B::Spinor) -> R<HostSpinor> {
    let mut h = HostSpinor::zeros(s.lattice().clone(), s.subset());
    b.download_spinor(s, &mut h).map_err(e)?;
    Ok(h)
}

pub fn up<B: Backend>(b: &B, h: &HostSpinor, p: Precision) -> R<B::Spinor> {
    let mut s = b.alloc_spinor(h.lattice(), h.subset(), p).map_err(e)?;
    b.upload_spinor(&mut s, h).map_err(e)?;
    Ok(s)
}

/// The same fields on the reference (CPU) and the tested backend.
pub struct Pair<'a, T: Backend> {
    pub cpu: &'a CpuBackend,
    pub gpu: &'a T,
    pub prec: Precision,
}

impl<T: Backend> Pair<'_, T> {
    pub fn up(&self, h: &HostSpinor) -> R<(<CpuBackend as Backend>::Spinor, T::Spinor)> {
        Ok((up(self.cpu, h, self.prec)?, up(self.gpu, h, self.prec)?))
    }
    pub fn compare(
        &self,
        rep: &mut Report,
        what: &str,
        c: &<CpuBackend as Backend>::Spinor,
        g: &T::Spinor,
    ) -> R<()> {
        let (hc, hg) = (down(self.cpu, c)?, down(self.gpu, g)?);
        rep.check(what, rel(hg.data(), hc.data()), tolerance(self.prec));
        Ok(())
    }
}

/// Compares a GPU hopping-term output with the CPU's on `parity`; for a
/// full output also checks that the other parity kept its poisoned
/// `before` bits.
#[allow(clippy::too_many_arguments)]
pub fn compare_parity(
    rep: &mut Report,
    what: &str,
    prec: Precision,
    parity: Parity,
    full: bool,
    before: &HostSpinor,
    hc: &HostSpinor,
    hg: &HostSpinor,
) {
    if full {
        let q = parity.other();
        let bits = |z: &C64| (z.re.to_bits(), z.im.to_bits());
        let untouched = hg
            .parity_part(q)
            .data()
            .iter()
            .zip(before.parity_part(q).data())
            .all(|(a, b)| bits(a) == bits(b));
        rep.flag(&format!("{what}: other parity untouched"), untouched);
        let (wc, wg) = (hc.parity_part(parity), hg.parity_part(parity));
        rep.check(what, rel(wg.data(), wc.data()), tolerance(prec));
    } else {
        rep.check(what, rel(hg.data(), hc.data()), tolerance(prec));
    }
}

/// `n` random spinor fields of `subset` stored in `p` (seeds `seed`, `seed + 1`, …).
pub fn random_fields<B: Backend>(
    b: &B,
    lat: &Arc<Lattice>,
    subset: Subset,
    n: usize,
    seed: u64,
    p: Precision,
) -> R<Vec<B::Spinor>> {
    (0..n)
        .map(|k| up(b, &latsol::random::spinor(lat, subset, seed + k as u64), p))
        .collect()
}
