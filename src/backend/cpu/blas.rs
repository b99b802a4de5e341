//! Vector algebra of the CPU backend. Every operation runs over fixed chunks
//! of the field on the context's thread pool; reductions sum per-chunk
//! partials in chunk order, so the result does not depend on the number of
//! threads (bit-for-bit reproducible).

use num_complex::Complex64 as C64;
use rayon::prelude::*;

use super::storage::Real;

/// Reals per parallel chunk: 512 sites of 24 reals.
pub const CHUNK: usize = 512 * 24;

#[inline(always)]
fn c<R: Real>(v: &[R], i: usize) -> C64 {
    C64::new(v[i].to_f64(), v[i + 1].to_f64())
}

#[inline(always)]
fn put<R: Real>(v: &mut [R], i: usize, z: C64) {
    v[i] = R::from_f64(z.re);
    v[i + 1] = R::from_f64(z.im);
}

/// Sums the per-chunk partials in order.
fn ordered_sum<T: Copy + std::iter::Sum<T>>(parts: Vec<T>) -> T {
    parts.into_iter().sum()
}

pub fn convert<A: Real, B: Real>(dst: &mut [B], src: &[A]) {
    dst.par_chunks_mut(CHUNK)
        .zip(src.par_chunks(CHUNK))
        .for_each(|(d, s)| {
            d.iter_mut()
                .zip(s)
                .for_each(|(d, s)| *d = B::from_f64(s.to_f64()))
        });
}

pub fn fill_zero<R: Real>(x: &mut [R]) {
    x.par_chunks_mut(CHUNK)
        .for_each(|c| c.iter_mut().for_each(|v| *v = R::default()));
}

/// `x = a x`.
pub fn scale<R: Real>(a: f64, x: &mut [R]) {
    x.par_chunks_mut(CHUNK)
        .for_each(|c| c.iter_mut().for_each(|v| *v = R::from_f64(a * v.to_f64())));
}

/// `y = f(x, y)` element by element on reals.
pub fn map_real<R: Real>(x: &[R], y: &mut [R], f: impl Fn(f64, f64) -> f64 + Sync) {
    y.par_chunks_mut(CHUNK)
        .zip(x.par_chunks(CHUNK))
        .for_each(|(yc, xc)| {
            for (yv, xv) in yc.iter_mut().zip(xc) {
                *yv = R::from_f64(f(xv.to_f64(), yv.to_f64()));
            }
        });
}

/// `y = a x + y` then `‖y‖²`.
pub fn axpy_norm2<R: Real>(a: f64, x: &[R], y: &mut [R]) -> f64 {
    let parts: Vec<f64> = y
        .par_chunks_mut(CHUNK)
        .zip(x.par_chunks(CHUNK))
        .map(|(yc, xc)| {
            let mut s = 0.0;
            for (yv, xv) in yc.iter_mut().zip(xc) {
                let v = R::from_f64(a * xv.to_f64() + yv.to_f64());
                *yv = v;
                s += v.to_f64() * v.to_f64();
            }
            s
        })
        .collect();
    ordered_sum(parts)
}

/// `y = x − y` then `‖y‖²`.
pub fn xmy_norm2<R: Real>(x: &[R], y: &mut [R]) -> f64 {
    let parts: Vec<f64> = y
        .par_chunks_mut(CHUNK)
        .zip(x.par_chunks(CHUNK))
        .map(|(yc, xc)| {
            let mut s = 0.0;
            for (yv, xv) in yc.iter_mut().zip(xc) {
                let v = R::from_f64(xv.to_f64() - yv.to_f64());
                *yv = v;
                s += v.to_f64() * v.to_f64();
            }
            s
        })
        .collect();
    ordered_sum(parts)
}

/// `y = a x + y` (complex `a`), optionally returning `‖y‖²`.
pub fn caxpy_norm2<R: Real>(a: C64, x: &[R], y: &mut [R]) -> f64 {
    let parts: Vec<f64> = y
        .par_chunks_mut(CHUNK)
        .zip(x.par_chunks(CHUNK))
        .map(|(yc, xc)| {
            let mut s = 0.0;
            for i in (0..yc.len()).step_by(2) {
                let v = a * c(xc, i) + c(yc, i);
                put(yc, i, v);
                s += yc[i].to_f64().powi(2) + yc[i + 1].to_f64().powi(2);
            }
            s
        })
        .collect();
    ordered_sum(parts)
}

/// `z = x + a y + b z`.
pub fn cxpaypbz<R: Real>(x: &[R], a: C64, y: &[R], b: C64, z: &mut [R]) {
    z.par_chunks_mut(CHUNK)
        .zip(x.par_chunks(CHUNK).zip(y.par_chunks(CHUNK)))
        .for_each(|(zc, (xc, yc))| {
            for i in (0..zc.len()).step_by(2) {
                let v = c(xc, i) + a * c(yc, i) + b * c(zc, i);
                put(zc, i, v);
            }
        });
}

pub fn norm2<R: Real>(x: &[R]) -> f64 {
    let parts: Vec<f64> = x
        .par_chunks(CHUNK)
        .map(|xc| xc.iter().map(|v| v.to_f64() * v.to_f64()).sum::<f64>())
        .collect();
    ordered_sum(parts)
}

/// `(x† y, ‖x‖²)`.
pub fn cdot_norm2<R: Real>(x: &[R], y: &[R]) -> (C64, f64) {
    let parts: Vec<(C64, f64)> = x
        .par_chunks(CHUNK)
        .zip(y.par_chunks(CHUNK))
        .map(|(xc, yc)| {
            let (mut d, mut n) = (C64::new(0.0, 0.0), 0.0);
            for i in (0..xc.len()).step_by(2) {
                let xv = c(xc, i);
                d += xv.conj() * c(yc, i);
                n += xv.norm_sqr();
            }
            (d, n)
        })
        .collect();
    parts
        .into_iter()
        .fold((C64::new(0.0, 0.0), 0.0), |a, b| (a.0 + b.0, a.1 + b.1))
}

/// `out = γ5 in` in the UKQCD basis: `(u, l) → (−l, −u)` per site.
pub fn gamma5<R: Real>(out: &mut [R], inp: &[R]) {
    out.par_chunks_mut(CHUNK)
        .zip(inp.par_chunks(CHUNK))
        .for_each(|(oc, ic)| {
            for (o, i) in oc.chunks_exact_mut(24).zip(ic.chunks_exact(24)) {
                for k in 0..12 {
                    o[k] = R::from_f64(-i[k + 12].to_f64());
                    o[k + 12] = R::from_f64(-i[k].to_f64());
                }
            }
        });
}
