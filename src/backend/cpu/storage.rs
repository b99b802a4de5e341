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

use super::floats::{Floats, FloatsMut};
use crate::format::{packed, Fixed};
use crate::precision::Precision;

/// Reals per site of a Wilson spinor.
pub const SITE: usize = 24;

/// The numbers of a fermion field in one of the library's formats, `site`
/// reals a site: 24 for a Wilson spinor, 6 for a staggered colour vector
/// (`field::Fermion`).
#[derive(Debug, Clone)]
pub struct Data {
    site: usize,
    values: Values,
}

/// The stored numbers of a `Data`.
#[derive(Debug, Clone)]
pub enum Values {
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
    /// `packed::words(bits, site)` 32-bit words per site.
    Packed {
        bits: u32,
        w: Vec<u32>,
    },
}

impl Data {
    /// A zeroed Wilson spinor field.
    pub fn zeros(precision: Precision, sites: usize) -> Data {
        Self::try_zeros(precision, sites).expect("memory for a spinor field")
    }

    /// A zeroed Wilson spinor field, or `OutOfMemory` when it does not fit.
    pub fn try_zeros(precision: Precision, sites: usize) -> crate::error::Result<Data> {
        Self::try_zeros_of(precision, sites, SITE)
    }

    /// A zeroed field of `site` reals a site (24 or 6), or `OutOfMemory`.
    pub fn try_zeros_of(
        precision: Precision,
        sites: usize,
        site: usize,
    ) -> crate::error::Result<Data> {
        use crate::alloc::filled;
        assert!(site == SITE || site == 6, "a site of {site} reals");
        let n = sites * site;
        let what = &format!("a {precision:?} field of {sites} sites");
        let values = match precision {
            Precision::Double => Values::F64(filled(n, 0.0, what)?),
            Precision::Single => Values::F32(filled(n, 0.0, what)?),
            Precision::Half => Values::Half {
                v: filled(n, 0, what)?,
                norm: filled(sites, 0.0, what)?,
            },
            Precision::Quarter => Values::Quarter {
                v: filled(n, 0, what)?,
                norm: filled(sites, 0.0, what)?,
            },
            Precision::Packed20 | Precision::Packed30 => {
                let bits = packed::bits(precision);
                Values::Packed {
                    bits,
                    w: filled(sites * packed::words(bits, site), 0, what)?,
                }
            }
        };
        Ok(Data { site, values })
    }

    /// Reals a site.
    pub fn site_reals(&self) -> usize {
        self.site
    }

    pub fn values(&self) -> &Values {
        &self.values
    }

    pub fn precision(&self) -> Precision {
        match &self.values {
            Values::F64(_) => Precision::Double,
            Values::F32(_) => Precision::Single,
            Values::Half { .. } => Precision::Half,
            Values::Quarter { .. } => Precision::Quarter,
            Values::Packed { bits, .. } => packed::precision(*bits),
        }
    }

    /// Copies `sites` sites from `src` (from site `from`) into `self` (from
    /// site `to`), both in the same format and site size.
    pub fn copy_sites(&mut self, to: usize, src: &Data, from: usize, sites: usize) -> bool {
        fn part<T: Copy>(d: &mut [T], s: &[T], to: usize, from: usize, n: usize, per: usize) {
            d[to * per..(to + n) * per].copy_from_slice(&s[from * per..(from + n) * per]);
        }
        if self.site != src.site {
            return false;
        }
        let site = self.site;
        match (&mut self.values, &src.values) {
            (Values::F64(d), Values::F64(s)) => part(d, s, to, from, sites, site),
            (Values::F32(d), Values::F32(s)) => part(d, s, to, from, sites, site),
            (Values::Half { v, norm }, Values::Half { v: sv, norm: sn }) => {
                part(v, sv, to, from, sites, site);
                part(norm, sn, to, from, sites, 1);
            }
            (Values::Quarter { v, norm }, Values::Quarter { v: sv, norm: sn }) => {
                part(v, sv, to, from, sites, site);
                part(norm, sn, to, from, sites, 1);
            }
            (Values::Packed { bits, w }, Values::Packed { bits: sb, w: sw }) if bits == sb => {
                part(w, sw, to, from, sites, packed::words(*bits, site));
            }
            _ => return false,
        }
        true
    }

    pub fn sites(&self) -> usize {
        match &self.values {
            Values::F64(v) => v.len() / self.site,
            Values::F32(v) => v.len() / self.site,
            Values::Half { norm, .. } => norm.len(),
            Values::Quarter { norm, .. } => norm.len(),
            Values::Packed { bits, w } => w.len() / packed::words(*bits, self.site),
        }
    }

    /// Read access to sites `start..start + count`.
    pub fn view(&self, start: usize, count: usize) -> Sites<'_> {
        let site = self.site;
        let (a, b) = (start * site, (start + count) * site);
        let values = match &self.values {
            Values::F64(v) => SiteValues::F64(&v[a..b]),
            Values::F32(v) => SiteValues::F32(&v[a..b]),
            Values::Half { v, norm } => SiteValues::Half(&v[a..b], &norm[start..start + count]),
            Values::Quarter { v, norm } => {
                SiteValues::Quarter(&v[a..b], &norm[start..start + count])
            }
            Values::Packed { bits, w } => {
                let n = packed::words(*bits, site);
                SiteValues::Packed(*bits, &w[start * n..(start + count) * n])
            }
        };
        Sites { site, values }
    }

    /// Write access to sites `start..start + count`.
    pub fn view_mut(&mut self, start: usize, count: usize) -> SitesMut<'_> {
        let site = self.site;
        let (a, b) = (start * site, (start + count) * site);
        let values = match &mut self.values {
            Values::F64(v) => SiteValuesMut::F64(&mut v[a..b]),
            Values::F32(v) => SiteValuesMut::F32(&mut v[a..b]),
            Values::Half { v, norm } => {
                SiteValuesMut::Half(&mut v[a..b], &mut norm[start..start + count])
            }
            Values::Quarter { v, norm } => {
                SiteValuesMut::Quarter(&mut v[a..b], &mut norm[start..start + count])
            }
            Values::Packed { bits, w } => {
                let n = packed::words(*bits, site);
                SiteValuesMut::Packed(*bits, &mut w[start * n..(start + count) * n])
            }
        };
        SitesMut { site, values }
    }
}

/// Read access to a run of sites of any format.
#[derive(Clone, Copy)]
pub struct Sites<'a> {
    site: usize,
    values: SiteValues<'a>,
}

#[derive(Clone, Copy)]
enum SiteValues<'a> {
    F64(&'a [f64]),
    F32(&'a [f32]),
    Half(&'a [i16], &'a [f32]),
    Quarter(&'a [i8], &'a [f32]),
    Packed(u32, &'a [u32]),
}

/// Write access to a run of sites of any format.
pub struct SitesMut<'a> {
    site: usize,
    values: SiteValuesMut<'a>,
}

enum SiteValuesMut<'a> {
    F64(&'a mut [f64]),
    F32(&'a mut [f32]),
    Half(&'a mut [i16], &'a mut [f32]),
    Quarter(&'a mut [i8], &'a mut [f32]),
    Packed(u32, &'a mut [u32]),
}

/// Site `i` of `n` reals a site from fixed point, into the first `n` of 24
/// (the rest zero).
#[inline(always)]
fn load_fixed<T: Fixed>(v: &[T], norm: f32, i: usize, n: usize) -> [f64; SITE] {
    let s = norm as f64 / T::MAX;
    let mut out = [0.0; SITE];
    for (o, x) in out.iter_mut().zip(&v[i * n..(i + 1) * n]) {
        *o = x.to_f64() * s;
    }
    out
}

#[inline(always)]
fn store_fixed<T: Fixed>(v: &mut [T], norm: &mut f32, i: usize, n: usize, x: &[f64]) {
    let max = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    // The stored norm is an f32: scale by the value actually stored, and
    // round it up so no component exceeds the fixed-point range.
    let mut m = max as f32;
    if (m as f64) < max {
        m = f32::from_bits(m.to_bits() + 1);
    }
    *norm = m;
    let s = if m > 0.0 { T::MAX / m as f64 } else { 0.0 };
    for (o, x) in v[i * n..(i + 1) * n].iter_mut().zip(x) {
        *o = T::from_scaled(x * s);
    }
}

/// Site `i` of `n` reals a site, into the first `n` of 24 (the rest zero).
#[inline(always)]
fn load_float<T: Copy + Into<f64>>(v: &[T], i: usize, n: usize) -> [f64; SITE] {
    if n == SITE {
        let s: &[T; SITE] = v[i * SITE..(i + 1) * SITE].try_into().unwrap();
        return s.map(|x| x.into());
    }
    let mut out = [0.0; SITE];
    for (o, x) in out.iter_mut().zip(&v[i * n..(i + 1) * n]) {
        *o = (*x).into();
    }
    out
}

impl SiteValues<'_> {
    #[inline(always)]
    fn load(&self, i: usize, n: usize) -> [f64; SITE] {
        match self {
            SiteValues::F64(v) => load_float(v, i, n),
            SiteValues::F32(v) => load_float(v, i, n),
            SiteValues::Half(v, m) => load_fixed(v, m[i], i, n),
            SiteValues::Quarter(v, m) => load_fixed(v, m[i], i, n),
            SiteValues::Packed(bits, w) => packed::load(*bits, n, w, i),
        }
    }
}

impl Sites<'_> {
    /// The reals of site `i` (relative to the view): all 24 of a Wilson
    /// spinor, or a colour vector's 6 followed by zeros, so that one
    /// per-site BLAS serves both (the zeros add nothing to sums and stay
    /// zero under every linear update).
    #[inline(always)]
    pub fn load(&self, i: usize) -> [f64; SITE] {
        self.values.load(i, self.site)
    }

    /// The stored reals as a slice (`site` a site), where the format is
    /// double or single: the fast paths' view.
    #[inline(always)]
    pub fn floats(&self) -> Option<Floats<'_>> {
        match self.values {
            SiteValues::F64(v) => Some(Floats::F64(v)),
            SiteValues::F32(v) => Some(Floats::F32(v)),
            _ => None,
        }
    }

    pub fn sites(&self) -> usize {
        match self.values {
            SiteValues::F64(v) => v.len() / self.site,
            SiteValues::F32(v) => v.len() / self.site,
            SiteValues::Half(_, n) | SiteValues::Quarter(_, n) => n.len(),
            SiteValues::Packed(bits, w) => w.len() / packed::words(bits, self.site),
        }
    }
}

impl SitesMut<'_> {
    /// Runs `f(chunk, view)` on every chunk of `n` sites, in parallel.
    pub fn par_chunks(self, n: usize, f: impl Fn(usize, SitesMut) + Sync + Send) {
        let site = self.site;
        let wrap = |values| SitesMut { site, values };
        match self.values {
            SiteValuesMut::F64(v) => v
                .par_chunks_mut(n * site)
                .enumerate()
                .for_each(|(c, s)| f(c, wrap(SiteValuesMut::F64(s)))),
            SiteValuesMut::F32(v) => v
                .par_chunks_mut(n * site)
                .enumerate()
                .for_each(|(c, s)| f(c, wrap(SiteValuesMut::F32(s)))),
            SiteValuesMut::Half(v, norm) => v
                .par_chunks_mut(n * site)
                .zip(norm.par_chunks_mut(n))
                .enumerate()
                .for_each(|(c, (s, m))| f(c, wrap(SiteValuesMut::Half(s, m)))),
            SiteValuesMut::Quarter(v, norm) => v
                .par_chunks_mut(n * site)
                .zip(norm.par_chunks_mut(n))
                .enumerate()
                .for_each(|(c, (s, m))| f(c, wrap(SiteValuesMut::Quarter(s, m)))),
            SiteValuesMut::Packed(bits, w) => w
                .par_chunks_mut(n * packed::words(bits, site))
                .enumerate()
                .for_each(|(c, s)| f(c, wrap(SiteValuesMut::Packed(bits, s)))),
        }
    }

    /// As `par_chunks`, with one result per chunk written to `partials`.
    pub fn par_chunks_reduce<const N: usize>(
        self,
        n: usize,
        partials: &mut [f64],
        f: impl Fn(usize, SitesMut) -> [f64; N] + Sync + Send,
    ) {
        let site = self.site;
        let g =
            |c: usize, values, p: &mut [f64]| p.copy_from_slice(&f(c, SitesMut { site, values }));
        let parts = partials.par_chunks_mut(N);
        match self.values {
            SiteValuesMut::F64(v) => v
                .par_chunks_mut(n * site)
                .zip(parts)
                .enumerate()
                .for_each(|(c, (s, p))| g(c, SiteValuesMut::F64(s), p)),
            SiteValuesMut::F32(v) => v
                .par_chunks_mut(n * site)
                .zip(parts)
                .enumerate()
                .for_each(|(c, (s, p))| g(c, SiteValuesMut::F32(s), p)),
            SiteValuesMut::Half(v, norm) => v
                .par_chunks_mut(n * site)
                .zip(norm.par_chunks_mut(n))
                .zip(parts)
                .enumerate()
                .for_each(|(c, ((s, m), p))| g(c, SiteValuesMut::Half(s, m), p)),
            SiteValuesMut::Quarter(v, norm) => v
                .par_chunks_mut(n * site)
                .zip(norm.par_chunks_mut(n))
                .zip(parts)
                .enumerate()
                .for_each(|(c, ((s, m), p))| g(c, SiteValuesMut::Quarter(s, m), p)),
            SiteValuesMut::Packed(bits, w) => w
                .par_chunks_mut(n * packed::words(bits, site))
                .zip(parts)
                .enumerate()
                .for_each(|(c, (s, p))| g(c, SiteValuesMut::Packed(bits, s), p)),
        }
    }

    /// As `Sites::load`.
    #[inline(always)]
    pub fn load(&self, i: usize) -> [f64; SITE] {
        let n = self.site;
        match &self.values {
            SiteValuesMut::F64(v) => load_float(v, i, n),
            SiteValuesMut::F32(v) => load_float(v, i, n),
            SiteValuesMut::Half(v, m) => load_fixed(v, m[i], i, n),
            SiteValuesMut::Quarter(v, m) => load_fixed(v, m[i], i, n),
            SiteValuesMut::Packed(bits, w) => packed::load(*bits, n, w, i),
        }
    }

    /// Stores the reals of site `i` (the first 6 of a colour vector),
    /// rounding to the format.
    #[inline(always)]
    pub fn store(&mut self, i: usize, x: &[f64; SITE]) {
        let n = self.site;
        let x = &x[..n];
        match &mut self.values {
            SiteValuesMut::F64(v) => v[i * n..(i + 1) * n].copy_from_slice(x),
            SiteValuesMut::F32(v) => {
                for (o, x) in v[i * n..(i + 1) * n].iter_mut().zip(x) {
                    *o = *x as f32;
                }
            }
            SiteValuesMut::Half(v, m) => store_fixed(v, &mut m[i], i, n, x),
            SiteValuesMut::Quarter(v, m) => store_fixed(v, &mut m[i], i, n, x),
            SiteValuesMut::Packed(bits, w) => packed::store(*bits, w, i, x),
        }
    }

    /// The same sites, borrowed again: a view that one pass over the sites
    /// may consume and leave this one for the next.
    pub fn reborrow(&mut self) -> SitesMut<'_> {
        let values = match &mut self.values {
            SiteValuesMut::F64(v) => SiteValuesMut::F64(v),
            SiteValuesMut::F32(v) => SiteValuesMut::F32(v),
            SiteValuesMut::Half(v, m) => SiteValuesMut::Half(v, m),
            SiteValuesMut::Quarter(v, m) => SiteValuesMut::Quarter(v, m),
            SiteValuesMut::Packed(bits, w) => SiteValuesMut::Packed(*bits, w),
        };
        SitesMut {
            site: self.site,
            values,
        }
    }

    /// Reals a site (24 a Wilson spinor, 6 a colour vector).
    pub fn site_reals(&self) -> usize {
        self.site
    }

    /// As `Sites::floats`, writable.
    #[inline(always)]
    pub fn floats_mut(&mut self) -> Option<FloatsMut<'_>> {
        match &mut self.values {
            SiteValuesMut::F64(v) => Some(FloatsMut::F64(v)),
            SiteValuesMut::F32(v) => Some(FloatsMut::F32(v)),
            _ => None,
        }
    }

    pub fn sites(&self) -> usize {
        match &self.values {
            SiteValuesMut::F64(v) => v.len() / self.site,
            SiteValuesMut::F32(v) => v.len() / self.site,
            SiteValuesMut::Half(_, n) | SiteValuesMut::Quarter(_, n) => n.len(),
            SiteValuesMut::Packed(bits, w) => w.len() / packed::words(*bits, self.site),
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
