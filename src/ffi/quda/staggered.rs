//! The staggered operators through `quda.h` (`dslash_type` STAGGERED and
//! ASQTAD): `loadGaugeQuda` with `type` ASQTAD_FAT_LINKS (the one-hop
//! links) and ASQTAD_LONG_LINKS (the Naik links, 18 reals or QUDA's
//! reconstruct 13/9), then `invertQuda` and `invertMultiShiftQuda`. The
//! naive operator (STAGGERED) runs, as in QUDA (`setDiracParam`: the
//! precise field unless ASQTAD), on the WILSON_LINKS field, used as given
//! (the phases and the boundary sign in them, as QUDA's tests and MILC's
//! interface pass them); without one, on the fat links (a latsol extension).
//!
//! QUDA's contracts (lib/interface_quda.cpp, lib/dirac_improved_staggered.cpp,
//! lib/solve.cpp; docs/quda-compat.md): fat and long links are used as
//! given, with the staggered phases, the boundary sign and the Naik
//! coefficient in them (QUDA applies no phase to them).
//! `M = 2m − D`, `M̂ = 4m² − D_pq D_qp` on the `matpc_type` parity; the
//! MATPC solution is that system on V/2-site vectors (from the initial
//! guess with `use_init_guess`); mass normalization KAPPA multiplies the
//! source (and the multi-shift offsets) by 2m, MASS leaves them.
//! Colour vectors: 3 complex numbers a site, even sites first.

use super::offsets::{tol_or, Offsets};
use std::os::raw::{c_int, c_void};
use std::time::Instant;

use super::abi::*;
use super::convert;
use super::host::{host_gauge, host_reals, host_reals_mut, not_null};
use super::state::{self, HostLinks, StaggeredHost};
use crate::api::{
    PhaseFolding, SolverType, StaggeredInvertParams, StaggeredParams, StaggeredSolve,
};
use crate::error::{Error, Result};
use crate::lattice::{Lattice, Parity};
use crate::layout::{GaugeOrder, HostGauge, HostReals, HostRealsMut};
use crate::long_links::LongReconstruct;

/// The caller's staggered links, checked and copied (`load_links`).
///
/// # Safety
/// As `load_links`.
unsafe fn read_links(
    h_gauge: *mut c_void,
    p: &QudaGaugeParam,
) -> Result<([usize; 4], HostLinks, LongReconstruct)> {
    let mut dims = [0usize; 4];
    for (d, &x) in dims.iter_mut().zip(&p.X) {
        if x <= 0 {
            return Err(Error::InvalidArgument(format!(
                "param->X = {:?}: positive extents",
                p.X
            )));
        }
        *d = x as usize;
    }
    let order = convert::gauge_order(p.gauge_order)?;
    let double = convert::host_is_double(p.cpu_prec, "param->cpu_prec")?;
    // The device precisions are the solve's (QudaInvertParam); these are
    // checked as QUDA checks them.
    let precision = convert::precision(p.cuda_prec, "param->cuda_prec")?;
    convert::precision_or(p.cuda_prec_sloppy, "param->cuda_prec_sloppy", precision)?;
    let lat = std::sync::Arc::new(Lattice::new(dims)?);
    let n = lat.volume() * 18;
    // SAFETY: the caller's links.
    let host = unsafe { host_gauge(h_gauge, order, n, double)? };
    // The arrays as given, copied in parallel; the device converts them at
    // the first solve. A non-finite link is refused here, named by the
    // host import.
    let links = if order == GaugeOrder::CpsWilson {
        HostLinks::from_qdp(to_qdp(&lat, &host)?)
    } else {
        HostLinks::copy(&host)?
    };
    if !links.all_finite() {
        crate::layout::gauge::import(&lat, &host)?;
        return Err(Error::InvalidArgument(
            "h_gauge holds a number that is not finite (NaN or Inf)".into(),
        ));
    }
    let long_reconstruct = match p.reconstruct {
        QUDA_RECONSTRUCT_NO => LongReconstruct::Full18,
        QUDA_RECONSTRUCT_13 if p.r#type == QUDA_ASQTAD_LONG_LINKS => LongReconstruct::Thirteen,
        QUDA_RECONSTRUCT_9 if p.r#type == QUDA_ASQTAD_LONG_LINKS => LongReconstruct::Nine,
        r => {
            return Err(convert::refuse(
                "param->reconstruct",
                r as i64,
                "fat links are stored in 18 reals, long links in 18, 13 or 9",
            ))
        }
    };
    Ok((dims, links, long_reconstruct))
}

/// `loadGaugeQuda` for ASQTAD_FAT_LINKS and ASQTAD_LONG_LINKS.
///
/// # Safety
/// `h_gauge` holds the links in `p.gauge_order`.
pub(crate) unsafe fn load_links(h_gauge: *mut c_void, p: &QudaGaugeParam) -> Result<()> {
    // SAFETY: forwarded.
    let read = unsafe { read_links(h_gauge, p) };
    state::with(|s| {
        // Agreed over the ranks: a load refused on one is refused on all.
        let (dims, links, long_reconstruct) = s.context.agree(read)?;
        if s.staggered.as_ref().is_none_or(|h| h.dims != dims) {
            s.staggered = Some(StaggeredHost::empty(dims));
        }
        let h = s.staggered.as_mut().expect("set above");
        h.stored = None;
        if p.r#type == QUDA_ASQTAD_LONG_LINKS {
            h.long = Some(links);
            h.long_reconstruct = long_reconstruct;
        } else {
            h.fat = Some(links);
        }
        Ok(())
    })
}

fn qdp_of(v: &[Vec<f64>; 4]) -> HostGauge<'_> {
    HostGauge::Qdp(std::array::from_fn(|mu| HostReals::F64(&v[mu])))
}

/// `host` in QDP order and double, as given otherwise (no phase, no sign
/// taken out): for links whose order the staggered loader does not read,
/// or that differ from their partner's.
fn to_qdp(lat: &std::sync::Arc<Lattice>, host: &HostGauge) -> Result<[Vec<f64>; 4]> {
    let field = crate::layout::gauge::import(lat, host)?;
    let n = lat.volume() * 18;
    let mut qdp = Vec::with_capacity(4);
    for _ in 0..4 {
        qdp.push(crate::alloc::filled(
            n,
            0.0f64,
            "the QUDA interface's staggered links",
        )?);
    }
    {
        let mut parts: Vec<HostRealsMut> = qdp.iter_mut().map(|v| HostRealsMut::F64(v)).collect();
        crate::layout::gauge::export(&field, GaugeOrder::Qdp, &mut parts)?;
    }
    Ok(qdp.try_into().expect("four directions"))
}

/// What the caller's vectors are.
#[derive(Clone, Copy, PartialEq, Eq)]
enum System {
    /// `M x = b`, full lattice.
    Mat,
    /// `M̂ x_p = b_p`.
    MatPc,
}

/// `invertQuda` and `invertMultiShiftQuda` for the staggered operators.
///
/// # Safety
/// As `invertQuda` (`xs` one solution without offsets, else `num_offset`).
pub(crate) unsafe fn invert(
    xs: &[*mut c_void],
    h_b: *mut c_void,
    p: &mut QudaInvertParam,
    multishift: bool,
) -> Result<()> {
    let start = Instant::now();
    convert::check_struct_size(
        "param",
        p.struct_size,
        std::mem::size_of::<QudaInvertParam>(),
    )?;
    let improved = p.dslash_type == QUDA_ASQTAD_DSLASH;
    let system = match p.solution_type {
        QUDA_MAT_SOLUTION if !multishift => System::Mat,
        QUDA_MATPC_SOLUTION => System::MatPc,
        v => {
            return Err(convert::refuse(
                "param->solution_type",
                v as i64,
                "staggered solves are MAT or MATPC (multi-shift: MATPC), as in QUDA",
            ))
        }
    };
    let parity = match p.matpc_type {
        QUDA_MATPC_EVEN_EVEN => Parity::Even,
        QUDA_MATPC_ODD_ODD => Parity::Odd,
        v => {
            return Err(convert::refuse(
                "param->matpc_type",
                v as i64,
                "EVEN_EVEN or ODD_ODD",
            ))
        }
    };
    let solve = match (system, p.solve_type) {
        (_, QUDA_DIRECT_PC_SOLVE) => StaggeredSolve::EvenOdd(parity),
        (System::MatPc, v) => {
            return Err(convert::refuse(
                "param->solve_type",
                v as i64,
                "a MATPC solution needs DIRECT_PC (as in QUDA)",
            ))
        }
        (System::Mat, QUDA_DIRECT_SOLVE | QUDA_NORMOP_SOLVE) => StaggeredSolve::Full,
        (_, v) => {
            return Err(convert::refuse(
                "param->solve_type",
                v as i64,
                "not a staggered solve",
            ))
        }
    };
    if p.dagger != QUDA_DAG_NO {
        return Err(convert::refuse(
            "param->dagger",
            p.dagger as i64,
            "staggered solves with DAG_NO",
        ));
    }
    // The Krylov solver: QUDA's multi-shift solver is CG whatever
    // `inv_type` says; `invertQuda` runs CG (CGNR on the full system),
    // BiCGstab or BiCGstab(l) (l from `gcrNkrylov`; both on M itself for
    // the full system); GCR is refused (validation: it needs SAP).
    let (solver, bicgstab_l) = match (multishift, convert::solver(p.inv_type)) {
        (true, _) => (SolverType::Cg, StaggeredInvertParams::default().bicgstab_l),
        (false, Ok(SolverType::BiCgStabL)) => (SolverType::BiCgStabL, super::gcr::bicgstab_l(p)?),
        (false, s) => (s?, StaggeredInvertParams::default().bicgstab_l),
    };
    let double = convert::host_is_double(p.cpu_prec, "param->cpu_prec")?;
    let precision = convert::precision(p.cuda_prec, "param->cuda_prec")?;
    let sloppy = convert::precision_or(p.cuda_prec_sloppy, "param->cuda_prec_sloppy", precision)?;
    let m = p.mass;
    let factor = match convert::mass_normalization(p.mass_normalization)? {
        // The caller's operator is M/(2m) (M̂/(2m) for MATPC, the
        // multi-shift systems included).
        crate::api::MassNormalization::Kappa => 2.0 * m,
        _ => 1.0,
    };
    if p.maxiter <= 0 {
        return Err(Error::InvalidArgument(format!(
            "param->maxiter = {}: must be positive",
            p.maxiter
        )));
    }
    // The offsets checked before any solve (QUDA's order and values).
    let systems = if multishift {
        let count = xs.len();
        let tols: Vec<f64> = p.tol_offset[..count]
            .iter()
            .map(|&t| tol_or(t, p.tol))
            .collect();
        Some(Offsets::new(
            &p.offset[..count],
            &tols,
            "param->offset",
            "param->tol_offset",
        )?)
    } else {
        None
    };
    let hq = p.residual_type & QUDA_HEAVY_QUARK_RESIDUAL != 0;
    // The heavy-quark criterion alone when no L2 bit is set (QUDA's CG).
    let l2 = p.residual_type & (QUDA_L2_RELATIVE_RESIDUAL | QUDA_L2_ABSOLUTE_RESIDUAL) != 0;
    state::with(|s| {
        let (context, h) = stored_links(s, improved, (precision, sloppy), "invertQuda")?;
        let links = &h.stored.as_ref().expect("stored").1;
        let v: usize = h.dims.iter().product();
        let n = match system {
            System::Mat => v * 6,
            System::MatPc => v * 3,
        };
        // SAFETY: the caller's source of the system's size.
        let b: Vec<f64> = match unsafe { host_reals(h_b, n, double) } {
            HostReals::F64(x) => x.iter().map(|y| y * factor).collect(),
            HostReals::F32(x) => x.iter().map(|&y| y as f64 * factor).collect(),
        };
        let ip = StaggeredInvertParams {
            mass: if multishift { f64::MIN_POSITIVE } else { m },
            solve,
            tol: if l2 || multishift || !hq { p.tol } else { 0.0 },
            tol_hq: if hq && !multishift { p.tol_hq } else { 0.0 },
            maxiter: p.maxiter as usize,
            precision,
            precision_sloppy: sloppy,
            reliable_delta: p.reliable_delta,
            cg_stabilised: true,
            use_init_guess: p.use_init_guess == QUDA_USE_INIT_GUESS_YES && !multishift,
            progress_every: super::state::progress_every(),
            measure_multishift_phase: false,
            precision_refinement: None,
            multishift_refinement: Default::default(),
            solver,
            bicgstab_l,
        };
        let mut outs: Vec<Vec<f64>> = xs
            .iter()
            .map(|&x| {
                if ip.use_init_guess {
                    // SAFETY: the caller's guess of the system's size.
                    match unsafe { host_reals(x, n, double) } {
                        HostReals::F64(g) => g.to_vec(),
                        HostReals::F32(g) => g.iter().map(|&y| y as f64).collect(),
                    }
                } else {
                    vec![0.0; n]
                }
            })
            .collect();
        if let Some(systems) = &systems {
            let offsets: Vec<f64> = systems.distinct.iter().map(|o| o * factor).collect();
            let mut solved = vec![vec![0.0; n]; offsets.len()];
            let r = context.invert_multishift_staggered(
                links,
                &ip,
                &offsets,
                Some(&systems.tols),
                HostReals::F64(&b),
                solved.iter_mut().map(|x| HostRealsMut::F64(x)).collect(),
            )?;
            for (i, &k) in systems.system_of.iter().enumerate() {
                outs[i].copy_from_slice(&solved[k]);
                p.true_res_offset[i] = r.shifts[k].true_residual;
                p.iter_res_offset[i] = r.shifts[k].true_residual;
                p.true_res_hq_offset[i] = 0.0;
            }
            p.iter = r.iterations as c_int;
            p.gflops = r.gflops * r.seconds;
        } else {
            let r = match system {
                System::MatPc => context.invert_staggered_parity(
                    links,
                    &ip,
                    HostReals::F64(&b),
                    HostRealsMut::F64(&mut outs[0]),
                )?,
                System::Mat => context.invert_staggered(
                    links,
                    &ip,
                    HostReals::F64(&b),
                    HostRealsMut::F64(&mut outs[0]),
                )?,
            };
            p.iter = r.iterations as c_int;
            p.true_res[0] = r.true_residual;
            p.true_res_hq[0] = r.true_residual_hq;
            p.gflops = r.gflops * r.seconds;
            if !r.converged {
                state::warn(&format!(
                    "invertQuda: residual {:.3e} above tol {:.1e} after {} iterations",
                    r.true_residual, p.tol, r.iterations
                ));
            }
        }
        for (&x, v) in xs.iter().zip(&outs) {
            // SAFETY: the caller's solution arrays of the system's size.
            match unsafe { host_reals_mut(x, n, double) } {
                HostRealsMut::F64(o) => o.copy_from_slice(v),
                HostRealsMut::F32(o) => o.iter_mut().zip(v).for_each(|(o, y)| *o = *y as f32),
            }
        }
        p.secs = start.elapsed().as_secs_f64();
        Ok(())
    })
}

/// The staggered operator's links stored on the implicit context for
/// `precisions` (precise, sloppy), from the fields `loadGaugeQuda` loaded:
/// the improved operator's fat and long links, the naive one's
/// WILSON_LINKS field (else its fat links); kept until the links or the
/// precisions change. Returns the context and the host links' state.
fn stored_links<'s>(
    s: &'s mut state::State,
    improved: bool,
    (precision, sloppy): (crate::precision::Precision, crate::precision::Precision),
    what: &str,
) -> Result<(&'s crate::api::Context, &'s mut StaggeredHost)> {
    let state::State {
        context,
        staggered,
        gauge,
        ..
    } = s;
    let wilson = if improved { None } else { gauge.as_ref() };
    if let Some(g) = wilson {
        let dims = g.gauge.lattice().dims();
        if staggered.as_ref().is_none_or(|h| h.dims != dims) {
            *staggered = Some(StaggeredHost::empty(dims));
        }
    }
    let h = staggered.as_mut().ok_or_else(|| {
        Error::InvalidArgument(format!(
            "{what}: no links for the staggered operator (loadGaugeQuda with \
             WILSON_LINKS, or ASQTAD_FAT_LINKS)"
        ))
    })?;
    let key = (improved, wilson.is_some(), precision, sloppy);
    if h.stored.as_ref().is_none_or(|(k, _)| *k != key) {
        // QUDA applies no phase to the links: they are used as given
        // (MILC's, with the phases, the boundary sign and the Naik
        // coefficient in them).
        let mut params = StaggeredParams {
            dims: h.dims,
            order: GaugeOrder::Qdp,
            precision,
            precision_sloppy: sloppy,
            phases: PhaseFolding::InLinks,
            long_reconstruct: h.long_reconstruct,
            long_reconstruct_sloppy: h.long_reconstruct,
            ..Default::default()
        };
        let links = match wilson {
            Some(g) => {
                let given = g.links.host_gauge();
                if given.order() == GaugeOrder::CpsWilson {
                    let qdp = to_qdp(g.gauge.lattice(), &given)?;
                    context.load_staggered(&params, &qdp_of(&qdp), None)?
                } else {
                    params.order = given.order();
                    context.load_staggered(&params, &given, None)?
                }
            }
            None => {
                let fat = h.fat.as_ref().ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "{what}: no fat links (ASQTAD_FAT_LINKS) are loaded"
                    ))
                })?;
                let long = if improved {
                    Some(h.long.as_ref().ok_or_else(|| {
                        Error::InvalidArgument(format!(
                            "{what}: ASQTAD needs long links (ASQTAD_LONG_LINKS) too"
                        ))
                    })?)
                } else {
                    None
                };
                // The arrays as the caller gave them; a long field in
                // another order than the fat one goes to QDP with it.
                let (fat_h, long_h) = (fat.host_gauge(), long.map(|l| l.host_gauge()));
                match long_h {
                    Some(l) if l.order() != fat_h.order() => {
                        let lat = std::sync::Arc::new(Lattice::new(h.dims)?);
                        let (f, l) = (to_qdp(&lat, &fat_h)?, to_qdp(&lat, &l)?);
                        context.load_staggered(&params, &qdp_of(&f), Some(&qdp_of(&l)))?
                    }
                    _ => {
                        params.order = fat_h.order();
                        context.load_staggered(&params, &fat_h, long_h.as_ref())?
                    }
                }
            }
        };
        h.stored = Some((key, links));
    }
    Ok((context, h))
}

/// Which staggered operator `MatQuda`, `MatDagMatQuda` or `dslashQuda`
/// applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Application {
    /// `MatQuda`: `M = 2m − D` (MAT; `M† = 2m + D` with DAG_YES) on full
    /// fields, or `M̂ = 4m² − D_pq D_qp` (MATPC, on the `matpc_type`
    /// parity; the dagger changes nothing) on V/2-site fields.
    Mat,
    /// `MatDagMatQuda`: `M†M = 4m² − D²` on full fields.
    MatDagMat,
    /// `dslashQuda`: `D_pq` from the other parity into p (−D with
    /// DAG_YES), V/2-site fields.
    Dslash(Parity),
}

/// `MatQuda`, `MatDagMatQuda` and `dslashQuda` for `dslash_type`
/// STAGGERED and ASQTAD, with QUDA 9521952's semantics
/// (lib/interface_quda.cpp, lib/dirac_staggered.cpp,
/// lib/dirac_improved_staggered.cpp): the precise links; after `MatQuda`
/// and `MatDagMatQuda` QUDA's Wilson-style rescale for the MASS and
/// ASYMMETRIC_MASS normalizations (×1/(2κ) for MAT, ×1/(4κ²) for MATPC
/// (ASYMMETRIC: ×1/(2κ)) and MATDAG_MAT), which QUDA applies to
/// staggered operators too; `dslashQuda` scales its input by 1/(2m) with
/// the KAPPA normalization; a MATPC `MatDagMatQuda` is refused, as QUDA
/// refuses it ("MdagM is no longer defined").
///
/// # Safety
/// The caller's vectors hold the operator's sites (V or V/2) of colour
/// vectors (6 reals a site) in `p.cpu_prec`.
pub(crate) unsafe fn apply(
    h_out: *mut c_void,
    h_in: *mut c_void,
    p: &QudaInvertParam,
    what: Application,
    name: &str,
) -> Result<()> {
    not_null(h_out, "h_out")?;
    not_null(h_in, "h_in")?;
    use crate::api::StaggeredOp;
    let improved = p.dslash_type == QUDA_ASQTAD_DSLASH;
    let double = convert::host_is_double(p.cpu_prec, "param->cpu_prec")?;
    let precision = convert::precision(p.cuda_prec, "param->cuda_prec")?;
    let normalization = convert::mass_normalization(p.mass_normalization)?;
    let dagger = p.dagger == QUDA_DAG_YES;
    let parity = match p.matpc_type {
        QUDA_MATPC_EVEN_EVEN | QUDA_MATPC_EVEN_EVEN_ASYMMETRIC => Parity::Even,
        QUDA_MATPC_ODD_ODD | QUDA_MATPC_ODD_ODD_ASYMMETRIC => Parity::Odd,
        v => {
            return Err(convert::refuse(
                "param->matpc_type",
                v as i64,
                "EVEN_EVEN, ODD_ODD or their ASYMMETRIC forms (as QUDA's Dirac requires)",
            ))
        }
    };
    let asymmetric = matches!(
        p.matpc_type,
        QUDA_MATPC_EVEN_EVEN_ASYMMETRIC | QUDA_MATPC_ODD_ODD_ASYMMETRIC
    );
    if asymmetric && !improved && matches!(what, Application::Mat) {
        return Err(convert::refuse(
            "param->matpc_type",
            p.matpc_type as i64,
            "the naive staggered operator's EVEN_EVEN or ODD_ODD (as in QUDA)",
        ));
    }
    use crate::api::MassNormalization::{AsymmetricMass, Kappa, Mass};
    let kappa = p.kappa;
    let rescaled = |pc: bool| -> Result<f64> {
        let factor = match (normalization, pc) {
            (Kappa, _) => return Ok(1.0),
            (Mass, true) => 0.25 / (kappa * kappa),
            (AsymmetricMass, true) => 0.5 / kappa,
            (Mass | AsymmetricMass, false) => 0.5 / kappa,
        };
        if !factor.is_finite() {
            return Err(Error::InvalidArgument(format!(
                "param->kappa = {kappa}: the MASS normalizations divide by it"
            )));
        }
        Ok(factor)
    };
    // The operators, the fields' sites, the factor on the input and the
    // one on the output.
    let (ops, half, input_factor, output_factor): (Vec<StaggeredOp>, bool, f64, f64) = match what {
        Application::Mat => match p.solution_type {
            QUDA_MAT_SOLUTION => {
                let op = if dagger {
                    StaggeredOp::MDag
                } else {
                    StaggeredOp::M
                };
                (vec![op], false, 1.0, rescaled(false)?)
            }
            QUDA_MATPC_SOLUTION => (vec![StaggeredOp::MPc(parity)], true, 1.0, rescaled(true)?),
            v => {
                return Err(convert::refuse(
                    "param->solution_type",
                    v as i64,
                    "MatQuda applies MAT or MATPC",
                ))
            }
        },
        Application::MatDagMat => match p.solution_type {
            QUDA_MAT_SOLUTION | QUDA_MATDAG_MAT_SOLUTION => {
                // Both MASS normalizations: × 1/(4κ²).
                let f = match normalization {
                    Kappa => 1.0,
                    _ => rescaled(false)?.powi(2),
                };
                (vec![StaggeredOp::M, StaggeredOp::MDag], false, 1.0, f)
            }
            v => return Err(convert::refuse(
                "param->solution_type",
                v as i64,
                "a staggered MatDagMatQuda is MATDAG_MAT (QUDA: \"MdagM is no longer defined\" \
                     for the preconditioned operator; use MatQuda)",
            )),
        },
        Application::Dslash(_) => {
            let f =
                match normalization {
                    Kappa if p.mass == 0.0 => return Err(Error::InvalidArgument(
                        "param->mass = 0 with the KAPPA normalization: dslashQuda scales by 1/(2m)"
                            .into(),
                    )),
                    Kappa => 0.5 / p.mass,
                    _ => 1.0,
                };
            (
                vec![StaggeredOp::Dslash],
                true,
                f,
                if dagger { -1.0 } else { 1.0 },
            )
        }
    };
    state::with(|s| {
        let (context, h) = stored_links(s, improved, (precision, precision), name)?;
        let links = &h.stored.as_ref().expect("stored").1;
        let v: usize = h.dims.iter().product();
        let n = if half { v * 3 } else { v * 6 };
        // SAFETY: the caller's input of the operator's size.
        let given: Vec<f64> = match unsafe { host_reals(h_in, n, double) } {
            HostReals::F64(x) => x.iter().map(|y| y * input_factor).collect(),
            HostReals::F32(x) => x.iter().map(|&y| y as f64 * input_factor).collect(),
        };
        let mut out = match what {
            // The hopping term of one parity: the input in the other
            // parity's half of a full field (even sites first), the output
            // from this parity's half.
            Application::Dslash(q) => {
                let mut full = vec![0.0; 2 * n];
                let from = q.other().index() * n;
                full[from..from + n].copy_from_slice(&given);
                let mut applied = vec![0.0; 2 * n];
                context.apply_staggered(
                    links,
                    p.mass,
                    StaggeredOp::Dslash,
                    HostReals::F64(&full),
                    HostRealsMut::F64(&mut applied),
                )?;
                applied[q.index() * n..(q.index() + 1) * n].to_vec()
            }
            _ => {
                let mut x = given;
                for &op in &ops {
                    let mut y = vec![0.0; n];
                    context.apply_staggered(
                        links,
                        p.mass,
                        op,
                        HostReals::F64(&x),
                        HostRealsMut::F64(&mut y),
                    )?;
                    x = y;
                }
                x
            }
        };
        out.iter_mut().for_each(|y| *y *= output_factor);
        // SAFETY: the caller's output of the operator's size.
        match unsafe { host_reals_mut(h_out, n, double) } {
            HostRealsMut::F64(o) => o.copy_from_slice(&out),
            HostRealsMut::F32(o) => o.iter_mut().zip(&out).for_each(|(o, y)| *o = *y as f32),
        }
        Ok(())
    })
}

/// Whether `p` asks for a staggered operator.
pub(crate) fn is_staggered(p: &QudaInvertParam) -> bool {
    matches!(p.dslash_type, QUDA_STAGGERED_DSLASH | QUDA_ASQTAD_DSLASH)
}

/// Checks the solution pointers.
pub(crate) fn check_solutions(xs: &[*mut c_void]) -> Result<()> {
    for (i, x) in xs.iter().enumerate() {
        not_null(*x, &format!("solution {i}"))?;
    }
    Ok(())
}
