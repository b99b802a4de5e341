//! The CPU backend: multi-threaded (a rayon pool owned by the context, so
//! contexts in different threads share nothing), double and single storage.

mod blas;
mod storage;
mod wilson;

use std::sync::Arc;

use num_complex::Complex64 as C64;

pub use storage::{Data, Real};

use super::{Backend, GaugeStorage, SpinorField};
use crate::error::{Error, Result};
use crate::field::{GaugeField, HostSpinor, SPINOR_REALS};
use crate::lattice::{Lattice, Parity, Subset};
use crate::precision::{Precision, Reconstruct, TBoundary};

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
}

impl CpuSpinor {
    /// The raw numbers (for tests and the CUDA backend's checks).
    pub fn data(&self) -> &Data {
        &self.data
    }
}

/// A gauge field in CPU memory: `[parity][cb][mu][18]`, boundary sign folded in.
#[derive(Debug, Clone)]
pub struct CpuGauge {
    lattice: Arc<Lattice>,
    links: Data,
}

impl GaugeStorage for CpuGauge {
    fn lattice(&self) -> &Arc<Lattice> {
        &self.lattice
    }
    fn precision(&self) -> Precision {
        self.links.precision()
    }
    fn reconstruct(&self) -> Reconstruct {
        Reconstruct::Full18
    }
}

/// The CPU backend with its own thread pool.
pub struct CpuBackend {
    pool: rayon::ThreadPool,
}

impl CpuBackend {
    /// `num_threads` = 0 uses one thread per core.
    pub fn new(num_threads: usize) -> Result<CpuBackend> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(num_threads)
            .thread_name(|i| format!("latsol-cpu-{i}"))
            .build()
            .map_err(|e| Error::Internal(format!("cannot start the CPU thread pool: {e}")))?;
        Ok(CpuBackend { pool })
    }

    pub fn num_threads(&self) -> usize {
        self.pool.current_num_threads()
    }
}

fn unsupported_precision(what: &str, p: Precision) -> Error {
    Error::Unsupported(format!(
        "{what} precision {p:?} on the CPU backend (double and single are available)"
    ))
}

fn check_same(what: &str, a: &CpuSpinor, b: &CpuSpinor) -> Result<()> {
    if a.subset != b.subset || a.lattice != b.lattice {
        return Err(Error::Internal(format!(
            "{what}: fields of different subsets ({:?} vs {:?}) or lattices",
            a.subset, b.subset
        )));
    }
    Ok(())
}

/// Runs `$body` with `$x`, `$y` bound to the slices of two fields of one precision.
macro_rules! same_precision {
    ($op:literal, $x:ident, $y:ident, $body:expr) => {
        match (&$x.data, &$y.data) {
            (Data::F64($x), Data::F64($y)) => Ok($body),
            (Data::F32($x), Data::F32($y)) => Ok($body),
            _ => Err(Error::Internal(format!(
                "{}: fields of different precisions",
                $op
            ))),
        }
    };
}

/// As `same_precision!`, with `$y` mutable.
macro_rules! same_precision_mut {
    ($op:literal, $x:ident, $y:ident, $body:expr) => {
        match (&$x.data, &mut $y.data) {
            (Data::F64($x), Data::F64($y)) => Ok($body),
            (Data::F32($x), Data::F32($y)) => Ok($body),
            _ => Err(Error::Internal(format!(
                "{}: fields of different precisions",
                $op
            ))),
        }
    };
}

/// The parity half `p` of a field's numbers (the whole field if single-parity).
fn half<R>(v: &[R], subset: Subset, p: Parity, vh: usize) -> Result<&[R]> {
    match subset {
        Subset::Full => Ok(&v[p.index() * vh * SPINOR_REALS..(p.index() + 1) * vh * SPINOR_REALS]),
        Subset::Single(q) if q == p => Ok(v),
        Subset::Single(q) => Err(Error::Internal(format!(
            "dslash: a field of parity {q:?} where {p:?} is needed"
        ))),
    }
}

fn half_mut<R>(v: &mut [R], subset: Subset, p: Parity, vh: usize) -> Result<&mut [R]> {
    match subset {
        Subset::Full => {
            Ok(&mut v[p.index() * vh * SPINOR_REALS..(p.index() + 1) * vh * SPINOR_REALS])
        }
        Subset::Single(q) if q == p => Ok(v),
        Subset::Single(q) => Err(Error::Internal(format!(
            "dslash: an output of parity {q:?} where {p:?} is computed"
        ))),
    }
}

impl Backend for CpuBackend {
    type Spinor = CpuSpinor;
    type Gauge = CpuGauge;

    fn name(&self) -> &'static str {
        "cpu"
    }

    fn upload_gauge(
        &self,
        gauge: &GaugeField,
        t_boundary: TBoundary,
        precision: Precision,
        reconstruct: Reconstruct,
    ) -> Result<CpuGauge> {
        if reconstruct != Reconstruct::Full18 {
            return Err(Error::Unsupported(format!(
                "reconstruct {reconstruct:?} on the CPU backend (18 is available)"
            )));
        }
        let lat = gauge.lattice().clone();
        let t_last = lat.dims()[3] - 1;
        let vh = lat.half_volume();
        let mut reals = vec![0.0f64; 4 * lat.volume() * 18];
        for p in [Parity::Even, Parity::Odd] {
            for cb in 0..vh {
                let on_last_slice = lat.coords(p, cb)[3] == t_last;
                for mu in 0..4 {
                    let i = (p.index() * vh + cb) * 4 + mu;
                    let out = &mut reals[i * 18..(i + 1) * 18];
                    gauge.link(p, cb, mu).to_row_major(out);
                    if mu == 3 && on_last_slice {
                        out.iter_mut().for_each(|v| *v *= t_boundary.sign());
                    }
                }
            }
        }
        let links = match precision {
            Precision::Double => Data::F64(reals),
            Precision::Single => Data::F32(reals.iter().map(|&v| v as f32).collect()),
            p => return Err(unsupported_precision("gauge", p)),
        };
        Ok(CpuGauge {
            lattice: lat,
            links,
        })
    }

    fn alloc_spinor(
        &self,
        lattice: &Arc<Lattice>,
        subset: Subset,
        precision: Precision,
    ) -> Result<CpuSpinor> {
        let len = lattice.sites(subset) * SPINOR_REALS;
        let data = Data::zeros(precision, len)
            .ok_or_else(|| unsupported_precision("spinor", precision))?;
        Ok(CpuSpinor {
            lattice: lattice.clone(),
            subset,
            data,
        })
    }

    fn upload_spinor(&self, dst: &mut CpuSpinor, src: &HostSpinor) -> Result<()> {
        if dst.subset != src.subset() || &dst.lattice != src.lattice() {
            return Err(Error::Internal("upload_spinor: subsets differ".into()));
        }
        let reals: &[f64] = complex_as_reals(src.data());
        self.pool.install(|| match &mut dst.data {
            Data::F64(d) => blas::convert(d, reals),
            Data::F32(d) => blas::convert(d, reals),
        });
        Ok(())
    }

    fn download_spinor(&self, src: &CpuSpinor, dst: &mut HostSpinor) -> Result<()> {
        if src.subset != dst.subset() || &src.lattice != dst.lattice() {
            return Err(Error::Internal("download_spinor: subsets differ".into()));
        }
        let reals = complex_as_reals_mut(dst.data_mut());
        self.pool.install(|| match &src.data {
            Data::F64(s) => blas::convert(reals, s),
            Data::F32(s) => blas::convert(reals, s),
        });
        Ok(())
    }

    fn copy(&self, dst: &mut CpuSpinor, src: &CpuSpinor) -> Result<()> {
        check_same("copy", src, dst)?;
        self.pool.install(|| match (&mut dst.data, &src.data) {
            (Data::F64(d), Data::F64(s)) => d.copy_from_slice(s),
            (Data::F32(d), Data::F32(s)) => d.copy_from_slice(s),
            (Data::F64(d), Data::F32(s)) => blas::convert(d, s),
            (Data::F32(d), Data::F64(s)) => blas::convert(d, s),
        });
        Ok(())
    }

    fn zero(&self, x: &mut CpuSpinor) -> Result<()> {
        self.pool.install(|| match &mut x.data {
            Data::F64(v) => blas::fill_zero(v),
            Data::F32(v) => blas::fill_zero(v),
        });
        Ok(())
    }

    fn ax(&self, a: f64, x: &mut CpuSpinor) -> Result<()> {
        self.pool.install(|| match &mut x.data {
            Data::F64(v) => blas::scale(a, v),
            Data::F32(v) => blas::scale(a, v),
        });
        Ok(())
    }

    fn axpy(&self, a: f64, x: &CpuSpinor, y: &mut CpuSpinor) -> Result<()> {
        check_same("axpy", x, y)?;
        same_precision_mut!(
            "axpy",
            x,
            y,
            self.pool.install(|| blas::map_real(x, y, |x, y| a * x + y))
        )
    }

    fn xpay(&self, x: &CpuSpinor, a: f64, y: &mut CpuSpinor) -> Result<()> {
        check_same("xpay", x, y)?;
        same_precision_mut!(
            "xpay",
            x,
            y,
            self.pool.install(|| blas::map_real(x, y, |x, y| x + a * y))
        )
    }

    fn axpby(&self, a: f64, x: &CpuSpinor, b: f64, y: &mut CpuSpinor) -> Result<()> {
        check_same("axpby", x, y)?;
        same_precision_mut!(
            "axpby",
            x,
            y,
            self.pool
                .install(|| blas::map_real(x, y, |x, y| a * x + b * y))
        )
    }

    fn caxpy(&self, a: C64, x: &CpuSpinor, y: &mut CpuSpinor) -> Result<()> {
        check_same("caxpy", x, y)?;
        same_precision_mut!("caxpy", x, y, {
            self.pool.install(|| blas::caxpy_norm2(a, x, y));
        })
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
        match (&x.data, &y.data, &mut z.data) {
            (Data::F64(x), Data::F64(y), Data::F64(z)) => {
                self.pool.install(|| blas::cxpaypbz(x, a, y, b, z))
            }
            (Data::F32(x), Data::F32(y), Data::F32(z)) => {
                self.pool.install(|| blas::cxpaypbz(x, a, y, b, z))
            }
            _ => {
                return Err(Error::Internal(
                    "cxpaypbz: fields of different precisions".into(),
                ))
            }
        }
        Ok(())
    }

    fn norm2(&self, x: &CpuSpinor) -> Result<f64> {
        Ok(self.pool.install(|| match &x.data {
            Data::F64(v) => blas::norm2(v),
            Data::F32(v) => blas::norm2(v),
        }))
    }

    fn cdot(&self, x: &CpuSpinor, y: &CpuSpinor) -> Result<C64> {
        Ok(self.cdot_norm2(x, y)?.0)
    }

    fn cdot_norm2(&self, x: &CpuSpinor, y: &CpuSpinor) -> Result<(C64, f64)> {
        check_same("cdot_norm2", x, y)?;
        same_precision!(
            "cdot_norm2",
            x,
            y,
            self.pool.install(|| blas::cdot_norm2(x, y))
        )
    }

    fn axpy_norm2(&self, a: f64, x: &CpuSpinor, y: &mut CpuSpinor) -> Result<f64> {
        check_same("axpy_norm2", x, y)?;
        same_precision_mut!(
            "axpy_norm2",
            x,
            y,
            self.pool.install(|| blas::axpy_norm2(a, x, y))
        )
    }

    fn caxpy_norm2(&self, a: C64, x: &CpuSpinor, y: &mut CpuSpinor) -> Result<f64> {
        check_same("caxpy_norm2", x, y)?;
        same_precision_mut!(
            "caxpy_norm2",
            x,
            y,
            self.pool.install(|| blas::caxpy_norm2(a, x, y))
        )
    }

    fn xmy_norm2(&self, x: &CpuSpinor, y: &mut CpuSpinor) -> Result<f64> {
        check_same("xmy_norm2", x, y)?;
        same_precision_mut!(
            "xmy_norm2",
            x,
            y,
            self.pool.install(|| blas::xmy_norm2(x, y))
        )
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
        let lat = gauge.lattice.clone();
        if out.lattice != lat || inp.lattice != lat || x.is_some_and(|x| x.lattice != lat) {
            return Err(Error::Internal(
                "dslash: fields on different lattices".into(),
            ));
        }
        let vh = lat.half_volume();
        let (os, is, xs) = (out.subset, inp.subset, x.map(|x| x.subset));
        macro_rules! run {
            ($o:ident, $i:ident, $x:expr, $g:ident) => {{
                let o = half_mut($o, os, parity, vh)?;
                let i = half($i, is, parity.other(), vh)?;
                let xh = match ($x, xs) {
                    (Some(xv), Some(xsub)) => Some(half(xv, xsub, parity, vh)?),
                    _ => None,
                };
                self.pool
                    .install(|| wilson::dslash(&lat, parity, $g, o, i, xh, dagger, a));
            }};
        }
        macro_rules! with_gauge {
            ($o:ident, $i:ident, $x:expr) => {
                match &gauge.links {
                    Data::F64(g) => run!($o, $i, $x, g),
                    Data::F32(g) => run!($o, $i, $x, g),
                }
            };
        }
        match (&mut out.data, &inp.data, x.map(|x| &x.data)) {
            (Data::F64(o), Data::F64(i), None) => with_gauge!(o, i, None::<&[f64]>),
            (Data::F64(o), Data::F64(i), Some(Data::F64(xv))) => {
                with_gauge!(o, i, Some(xv.as_slice()))
            }
            (Data::F32(o), Data::F32(i), None) => with_gauge!(o, i, None::<&[f32]>),
            (Data::F32(o), Data::F32(i), Some(Data::F32(xv))) => {
                with_gauge!(o, i, Some(xv.as_slice()))
            }
            _ => {
                return Err(Error::Internal(
                    "dslash: fields of different precisions".into(),
                ))
            }
        }
        Ok(())
    }

    fn gamma5(&self, out: &mut CpuSpinor, inp: &CpuSpinor) -> Result<()> {
        check_same("gamma5", inp, out)?;
        same_precision_mut!(
            "gamma5",
            inp,
            out,
            self.pool.install(|| blas::gamma5(out, inp))
        )
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
