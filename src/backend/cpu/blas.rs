//! Vector algebra of the CPU backend, format-agnostic: every operation is a
//! per-site function on the reals of a site (24 a Wilson spinor, 6 a
//! staggered colour vector), run over fixed chunks of sites on the
//! context's thread pool. Where every field of a chunk is stored in double
//! the function works on the stored numbers themselves; otherwise each site
//! is decoded into a buffer and stored back (`storage`). Reductions write
//! one partial per chunk into a buffer the backend keeps (no allocation per
//! call) and sum them in chunk order, so results do not depend on the
//! number of threads.

use rayon::prelude::*;

use super::floats::{Floats, FloatsMut};
use super::storage::{Data, Sites, SitesMut};

/// Sites per parallel chunk.
pub const CHUNK_SITES: usize = 512;

/// One site's reals.
pub type Site = [f64];

/// Number of chunks for a field of `sites` sites.
pub fn chunks(sites: usize) -> usize {
    sites.div_ceil(CHUNK_SITES)
}

fn par_chunks_mut(y: &mut Data, f: impl Fn(usize, SitesMut) + Sync + Send) {
    let n = y.sites();
    y.view_mut(0, n).par_chunks(CHUNK_SITES, f);
}

fn par_chunks_mut_reduce<const N: usize>(
    y: &mut Data,
    partials: &mut [f64],
    f: impl Fn(usize, SitesMut) -> [f64; N] + Sync + Send,
) {
    let n = y.sites();
    y.view_mut(0, n).par_chunks_reduce(CHUNK_SITES, partials, f);
}

fn view_of(x: &Data, chunk: usize, count: usize) -> Sites<'_> {
    x.view(chunk * CHUNK_SITES, count)
}

fn sum<const N: usize>(partials: &[f64]) -> [f64; N] {
    partials.chunks_exact(N).fold([0.0; N], |mut a, p| {
        for k in 0..N {
            a[k] += p[k];
        }
        a
    })
}

/// The stored doubles of a view, if it holds doubles.
fn doubles<'a>(v: &'a Sites) -> Option<&'a [f64]> {
    match v.floats() {
        Some(Floats::F64(d)) => Some(d),
        _ => None,
    }
}

/// The stored doubles of a writable view, if it holds doubles.
fn doubles_mut<'a>(v: &'a mut SitesMut) -> Option<&'a mut [f64]> {
    match v.floats_mut() {
        Some(FloatsMut::F64(d)) => Some(d),
        _ => None,
    }
}

/// `y = f(y)` per site.
pub fn update(y: &mut Data, f: impl Fn(&mut Site) + Sync + Send) {
    par_chunks_mut(y, |_, mut ys| {
        let n = ys.site_reals();
        if let Some(yd) = doubles_mut(&mut ys) {
            yd.chunks_exact_mut(n).for_each(&f);
            return;
        }
        for i in 0..ys.sites() {
            let mut v = ys.load(i);
            f(&mut v[..n]);
            ys.store(i, &v);
        }
    });
}

/// `y = f(x, y)` per site.
pub fn update_with(x: &Data, y: &mut Data, f: impl Fn(&Site, &mut Site) + Sync + Send) {
    par_chunks_mut(y, |c, mut ys| {
        let (n, xs) = (ys.site_reals(), view_of(x, c, ys.sites()));
        if let (Some(xd), Some(yd)) = (doubles(&xs), doubles_mut(&mut ys)) {
            for (x, y) in xd.chunks_exact(n).zip(yd.chunks_exact_mut(n)) {
                f(x, y);
            }
            return;
        }
        for i in 0..ys.sites() {
            let mut v = ys.load(i);
            f(&xs.load(i)[..n], &mut v[..n]);
            ys.store(i, &v);
        }
    });
}

/// `y = f(j, x_j, y)` per site for each field `x_j` in turn.
pub fn update_with_many(
    xs: &[&Data],
    y: &mut Data,
    f: impl Fn(usize, &Site, &mut Site) + Sync + Send,
) {
    par_chunks_mut(y, |c, mut ys| {
        let (n, sites) = (ys.site_reals(), ys.sites());
        let views: Vec<Sites> = xs.iter().map(|x| view_of(x, c, sites)).collect();
        let xd: Option<Vec<&[f64]>> = views.iter().map(doubles).collect();
        if let (Some(xd), Some(yd)) = (xd, doubles_mut(&mut ys)) {
            for (i, y) in yd.chunks_exact_mut(n).enumerate() {
                for (j, x) in xd.iter().enumerate() {
                    f(j, &x[i * n..(i + 1) * n], y);
                }
            }
            return;
        }
        for i in 0..sites {
            let mut v = ys.load(i);
            for (j, x) in views.iter().enumerate() {
                f(j, &x.load(i)[..n], &mut v[..n]);
            }
            ys.store(i, &v);
        }
    });
}

/// `z = f(x, y, z)` per site.
pub fn update_with2(
    x: &Data,
    y: &Data,
    z: &mut Data,
    f: impl Fn(&Site, &Site, &mut Site) + Sync + Send,
) {
    par_chunks_mut(z, |c, mut zs| {
        let (n, sites) = (zs.site_reals(), zs.sites());
        let (xs, ys) = (view_of(x, c, sites), view_of(y, c, sites));
        if let (Some(xd), Some(yd), Some(zd)) = (doubles(&xs), doubles(&ys), doubles_mut(&mut zs)) {
            let xy = xd.chunks_exact(n).zip(yd.chunks_exact(n));
            for ((x, y), z) in xy.zip(zd.chunks_exact_mut(n)) {
                f(x, y, z);
            }
            return;
        }
        for i in 0..sites {
            let mut v = zs.load(i);
            f(&xs.load(i)[..n], &ys.load(i)[..n], &mut v[..n]);
            zs.store(i, &v);
        }
    });
}

/// `y = f(x, y)` per site, summing what `f` returns.
pub fn update_with_reduce<const N: usize>(
    x: &Data,
    y: &mut Data,
    partials: &mut [f64],
    f: impl Fn(&Site, &mut Site) -> [f64; N] + Sync + Send,
) -> [f64; N] {
    let partials = &mut partials[..N * chunks(y.sites())];
    par_chunks_mut_reduce(y, partials, |c, mut ys| {
        let (n, xs) = (ys.site_reals(), view_of(x, c, ys.sites()));
        let mut acc = [0.0; N];
        let mut add = |r: [f64; N]| {
            for k in 0..N {
                acc[k] += r[k];
            }
        };
        if let (Some(xd), Some(yd)) = (doubles(&xs), doubles_mut(&mut ys)) {
            for (x, y) in xd.chunks_exact(n).zip(yd.chunks_exact_mut(n)) {
                add(f(x, y));
            }
        } else {
            for i in 0..ys.sites() {
                let mut v = ys.load(i);
                add(f(&xs.load(i)[..n], &mut v[..n]));
                ys.store(i, &v);
            }
        }
        acc
    });
    sum(partials)
}

/// Sums `f(x, y)` over sites.
pub fn reduce<const N: usize>(
    x: &Data,
    y: &Data,
    partials: &mut [f64],
    f: impl Fn(&Site, &Site) -> [f64; N] + Sync + Send,
) -> [f64; N] {
    let sites = x.sites();
    let n = x.site_reals();
    let partials = &mut partials[..N * chunks(sites)];
    partials.par_chunks_mut(N).enumerate().for_each(|(c, p)| {
        let count = CHUNK_SITES.min(sites - c * CHUNK_SITES);
        let (xs, ys) = (view_of(x, c, count), view_of(y, c, count));
        let mut acc = [0.0; N];
        let mut add = |r: [f64; N]| {
            for k in 0..N {
                acc[k] += r[k];
            }
        };
        if let (Some(xd), Some(yd)) = (doubles(&xs), doubles(&ys)) {
            for (x, y) in xd.chunks_exact(n).zip(yd.chunks_exact(n)) {
                add(f(x, y));
            }
        } else {
            for i in 0..count {
                add(f(&xs.load(i)[..n], &ys.load(i)[..n]));
            }
        }
        p.copy_from_slice(&acc);
    });
    sum(partials)
}

/// `Σ |v|²` of one site.
#[inline(always)]
pub fn norm2(v: &Site) -> f64 {
    v.iter().map(|a| a * a).sum()
}

/// `(x† y)` of one site, as (re, im).
#[inline(always)]
pub fn cdot(x: &Site, y: &Site) -> [f64; 2] {
    let (mut re, mut im) = (0.0, 0.0);
    for k in (0..x.len().min(y.len())).step_by(2) {
        re += x[k] * y[k] + x[k + 1] * y[k + 1];
        im += x[k] * y[k + 1] - x[k + 1] * y[k];
    }
    [re, im]
}
