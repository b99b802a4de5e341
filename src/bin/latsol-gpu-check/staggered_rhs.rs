//! latsol-gpu-check, one part (`--rhs`, `--staggered-rhs`): the staggered
//! hopping term of several right-hand sides in one launch (issue 37;
//! kernels/staggered_rhs.cu) against the one-field kernel on the GPU, and
//! its throughput.
//!
//! Checks: double, single, half and quarter; long links in 18, 13 and 9
//! reals and the naive term; both parities, with and without xpay; 5 fields
//! (one launch) and 19 (two launches of at most 16): each field's output
//! equal to the one-field kernel's, bit for bit (the same code on the same
//! values), outputs poisoned first; and the even-odd operator's block
//! application (`StaggeredEvenOdd::apply_block`) against one field at a time.
//! Benchmark: at `--dims` (default 32³×64), N fields through one block call
//! against N one-field calls, N = 1, 2, 4, 8, 12, 16: the time per field and
//! the gain.

use std::sync::Arc;

use latsol::backend::cuda::CudaBackend;
use latsol::backend::{Backend, SpinorField};
use latsol::dirac::staggered::StaggeredEvenOdd;
use latsol::dirac::DiracOperator;
use latsol::field::{Fermion, HostSpinor};
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::long_links::LongReconstruct;
use latsol::precision::Precision;
use num_complex::Complex64 as C64;

use crate::common::{e, R};
use crate::report::Report;
use crate::staggered::{links, vector};
use crate::timing::time_ms;

type Spinor = <CudaBackend as Backend>::Spinor;

const FORMATS: [Precision; 6] = Precision::ALL;

/// The improved term with long links in 18, 13 and 9 reals, and the naive one.
const LINKS: [(bool, LongReconstruct); 4] = [
    (true, LongReconstruct::Full18),
    (true, LongReconstruct::Thirteen),
    (true, LongReconstruct::Nine),
    (false, LongReconstruct::Full18),
];

fn up(gpu: &CudaBackend, h: &HostSpinor, p: Precision) -> R<Spinor> {
    let mut s = gpu
        .alloc_field(h.lattice(), h.subset(), p, Fermion::Staggered)
        .map_err(e)?;
    gpu.upload_spinor(&mut s, h).map_err(e)?;
    Ok(s)
}

fn down(gpu: &CudaBackend, s: &Spinor) -> R<HostSpinor> {
    let mut h =
        HostSpinor::try_zeros_of(s.lattice().clone(), s.subset(), Fermion::Staggered).map_err(e)?;
    gpu.download_spinor(s, &mut h).map_err(e)?;
    Ok(h)
}

fn poisoned(gpu: &CudaBackend, lat: &Arc<Lattice>, sub: Subset, p: Precision) -> R<Spinor> {
    let mut h = HostSpinor::try_zeros_of(lat.clone(), sub, Fermion::Staggered).map_err(e)?;
    h.data_mut()
        .iter_mut()
        .for_each(|z| *z = C64::new(f64::NAN, f64::NAN));
    up(gpu, &h, p)
}

/// The largest difference between two fields' numbers, infinite where the
/// first has a NaN (a site the block kernel left unwritten).
fn worst_difference(a: &HostSpinor, b: &HostSpinor) -> f64 {
    a.data()
        .iter()
        .zip(b.data())
        .map(|(u, v)| {
            if u.re.is_nan() || u.im.is_nan() {
                f64::INFINITY
            } else {
                (u - v).norm()
            }
        })
        .fold(0.0, f64::max)
}

fn link_name(improved: bool, lr: LongReconstruct) -> String {
    if improved {
        format!("long {}", lr.reals())
    } else {
        "naive".into()
    }
}

/// The checks of the module doc.
pub fn check(gpu: &CudaBackend, rep: &mut Report) -> R<()> {
    let lat = Arc::new(Lattice::new([6, 4, 8, 10]).map_err(e)?);
    let (fat, long) = links(&lat, 21);
    for prec in FORMATS {
        for (improved, lr) in LINKS {
            let l = improved.then_some(&long);
            let g = gpu.upload_staggered(&fat, l, prec, lr).map_err(e)?;
            let (mut worst, mut count) = (0.0f64, 0);
            for n in [5, 19] {
                for parity in [Parity::Even, Parity::Odd] {
                    let (sp, sq) = (Subset::Single(parity), Subset::Single(parity.other()));
                    let inp = (0..n)
                        .map(|k| up(gpu, &vector(&lat, sq, 100 + k as u64), prec))
                        .collect::<R<Vec<_>>>()?;
                    let xs = (0..n)
                        .map(|k| up(gpu, &vector(&lat, sp, 300 + k as u64), prec))
                        .collect::<R<Vec<_>>>()?;
                    let inp_r: Vec<&Spinor> = inp.iter().collect();
                    let xs_r: Vec<&Spinor> = xs.iter().collect();
                    for xpay in [false, true] {
                        let mut block = (0..n)
                            .map(|_| poisoned(gpu, &lat, sp, prec))
                            .collect::<R<Vec<_>>>()?;
                        let x = xpay.then_some((0.37, &xs_r[..]));
                        gpu.staggered_dslash_block(&mut block, parity, &g, &inp_r, -0.8, x)
                            .map_err(e)?;
                        for k in 0..n {
                            let mut one = poisoned(gpu, &lat, sp, prec)?;
                            let xk = xpay.then(|| (0.37, xs_r[k]));
                            gpu.staggered_dslash(&mut one, parity, &g, inp_r[k], -0.8, xk)
                                .map_err(e)?;
                            let (a, b) = (down(gpu, &block[k])?, down(gpu, &one)?);
                            worst = worst.max(worst_difference(&a, &b));
                            count += 1;
                        }
                    }
                }
            }
            rep.check(
                &format!(
                    "several-field staggered hopping term {prec:?} {} ({count} fields against the \
                     one-field kernel, bit for bit)",
                    link_name(improved, lr)
                ),
                worst,
                0.0,
            );
            println!("{}", rep.lines.last().expect("a line"));
            // The even-odd operator's block application: the same numbers.
            let mass = 0.07;
            let mut op = StaggeredEvenOdd::new(gpu, &g, mass, Parity::Even, prec).map_err(e)?;
            let sub = Subset::Single(Parity::Even);
            let inp = (0..7)
                .map(|k| up(gpu, &vector(&lat, sub, 500 + k as u64), prec))
                .collect::<R<Vec<_>>>()?;
            let inp_r: Vec<&Spinor> = inp.iter().collect();
            let mut block = (0..7)
                .map(|_| poisoned(gpu, &lat, sub, prec))
                .collect::<R<Vec<_>>>()?;
            op.apply_block(&mut block, &inp_r, false).map_err(e)?;
            let mut worst_op = 0.0f64;
            for (k, i) in inp_r.iter().enumerate() {
                let mut one = poisoned(gpu, &lat, sub, prec)?;
                op.apply(&mut one, i, false).map_err(e)?;
                let (a, b) = (down(gpu, &block[k])?, down(gpu, &one)?);
                worst_op = worst_op.max(worst_difference(&a, &b));
            }
            rep.check(
                &format!(
                    "staggered even-odd operator, block of 7 {prec:?} {} (against one at a time, \
                     bit for bit)",
                    link_name(improved, lr)
                ),
                worst_op,
                0.0,
            );
        }
    }
    Ok(())
}

/// The benchmark of the module doc: lines for the report.
pub fn bench(gpu: &CudaBackend, dims: [usize; 4]) -> R<Vec<String>> {
    let lat = Arc::new(Lattice::new(dims).map_err(e)?);
    let (fat, long) = links(&lat, 7);
    let mut lines = Vec::new();
    let (even, odd) = (Subset::Single(Parity::Even), Subset::Single(Parity::Odd));
    let cases = [
        (Precision::Double, LongReconstruct::Full18),
        (Precision::Double, LongReconstruct::Thirteen),
        (Precision::Single, LongReconstruct::Full18),
        (Precision::Single, LongReconstruct::Thirteen),
        (Precision::Single, LongReconstruct::Nine),
        (Precision::Half, LongReconstruct::Full18),
        (Precision::Half, LongReconstruct::Thirteen),
        (Precision::Half, LongReconstruct::Nine),
    ];
    for (prec, lr) in cases {
        let g = gpu
            .upload_staggered(&fat, Some(&long), prec, lr)
            .map_err(e)?;
        let inp = (0..16)
            .map(|k| up(gpu, &vector(&lat, odd, 200 + k), prec))
            .collect::<R<Vec<_>>>()?;
        let mut out = (0..16)
            .map(|_| gpu.alloc_field(&lat, even, prec, Fermion::Staggered))
            .collect::<Result<Vec<_>, _>>()
            .map_err(e)?;
        let inp_r: Vec<&Spinor> = inp.iter().collect();
        let mut one_ms = 0.0;
        for n in [1, 2, 4, 8, 12, 16] {
            let p = Parity::Even;
            let single = time_ms(gpu, 5, |_| {
                for k in 0..n {
                    gpu.staggered_dslash(&mut out[k], p, &g, inp_r[k], 1.0, None)
                        .map_err(e)?;
                }
                Ok(())
            })?;
            let block = time_ms(gpu, 5, |_| {
                gpu.staggered_dslash_block(&mut out[..n], p, &g, &inp_r[..n], 1.0, None)
                    .map_err(e)
            })?;
            if n == 1 {
                one_ms = single;
            }
            lines.push(format!(
                "staggered rhs bench {dims:?} {prec:?} long {}: N = {n:2}: {:.4} ms a field alone, \
                 {:.4} ms a field in the block: {:.2}x the one-field throughput a field",
                lr.reals(),
                single / n as f64,
                block / n as f64,
                one_ms * n as f64 / block
            ));
        }
    }
    Ok(lines)
}
