//! The CPU backend: multi-threaded (a rayon pool owned by the context, so
//! contexts in different threads share nothing), every storage format of
//! the library (`storage`, `links`), one format-agnostic BLAS (`blas`) and
//! dslash (`wilson`, `staggered` with its links in `staggered_links`), on
//! one rank or one rank's part of a cut lattice (`halo`).

mod blas;
mod domains;
mod floats;
mod halo;
mod links;
// The CUDA backend stores the same site bit strings and link integers.
mod staggered;
mod staggered_float;
mod staggered_links;
mod storage;
mod wilson;

use std::sync::{Arc, Mutex};

use num_complex::Complex64 as C64;

pub use halo::Ranks;
pub use staggered_links::CpuStaggeredLinks;
pub use storage::{Data, Sites, SitesMut, Values};

use super::{Backend, CloverForm, CloverStorage, GaugeStorage, SpinorField, StaggeredStorage};
use crate::clover::storage::{CloverData, CloverFormat};
use crate::clover::CloverField;
use crate::domains::Domains;
use crate::error::{Error, Result};
use crate::field::{Fermion, GaugeField, HostSpinor};
use crate::lattice::{Lattice, Parity, Subset};
use crate::precision::{Precision, Reconstruct, TBoundary};
use blas::Site;
use links::Links;

/// A spinor field in CPU memory.
#[derive(Debug, Clone)]
pub struct CpuSpinor {
    lattice: Arc<Lattice>,
    subset: Subset,
    data: Data,
}

impl SpinorField for CpuSpinor {
    fn lattice(&self) -> &Arc<Lattice> {
        &self.lattice
    }
    fn subset(&self) -> Subset {
        self.subset
    }
    fn precision(&self) -> Precision {
        self.data.precision()
    }
    fn fermion(&self) -> Fermion {
        Fermion::of_reals(self.data.site_reals())
    }
}

impl CpuSpinor {
    /// The stored numbers.
    pub fn data(&self) -> &Data {
        &self.data
    }
}

/// A gauge field in CPU memory.
#[derive(Debug, Clone)]
pub struct CpuGauge {
    lattice: Arc<Lattice>,
    links: Links,
    t_sign: f64,
    /// On a partitioned lattice, the links behind the cut faces.
    faces: Option<halo::GaugeFaces>,
    /// A box operator's links (`upload_domain_gauge`): its hopping terms
    /// never leave the rank.
    local: bool,
}

impl GaugeStorage for CpuGauge {
    fn lattice(&self) -> &Arc<Lattice> {
        &self.lattice
    }
    fn precision(&self) -> Precision {
        self.links.precision()
    }
    fn reconstruct(&self) -> Reconstruct {
        self.links.reconstruct()
    }
}

impl CpuGauge {
    /// Whether the unit T links of temporal gauge are left out.
    pub fn temporal_gauge(&self) -> bool {
        self.links.temporal_gauge()
    }
}

/// A clover field and its inverse in CPU memory, stored for spinors of
/// one format (`clover::storage`).
#[derive(Debug, Clone)]
pub struct CpuClover {
    lattice: Arc<Lattice>,
    precision: Precision,
    direct: CloverData,
    inverse: CloverData,
}

impl CloverStorage for CpuClover {
    fn lattice(&self) -> &Arc<Lattice> {
        &self.lattice
    }
    fn precision(&self) -> Precision {
        self.precision
    }
}

impl CpuClover {
    fn data(&self, inverse: bool) -> &CloverData {
        if inverse {
            &self.inverse
        } else {
            &self.direct
        }
    }
}

/// The CPU backend with its own thread pool.
pub struct CpuBackend {
    pool: rayon::ThreadPool,
    /// Per-chunk partial sums of the reductions, kept between calls so a
    /// solver iteration allocates nothing.
    partials: Mutex<Vec<f64>>,
    /// On many ranks: this rank's part of the lattice and the engine that
    /// reaches the others (every field is the local sub-lattice).
    ranks: Option<Ranks>,
    /// Fault injection for the tests of the collective error contract:
    /// the field allocation of this number (counted from 1) fails as out
    /// of memory (`LATSOL_TEST_FAIL_FIELD_ALLOCATION`; unset in use).
    fail_allocation: Option<(usize, std::sync::atomic::AtomicUsize)>,
}

/// The environment variable of `CpuBackend::fail_allocation`.
const FAIL_ALLOCATION: &str = "LATSOL_TEST_FAIL_FIELD_ALLOCATION";

impl CpuBackend {
    /// `num_threads` = 0 uses one thread per core.
    pub fn new(num_threads: usize) -> Result<CpuBackend> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(num_threads)
            .thread_name(|i| format!("latsol-cpu-{i}"))
            .build()
            .map_err(|e| Error::Internal(format!("cannot start the CPU thread pool: {e}")))?;
        let fail_allocation = std::env::var(FAIL_ALLOCATION)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .map(|n| (n, std::sync::atomic::AtomicUsize::new(0)));
        Ok(CpuBackend {
            pool,
            partials: Mutex::new(Vec::new()),
            ranks: None,
            fail_allocation,
        })
    }

    /// A backend for one rank of a partitioned lattice: its fields are the
    /// rank's sub-lattice, its sums global, its hopping terms (Wilson,
    /// depth 1; staggered, depth 3 with the Naik term) reach across the
    /// cut faces.
    pub fn on_ranks(num_threads: usize, ranks: Ranks) -> Result<CpuBackend> {
        let mut b = CpuBackend::new(num_threads)?;
        b.ranks = Some(ranks);
        Ok(b)
    }

    /// The ranks of a partitioned lattice, if any direction is cut.
    fn cut(&self) -> Option<&Ranks> {
        self.ranks.as_ref().filter(|r| r.partitioned())
    }

    /// `Links::new` on this backend's threads; on many ranks the fixed-point
    /// scale is the whole lattice's largest stored number (a failure on one
    /// rank, out of memory, made collective first).
    fn store_links(
        &self,
        gauge: &GaugeField,
        precision: Precision,
        reconstruct: Reconstruct,
        temporal: bool,
    ) -> Result<Links> {
        let compressed = self
            .pool
            .install(|| links::Compressed::of(gauge, precision, reconstruct, temporal));
        let compressed = crate::backend::agreed(self, compressed)?;
        let mut scale = [compressed.largest()];
        if let Some(r) = &self.ranks {
            r.comm.max(&mut scale)?;
        }
        self.pool.install(|| compressed.store(scale[0]))
    }

    /// The gauge field's faces where the lattice is cut.
    fn gauge_faces(&self, lattice: &Lattice, links: &Links) -> Result<Option<halo::GaugeFaces>> {
        match &self.ranks {
            None => Ok(None),
            Some(r) => {
                crate::backend::agreed(self, r.check_local(lattice, "upload_gauge"))?;
                Ok(Some(halo::exchange_gauge_faces(r, lattice, links, 1)?))
            }
        }
    }

    /// The backend's threads.
    pub fn pool(&self) -> &rayon::ThreadPool {
        &self.pool
    }

    /// Runs `f` on this backend's threads (host-side work of its context).
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.pool.install(f)
    }

    pub fn num_threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Runs a reduction of `N` sums over a field of `sites` sites with the
    /// backend's partials buffer.
    fn reduce<const N: usize>(
        &self,
        sites: usize,
        f: impl FnOnce(&mut [f64]) -> [f64; N] + Send,
    ) -> Result<[f64; N]> {
        let mut partials = self
            .partials
            .lock()
            .map_err(|_| Error::Internal("CPU partials buffer poisoned".into()))?;
        let need = N * blas::chunks(sites);
        if partials.len() < need {
            partials.resize(need, 0.0);
        }
        let buf: &mut [f64] = &mut partials;
        let mut sums = self.pool.install(|| f(buf));
        if let Some(r) = &self.ranks {
            r.sum(&mut sums)?;
        }
        Ok(sums)
    }
}

fn check_same(what: &str, a: &CpuSpinor, b: &CpuSpinor) -> Result<()> {
    if a.subset != b.subset || a.lattice != b.lattice || a.fermion() != b.fermion() {
        return Err(Error::Internal(format!(
            "{what}: fields of different subsets ({:?} vs {:?}) or lattices",
            a.subset, b.subset
        )));
    }
    Ok(())
}

/// The fields of `axpy_many` (`check_many_precisions`) on one lattice.
fn check_many(what: &str, a: &[f64], x: &[&CpuSpinor], y: &CpuSpinor) -> Result<()> {
    crate::backend::check_many_precisions(what, a.len(), x, y)?;
    x.iter().try_for_each(|x| check_same(what, x, y))
}

/// Sites `start..start + Vh` of parity `p` within a field of `subset`.
fn parity_start(subset: Subset, p: Parity, vh: usize, what: &str) -> Result<usize> {
    match subset {
        Subset::Full => Ok(p.index() * vh),
        Subset::Single(q) if q == p => Ok(0),
        Subset::Single(q) => Err(Error::Internal(format!(
            "dslash: {what} has parity {q:?} where {p:?} is needed"
        ))),
    }
}

#[inline(always)]
fn cmul(a: C64, re: f64, im: f64) -> (f64, f64) {
    (a.re * re - a.im * im, a.re * im + a.im * re)
}

/// `y += a x` on one site, complex `a`.
#[inline(always)]
fn caxpy_site(a: C64, x: &Site, y: &mut Site) {
    for k in (0..y.len()).step_by(2) {
        let (re, im) = cmul(a, x[k], x[k + 1]);
        y[k] += re;
        y[k + 1] += im;
    }
}

impl Backend for CpuBackend {
    type Spinor = CpuSpinor;
    type Gauge = CpuGauge;
    type Clover = CpuClover;
    type StaggeredLinks = CpuStaggeredLinks;

    fn name(&self) -> &'static str {
        "cpu"
    }

    fn ranks(&self) -> usize {
        self.ranks.as_ref().map_or(1, |r| r.comm.size())
    }

    fn all_ok(&self, ok: bool) -> Result<bool> {
        match &self.ranks {
            Some(r) => r.comm.all_ok(ok),
            None => Ok(ok),
        }
    }

    fn global_max(&self, value: f64) -> Result<f64> {
        let mut v = [value];
        if let Some(r) = &self.ranks {
            r.comm.max(&mut v)?;
        }
        Ok(v[0])
    }

    fn upload_gauge(
        &self,
        gauge: &GaugeField,
        t_boundary: TBoundary,
        precision: Precision,
        reconstruct: Reconstruct,
    ) -> Result<CpuGauge> {
        // The hopping term walks the neighbour tables.
        gauge.lattice().build_neighbour_tables()?;
        let links = self.store_links(gauge, precision, reconstruct, false)?;
        Ok(CpuGauge {
            lattice: gauge.lattice().clone(),
            faces: self.gauge_faces(gauge.lattice(), &links)?,
            links,
            t_sign: t_boundary.sign(),
            local: false,
        })
    }

    fn upload_gauge_temporal(
        &self,
        gauge: &GaugeField,
        t_boundary: TBoundary,
        precision: Precision,
        reconstruct: Reconstruct,
    ) -> Result<CpuGauge> {
        // The hopping term walks the neighbour tables.
        gauge.lattice().build_neighbour_tables()?;
        let links = self.store_links(gauge, precision, reconstruct, true)?;
        Ok(CpuGauge {
            lattice: gauge.lattice().clone(),
            faces: self.gauge_faces(gauge.lattice(), &links)?,
            links,
            t_sign: t_boundary.sign(),
            local: false,
        })
    }

    fn upload_domain_gauge(&self, gauge: &GaugeField, precision: Precision) -> Result<CpuGauge> {
        self.domain_gauge(gauge, precision)
    }

    fn download_gauge(&self, gauge: &CpuGauge) -> Result<GaugeField> {
        self.gauge_to_host(gauge)
    }

    fn domain_project(&self, field: &mut CpuSpinor, d: &Domains, colour: usize) -> Result<()> {
        self.project_on_domains(field, d, colour)
    }

    fn rank_coords(&self) -> [usize; 4] {
        self.ranks.as_ref().map_or([0; 4], |r| r.grid.coords())
    }

    fn alloc_field(
        &self,
        lattice: &Arc<Lattice>,
        subset: Subset,
        precision: Precision,
        fermion: Fermion,
    ) -> Result<CpuSpinor> {
        let injected = self.fail_allocation.as_ref().is_some_and(|(n, count)| {
            count.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1 == *n
        });
        let data = match injected {
            true => Err(Error::OutOfMemory(format!(
                "field allocation failed as {FAIL_ALLOCATION} asks"
            ))),
            false => Data::try_zeros_of(precision, lattice.sites(subset), fermion.reals()),
        };
        // On many ranks every rank allocates the same fields in the same
        // order (the solvers are one program): agreeing here makes an
        // allocation that fails on one rank, inside a solve too, fail the
        // call on all before any of them waits in a sum.
        let data = match &self.ranks {
            Some(_) => crate::backend::agreed(self, data)?,
            None => data?,
        };
        Ok(CpuSpinor {
            lattice: lattice.clone(),
            subset,
            data,
        })
    }

    fn upload_spinor(&self, dst: &mut CpuSpinor, src: &HostSpinor) -> Result<()> {
        if dst.subset != src.subset()
            || &dst.lattice != src.lattice()
            || dst.fermion() != src.fermion()
        {
            return Err(Error::Internal("upload_spinor: the fields differ".into()));
        }
        let reals: &[f64] = complex_as_reals(src.data());
        let n = src.fermion().reals();
        self.pool.install(|| {
            let sites = dst.data.sites();
            dst.data
                .view_mut(0, sites)
                .par_chunks(blas::CHUNK_SITES, |c, mut o| {
                    let base = c * blas::CHUNK_SITES * n;
                    for i in 0..o.sites() {
                        let mut s = [0.0; storage::SITE];
                        s[..n].copy_from_slice(&reals[base + i * n..base + (i + 1) * n]);
                        o.store(i, &s);
                    }
                })
        });
        Ok(())
    }

    fn download_spinor(&self, src: &CpuSpinor, dst: &mut HostSpinor) -> Result<()> {
        if src.subset != dst.subset()
            || &src.lattice != dst.lattice()
            || src.fermion() != dst.fermion()
        {
            return Err(Error::Internal("download_spinor: the fields differ".into()));
        }
        let sites = src.data.sites();
        let n = src.fermion().reals();
        let reals = complex_as_reals_mut(dst.data_mut());
        let view = src.data.view(0, sites);
        for (i, out) in reals.chunks_exact_mut(n).enumerate() {
            out.copy_from_slice(&view.load(i)[..n]);
        }
        Ok(())
    }

    fn extract_parity(&self, part: &mut CpuSpinor, full: &CpuSpinor, p: Parity) -> Result<()> {
        super::check_parity_pair("extract_parity", full, part, p)?;
        let vh = full.lattice.half_volume();
        // Full fields hold the even sites, then the odd ones.
        part.data.copy_sites(0, &full.data, p.index() * vh, vh);
        Ok(())
    }

    fn insert_parity(&self, full: &mut CpuSpinor, p: Parity, part: &CpuSpinor) -> Result<()> {
        super::check_parity_pair("insert_parity", full, part, p)?;
        let vh = full.lattice.half_volume();
        full.data.copy_sites(p.index() * vh, &part.data, 0, vh);
        Ok(())
    }

    fn copy(&self, dst: &mut CpuSpinor, src: &CpuSpinor) -> Result<()> {
        check_same("copy", src, dst)?;
        self.pool
            .install(|| blas::update_with(&src.data, &mut dst.data, |x, y| y.copy_from_slice(x)));
        Ok(())
    }

    fn zero(&self, x: &mut CpuSpinor) -> Result<()> {
        self.pool
            .install(|| blas::update(&mut x.data, |v| v.fill(0.0)));
        Ok(())
    }

    fn ax(&self, a: f64, x: &mut CpuSpinor) -> Result<()> {
        self.pool
            .install(|| blas::update(&mut x.data, |v| v.iter_mut().for_each(|e| *e *= a)));
        Ok(())
    }

    fn axpy(&self, a: f64, x: &CpuSpinor, y: &mut CpuSpinor) -> Result<()> {
        self.axpby(a, x, 1.0, y)
    }

    fn xpay(&self, x: &CpuSpinor, a: f64, y: &mut CpuSpinor) -> Result<()> {
        self.axpby(1.0, x, a, y)
    }

    fn axpby(&self, a: f64, x: &CpuSpinor, b: f64, y: &mut CpuSpinor) -> Result<()> {
        check_same("axpby", x, y)?;
        self.pool.install(|| {
            blas::update_with(&x.data, &mut y.data, |x, y| {
                for (y, x) in y.iter_mut().zip(x) {
                    *y = a * x + b * *y;
                }
            })
        });
        Ok(())
    }

    fn axpy_many(&self, a: &[f64], x: &[&CpuSpinor], y: &mut CpuSpinor) -> Result<()> {
        check_many("axpy_many", a, x, y)?;
        // Each term rounded to y's format, as `copy` then `axpy` would.
        let single = y.precision() == Precision::Single;
        let data: Vec<&Data> = x.iter().map(|x| &x.data).collect();
        self.pool.install(|| {
            blas::update_with_many(&data, &mut y.data, |j, x, y| {
                let round = |v: f64| if single { v as f32 as f64 } else { v };
                for (y, x) in y.iter_mut().zip(x) {
                    *y = round(a[j] * round(*x) + *y);
                }
            })
        });
        Ok(())
    }

    fn xpay_into(&self, x: &CpuSpinor, a: f64, y: &CpuSpinor, out: &mut CpuSpinor) -> Result<()> {
        check_same("xpay_into", x, out)?;
        check_same("xpay_into", y, out)?;
        self.pool.install(|| {
            blas::update_with2(&x.data, &y.data, &mut out.data, |x, y, out| {
                for ((out, x), y) in out.iter_mut().zip(x).zip(y) {
                    *out = x + a * y;
                }
            })
        });
        Ok(())
    }

    fn caxpy(&self, a: C64, x: &CpuSpinor, y: &mut CpuSpinor) -> Result<()> {
        check_same("caxpy", x, y)?;
        self.pool
            .install(|| blas::update_with(&x.data, &mut y.data, |x, y| caxpy_site(a, x, y)));
        Ok(())
    }

    fn cxpaypbz(
        &self,
        x: &CpuSpinor,
        a: C64,
        y: &CpuSpinor,
        b: C64,
        z: &mut CpuSpinor,
    ) -> Result<()> {
        check_same("cxpaypbz", x, z)?;
        check_same("cxpaypbz", y, z)?;
        self.pool.install(|| {
            blas::update_with2(&x.data, &y.data, &mut z.data, |x, y, z| {
                for k in (0..z.len()).step_by(2) {
                    let (ayr, ayi) = cmul(a, y[k], y[k + 1]);
                    let (bzr, bzi) = cmul(b, z[k], z[k + 1]);
                    z[k] = x[k] + ayr + bzr;
                    z[k + 1] = x[k + 1] + ayi + bzi;
                }
            })
        });
        Ok(())
    }

    fn norm2(&self, x: &CpuSpinor) -> Result<f64> {
        let [n] = self.reduce(x.data.sites(), |p| {
            blas::reduce(&x.data, &x.data, p, |x, _| [blas::norm2(x)])
        })?;
        Ok(n)
    }

    fn heavy_quark_residual2(&self, x: &CpuSpinor, r: &CpuSpinor) -> Result<f64> {
        check_same("heavy_quark_residual2", x, r)?;
        let sites = x.data.sites();
        let [sum] = self.reduce(sites, |p| {
            blas::reduce(&x.data, &r.data, p, |x, r| {
                let xx = blas::norm2(x);
                [if xx > 0.0 { blas::norm2(r) / xx } else { 0.0 }]
            })
        })?;
        let ranks = self.ranks.as_ref().map_or(1, |r| r.comm.size());
        Ok(sum / (sites * ranks) as f64)
    }

    fn cdot(&self, x: &CpuSpinor, y: &CpuSpinor) -> Result<C64> {
        check_same("cdot", x, y)?;
        let [re, im] = self.reduce(x.data.sites(), |p| {
            blas::reduce(&x.data, &y.data, p, blas::cdot)
        })?;
        Ok(C64::new(re, im))
    }

    fn cdot_norm2(&self, x: &CpuSpinor, y: &CpuSpinor) -> Result<(C64, f64)> {
        check_same("cdot_norm2", x, y)?;
        let [re, im, n] = self.reduce(x.data.sites(), |p| {
            blas::reduce(&x.data, &y.data, p, |x, y| {
                let [re, im] = blas::cdot(x, y);
                [re, im, blas::norm2(x)]
            })
        })?;
        Ok((C64::new(re, im), n))
    }

    fn axpy_norm2(&self, a: f64, x: &CpuSpinor, y: &mut CpuSpinor) -> Result<f64> {
        check_same("axpy_norm2", x, y)?;
        let [n] = self.reduce(y.data.sites(), |p| {
            blas::update_with_reduce(&x.data, &mut y.data, p, |x, y| {
                for (y, x) in y.iter_mut().zip(x) {
                    *y += a * x;
                }
                [blas::norm2(y)]
            })
        })?;
        Ok(n)
    }

    fn caxpy_norm2(&self, a: C64, x: &CpuSpinor, y: &mut CpuSpinor) -> Result<f64> {
        check_same("caxpy_norm2", x, y)?;
        let [n] = self.reduce(y.data.sites(), |p| {
            blas::update_with_reduce(&x.data, &mut y.data, p, |x, y| {
                caxpy_site(a, x, y);
                [blas::norm2(y)]
            })
        })?;
        Ok(n)
    }

    fn xmy_norm2(&self, x: &CpuSpinor, y: &mut CpuSpinor) -> Result<f64> {
        check_same("xmy_norm2", x, y)?;
        let [n] = self.reduce(y.data.sites(), |p| {
            blas::update_with_reduce(&x.data, &mut y.data, p, |x, y| {
                for (y, x) in y.iter_mut().zip(x) {
                    *y = x - *y;
                }
                [blas::norm2(y)]
            })
        })?;
        Ok(n)
    }

    fn wilson_dslash(
        &self,
        out: &mut CpuSpinor,
        parity: Parity,
        gauge: &CpuGauge,
        inp: &CpuSpinor,
        dagger: bool,
        a: f64,
        x: Option<&CpuSpinor>,
    ) -> Result<()> {
        self.dslash_with(out, parity, gauge, inp, dagger, a, x, None)
    }

    fn upload_staggered(
        &self,
        fat: &GaugeField,
        long: Option<&GaugeField>,
        precision: Precision,
        long_reconstruct: crate::long_links::LongReconstruct,
    ) -> Result<CpuStaggeredLinks> {
        let ranks = self.ranks.as_ref();
        CpuStaggeredLinks::upload(&self.pool, ranks, fat, long, precision, long_reconstruct)
    }

    fn staggered_dslash(
        &self,
        out: &mut CpuSpinor,
        parity: Parity,
        links: &CpuStaggeredLinks,
        inp: &CpuSpinor,
        a: f64,
        x: Option<(f64, &CpuSpinor)>,
    ) -> Result<()> {
        let lat = links.lattice().clone();
        let fields = [Some(&*out), Some(inp), x.map(|x| x.1)];
        for f in fields.into_iter().flatten() {
            if f.lattice != lat || f.fermion() != Fermion::Staggered {
                return Err(Error::Internal(
                    "staggered_dslash: a field of another lattice or not staggered".into(),
                ));
            }
        }
        let vh = lat.half_volume();
        let o0 = parity_start(out.subset, parity, vh, "the output")?;
        let i0 = parity_start(inp.subset, parity.other(), vh, "the input")?;
        let xv = match x {
            Some((b, x)) => Some((b, x.data.view(parity_start(x.subset, parity, vh, "x")?, vh))),
            None => None,
        };
        let iv = inp.data.view(i0, vh);
        let ov = out.data.view_mut(o0, vh);
        links.dslash(&self.pool, self.cut(), parity, ov, iv, a, xv)
    }

    fn upload_clover(
        &self,
        clover: &CloverField,
        inverse: &CloverField,
        precision: Precision,
    ) -> Result<CpuClover> {
        let format = CloverFormat::for_spinors(precision);
        let (direct, inverse) = self.pool.install(|| {
            Ok::<_, Error>((
                CloverData::new(clover, format)?,
                CloverData::new(inverse, format)?,
            ))
        })?;
        Ok(CpuClover {
            lattice: clover.lattice().clone(),
            precision,
            direct,
            inverse,
        })
    }

    fn clover(
        &self,
        out: &mut CpuSpinor,
        parity: Parity,
        clover: &CpuClover,
        inp: &CpuSpinor,
        inverse: bool,
    ) -> Result<()> {
        let lat = clover.lattice.clone();
        if out.lattice != lat || inp.lattice != lat {
            return Err(Error::Internal(
                "clover: fields on different lattices".into(),
            ));
        }
        let vh = lat.half_volume();
        let iv = inp
            .data
            .view(parity_start(inp.subset, parity, vh, "the input")?, vh);
        let o0 = parity_start(out.subset, parity, vh, "the output")?;
        let ov = out.data.view_mut(o0, vh);
        let c = clover.data(inverse);
        self.pool.install(|| wilson::clover(parity, vh, c, ov, iv));
        Ok(())
    }

    fn wilson_clover_dslash(
        &self,
        out: &mut CpuSpinor,
        parity: Parity,
        gauge: &CpuGauge,
        clover: &CpuClover,
        inp: &CpuSpinor,
        dagger: bool,
        a: f64,
        form: CloverForm,
        x: Option<&CpuSpinor>,
    ) -> Result<()> {
        if clover.lattice != gauge.lattice {
            return Err(Error::Internal(
                "clover dslash: a clover field of another lattice".into(),
            ));
        }
        if form == CloverForm::DirectOnX && x.is_none() {
            return Err(Error::Internal(
                "clover dslash: the form A x + a D in needs x".into(),
            ));
        }
        let c = clover.data(form == CloverForm::InverseOnHopping);
        self.dslash_with(out, parity, gauge, inp, dagger, a, x, Some((c, form)))
    }

    fn gamma5(&self, out: &mut CpuSpinor, inp: &CpuSpinor) -> Result<()> {
        check_same("gamma5", inp, out)?;
        if inp.fermion() != Fermion::Wilson {
            return Err(Error::Internal("gamma5 of a staggered field".into()));
        }
        // UKQCD γ5 = ((0, −1), (−1, 0)): (u, l) → (−l, −u).
        self.pool.install(|| {
            blas::update_with(&inp.data, &mut out.data, |x, y| {
                for k in 0..12 {
                    y[k] = -x[k + 12];
                    y[k + 12] = -x[k];
                }
            })
        });
        Ok(())
    }

    /// The host's `MemAvailable` (Linux); `None` elsewhere.
    fn memory_available(&self) -> Option<usize> {
        let info = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
        let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    }
}

impl CpuBackend {
    /// The hopping term of `wilson_dslash`, with the clover epilogue of
    /// `wilson_clover_dslash` when `clover` is given.
    #[allow(clippy::too_many_arguments)]
    fn dslash_with(
        &self,
        out: &mut CpuSpinor,
        parity: Parity,
        gauge: &CpuGauge,
        inp: &CpuSpinor,
        dagger: bool,
        a: f64,
        x: Option<&CpuSpinor>,
        clover: Option<(&CloverData, CloverForm)>,
    ) -> Result<()> {
        let lat = gauge.lattice.clone();
        let staggered = [Some(&*out), Some(inp), x]
            .into_iter()
            .flatten()
            .any(|f| f.fermion() != Fermion::Wilson);
        if staggered {
            return Err(Error::Internal(
                "dslash: a staggered field in the Wilson dslash".into(),
            ));
        }
        if out.lattice != lat || inp.lattice != lat || x.is_some_and(|x| x.lattice != lat) {
            return Err(Error::Internal(
                "dslash: fields on different lattices".into(),
            ));
        }
        let vh = lat.half_volume();
        let o0 = parity_start(out.subset, parity, vh, "the output")?;
        let i0 = parity_start(inp.subset, parity.other(), vh, "the input")?;
        let xv = match x {
            Some(x) => Some(x.data.view(parity_start(x.subset, parity, vh, "x")?, vh)),
            None => None,
        };
        let iv = inp.data.view(i0, vh);
        let mut ov = out.data.view_mut(o0, vh);
        let links = &gauge.links;
        let (t_sign, pool) = (gauge.t_sign, &self.pool);
        let cut = self.cut().filter(|_| !gauge.local);
        let (r, gauge_faces) = match (cut, &gauge.faces) {
            (None, _) => {
                pool.install(|| {
                    let whole = halo::Region::Whole;
                    wilson::dslash(
                        &lat, parity, links, t_sign, ov, iv, xv, dagger, a, clover, whole, None,
                    )
                });
                return Ok(());
            }
            (Some(r), Some(f)) => (r, f),
            (Some(_), None) => {
                return Err(Error::Internal(
                    "dslash: links stored without their faces on a cut lattice".into(),
                ))
            }
        };
        // On a cut lattice the interior sites are computed while the
        // input's faces travel, the edge sites when they have arrived.
        let interior = &gauge_faces.interior[parity.index()];
        pool.install(|| {
            let (spinors, ()) = rayon::join(
                || halo::exchange_spinor_faces(r, &lat, parity, &iv, gauge_faces, storage::SITE),
                || {
                    let (o, inside) = (ov.reborrow(), halo::Region::Interior(interior));
                    wilson::dslash(
                        &lat, parity, links, t_sign, o, iv, xv, dagger, a, clover, inside, None,
                    )
                },
            );
            let g = &r.grid;
            let faces = wilson::Faces {
                local: lat.dims(),
                partitioned: [0, 1, 2, 3].map(|mu| g.is_partitioned(mu)),
                spinors: &spinors?,
                links: gauge_faces,
                t_last_here: g.coords()[3] == g.grid()[3] - 1,
                t_first_here: g.coords()[3] == 0,
            };
            let edges = halo::Region::Edges(interior);
            wilson::dslash(
                &lat,
                parity,
                links,
                t_sign,
                ov,
                iv,
                xv,
                dagger,
                a,
                clover,
                edges,
                Some(&faces),
            );
            Ok(())
        })
    }
}

/// Views complex numbers as interleaved (re, im) reals.
pub fn complex_as_reals(v: &[C64]) -> &[f64] {
    bytemuck::cast_slice(v)
}

/// Mutable form of `complex_as_reals`.
pub fn complex_as_reals_mut(v: &mut [C64]) -> &mut [f64] {
    bytemuck::cast_slice_mut(v)
}
