//! `Gauge`: a gauge field converted from the host's order, checked, and
//! stored on its context's backend.

use std::any::Any;
use std::sync::Arc;

use super::context_inner::ContextInner;
use super::params::{GaugeParams, Verbosity};
use crate::backend::GaugeScan;
use crate::error::{Error, Result};
use crate::field::GaugeField;
use crate::lattice::{Lattice, Parity};
use crate::layout::{self, HostGauge};

/// A stored format: precision and compression.
type Formats = (crate::precision::Precision, crate::precision::Reconstruct);

/// A caller's field after its checks: stored by the backend with its
/// scan, or converted on the host.
enum Converted {
    OnBackend(GaugeScan, Vec<Box<dyn Any + Send + Sync>>),
    OnHost(GaugeField),
}

/// A gauge field loaded into a context.
pub struct Gauge {
    context: Arc<ContextInner>,
    params: GaugeParams,
    lattice: Arc<Lattice>,
    plaquette: [f64; 3],
    storage: Box<dyn Any + Send + Sync>,
    /// The sloppy copy, when its precision or compression differs.
    sloppy: Option<Box<dyn Any + Send + Sync>>,
}

/// Freeing a gauge field frees the solve buffers the context kept (they
/// served solves on it; `latsol_gauge_free`, QUDA's `freeGaugeQuda`).
impl Drop for Gauge {
    fn drop(&mut self) {
        self.context.release_workspaces();
    }
}

impl Gauge {
    pub(crate) fn load(
        ctx: &Arc<ContextInner>,
        params: &GaugeParams,
        host: &HostGauge,
    ) -> Result<Gauge> {
        // The local steps (checks, conversion) agreed over the ranks before
        // the first collective one (the plaquette, the stored links' faces).
        let start = std::time::Instant::now();
        let local = Gauge::convert(ctx, params, host);
        let (lattice, formats, converted) = ctx.agree(local)?;
        ctx.check_same_local(lattice.dims())?;
        let (plaquette, mut stored, path) = match converted {
            Converted::OnBackend(scan, stored) => (scan.plaquette, stored, "on the backend"),
            Converted::OnHost(field) => {
                let plaquette = ctx.plaquette(&field)?;
                let stored = formats
                    .iter()
                    .map(|&(p, r)| ctx.upload_gauge(&field, params, p, r))
                    .collect::<Result<Vec<_>>>()?;
                (plaquette, stored, "on the host")
            }
        };
        let sloppy = (stored.len() > 1).then(|| stored.pop().expect("two stored"));
        let storage = stored.pop().expect("one stored");
        ctx.log(
            Verbosity::Verbose,
            &format!(
                "gauge {:?} loaded: plaquette {:.12} (spatial {:.12}, temporal {:.12})",
                params.dims, plaquette[0], plaquette[1], plaquette[2]
            ),
        );
        ctx.log(
            Verbosity::Debug,
            &format!(
                "gauge load {:.3} s: converted and checked {path}, {} format(s) stored",
                start.elapsed().as_secs_f64(),
                formats.len()
            ),
        );
        Ok(Gauge {
            context: ctx.clone(),
            params: *params,
            lattice,
            plaquette,
            storage,
            sloppy,
        })
    }

    /// The caller's field checked and converted: stored by the backend
    /// itself where it can (CUDA), else on the host for `upload_gauge`.
    fn convert(
        ctx: &Arc<ContextInner>,
        params: &GaugeParams,
        host: &HostGauge,
    ) -> Result<(Arc<Lattice>, Vec<Formats>, Converted)> {
        params.validate()?;
        let lattice = Arc::new(Lattice::new(params.dims)?);
        let order = host.order();
        if order != params.order {
            return Err(Error::InvalidArgument(format!(
                "order = {:?} but the host field was passed as {order:?}",
                params.order
            )));
        }
        layout::gauge::check_lengths(&lattice, host)?;
        let mut formats = vec![(params.precision, params.reconstruct)];
        if (params.precision_sloppy, params.reconstruct_sloppy)
            != (params.precision, params.reconstruct)
        {
            formats.push((params.precision_sloppy, params.reconstruct_sloppy));
        }
        // The backend's own path first (the CUDA backend: checks and stores
        // on the device); the host path where it has none, or where a check
        // fails (it words the error, naming the link).
        let su3_tol = su3_tolerance(params, host);
        let temporal_tol = params.gauge_fixed.then(|| link_tolerance(params, host));
        let accept = |scan: &GaugeScan| {
            su3_tol.is_none_or(|t| scan.max_su3_deviation <= t)
                && temporal_tol.is_none_or(|t| scan.max_temporal_deviation <= t)
        };
        if let Some((scan, stored)) = ctx.import_gauge(&lattice, host, params, &formats, &accept)? {
            return Ok((lattice, formats, Converted::OnBackend(scan, stored)));
        }
        let mut field = layout::gauge::import(&lattice, host)?;
        // The sign sits on the whole lattice's last time slice: on many
        // ranks, on the ranks that hold it.
        if params.boundary_sign_in_links && ctx.holds_last_t() {
            remove_boundary_sign(&mut field);
        }
        check_su3(&field, su3_tol, params)?;
        if params.gauge_fixed {
            check_temporal_gauge(&field, params, host)?;
        }
        Ok((lattice, formats, Converted::OnHost(field)))
    }

    pub fn lattice(&self) -> &Arc<Lattice> {
        &self.lattice
    }
    pub fn params(&self) -> &GaugeParams {
        &self.params
    }
    /// Average, spatial and temporal plaquette, `Re tr U_p / 3`.
    pub fn plaquette(&self) -> [f64; 3] {
        self.plaquette
    }
    pub(crate) fn context(&self) -> &Arc<ContextInner> {
        &self.context
    }
    pub(crate) fn storage(&self) -> &(dyn Any + Send + Sync) {
        self.storage.as_ref()
    }
    pub(crate) fn storage_sloppy(&self) -> &(dyn Any + Send + Sync) {
        self.sloppy.as_deref().unwrap_or(self.storage.as_ref())
    }
}

/// Takes the anti-periodic sign out of the T links of the last time slice
/// (`boundary_sign_in_links`): every real negated, as the device path does.
fn remove_boundary_sign(field: &mut GaugeField) {
    let lat = field.lattice().clone();
    let t_last = lat.dims()[3] - 1;
    for p in [Parity::Even, Parity::Odd] {
        for cb in 0..lat.half_volume() {
            if lat.coords(p, cb)[3] == t_last {
                for z in field.link_mut(p, cb, 3).0.iter_mut().flatten() {
                    *z = -*z;
                }
            }
        }
    }
}

/// With `gauge_fixed`, refuses a field whose T links off the last time
/// slice are not unit within the SU(3) tolerance: the backend would replace
/// them by 1 and solve a different system.
fn check_temporal_gauge(field: &GaugeField, params: &GaugeParams, host: &HostGauge) -> Result<()> {
    // Not optional (a negative su3_tolerance skips only the SU(3) check):
    // a non-unit link here would silently be replaced by 1.
    let tol = link_tolerance(params, host);
    let lat = field.lattice();
    let t_last = lat.dims()[3] - 1;
    for p in [Parity::Even, Parity::Odd] {
        for cb in 0..lat.half_volume() {
            let x = lat.coords(p, cb);
            if x[3] == t_last {
                continue;
            }
            let u = field.link(p, cb, 3);
            let dev = (0..3)
                .flat_map(|i| (0..3).map(move |j| (i, j)))
                .map(|(i, j)| (u.0[i][j] - if i == j { 1.0 } else { 0.0 }).norm())
                .fold(0.0f64, f64::max);
            if dev > tol {
                return Err(Error::InvalidArgument(format!(
                    "gauge_fixed: the T link at x = {x:?} differs from the unit matrix by \
                     {dev:.3e} > {tol:.1e}; in temporal gauge only the last time slice \
                     (t = {t_last}) may hold non-unit T links"
                )));
            }
        }
    }
    Ok(())
}

/// The tolerance of the link checks: the caller's, or 1e-10 for double and
/// 1e-5 for single host fields.
fn link_tolerance(params: &GaugeParams, host: &HostGauge) -> f64 {
    match params.su3_tolerance {
        t if t > 0.0 => t,
        _ if host.is_single() => 1e-5,
        _ => 1e-10,
    }
}

/// The tolerance of the SU(3) check, `None` when it is skipped (a negative
/// `su3_tolerance` with uncompressed links: compressed links are rebuilt
/// assuming SU(3), so for them the check is not optional).
fn su3_tolerance(params: &GaugeParams, host: &HostGauge) -> Option<f64> {
    let compressed = params.reconstruct != crate::precision::Reconstruct::Full18
        || params.reconstruct_sloppy != crate::precision::Reconstruct::Full18;
    let default = if host.is_single() { 1e-5 } else { 1e-10 };
    match params.su3_tolerance {
        t if t < 0.0 && !compressed => None,
        t if t > 0.0 => Some(t),
        _ => Some(default),
    }
}

/// Refuses links that are not SU(3) within the tolerance.
fn check_su3(field: &GaugeField, tol: Option<f64>, params: &GaugeParams) -> Result<()> {
    let Some(tol) = tol else {
        return Ok(());
    };
    let compressed = params.reconstruct != crate::precision::Reconstruct::Full18
        || params.reconstruct_sloppy != crate::precision::Reconstruct::Full18;
    let (dev, i) = field.max_su3_deviation();
    if dev > tol {
        let lat = field.lattice();
        let site = i / 4;
        let (p, cb) = (
            Parity::from_index(site / lat.half_volume()),
            site % lat.half_volume(),
        );
        return Err(Error::InvalidArgument(format!(
            "gauge link U_{}(x = {:?}) is not in SU(3): deviation {dev:.3e} > tolerance {tol:.1e}{}",
            i % 4,
            lat.coords(p, cb),
            if compressed { " (reconstruct 12/8 needs SU(3) links)" } else { "" }
        )));
    }
    Ok(())
}
