//! kernels/clover_compute.cu run on the host without a GPU
//! (kernels/host/clover.cpp, one call of the kernel per site through
//! kernels/host/shim.h) and compared with the host path it replaces: the
//! field of `clover::compute`, its inverse (`ldl`), their stored numbers
//! (`chiral::storage_site`) in each format (`CloverData`), for every host
//! order and host precision. The two compute the same sums in the same
//! order; the bounds allow for a different rounding all the same (the
//! device contracts products into fused multiply-adds).

use std::process::Command;

use super::clover_compute::site_constants;
use super::emulation::build_emulation;
use crate::clover::storage::{CloverData, CloverFormat};
use crate::clover::{chiral, compute, CloverField, PACKED_REALS};
use crate::field::GaugeField;
use crate::lattice::Lattice;
use crate::layout::{self, GaugeOrder, HostGauge, HostReals, HostRealsMut};

/// A stored form: `CloverOut::kind` and its vector width.
#[derive(Clone, Copy)]
struct Form {
    kind: i32,
    vec: i32,
}

const DOUBLE: Form = Form { kind: 0, vec: 2 };
const SINGLE: Form = Form { kind: 1, vec: 4 };
const HALF: Form = Form { kind: 2, vec: 4 };
const QUARTER: Form = Form { kind: 3, vec: 4 };

impl Form {
    fn bytes(self) -> usize {
        [8, 4, 2, 1][self.kind as usize]
    }
    fn fixed_max(self) -> f64 {
        if self.kind == 2 {
            32767.0
        } else {
            127.0
        }
    }
    fn format(self) -> CloverFormat {
        [
            CloverFormat::Double,
            CloverFormat::Single,
            CloverFormat::Half,
            CloverFormat::Quarter,
        ][self.kind as usize]
    }
    /// Element `i` of a stored array as a number (before the norm).
    fn element(self, bytes: &[u8], i: usize) -> f64 {
        let b = &bytes[i * self.bytes()..(i + 1) * self.bytes()];
        match self.kind {
            0 => f64::from_le_bytes(b.try_into().unwrap()),
            1 => f32::from_le_bytes(b.try_into().unwrap()) as f64,
            2 => i16::from_le_bytes(b.try_into().unwrap()) as f64,
            _ => b[0] as i8 as f64,
        }
    }
}

/// What the emulated kernel stored, decoded: the first refused site, and
/// per form the numbers of A and A⁻¹ by site (72 a site).
struct Emulated {
    bad: u64,
    forms: Vec<[Vec<[f64; PACKED_REALS]>; 2]>,
}

/// The links of `field` in `order` (single precision if `single`), as the
/// caller's array(s) would lie in memory one after another.
fn host_bytes(field: &GaugeField, order: GaugeOrder, single: bool) -> Vec<u8> {
    let v = field.lattice().volume();
    let arrays = if order == GaugeOrder::Qdp { 4 } else { 1 };
    let len = 4 * v * 18 / arrays;
    let mut d = vec![vec![0.0f64; len]; arrays];
    let mut s = vec![vec![0.0f32; len]; arrays];
    if single {
        let mut out: Vec<_> = s.iter_mut().map(|a| HostRealsMut::F32(a)).collect();
        layout::gauge::export(field, order, &mut out).unwrap();
        s.iter().flatten().flat_map(|x| x.to_le_bytes()).collect()
    } else {
        let mut out: Vec<_> = d.iter_mut().map(|a| HostRealsMut::F64(a)).collect();
        layout::gauge::export(field, order, &mut out).unwrap();
        d.iter().flatten().flat_map(|x| x.to_le_bytes()).collect()
    }
}

fn emulate(
    exe: &std::path::Path,
    field: &GaugeField,
    order: GaugeOrder,
    single: bool,
    c: f64,
    forms: &[Form],
) -> Emulated {
    let lat = field.lattice();
    let v = lat.volume();
    let mut input = Vec::new();
    let order_code = match order {
        GaugeOrder::Qdp => 0,
        GaugeOrder::Milc => 1,
        GaugeOrder::CpsWilson => 2,
    };
    let head = lat.dims().map(|x| x as i32);
    for x in head
        .into_iter()
        .chain([order_code, i32::from(single), forms.len() as i32])
        .chain(forms.iter().flat_map(|f| [f.kind, f.vec]))
    {
        input.extend(x.to_le_bytes());
    }
    let (coef, w, w_inv) = site_constants(c);
    for x in coef
        .iter()
        .flatten()
        .flatten()
        .chain(w.iter().flatten())
        .chain(w_inv.iter().flatten())
    {
        input.extend(x.to_le_bytes());
    }
    input.extend(host_bytes(field, order, single));
    let dir = std::env::temp_dir();
    let tag = format!("{}-{order_code}-{single}", std::process::id());
    let (inp, outp) = (
        dir.join(format!("latsol-clover-in-{tag}")),
        dir.join(format!("latsol-clover-out-{tag}")),
    );
    std::fs::write(&inp, &input).unwrap();
    let run = Command::new(exe).arg(&inp).arg(&outp).output().unwrap();
    assert!(run.status.success(), "the clover emulation failed: {run:?}");
    let out = std::fs::read(&outp).unwrap();
    let _ = (std::fs::remove_file(&inp), std::fs::remove_file(&outp));
    let bad = u64::from_le_bytes(out[..8].try_into().unwrap());
    let mut at = 8;
    let mut take = |n: usize| {
        let s = out[at..at + n].to_vec();
        at += n;
        s
    };
    let decoded = forms
        .iter()
        .map(|&f| {
            let vals = [take(72 * v * f.bytes()), take(72 * v * f.bytes())];
            let norms = (f.kind >= 2).then(|| [take(8 * v), take(8 * v)]);
            std::array::from_fn(|k| {
                (0..v)
                    .map(|i| {
                        std::array::from_fn(|n| {
                            // Real n of site i at ((n / vec) stride + i) vec + n % vec.
                            let vec = f.vec as usize;
                            let x = f.element(&vals[k], ((n / vec) * v + i) * vec + n % vec);
                            match &norms {
                                None => x,
                                Some(nm) => {
                                    let j = 4 * (2 * i + n / 36);
                                    let norm =
                                        f32::from_le_bytes(nm[k][j..j + 4].try_into().unwrap());
                                    x * (norm as f64 / f.fixed_max())
                                }
                            }
                        })
                    })
                    .collect()
            })
        })
        .collect();
    Emulated {
        bad,
        forms: decoded,
    }
}

/// The largest |x| of each chiral block of a stored site.
fn block_max(s: &[f64; PACKED_REALS]) -> [f64; 2] {
    std::array::from_fn(|k| {
        s[36 * k..36 * (k + 1)]
            .iter()
            .fold(0.0f64, |m, x| m.max(x.abs()))
    })
}

/// Compares the emulated forms with the host path's numbers; the largest
/// deviation in units of its bound.
#[allow(clippy::needless_range_loop)] // sites of three parallel arrays
fn compare(emulated: &Emulated, forms: &[Form], field: &CloverField, inverse: &CloverField) -> f64 {
    let eps = f64::EPSILON;
    let mut worst = 0.0f64;
    for (f, got) in forms.iter().zip(&emulated.forms) {
        let data = [
            CloverData::new(field, f.format()).unwrap(),
            CloverData::new(inverse, f.format()).unwrap(),
        ];
        for i in 0..field.sites().len() {
            let exact = [
                chiral::storage_site(&field.sites()[i]),
                chiral::storage_site(&inverse.sites()[i]),
            ];
            let (ma, mi) = (block_max(&exact[0]), block_max(&exact[1]));
            for k in 0..2 {
                let expected = data[k].site(i);
                let m = [ma, mi][k];
                for n in 0..PACKED_REALS {
                    let b = n / 36;
                    // The double numbers: 64 roundings of the block's
                    // largest entry for A; for A⁻¹ times the block's
                    // condition (estimated 24 max|S| max|S⁻¹| for the
                    // stored halves S).
                    let double = if k == 0 {
                        64.0 * eps * m[b]
                    } else {
                        64.0 * eps * 24.0 * ma[b] * mi[b] * m[b]
                    };
                    // Plus one step of the stored format on each side.
                    let step = match f.kind {
                        0 => 0.0,
                        1 => 2.0 * f32::EPSILON as f64 * exact[k][n].abs(),
                        _ => 2.0 * m[b] / f.fixed_max() * (1.0 + 1e-6),
                    };
                    let bound = double + step;
                    let dev = (got[k][i][n] - expected[n]).abs();
                    assert!(
                        dev <= bound,
                        "form {} {} site {i} real {n}: {} against {} (bound {bound:.3e})",
                        f.kind,
                        ["A", "A⁻¹"][k],
                        got[k][i][n],
                        expected[n]
                    );
                    worst = worst.max(dev / bound.max(f64::MIN_POSITIVE));
                }
            }
        }
    }
    worst
}

#[test]
fn the_device_clover_is_the_host_paths() {
    let Some(exe) = build_emulation("clover") else {
        return;
    };
    let lat = std::sync::Arc::new(Lattice::new([4, 4, 2, 6]).unwrap());
    let gauge = crate::random::hot_gauge(&lat, 5);
    let c = 0.12 * 1.6;
    for (order, single, forms) in [
        (GaugeOrder::Milc, false, [DOUBLE, HALF]),
        (GaugeOrder::Qdp, true, [SINGLE, QUARTER]),
        (GaugeOrder::CpsWilson, false, [HALF, DOUBLE]),
    ] {
        // The host path computes from the caller's numbers as imported.
        let bytes = host_bytes(&gauge, order, single);
        let reals: Vec<f64> = if single {
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes(b.try_into().unwrap()) as f64)
                .collect()
        } else {
            bytes
                .chunks_exact(8)
                .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
                .collect()
        };
        let quarter = reals.len() / 4;
        let host = match order {
            GaugeOrder::Qdp => HostGauge::Qdp(std::array::from_fn(|mu| {
                HostReals::F64(&reals[mu * quarter..(mu + 1) * quarter])
            })),
            GaugeOrder::Milc => HostGauge::Milc(HostReals::F64(&reals)),
            GaugeOrder::CpsWilson => HostGauge::CpsWilson(HostReals::F64(&reals)),
        };
        let links = layout::gauge::import(&lat, &host).unwrap();
        let field = compute::compute(&links, c).unwrap();
        let inverse = field.inverse().unwrap();
        let got = emulate(&exe, &gauge, order, single, c, &forms);
        assert_eq!(got.bad, u64::MAX, "{order:?}: no block is refused");
        let worst = compare(&got, &forms, &field, &inverse);
        eprintln!("{order:?} single {single}: worst deviation {worst:.3} of its bound");
    }
    // A coefficient that overflows blocks: the first site the host's LDL†
    // refuses is the one the kernel reports.
    let huge = f64::MAX;
    let field = compute::compute(&gauge, huge).unwrap();
    let host_first = field
        .sites()
        .iter()
        .position(|s| s.iter().any(|b| crate::clover::ldl::invert(b).is_err()))
        .expect("the host refuses a block");
    let got = emulate(&exe, &gauge, GaugeOrder::Milc, false, huge, &[DOUBLE]);
    assert_eq!(got.bad, host_first as u64, "the first refused site");
    let _ = std::fs::remove_file(&exe);
}
