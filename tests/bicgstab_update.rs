//! `Backend::bicgstab_update` (BiCGstab's fused closing update) on the CPU
//! backend against the same update done on the host in double, in every
//! storage format and with the partial solution x̂ in single beside half or
//! quarter fields (the widened x̂ of the mixed BiCGstab). latsol-gpu-check
//! compares the CUDA kernels, `bicgstab_update_wide` included, with this.

use std::sync::Arc;

use latsol::backend::cpu::{CpuBackend, CpuSpinor};
use latsol::backend::Backend;
use latsol::field::HostSpinor;
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::precision::Precision;
use latsol::random;
use num_complex::Complex64 as C64;

/// (precision of p, s, t, r̂; precision of x̂)
const CASES: [(Precision, Precision); 8] = [
    (Precision::Double, Precision::Double),
    (Precision::Single, Precision::Single),
    (Precision::Half, Precision::Half),
    (Precision::Quarter, Precision::Quarter),
    (Precision::Packed20, Precision::Packed20),
    (Precision::Packed30, Precision::Packed30),
    (Precision::Half, Precision::Single),
    (Precision::Quarter, Precision::Single),
];

/// A device field from `h`, and its values as stored (the exact inputs).
fn stored(cpu: &CpuBackend, h: &HostSpinor, p: Precision) -> (CpuSpinor, HostSpinor) {
    let mut f = cpu.alloc_spinor(h.lattice(), h.subset(), p).unwrap();
    cpu.upload_spinor(&mut f, h).unwrap();
    let mut back = HostSpinor::zeros(h.lattice().clone(), h.subset());
    cpu.download_spinor(&f, &mut back).unwrap();
    (f, back)
}

fn rel(a: &[C64], b: &[C64]) -> f64 {
    let d: f64 = a.iter().zip(b).map(|(x, y)| (x - y).norm_sqr()).sum();
    let n: f64 = b.iter().map(|y| y.norm_sqr()).sum();
    (d / n).sqrt()
}

#[test]
fn fused_update_matches_the_host_in_every_format() {
    let cpu = CpuBackend::new(2).unwrap();
    let lat = Arc::new(Lattice::new([4, 4, 4, 6]).unwrap());
    let subset = Subset::Single(Parity::Even);
    let (alpha, omega) = (C64::new(0.3, -1.1), C64::new(-0.7, 0.45));
    for (lo, xp) in CASES {
        let field = |seed| random::spinor(&lat, subset, seed);
        let (p, hp) = stored(&cpu, &field(1), lo);
        let (mut s, hs) = stored(&cpu, &field(2), lo);
        let (t, ht) = stored(&cpu, &field(3), lo);
        let (r_hat, hr) = stored(&cpu, &field(4), lo);
        let (mut x, hx) = stored(&cpu, &field(5), xp);

        let (dot, norm) = cpu
            .bicgstab_update(alpha, &p, omega, &mut s, &mut x, &t, &r_hat)
            .unwrap();

        let idx = 0..hs.data().len();
        let x_ref: Vec<C64> = idx
            .clone()
            .map(|i| hx.data()[i] + alpha * hp.data()[i] + omega * hs.data()[i])
            .collect();
        let s_ref: Vec<C64> = idx.map(|i| hs.data()[i] - omega * ht.data()[i]).collect();
        let mut got_s = HostSpinor::zeros(lat.clone(), subset);
        let mut got_x = HostSpinor::zeros(lat.clone(), subset);
        cpu.download_spinor(&s, &mut got_s).unwrap();
        cpu.download_spinor(&x, &mut got_x).unwrap();
        // Each stored result is rounded at most twice (x̂ may take its two
        // terms one at a time), component errors bounded by ε times the
        // site's largest component: 8 ε in the norm for random sites.
        let (es, ex) = (rel(got_s.data(), &s_ref), rel(got_x.data(), &x_ref));
        assert!(es <= 8.0 * lo.epsilon(), "{lo:?}/{xp:?}: s off by {es:.2e}");
        assert!(ex <= 8.0 * xp.epsilon(), "{lo:?}/{xp:?}: x̂ off by {ex:.2e}");
        // The sums are those of the new residual, accumulated in double,
        // before or after its rounding to the storage format: they agree with
        // the stored residual's to within that rounding (8 ε, as above).
        let want_dot: C64 = hr
            .data()
            .iter()
            .zip(got_s.data())
            .map(|(r, s)| r.conj() * s)
            .sum();
        let want_norm: f64 = got_s.data().iter().map(|s| s.norm_sqr()).sum();
        let bound = 8.0 * lo.epsilon();
        assert!(
            (dot - want_dot).norm() <= bound * want_norm.sqrt() * hr.norm2().sqrt(),
            "{lo:?}/{xp:?}: r̂† r {dot} against {want_dot}"
        );
        assert!(
            (norm - want_norm).abs() <= 2.0 * bound * want_norm,
            "{lo:?}/{xp:?}: ‖r‖² {norm} against {want_norm}"
        );
    }
}
