//! latsol-gpu-check, one part: the device's gauge import
//! (`Backend::import_gauge`, kernels/host_gauge.cu) against the host path
//! (`layout::gauge::import`, the host's checks and plaquette, then
//! `upload_gauge` from the canonical field), for every host order and host
//! precision and every stored format. New link buffers are zeroed and no
//! stored real of a hot field is zero, so a link the kernel fails to write
//! shows as a difference.

use std::cell::Cell;
use std::sync::Arc;

use latsol::backend::cuda::{CudaBackend, CudaGauge};
use latsol::backend::{Backend, GaugeForm, GaugeScan, PhaseFold};
use latsol::dirac::staggered::fold_phases_whole;
use latsol::field::GaugeField;
use latsol::lattice::{Lattice, Parity};
use latsol::layout::{self, GaugeOrder, HostGauge, HostReals, HostRealsMut};
use latsol::long_links::LongReconstruct;
use latsol::precision::{Precision, Reconstruct, TBoundary};

use crate::common::{e, R};
use crate::host_links::{each_host_form, host_arrays, host_gauge, reals_of, to_single};
use crate::report::Check;

/// Every stored format: each precision with each reconstruct.
fn formats() -> Vec<(Precision, Reconstruct)> {
    Precision::ALL
        .iter()
        .flat_map(|&p| {
            [Reconstruct::Full18, Reconstruct::Twelve, Reconstruct::Eight].map(move |r| (p, r))
        })
        .collect()
}

/// The stored reals of `g` as f64 in units of their own resolution: an
/// ulp of 1 for floating point, one integer step for fixed point.
fn stored_units(gpu: &CudaBackend, g: &CudaGauge, p: Precision) -> R<(Vec<f64>, f64)> {
    let (bytes, scale) = g.stored_bytes(gpu).map_err(e)?;
    let v: Vec<f64> = match p {
        Precision::Double => bytemuck::cast_slice::<u8, f64>(&bytes)
            .iter()
            .map(|&x| x / f64::EPSILON)
            .collect(),
        Precision::Single => bytemuck::cast_slice::<u8, f32>(&bytes)
            .iter()
            .map(|&x| x as f64 / f32::EPSILON as f64)
            .collect(),
        Precision::Half | Precision::Packed20 => bytemuck::cast_slice::<u8, i16>(&bytes)
            .iter()
            .map(|&x| x as f64)
            .collect(),
        Precision::Quarter => bytes.iter().map(|&x| x as i8 as f64).collect(),
        Precision::Packed30 => bytemuck::cast_slice::<u8, i32>(&bytes)
            .iter()
            .map(|&x| x as f64)
            .collect(),
    };
    Ok((v, scale))
}

/// The largest deviation from 1 of a T link off the last time slice, as
/// `api::gauge`'s temporal-gauge check measures it.
fn temporal_deviation(field: &GaugeField) -> f64 {
    let lat = field.lattice();
    let mut dev: f64 = 0.0;
    for p in [Parity::Even, Parity::Odd] {
        for cb in 0..lat.half_volume() {
            if lat.coords(p, cb)[3] == lat.dims()[3] - 1 {
                continue;
            }
            let u = field.link(p, cb, 3);
            for i in 0..3 {
                for j in 0..3 {
                    let one = if i == j { 1.0 } else { 0.0 };
                    dev = dev.max((u.0[i][j] - one).norm());
                }
            }
        }
    }
    dev
}

/// Every real of the T links of the last time slice negated (the
/// anti-periodic sign put in, or taken out).
fn negate_last_t_links(field: &mut GaugeField) {
    let lat = field.lattice().clone();
    for p in [Parity::Even, Parity::Odd] {
        for cb in 0..lat.half_volume() {
            if lat.coords(p, cb)[3] == lat.dims()[3] - 1 {
                for z in field.link_mut(p, cb, 3).0.iter_mut().flatten() {
                    *z = -*z;
                }
            }
        }
    }
}

/// Every check of the device's gauge import on `gauge`.
pub fn run(gpu: &CudaBackend, lat: &Arc<Lattice>, gauge: &GaugeField) -> R<Vec<Check>> {
    let mut out = Vec::new();
    let formats = formats();
    let t = TBoundary::AntiPeriodic;
    let plain = GaugeForm {
        t_boundary: t,
        temporal: false,
        sign_in_links: false,
    };
    each_host_form(gauge, |form, host| {
        let host = *host;
        let name = format!("gauge import {form}");
        // The host path's field, checks and plaquette.
        let field = layout::gauge::import(lat, &host).map_err(e)?;
        let (su3, _) = field.max_su3_deviation();
        let plaq = field.plaquette();
        let (scan, stored) = gpu
            .import_gauge(lat, &host, plain, &formats, &|_| true)
            .map_err(e)?
            .ok_or_else(|| format!("{name}: the device path declined a valid field"))?;
        let plaq_err = (0..3)
            .map(|k| (scan.plaquette[k] - plaq[k]).abs() / plaq[k].abs().max(1e-3))
            .fold(0.0, f64::max);
        out.push(Check {
            what: format!("{name}: plaquette"),
            err: plaq_err,
            tol: 1e-13,
        });
        let dev_err = (scan.max_su3_deviation - su3)
            .abs()
            .max((scan.max_temporal_deviation - temporal_deviation(&field)).abs())
            .max(scan.non_finite as f64);
        out.push(Check {
            what: format!("{name}: SU(3), temporal deviations"),
            err: dev_err,
            tol: 1e-14,
        });
        // Each format as the host path stores it.
        let (mut differing, mut r8_units) = (0usize, 0.0f64);
        for (&(p, r), g) in formats.iter().zip(&stored) {
            let want = gpu.upload_gauge(&field, t, p, r).map_err(e)?;
            let (a, sa) = stored_units(gpu, g, p)?;
            let (b, sb) = stored_units(gpu, &want, p)?;
            if a.len() != b.len() || sa != sb {
                differing += a.len().max(1);
                continue;
            }
            for (x, y) in a.iter().zip(&b) {
                if r == Reconstruct::Eight {
                    // The phases: the device's atan2 against the host's.
                    r8_units = r8_units.max((x - y).abs());
                } else if x.to_bits() != y.to_bits() {
                    differing += 1;
                }
            }
        }
        out.push(Check {
            what: format!("{name}: r18/r12 stored reals differing, 12 formats"),
            err: differing as f64,
            tol: 0.0,
        });
        out.push(Check {
            what: format!("{name}: r8, largest difference (ulp of 1 / fixed unit)"),
            err: r8_units,
            tol: 2.0,
        });
        Ok(())
    })?;

    // Links carrying the anti-periodic sign on the last time slice (QUDA's
    // convention): the sign taken out as they are read, so the scan and the
    // stored links are those of the field without it, bit for bit.
    let mut signed = gauge.clone();
    negate_last_t_links(&mut signed);
    let with_sign = GaugeForm {
        sign_in_links: true,
        ..plain
    };
    let (su3, _) = gauge.max_su3_deviation();
    for order in [GaugeOrder::Qdp, GaugeOrder::CpsWilson] {
        let doubles = host_arrays(&signed, order)?;
        let singles = to_single(&doubles);
        for single in [false, true] {
            let arrays = reals_of(single, &doubles, &singles);
            let host = host_gauge(order, &arrays);
            let name = format!(
                "gauge import, sign in the links, {order:?} {}",
                if single { "f32" } else { "f64" }
            );
            let r12 = [
                (Precision::Double, Reconstruct::Twelve),
                (Precision::Single, Reconstruct::Full18),
            ];
            let (scan, stored) = gpu
                .import_gauge(lat, &host, with_sign, &r12, &|_| true)
                .map_err(e)?
                .ok_or_else(|| format!("{name}: the device path declined the links"))?;
            // The caller's field (its precision), the sign taken out below.
            let given = layout::gauge::import(lat, &host).map_err(e)?;
            let mut differing = 0usize;
            for (&(p, r), g) in r12.iter().zip(&stored) {
                let mut want_field = given.clone();
                negate_last_t_links(&mut want_field);
                let want = gpu.upload_gauge(&want_field, t, p, r).map_err(e)?;
                let (a, _) = stored_units(gpu, g, p)?;
                let (b, _) = stored_units(gpu, &want, p)?;
                differing += a.len().abs_diff(b.len());
                differing += a
                    .iter()
                    .zip(&b)
                    .filter(|(x, y)| x.to_bits() != y.to_bits())
                    .count();
            }
            let su3_err = if single { 1e-6 } else { 1e-14 };
            out.push(Check {
                what: format!("{name}: stored reals differing (double r12, single r18)"),
                err: differing as f64,
                tol: 0.0,
            });
            out.push(Check {
                what: format!("{name}: SU(3) deviation as without the sign"),
                err: (scan.max_su3_deviation - su3).abs(),
                tol: su3_err,
            });
        }
    }

    // Staggered links (fat and long, 18 reals, as given) against
    // `upload_staggered` from the host path's fields: bit for bit.
    let long_field = latsol::random::hot_gauge(lat, 11);
    let precisions = [
        Precision::Double,
        Precision::Single,
        Precision::Half,
        Precision::Quarter,
    ];
    // The same with the phases folded in as they are read (links given
    // without them): against `fold_phases` on the host path's fields.
    let folds = [
        None,
        Some(PhaseFold {
            t_boundary: TBoundary::AntiPeriodic,
            long_coefficient: -1.0 / 24.0,
        }),
    ];
    // And with the long links compressed to 13 or 9 reals (`long_links`):
    // the fat links bit for bit, the compressed long links within a few
    // units of the format (the device's atan2 and sincos against the host's).
    for (order, fold) in [GaugeOrder::Qdp, GaugeOrder::Milc]
        .into_iter()
        .flat_map(|o| folds.map(|f| (o, f)))
    {
        let fat64 = host_arrays(gauge, order)?;
        let long64 = host_arrays(&long_field, order)?;
        let (fat32, long32) = (to_single(&fat64), to_single(&long64));
        for single in [false, true] {
            let (fa, la) = (
                reals_of(single, &fat64, &fat32),
                reals_of(single, &long64, &long32),
            );
            let (fat, long) = (host_gauge(order, &fa), host_gauge(order, &la));
            let mut fat_links = layout::gauge::import(lat, &fat).map_err(e)?;
            let mut long_links = layout::gauge::import(lat, &long).map_err(e)?;
            if let Some(f) = fold {
                fold_phases_whole(&mut fat_links, 1, f.t_boundary, 1.0);
                fold_phases_whole(&mut long_links, 3, f.t_boundary, f.long_coefficient);
            }
            for r in [
                LongReconstruct::Full18,
                LongReconstruct::Thirteen,
                LongReconstruct::Nine,
            ] {
                let name = format!(
                    "staggered import {order:?} {}{}, long {r:?}",
                    if single { "f32" } else { "f64" },
                    if fold.is_some() {
                        ", phases folded"
                    } else {
                        ""
                    }
                );
                // Single-precision links are U(3) only to single precision:
                // compressed into double they are refused, on either path,
                // and their 9-real round trip strays beyond single's bound
                // (3.5e-6 on the host path for this field): refused too.
                if single && r == LongReconstruct::Nine {
                    let declined = gpu
                        .import_staggered(lat, &fat, Some(&long), fold, &[(Precision::Single, r)])
                        .map_err(e)?;
                    out.push(Check {
                        what: format!("{name}: declined, as the host path refuses it"),
                        err: f64::from(u8::from(declined.is_some())),
                        tol: 0.0,
                    });
                    continue;
                }
                let formats: Vec<_> = precisions
                    .iter()
                    .filter(|&&p| {
                        !(single && p == Precision::Double && r != LongReconstruct::Full18)
                    })
                    .map(|&p| (p, r))
                    .collect();
                let stored = gpu
                    .import_staggered(lat, &fat, Some(&long), fold, &formats)
                    .map_err(e)?
                    .ok_or_else(|| format!("{name}: the device path declined valid links"))?;
                let (mut differing, mut units) = (0usize, 0.0f64);
                for (links, &(p, _)) in stored.iter().zip(&formats) {
                    let want = gpu
                        .upload_staggered(&fat_links, Some(&long_links), p, r)
                        .map_err(e)?;
                    let (a, b) = (
                        links.stored_bytes(gpu).map_err(e)?,
                        want.stored_bytes(gpu).map_err(e)?,
                    );
                    differing += a.len().abs_diff(b.len());
                    for (k, ((x, sx), (y, sy))) in a.iter().zip(&b).enumerate() {
                        differing += usize::from(x.len() != y.len());
                        if k == 0 || r == LongReconstruct::Full18 {
                            differing += usize::from(sx != sy);
                            differing += x.iter().zip(y).filter(|(u, v)| u != v).count();
                        }
                    }
                    // Compressed: the links rebuilt from either storage
                    // against the links given, relative to |s|, in units of
                    // the stored format's resolution: the device's as
                    // faithful as the host path's (at most twice its largest
                    // error, plus two units). The stored numbers themselves
                    // may differ: the phase arg det W may fall on either side
                    // of ±π (folded signs make det W = −1), which changes
                    // the 9-real form (V = e^{−iφ/3} W) but not the link,
                    // and with it how the format's rounding propagates.
                    if r != LongReconstruct::Full18 {
                        let (a, b) = (
                            links.decompressed_long(gpu).map_err(e)?,
                            want.decompressed_long(gpu).map_err(e)?,
                        );
                        let (Some(a), Some(b)) = (a, b) else {
                            differing += 1;
                            continue;
                        };
                        let scale = latsol::long_links::scale_of(long_links.links());
                        let unit = match p {
                            Precision::Double => f64::EPSILON,
                            Precision::Single => f32::EPSILON as f64,
                            Precision::Half => 1.0 / 32767.0,
                            _ => 1.0 / 127.0,
                        };
                        let error = |rebuilt: &[latsol::su3::Su3]| {
                            rebuilt
                                .iter()
                                .zip(long_links.links())
                                .flat_map(|(u, v)| {
                                    u.0.iter()
                                        .flatten()
                                        .zip(v.0.iter().flatten())
                                        .map(|(x, y)| (x - y).norm())
                                        .collect::<Vec<_>>()
                                })
                                .fold(0.0f64, f64::max)
                                / scale
                                / unit
                        };
                        let (device, host) = (error(&a), error(&b));
                        // In units of the allowance: ≤ 1 passes.
                        units = units.max(device / (2.0 * host + 2.0));
                    }
                }
                out.push(Check {
                    what: format!("{name}: stored bytes differing (fat; long of 18)"),
                    err: differing as f64,
                    tol: 0.0,
                });
                if r != LongReconstruct::Full18 {
                    out.push(Check {
                        what: format!(
                            "{name}: rebuilt long links' error over twice the host path's + 2 units"
                        ),
                        err: units,
                        tol: 1.0,
                    });
                }
            }
        }
    }

    // Long links that are not |s| × U(3) do not compress: declined (the
    // host path names the link).
    {
        let mut bent = long_field.clone();
        bent.links_mut()[7].0[1][2] += num_complex::Complex64::new(0.01, 0.0);
        let fat64 = host_arrays(gauge, GaugeOrder::Milc)?;
        let long64 = host_arrays(&bent, GaugeOrder::Milc)?;
        let declined = gpu
            .import_staggered(
                lat,
                &HostGauge::Milc(HostReals::F64(&fat64[0])),
                Some(&HostGauge::Milc(HostReals::F64(&long64[0]))),
                None,
                &[(Precision::Double, LongReconstruct::Thirteen)],
            )
            .map_err(e)?;
        out.push(Check {
            what: "staggered import: long links off U(3) declined for 13 reals".into(),
            err: f64::from(u8::from(declined.is_some())),
            tol: 0.0,
        });
    }

    // Refusals: a NaN anywhere, and the caller's verdict on the scan.
    let mut milc = host_arrays(gauge, GaugeOrder::Milc)?.remove(0);
    let seen = Cell::new(None::<GaugeScan>);
    let declined = gpu
        .import_gauge(
            lat,
            &HostGauge::Milc(HostReals::F64(&milc)),
            plain,
            &formats[..1],
            &|s| {
                seen.set(Some(*s));
                false
            },
        )
        .map_err(e)?
        .is_none();
    out.push(Check {
        what: "gauge import: a scan the caller refuses stores nothing".into(),
        err: if declined && seen.get().is_some() {
            0.0
        } else {
            1.0
        },
        tol: 0.0,
    });
    let k = milc.len() / 2 + 7;
    milc[k] = f64::NAN;
    let declined = gpu
        .import_gauge(
            lat,
            &HostGauge::Milc(HostReals::F64(&milc)),
            plain,
            &formats[..1],
            &|_| true,
        )
        .map_err(e)?
        .is_none();
    out.push(Check {
        what: "gauge import: a NaN link is left to the host path".into(),
        err: if declined { 0.0 } else { 1.0 },
        tol: 0.0,
    });
    Ok(out)
}

/// Staggered colour vectors through `import_spinor` / `export_spinor`: the
/// device's conversion (kernels/host_spinor.cu, `import_colour`) against
/// the CPU backend's host path, bit for bit, for full and single-parity
/// fields, double and single fields, f64 and f32 arrays.
pub fn colour_vectors(
    cpu: &latsol::backend::cpu::CpuBackend,
    gpu: &CudaBackend,
    lat: &Arc<Lattice>,
) -> R<Vec<Check>> {
    use latsol::field::{Fermion, HostSpinor};
    use latsol::lattice::Subset;
    use latsol::layout::{DiracOrder, GammaBasis};
    let (o, g) = (DiracOrder::Dirac, GammaBasis::Ukqcd);
    let mut differing = 0usize;
    for subset in [Subset::Full, Subset::Single(Parity::Odd)] {
        let n = lat.sites(subset) * 6;
        let values: Vec<f64> = (0..n)
            .map(|k| ((k * 7919 % 1000) as f64 - 500.0) * 1e-3 + 1e-7 * k as f64)
            .collect();
        let singles: Vec<f32> = values.iter().map(|&x| x as f32).collect();
        for precision in [Precision::Double, Precision::Single] {
            for single in [false, true] {
                let host = if single {
                    HostReals::F32(&singles)
                } else {
                    HostReals::F64(&values)
                };
                let mut fc = cpu
                    .alloc_field(lat, subset, precision, Fermion::Staggered)
                    .map_err(e)?;
                let mut fg = gpu
                    .alloc_field(lat, subset, precision, Fermion::Staggered)
                    .map_err(e)?;
                let ec = cpu.import_spinor(&mut fc, host, o, g, None).map_err(e)?;
                let eg = gpu.import_spinor(&mut fg, host, o, g, None).map_err(e)?;
                differing += usize::from(ec != eg);
                let mut hc =
                    HostSpinor::try_zeros_of(lat.clone(), subset, Fermion::Staggered).map_err(e)?;
                let mut hg = hc.clone();
                cpu.download_spinor(&fc, &mut hc).map_err(e)?;
                gpu.download_spinor(&fg, &mut hg).map_err(e)?;
                differing += hc
                    .data()
                    .iter()
                    .zip(hg.data())
                    .filter(|(a, b)| {
                        a.re.to_bits() != b.re.to_bits() || a.im.to_bits() != b.im.to_bits()
                    })
                    .count();
                // Back out, from the same (GPU-imported) numbers on both.
                let mut f2 = cpu
                    .alloc_field(lat, subset, precision, Fermion::Staggered)
                    .map_err(e)?;
                cpu.upload_spinor(&mut f2, &hg).map_err(e)?;
                let (mut oc, mut og) = (vec![f64::NAN; n], vec![f64::NAN; n]);
                cpu.export_spinor(&f2, HostRealsMut::F64(&mut oc), o, g, -ec)
                    .map_err(e)?;
                gpu.export_spinor(&fg, HostRealsMut::F64(&mut og), o, g, -eg)
                    .map_err(e)?;
                differing += oc
                    .iter()
                    .zip(&og)
                    .filter(|(a, b)| a.to_bits() != b.to_bits())
                    .count();
                let (mut oc, mut og) = (vec![f32::NAN; n], vec![f32::NAN; n]);
                cpu.export_spinor(&f2, HostRealsMut::F32(&mut oc), o, g, -ec)
                    .map_err(e)?;
                gpu.export_spinor(&fg, HostRealsMut::F32(&mut og), o, g, -eg)
                    .map_err(e)?;
                differing += oc
                    .iter()
                    .zip(&og)
                    .filter(|(a, b)| a.to_bits() != b.to_bits())
                    .count();
            }
        }
    }
    // A NaN is refused by both, naming the same site.
    let mut bad = vec![0.5f64; lat.volume() * 6];
    bad[6 * 17 + 4] = f64::NAN;
    let mut fc = cpu
        .alloc_field(lat, Subset::Full, Precision::Double, Fermion::Staggered)
        .map_err(e)?;
    let mut fg = gpu
        .alloc_field(lat, Subset::Full, Precision::Double, Fermion::Staggered)
        .map_err(e)?;
    let rc = cpu
        .import_spinor(&mut fc, HostReals::F64(&bad), o, g, None)
        .err()
        .map(|x| x.to_string());
    let rg = gpu
        .import_spinor(&mut fg, HostReals::F64(&bad), o, g, None)
        .err()
        .map(|x| x.to_string());
    let same_error = rc.is_some() && rc == rg;
    Ok(vec![
        Check {
            what: "colour vectors in and out, 16 combinations: numbers differing".into(),
            err: differing as f64,
            tol: 0.0,
        },
        Check {
            what: "colour vectors: a NaN refused with the host's message".into(),
            err: if same_error { 0.0 } else { 1.0 },
            tol: 0.0,
        },
    ])
}
