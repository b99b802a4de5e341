//! CPU storage of spinor fields in every precision of the library, behind
//! one per-site accessor (QUDA's accessor idea): the BLAS and the dslash ask
//! for "the 24 reals of site i" and never see the format.
//!
//! Sites are parity-split (a full field: even half, then odd), site-major,
//! the 24 reals of a site together (`[spin][color][re, im]`). The GPU uses
//! structure-of-arrays within a parity for coalescing; on the CPU the site's
//! numbers together keep each neighbour gather to one or two cache lines.
//!
//! Formats (docs/conventions.md, "Precision formats"; seed clark2010 §4.6,
//! clark2022 §2): double, single; half and quarter: 16- and 8-bit signed
//! fixed point scaled per site by the site's largest absolute component,
//! stored beside them as an f32 norm. Packed 20- and 30-bit (clark2022 §4,
//! Appendix A): the 24 components as signed B-bit integers sharing one
//! power-of-two scale per site, whose 8-bit biased exponent ends the site's
//! bit string (`packed`).

use rayon::prelude::*;

use super::packed;
use crate::precision::Precision;

/// Reals per site of a Wilson spinor.
pub const SITE: usize = 24;

/// A fixed-point integer type of the half and quarter formats.
pub trait Fixed: Copy + Send + Sync + Default + 'static {
    /// The largest magnitude stored: 2^(bits−1) − 1.
    const MAX: f64;
    fn to_f64(self) -> f64;
    fn from_scaled(v: f64) -> Self;
}

impl Fixed for i16 {
    const MAX: f64 = 32767.0;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn from_scaled(v: f64) -> Self {
        v.round().clamp(-<Self as Fixed>::MAX, <Self as Fixed>::MAX) as i16
    }
}

impl Fixed for i32 {
    const MAX: f64 = 2147483647.0;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn from_scaled(v: f64) -> Self {
        v.round().clamp(-<Self as Fixed>::MAX, <Self as Fixed>::MAX) as i32
    }
}

impl Fixed for i8 {
    const MAX: f64 = 127.0;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn from_scaled(v: f64) -> Self {
        v.round().clamp(-<Self as Fixed>::MAX, <Self as Fixed>::MAX) as i8
    }
}

/// The numbers of a spinor field in one of the library's formats.
#[derive(Debug, Clone)]
pub enum Data {
    F64(Vec<f64>),
    F32(Vec<f32>),
    Half {
        v: Vec<i16>,
        norm: Vec<f32>,
    },
    Quarter {
        v: Vec<i8>,
        norm: Vec<f32>,
    },
    /// `packed::words(bits)` 32-bit words per site.
    Packed {
        bits: u32,
        w: Vec<u32>,
    },
}

impl Data {
    pub fn zeros(precision: Precision, sites: usize) -> Data {
        let n = sites * SITE;
        match precision {
            Precision::Double => Data::F64(vec![0.0; n]),
            Precision::Single => Data::F32(vec![0.0; n]),
            Precision::Half => Data::Half {
                v: vec![0; n],
                norm: vec![0.0; sites],
            },
            Precision::Quarter => Data::Quarter {
                v: vec![0; n],
                norm: vec![0.0; sites],
            },
            Precision::Packed20 | Precision::Packed30 => {
                let bits = packed::bits(precision);
                Data::Packed {
                    bits,
                    w: vec![0; sites * packed::words(bits)],
                }
            }
        }
    }

    /// `zeros`, or `OutOfMemory` when the field does not fit.
    pub fn try_zeros(precision: Precision, sites: usize) -> crate::error::Result<Data> {
        use crate::alloc::filled;
        let n = sites * SITE;
        let what = &format!("a {precision:?} spinor field of {sites} sites");
        Ok(match precision {
            Precision::Double => Data::F64(filled(n, 0.0, what)?),
            Precision::Single => Data::F32(filled(n, 0.0, what)?),
            Precision::Half => Data::Half {
                v: filled(n, 0, what)?,
                norm: filled(sites, 0.0, what)?,
            },
            Precision::Quarter => Data::Quarter {
                v: filled(n, 0, what)?,
                norm: filled(sites, 0.0, what)?,
            },
            Precision::Packed20 | Precision::Packed30 => {
                let bits = packed::bits(precision);
                Data::Packed {
                    bits,
                    w: filled(sites * packed::words(bits), 0, what)?,
                }
            }
        })
    }

    pub fn precision(&self) -> Precision {
        match self {
            Data::F64(_) => Precision::Double,
            Data::F32(_) => Precision::Single,
            Data::Half { .. } => Precision::Half,
            Data::Quarter { .. } => Precision::Quarter,
            Data::Packed { bits, .. } => packed::precision(*bits),
        }
    }

    /// Copies `sites` sites from `src` (from site `from`) into `self` (from
    /// site `to`), both in the same format.
    pub fn copy_sites(&mut self, to: usize, src: &Data, from: usize, sites: usize) -> bool {
        fn part<T: Copy>(d: &mut [T], s: &[T], to: usize, from: usize, n: usize, per: usize) {
            d[to * per..(to + n) * per].copy_from_slice(&s[from * per..(from + n) * per]);
        }
        match (self, src) {
            (Data::F64(d), Data::F64(s)) => part(d, s, to, from, sites, SITE),
            (Data::F32(d), Data::F32(s)) => part(d, s, to, from, sites, SITE),
            (Data::Half { v, norm }, Data::Half { v: sv, norm: sn }) => {
                part(v, sv, to, from, sites, SITE);
                part(norm, sn, to, from, sites, 1);
            }
            (Data::Quarter { v, norm }, Data::Quarter { v: sv, norm: sn }) => {
                part(v, sv, to, from, sites, SITE);
                part(norm, sn, to, from, sites, 1);
            }
            (Data::Packed { bits, w }, Data::Packed { bits: sb, w: sw }) if bits == sb => {
                part(w, sw, to, from, sites, packed::words(*bits));
            }
            _ => return false,
        }
        true
    }

    pub fn sites(&self) -> usize {
        match self {
            Data::F64(v) => v.len() / SITE,
            Data::F32(v) => v.len() / SITE,
            Data::Half { norm, .. } => norm.len(),
            Data::Quarter { norm, .. } => norm.len(),
            Data::Packed { bits, w } => w.len() / packed::words(*bits),
        }
    }

    /// Read access to sites `start..start + count`.
    pub fn view(&self, start: usize, count: usize) -> Sites<'_> {
        let (a, b) = (start * SITE, (start + count) * SITE);
        match self {
            Data::F64(v) => Sites::F64(&v[a..b]),
            Data::F32(v) => Sites::F32(&v[a..b]),
            Data::Half { v, norm } => Sites::Half(&v[a..b], &norm[start..start + count]),
            Data::Quarter { v, norm } => Sites::Quarter(&v[a..b], &norm[start..start + count]),
            Data::Packed { bits, w } => {
                let n = packed::words(*bits);
                Sites::Packed(*bits, &w[start * n..(start + count) * n])
            }
        }
    }

    /// Write access to sites `start..start + count`.
    pub fn view_mut(&mut self, start: usize, count: usize) -> SitesMut<'_> {
        let (a, b) = (start * SITE, (start + count) * SITE);
        match self {
            Data::F64(v) => SitesMut::F64(&mut v[a..b]),
            Data::F32(v) => SitesMut::F32(&mut v[a..b]),
            Data::Half { v, norm } => SitesMut::Half(&mut v[a..b], &mut norm[start..start + count]),
            Data::Quarter { v, norm } => {
                SitesMut::Quarter(&mut v[a..b], &mut norm[start..start + count])
            }
            Data::Packed { bits, w } => {
                let n = packed::words(*bits);
                SitesMut::Packed(*bits, &mut w[start * n..(start + count) * n])
            }
        }
    }
}

/// Read access to a run of sites of any format.
#[derive(Clone, Copy)]
pub enum Sites<'a> {
    F64(&'a [f64]),
    F32(&'a [f32]),
    Half(&'a [i16], &'a [f32]),
    Quarter(&'a [i8], &'a [f32]),
    Packed(u32, &'a [u32]),
}

/// Write access to a run of sites of any format.
pub enum SitesMut<'a> {
    F64(&'a mut [f64]),
    F32(&'a mut [f32]),
    Half(&'a mut [i16], &'a mut [f32]),
    Quarter(&'a mut [i8], &'a mut [f32]),
    Packed(u32, &'a mut [u32]),
}

#[inline(always)]
fn load_fixed<T: Fixed>(v: &[T], norm: f32, i: usize) -> [f64; SITE] {
    let s = norm as f64 / T::MAX;
    let mut out = [0.0; SITE];
    for (o, x) in out.iter_mut().zip(&v[i * SITE..(i + 1) * SITE]) {
        *o = x.to_f64() * s;
    }
    out
}

#[inline(always)]
fn store_fixed<T: Fixed>(v: &mut [T], norm: &mut f32, i: usize, x: &[f64; SITE]) {
    let max = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    // The stored norm is an f32: scale by the value actually stored, and
    // round it up so no component exceeds the fixed-point range.
    let mut n = max as f32;
    if (n as f64) < max {
        n = f32::from_bits(n.to_bits() + 1);
    }
    *norm = n;
    let s = if n > 0.0 { T::MAX / n as f64 } else { 0.0 };
    for (o, x) in v[i * SITE..(i + 1) * SITE].iter_mut().zip(x) {
        *o = T::from_scaled(x * s);
    }
}

impl Sites<'_> {
    /// The 24 reals of site `i` (relative to the view).
    #[inline(always)]
    pub fn load(&self, i: usize) -> [f64; SITE] {
        match self {
            Sites::F64(v) => {
                let s: &[f64; SITE] = v[i * SITE..(i + 1) * SITE].try_into().unwrap();
                *s
            }
            Sites::F32(v) => {
                let s: &[f32; SITE] = v[i * SITE..(i + 1) * SITE].try_into().unwrap();
                s.map(|x| x as f64)
            }
            Sites::Half(v, n) => load_fixed(v, n[i], i),
            Sites::Quarter(v, n) => load_fixed(v, n[i], i),
            Sites::Packed(bits, w) => packed::load(*bits, w, i),
        }
    }

    pub fn sites(&self) -> usize {
        match self {
            Sites::F64(v) => v.len() / SITE,
            Sites::F32(v) => v.len() / SITE,
            Sites::Half(_, n) | Sites::Quarter(_, n) => n.len(),
            Sites::Packed(bits, w) => w.len() / packed::words(*bits),
        }
    }
}

impl SitesMut<'_> {
    /// Runs `f(chunk, view)` on every chunk of `n` sites, in parallel.
    pub fn par_chunks(self, n: usize, f: impl Fn(usize, SitesMut) + Sync + Send) {
        match self {
            SitesMut::F64(v) => v
                .par_chunks_mut(n * SITE)
                .enumerate()
                .for_each(|(c, s)| f(c, SitesMut::F64(s))),
            SitesMut::F32(v) => v
                .par_chunks_mut(n * SITE)
                .enumerate()
                .for_each(|(c, s)| f(c, SitesMut::F32(s))),
            SitesMut::Half(v, norm) => v
                .par_chunks_mut(n * SITE)
                .zip(norm.par_chunks_mut(n))
                .enumerate()
                .for_each(|(c, (s, m))| f(c, SitesMut::Half(s, m))),
            SitesMut::Quarter(v, norm) => v
                .par_chunks_mut(n * SITE)
                .zip(norm.par_chunks_mut(n))
                .enumerate()
                .for_each(|(c, (s, m))| f(c, SitesMut::Quarter(s, m))),
            SitesMut::Packed(bits, w) => w
                .par_chunks_mut(n * packed::words(bits))
                .enumerate()
                .for_each(|(c, s)| f(c, SitesMut::Packed(bits, s))),
        }
    }

    /// As `par_chunks`, with one result per chunk written to `partials`.
    pub fn par_chunks_reduce<const N: usize>(
        self,
        n: usize,
        partials: &mut [f64],
        f: impl Fn(usize, SitesMut) -> [f64; N] + Sync + Send,
    ) {
        let parts = partials.par_chunks_mut(N);
        match self {
            SitesMut::F64(v) => v
                .par_chunks_mut(n * SITE)
                .zip(parts)
                .enumerate()
                .for_each(|(c, (s, p))| p.copy_from_slice(&f(c, SitesMut::F64(s)))),
            SitesMut::F32(v) => v
                .par_chunks_mut(n * SITE)
                .zip(parts)
                .enumerate()
                .for_each(|(c, (s, p))| p.copy_from_slice(&f(c, SitesMut::F32(s)))),
            SitesMut::Half(v, norm) => v
                .par_chunks_mut(n * SITE)
                .zip(norm.par_chunks_mut(n))
                .zip(parts)
                .enumerate()
                .for_each(|(c, ((s, m), p))| p.copy_from_slice(&f(c, SitesMut::Half(s, m)))),
            SitesMut::Quarter(v, norm) => v
                .par_chunks_mut(n * SITE)
                .zip(norm.par_chunks_mut(n))
                .zip(parts)
                .enumerate()
                .for_each(|(c, ((s, m), p))| p.copy_from_slice(&f(c, SitesMut::Quarter(s, m)))),
            SitesMut::Packed(bits, w) => w
                .par_chunks_mut(n * packed::words(bits))
                .zip(parts)
                .enumerate()
                .for_each(|(c, (s, p))| p.copy_from_slice(&f(c, SitesMut::Packed(bits, s)))),
        }
    }

    #[inline(always)]
    pub fn load(&self, i: usize) -> [f64; SITE] {
        match self {
            SitesMut::F64(v) => Sites::F64(v).load(i),
            SitesMut::F32(v) => Sites::F32(v).load(i),
            SitesMut::Half(v, n) => load_fixed(v, n[i], i),
            SitesMut::Quarter(v, n) => load_fixed(v, n[i], i),
            SitesMut::Packed(bits, w) => packed::load(*bits, w, i),
        }
    }

    /// Stores the 24 reals of site `i`, rounding to the format.
    #[inline(always)]
    pub fn store(&mut self, i: usize, x: &[f64; SITE]) {
        match self {
            SitesMut::F64(v) => v[i * SITE..(i + 1) * SITE].copy_from_slice(x),
            SitesMut::F32(v) => {
                for (o, x) in v[i * SITE..(i + 1) * SITE].iter_mut().zip(x) {
                    *o = *x as f32;
                }
            }
            SitesMut::Half(v, n) => store_fixed(v, &mut n[i], i, x),
            SitesMut::Quarter(v, n) => store_fixed(v, &mut n[i], i, x),
            SitesMut::Packed(bits, w) => packed::store(*bits, w, i, x),
        }
    }

    pub fn sites(&self) -> usize {
        match self {
            SitesMut::F64(v) => v.len() / SITE,
            SitesMut::F32(v) => v.len() / SITE,
            SitesMut::Half(_, n) | SitesMut::Quarter(_, n) => n.len(),
            SitesMut::Packed(bits, w) => w.len() / packed::words(*bits),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(seed: u64) -> [f64; SITE] {
        let mut s = seed;
        std::array::from_fn(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 3.0
        })
    }

    /// Each format rounds within its epsilon relative to the site's norm.
    #[test]
    fn round_trip_error_is_bounded_by_the_format() {
        for (p, tol) in [
            (Precision::Double, 0.0),
            (Precision::Single, 6.0e-8),
            (Precision::Half, 0.5 / 32767.0 * 1.0001),
            (Precision::Quarter, 0.5 / 127.0 * 1.0001),
            // The packed formats' epsilon is already their worst case.
            (Precision::Packed20, Precision::Packed20.epsilon()),
            (Precision::Packed30, Precision::Packed30.epsilon()),
        ] {
            let mut d = Data::zeros(p, 3);
            for site in 0..3 {
                let x = sample(site as u64 + 1);
                d.view_mut(0, 3).store(site, &x);
                let y = d.view(0, 3).load(site);
                let max = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                for k in 0..SITE {
                    assert!((x[k] - y[k]).abs() <= tol * max, "{p:?} site {site} k {k}");
                }
            }
        }
    }

    #[test]
    fn zero_site_stays_zero() {
        let mut d = Data::zeros(Precision::Half, 1);
        d.view_mut(0, 1).store(0, &[0.0; SITE]);
        assert_eq!(d.view(0, 1).load(0), [0.0; SITE]);
    }
}
