//! latsol-gpu-check, one part (`--sap`): the Schwarz preconditioner's
//! pieces on the GPU against the CPU backend (issue 37; seed 002 §2.2).
//!
//! - `download_gauge`: every stored link format read back, equal to the
//!   CPU backend's read-back of the same format bit for bit (both store the
//!   same numbers and decompress them on the host), and the double
//!   uncompressed links equal to the field itself;
//! - `domain_project` (kernels/blas.cuh): every spinor format, full and
//!   single-parity fields, both colours, against the CPU;
//! - `M_SAP` (`solver::sap`, the box links uploaded without a halo, the
//!   clover term, SSOR with ω ≠ 1) in double, single and half, against the
//!   CPU's, within the format's tolerance per operator application it
//!   makes; and its time per application on the GPU.

use std::sync::Arc;

use latsol::backend::cpu::CpuBackend;
use latsol::backend::cuda::CudaBackend;
use latsol::backend::Backend;
use latsol::clover;
use latsol::dirac::WilsonFields;
use latsol::domains::Domains;
use latsol::field::{GaugeField, HostSpinor};
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::precision::{Precision, Reconstruct, TBoundary};
use latsol::random;
use latsol::solver::sap::{box_links, BoxSolver, Sap, SapParams, Schwarz};

use crate::common::{down, e, rel, tolerance, up, Pair, ALL_PRECISIONS, ALL_RECONSTRUCTS, R};
use crate::report::Report;
use crate::timing::time_ms;

const KAPPA: f64 = 0.124;
const CSW: f64 = 1.0;

/// The largest difference between two fields' links.
fn link_diff(a: &GaugeField, b: &GaugeField) -> f64 {
    a.links()
        .iter()
        .zip(b.links())
        .map(|(u, v)| u.max_diff(v))
        .fold(0.0, f64::max)
}

fn random_spinor(lat: &Arc<Lattice>, subset: Subset, seed: u64) -> HostSpinor {
    let mut h = HostSpinor::zeros(lat.clone(), subset);
    let mut rng = random::rng(seed);
    h.data_mut()
        .iter_mut()
        .for_each(|z| *z = random::gaussian(&mut rng));
    h
}

pub fn check(gpu: &CudaBackend, cpu: &CpuBackend, rep: &mut Report) -> R<()> {
    let lat = Arc::new(Lattice::new([6, 4, 8, 10]).map_err(e)?);
    let field = random::smooth_gauge(&lat, 0.35, 5);
    for p in ALL_PRECISIONS {
        for r in ALL_RECONSTRUCTS {
            let bc = TBoundary::AntiPeriodic;
            let g = gpu.upload_gauge(&field, bc, p, r).map_err(e)?;
            let c = cpu.upload_gauge(&field, bc, p, r).map_err(e)?;
            let (hg, hc) = (
                gpu.download_gauge(&g).map_err(e)?,
                cpu.download_gauge(&c).map_err(e)?,
            );
            let what = format!("download_gauge {p:?} r{} = CPU's", r.reals());
            rep.check(&what, link_diff(&hg, &hc), 0.0);
            if p == Precision::Double && r.reals() == 18 {
                rep.check(
                    "download_gauge double r18 = the field",
                    link_diff(&hg, &field),
                    0.0,
                );
            }
        }
    }
    let domains = Domains::new(lat.dims(), [2, 2, 4, 2], [0; 4]).map_err(e)?;
    for p in ALL_PRECISIONS {
        let pair = Pair { cpu, gpu, prec: p };
        for subset in [Subset::Full, Subset::Single(Parity::Odd)] {
            let h = random_spinor(&lat, subset, 9);
            for colour in 0..2 {
                let (mut c, mut g) = pair.up(&h)?;
                cpu.domain_project(&mut c, &domains, colour).map_err(e)?;
                gpu.domain_project(&mut g, &domains, colour).map_err(e)?;
                let what = format!("domain_project {p:?} {subset:?} colour {colour}");
                pair.compare(rep, &what, &c, &g)?;
            }
        }
    }
    sap_against_cpu(gpu, cpu, rep)
}

/// What `M_SAP` is applied to: the links, the clover term and the source.
struct SapCase<'a> {
    field: &'a GaugeField,
    clover: &'a clover::CloverField,
    inverse: &'a clover::CloverField,
    src: &'a HostSpinor,
    params: SapParams,
}

/// `M_SAP src` on `b` in precision `p`, then `after` on the preconditioner
/// and its fields (the GPU's timing).
fn sap_on<B: Backend>(
    b: &B,
    case: &SapCase<'_>,
    p: Precision,
    after: impl FnOnce(&mut Sap<'_, B>, &mut B::Spinor, &B::Spinor) -> R<()>,
) -> R<HostSpinor> {
    let (bc, r18) = (TBoundary::AntiPeriodic, Reconstruct::Full18);
    let lat = case.field.lattice();
    let g = b.upload_gauge(case.field, bc, p, r18).map_err(e)?;
    let c = b.upload_clover(case.clover, case.inverse, p).map_err(e)?;
    let d = case.params.domains(lat.dims(), [0; 4]).map_err(e)?;
    let boxes = box_links(b, &g, &d, p).map_err(e)?;
    let f = WilsonFields {
        gauge: &g,
        clover: Some(&c),
    };
    let mut sap = Sap::new(b, f, &boxes, lat, KAPPA, false, case.params, p).map_err(e)?;
    let (x, mut y) = (up(b, case.src, p)?, up(b, case.src, p)?);
    sap.apply(&mut y, &x).map_err(e)?;
    let out = down(b, &y)?;
    after(&mut sap, &mut y, &x)?;
    Ok(out)
}

/// `M_SAP` on both backends for the same source.
fn sap_against_cpu(gpu: &CudaBackend, cpu: &CpuBackend, rep: &mut Report) -> R<()> {
    let lat = Arc::new(Lattice::new([8, 8, 8, 8]).map_err(e)?);
    let field = random::smooth_gauge(&lat, 0.35, 6);
    let cl = clover::compute::compute(&field, KAPPA * CSW).map_err(e)?;
    let inv = cl.inverse().map_err(e)?;
    let src = random_spinor(&lat, Subset::Full, 12);
    let forms = [
        (Schwarz::Multiplicative, BoxSolver::Ssor, 1.2),
        (Schwarz::Additive, BoxSolver::Ssor, 1.2),
        (Schwarz::Multiplicative, BoxSolver::Mr, 0.9),
        (Schwarz::Additive, BoxSolver::Mr, 0.9),
    ];
    for (schwarz, box_solver, omega) in forms {
        let case = SapCase {
            field: &field,
            clover: &cl,
            inverse: &inv,
            src: &src,
            params: SapParams {
                extent: [4, 4, 4, 4],
                cycles: 3,
                ssor_iterations: 2,
                omega,
                schwarz,
                box_solver,
            },
        };
        for p in [Precision::Double, Precision::Single, Precision::Half] {
            let hc = sap_on(cpu, &case, p, |_, _, _| Ok(()))?;
            let mut ms = 0.0;
            let hg = sap_on(gpu, &case, p, |sap, y, x| {
                ms = time_ms(gpu, 5, |_| sap.apply(y, x).map_err(e))?;
                Ok(())
            })?;
            // Each operator application may add the format's rounding (MR's
            // step lengths are sums of the same rounded values: they move
            // the result by as much again).
            let tol = tolerance(p) * case.params.matvecs();
            let what = format!("M_SAP {p:?} (clover, {schwarz:?}, {box_solver:?}, ω {omega})");
            rep.check(&what, rel(hg.data(), hc.data()), tol);
            rep.say(format!(
                "M_SAP {p:?} at 8^4, {schwarz:?} {box_solver:?}, {} cycles, {} box steps: {ms:.3} ms",
                case.params.cycles, case.params.ssor_iterations
            ));
        }
    }
    Ok(())
}
