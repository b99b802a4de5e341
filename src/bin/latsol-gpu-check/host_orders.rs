//! latsol-gpu-check, one part: the device's conversions of a caller's
//! spinor arrays in every host order, gamma basis, subset and precision
//! (`Backend::import_spinor` / `export_spinor`) against the host path, bit
//! for bit, and the refusals the host path makes.

use std::sync::Arc;

use latsol::backend::cpu::CpuBackend;
use latsol::backend::Backend;
use latsol::field::HostSpinor;
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::precision::Precision;
use num_complex::Complex64 as C64;

use crate::common::{e, up, R};
use crate::report::Report;

/// The device conversions of a caller's spinor arrays
/// (`Backend::import_spinor` / `export_spinor`) against the host path
/// (the CPU backend, the trait's defaults), bit for bit: every host
/// order, gamma basis, subset, host precision and field precision, the
/// device field and the host output poisoned (NaN) first; then a NaN in
/// the input and a result beyond single range, refused with the host
/// path's message and the output untouched.
pub fn check_host_orders<T: Backend>(
    cpu: &CpuBackend,
    gpu: &T,
    lat: &Arc<Lattice>,
    rep: &mut Report,
) -> R<()> {
    use latsol::layout::{DiracOrder, GammaBasis, HostReals, HostRealsMut};
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        // splitmix64 → a real in [-1, 1)
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    };
    // 0 when every number has the same bits, else the largest
    // difference (∞ for a NaN or a zero of the other sign).
    let exact = |a: &[f64], b: &[f64]| -> f64 {
        a.iter()
            .zip(b)
            .filter(|(x, y)| x.to_bits() != y.to_bits())
            .map(|(x, y)| {
                let d = (x - y).abs();
                if d.is_nan() || d == 0.0 {
                    f64::INFINITY
                } else {
                    d
                }
            })
            .fold(0.0, f64::max)
    };
    let orders = [DiracOrder::Dirac, DiracOrder::Qdp, DiracOrder::CpsWilson];
    let bases = [
        GammaBasis::DegrandRossi,
        GammaBasis::Ukqcd,
        GammaBasis::Chiral,
    ];
    let subsets = [
        Subset::Full,
        Subset::Single(Parity::Even),
        Subset::Single(Parity::Odd),
    ];
    let mut count = 0;
    for order in orders {
        for basis in bases {
            for subset in subsets {
                let n = lat.sites(subset) * 24;
                // Small numbers, so that the normalising scale is not 1.
                let h64: Vec<f64> = (0..n).map(|_| next() * 2f64.powi(-40)).collect();
                let h32: Vec<f32> = h64.iter().map(|&x| x as f32).collect();
                for prec in [Precision::Double, Precision::Single] {
                    for host_double in [true, false] {
                        let host = || {
                            if host_double {
                                HostReals::F64(&h64)
                            } else {
                                HostReals::F32(&h32)
                            }
                        };
                        let tag = format!(
                            "{order:?} {basis:?} {subset:?} host {} field {prec:?}",
                            if host_double { "f64" } else { "f32" }
                        );
                        let mut fc = cpu.alloc_spinor(lat, subset, prec).map_err(e)?;
                        let ec = cpu
                            .import_spinor(&mut fc, host(), order, basis, None)
                            .map_err(e)?;
                        let mut poison = HostSpinor::zeros(lat.clone(), subset);
                        poison
                            .data_mut()
                            .iter_mut()
                            .for_each(|z| *z = C64::new(f64::NAN, f64::NAN));
                        let mut fg = up(gpu, &poison, prec)?;
                        let eg = gpu
                            .import_spinor(&mut fg, host(), order, basis, None)
                            .map_err(e)?;
                        rep.flag(&format!("import exponent {tag}"), ec == eg && ec != 0);
                        let (mut hc, mut hg) = (
                            HostSpinor::zeros(lat.clone(), subset),
                            HostSpinor::zeros(lat.clone(), subset),
                        );
                        cpu.download_spinor(&fc, &mut hc).map_err(e)?;
                        gpu.download_spinor(&fg, &mut hg).map_err(e)?;
                        let flat = |h: &HostSpinor| -> Vec<f64> {
                            h.data().iter().flat_map(|z| [z.re, z.im]).collect()
                        };
                        rep.check(&format!("import {tag}"), exact(&flat(&hg), &flat(&hc)), 0.0);
                        // Out again, into poisoned arrays of both host precisions.
                        let mut oc = vec![f64::NAN; n];
                        let mut og = vec![f64::NAN; n];
                        cpu.export_spinor(&fc, HostRealsMut::F64(&mut oc), order, basis, -ec)
                            .map_err(e)?;
                        gpu.export_spinor(&fg, HostRealsMut::F64(&mut og), order, basis, -eg)
                            .map_err(e)?;
                        rep.check(&format!("export f64 {tag}"), exact(&og, &oc), 0.0);
                        let mut oc = vec![f32::NAN; n];
                        let mut og = vec![f32::NAN; n];
                        cpu.export_spinor(&fc, HostRealsMut::F32(&mut oc), order, basis, -ec)
                            .map_err(e)?;
                        gpu.export_spinor(&fg, HostRealsMut::F32(&mut og), order, basis, -eg)
                            .map_err(e)?;
                        let wide = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
                        rep.check(
                            &format!("export f32 {tag}"),
                            exact(&wide(&og), &wide(&oc)),
                            0.0,
                        );
                        count += 1;
                    }
                }
            }
        }
    }
    // A NaN in the input: both refuse, naming the same site.
    let mut bad = vec![0.25f64; lat.volume() * 24];
    bad[24 * 37 + 5] = f64::NAN;
    let mut fc = cpu
        .alloc_spinor(lat, Subset::Full, Precision::Double)
        .map_err(e)?;
    let mut fg = gpu
        .alloc_spinor(lat, Subset::Full, Precision::Double)
        .map_err(e)?;
    let (o, b) = (DiracOrder::CpsWilson, GammaBasis::DegrandRossi);
    let rc = cpu.import_spinor(&mut fc, HostReals::F64(&bad), o, b, None);
    let rg = gpu.import_spinor(&mut fg, HostReals::F64(&bad), o, b, None);
    let same = match (&rc, &rg) {
        (Err(x), Err(y)) => x.to_string() == y.to_string(),
        _ => false,
    };
    rep.flag(
        "import of a NaN refused, the site named as on the host",
        same,
    );
    // Beyond single range: both refuse and leave the output as it was.
    let big: Vec<f64> = (0..lat.volume() * 24)
        .map(|i| 1e38 * (1.0 + i as f64 % 3.0))
        .collect();
    cpu.import_spinor(&mut fc, HostReals::F64(&big), o, b, Some(0))
        .map_err(e)?;
    gpu.import_spinor(&mut fg, HostReals::F64(&big), o, b, Some(0))
        .map_err(e)?;
    let mut oc = vec![7.0f32; big.len()];
    let mut og = vec![7.0f32; big.len()];
    let rc = cpu.export_spinor(&fc, HostRealsMut::F32(&mut oc), o, b, 0);
    let rg = gpu.export_spinor(&fg, HostRealsMut::F32(&mut og), o, b, 0);
    let same = match (&rc, &rg) {
        (Err(x), Err(y)) => x.to_string() == y.to_string(),
        _ => false,
    };
    rep.flag(
        "export beyond single range refused as on the host, output untouched",
        same && og.iter().all(|&x| x == 7.0),
    );
    rep.say(format!(
        "host-order conversions: {count} combinations checked bit for bit"
    ));
    Ok(())
}
