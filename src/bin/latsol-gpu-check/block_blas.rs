//! latsol-gpu-check, one part (run with `--rhs`): the block solvers' algebra
//! of blocks of fields (kernels/block_blas.cuh) against the same sums done
//! one field pair at a time, and its throughput.
//!
//! Checks, every format: the Gram block `Xᴴ Y` (12 × 12, 3 × 16, and
//! `Xᴴ X` summed by its upper tiles) against one `cdot` a pair; `Y += X A`
//! `Y = X A` and `Y = W + X A` (12 × 12, 16 × 5) against one `caxpy` a term; `X ← X A`
//! in place against `Y = X A` into new fields, bit for bit. The fused
//! kernels (double, single) sum in another order than `cdot` and round a
//! sum of n terms once where n `caxpy` round n times, so their tolerances
//! are those orders' error bounds; the other formats go pair by pair and
//! must agree bit for bit.
//! Benchmark: 12 × 12 blocks at `--dims`: each op one pair or term at a
//! time against the fused kernel, with the fused kernel's bandwidth counted
//! as each field read (and written) once.

use std::sync::Arc;

use latsol::backend::cuda::CudaBackend;
use latsol::backend::Backend;
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::precision::Precision;
use num_complex::Complex64 as C64;

use crate::common::{down, e, random_fields, R};
use crate::report::Report;
use crate::timing::time_ms;

type Spinor = <CudaBackend as Backend>::Spinor;

/// The fields of every check and benchmark: even sites.
const EVEN: Subset = Subset::Single(Parity::Even);

/// Coefficients of modulus ≤ 1, row-major `rows × cols`.
fn coefficients(rows: usize, cols: usize) -> Vec<C64> {
    (0..rows * cols)
        .map(|k| C64::from_polar(1.0 / (1.0 + (k % 7) as f64), 0.37 * k as f64))
        .collect()
}

/// Whether the fused kernels take format `p` (else every op goes pair by
/// pair, and must agree bit for bit).
fn fused(p: Precision) -> bool {
    matches!(p, Precision::Double | Precision::Single)
}

/// `max_j |a_j − b_j| / |b_j|` over two blocks, on the host.
fn block_diff(gpu: &CudaBackend, a: &[Spinor], b: &[Spinor]) -> R<f64> {
    let mut worst: f64 = 0.0;
    for (a, b) in a.iter().zip(b) {
        let (a, b) = (down(gpu, a)?, down(gpu, b)?);
        let (mut d, mut n) = (0.0, 0.0);
        for (u, v) in a.data().iter().zip(b.data()) {
            d += (u - v).norm_sqr();
            n += v.norm_sqr();
        }
        worst = worst.max(if d == 0.0 { 0.0 } else { (d / n).sqrt() });
    }
    Ok(worst)
}

/// The checks of the module doc, on `lat`.
pub fn check(gpu: &CudaBackend, lat: &Arc<Lattice>, rep: &mut Report) -> R<()> {
    let items = lat.volume() / 2 * 12;
    for prec in Precision::ALL {
        let eps = prec.epsilon();
        // Gram blocks. Every order of summation of n products, each exact in
        // double (products of stored values), is within n ε_double Σ|x||y|
        // ≤ n ε_double |x||y| of the exact sum: the bound for the fused sums
        // against `cdot`'s, relative to |x_i||y_j|.
        let gram_tol = if fused(prec) {
            2.0 * items as f64 * f64::EPSILON
        } else {
            0.0
        };
        for (nx, ny, same) in [
            (12, 12, false),
            (3, 16, false),
            (12, 12, true),
            (16, 16, true),
        ] {
            let x = random_fields(gpu, lat, EVEN, nx, 300, prec)?;
            let y = if same {
                Vec::new()
            } else {
                random_fields(gpu, lat, EVEN, ny, 400, prec)?
            };
            let xr: Vec<&Spinor> = x.iter().collect();
            let yr: Vec<&Spinor> = if same { xr.clone() } else { y.iter().collect() };
            let g = gpu.block_cdot(&xr, &yr).map_err(e)?;
            let mut worst: f64 = 0.0;
            for (i, xi) in xr.iter().enumerate() {
                for (j, yj) in yr.iter().enumerate() {
                    let one = gpu.cdot(xi, yj).map_err(e)?;
                    let scale = (gpu.norm2(xi).map_err(e)? * gpu.norm2(yj).map_err(e)?).sqrt();
                    worst = worst.max((g[i * ny + j] - one).norm() / scale);
                }
            }
            let what = if same { "X^H X" } else { "X^H Y" };
            rep.check(
                &format!("block_cdot {prec:?} {what} {nx} x {ny} (against cdot a pair)"),
                worst,
                gram_tol,
            );
            println!("{}", rep.lines.last().expect("a line"));
        }
        // `Y += X A`, `Y = X A`: n terms rounded once to the format, or
        // once a term: apart by at most 2 n ε_p of Σ_i |a_ij| |x_i| ≤ √n |y|-ish
        // for these coefficients; 2 n^1.5 ε_p relative to |y_j|.
        for (nx, ny) in [(12, 12), (16, 5)] {
            let axpy_tol = if fused(prec) {
                2.0 * (nx as f64).powf(1.5) * eps
            } else {
                0.0
            };
            let x = random_fields(gpu, lat, EVEN, nx, 500, prec)?;
            let xr: Vec<&Spinor> = x.iter().collect();
            let a = coefficients(nx, ny);
            let w = random_fields(gpu, lat, EVEN, ny, 650, prec)?;
            let wr: Vec<&Spinor> = w.iter().collect();
            for form in ["Y += X A", "Y = X A", "Y = W + X A"] {
                let mut fused_y = random_fields(gpu, lat, EVEN, ny, 600, prec)?;
                let mut terms = random_fields(gpu, lat, EVEN, ny, 600, prec)?;
                match form {
                    "Y = X A" => {
                        gpu.block_combine(&a, &xr, None, &mut fused_y).map_err(e)?;
                        terms.iter_mut().try_for_each(|t| gpu.zero(t)).map_err(e)?;
                    }
                    "Y = W + X A" => {
                        gpu.block_combine(&a, &xr, Some(&wr), &mut fused_y)
                            .map_err(e)?;
                        for (t, w) in terms.iter_mut().zip(&wr) {
                            gpu.copy(t, w).map_err(e)?;
                        }
                    }
                    _ => gpu.block_caxpy(&a, &xr, &mut fused_y).map_err(e)?,
                }
                for (j, t) in terms.iter_mut().enumerate() {
                    for (i, xi) in xr.iter().enumerate() {
                        gpu.caxpy(a[i * ny + j], xi, t).map_err(e)?;
                    }
                }
                rep.check(
                    &format!("block {form} {prec:?} {nx} x {ny} (against caxpy a term)"),
                    block_diff(gpu, &fused_y, &terms)?,
                    axpy_tol,
                );
                println!("{}", rep.lines.last().expect("a line"));
            }
        }
        // `X ← X A` in place: the kernel of `Y = X A`, so bit for bit.
        for n in [12, 14] {
            let mut x = random_fields(gpu, lat, EVEN, n, 700, prec)?;
            let a = coefficients(n, n);
            let mut want = random_fields(gpu, lat, EVEN, n, 800, prec)?;
            gpu.block_combine(&a, &x.iter().collect::<Vec<_>>(), None, &mut want)
                .map_err(e)?;
            gpu.block_transform(&a, &mut x).map_err(e)?;
            rep.check(
                &format!("block X <- X A {prec:?} {n} x {n} (in place, against Y = X A)"),
                block_diff(gpu, &x, &want)?,
                0.0,
            );
            println!("{}", rep.lines.last().expect("a line"));
        }
    }
    Ok(())
}

/// The benchmark of the module doc: lines for the report.
pub fn bench(gpu: &CudaBackend, dims: [usize; 4]) -> R<Vec<String>> {
    use latsol::backend::SpinorField;
    let lat = Arc::new(Lattice::new(dims).map_err(e)?);
    let mut lines = Vec::new();
    let n = 12;
    for prec in [Precision::Double, Precision::Single, Precision::Half] {
        let x = random_fields(gpu, &lat, EVEN, n, 900, prec)?;
        let mut y = random_fields(gpu, &lat, EVEN, n, 950, prec)?;
        let xr: Vec<&Spinor> = x.iter().collect();
        let yr: Vec<&Spinor> = y.iter().collect();
        let field_gb = x[0].sites() as f64 * 24.0 * prec.bytes_per_real() as f64 / 1e9;
        let gbs = |fields: usize, ms: f64| fields as f64 * field_gb / (ms * 1e-3);
        let pairs = time_ms(gpu, 2, |_| {
            for a in &xr {
                for b in &yr {
                    gpu.cdot(a, b).map_err(e)?;
                }
            }
            Ok(())
        })?;
        let gram = time_ms(gpu, 5, |_| gpu.block_cdot(&xr, &yr).map(|_| ()).map_err(e))?;
        let herm = time_ms(gpu, 5, |_| gpu.block_cdot(&xr, &xr).map(|_| ()).map_err(e))?;
        lines.push(format!(
            "block bench {dims:?} {prec:?} Gram 12 x 12: by 144 cdot {pairs:.3} ms, fused {gram:.3} ms ({:.0} GB/s counting 24 fields), X^H X {herm:.3} ms ({:.0} GB/s counting 12)",
            gbs(2 * n, gram),
            gbs(n, herm)
        ));
        let a = coefficients(n, n);
        let terms = time_ms(gpu, 2, |_| {
            for (j, yj) in y.iter_mut().enumerate() {
                for (i, xi) in xr.iter().enumerate() {
                    gpu.caxpy(a[i * n + j], xi, yj).map_err(e)?;
                }
            }
            Ok(())
        })?;
        let axpy = time_ms(gpu, 5, |_| gpu.block_caxpy(&a, &xr, &mut y).map_err(e))?;
        let mut z = random_fields(gpu, &lat, EVEN, n, 990, prec)?;
        // A unitary-ish change of basis keeps the values bounded over reps.
        let scale = 1.0 / n as f64;
        let u: Vec<C64> = a.iter().map(|c| c * scale).collect();
        let transform = time_ms(gpu, 5, |_| gpu.block_transform(&u, &mut z).map_err(e))?;
        lines.push(format!(
            "block bench {dims:?} {prec:?} Y += X A 12 x 12: by 144 caxpy {terms:.3} ms, fused {axpy:.3} ms ({:.0} GB/s counting 36 fields); X <- X A {transform:.3} ms ({:.0} GB/s counting 24)",
            gbs(3 * n, axpy),
            gbs(2 * n, transform)
        ));
    }
    Ok(lines)
}
