//! QUDA's own interface on many ranks (cargo feature `mpi`), run by the
//! test command under `mpirun -np N` (scripts/test_mpi.sh). The program is
//! the host, as a Chroma, tmLQCD or MILC build against QUDA is: it
//! initialises MPI, hands over its communicator and grid, and passes every
//! call its *local* part of the golden clover set (tests/data/
//! golden-clover-6x4x4x8, made with QUDA's host reference code).
//!
//! ```text
//! mpirun -np 4 target/release/examples/quda_ranks --grid 1,1,2,2 [--map cart] [--face milc]
//! ```
//! - quda.h (the default face): `setMPICommHandleQuda`, `initCommsGridQuda`
//!   with QUDA's default rank order (NULL map, t fastest) or, with
//!   `--map cart`, tmLQCD's habit: a Cartesian communicator of its own
//!   (t, x, y, z; z fastest) read by `MPI_Cart_rank` in the map function.
//!   QDP-order links with the anti-periodic sign folded in (reconstruct 12:
//!   latsol takes it off on the ranks holding the last time slice), the
//!   packed clover field; checked: `plaqQuda`, `MatQuda` (MAT, and MATPC
//!   even-even) against the golden set, `invertQuda` (BiCGstab) and
//!   `invertMultiShiftQuda` (CG, two shifts) against the same calls on one
//!   rank (this program, before, on `MPI_COMM_SELF`): iterations equal
//!   (within one: the global sums' order differs) and solutions to 1e-12;
//!   then collective errors in return mode (`LATSOL_QUDA_ON_ERROR=return`):
//!   a NULL source on the last rank, a bad precision on rank 0, each
//!   failing the call on every rank, none hanging (the test runs under
//!   `timeout`), after which a solve works.
//! - `--staggered` (a grid cutting t only: the golden staggered set is
//!   6x4x4x8): the asqtad links of the golden staggered set through
//!   `loadGaugeQuda` and `invertQuda` (CG, even-odd) against the golden χ
//!   and the same solve on one rank.
//! - MILC's face (`--face milc`): `qudaSetMPICommHandle`, `qudaInit` with
//!   the *global* size and the machine grid (ranks x fastest), MILC-order
//!   local links; `qudaPlaquettePhased`, `qudaPolyakovLoopPhased` (the
//!   lines cross the ranks in time) against the golden links,
//!   `qudaCloverInvert` against the golden source, `qudaContractFT`
//!   (global coordinates in the phases, the sum over the ranks) and both
//!   levels of HISQ links (`qudaLoadUnitarizedLink`, `qudaLoadKSLink`:
//!   paths across the cut faces), Coulomb gauge fixing
//!   (`qudaGaugeFixingOVR`, ks_spectrum's arguments) and spin-taste
//!   operators of zero to four links (`qudaSpinTaste`) against one rank.

use std::ffi::{c_int, c_void};
use std::ptr;

use latsol::ffi::quda::abi::*;
use mpi::raw::AsRaw;
use mpi::topology::Communicator;

extern "C" {
    fn initQuda(device: c_int);
    fn setVerbosityQuda(
        verbosity: QudaVerbosity,
        prefix: *const std::ffi::c_char,
        outfile: *mut c_void,
    );
    fn endQuda();
    fn initCommsGridQuda(n_dim: c_int, dims: *const c_int, func: QudaCommsMap, fdata: *mut c_void);
    fn setMPICommHandleQuda(mycomm: *mut c_void);
    fn newQudaGaugeParam() -> QudaGaugeParam;
    fn newQudaInvertParam() -> QudaInvertParam;
    fn loadGaugeQuda(h_gauge: *mut c_void, param: *mut QudaGaugeParam);
    fn plaqQuda(plaq: *mut f64);
    fn loadCloverQuda(h_clover: *mut c_void, h_clovinv: *mut c_void, param: *mut QudaInvertParam);
    fn MatQuda(h_out: *mut c_void, h_in: *mut c_void, param: *mut QudaInvertParam);
    fn invertQuda(h_x: *mut c_void, h_b: *mut c_void, param: *mut QudaInvertParam);
    fn invertMultiShiftQuda(hp_x: *mut *mut c_void, hp_b: *mut c_void, param: *mut QudaInvertParam);
    fn qudaSetMPICommHandle(mycomm: *mut c_void);
    fn qudaInit(input: QudaInitArgs_t);
    fn qudaContractFT(
        external_precision: c_int,
        cont_args: *mut QudaContractArgs_t,
        quark1: *mut c_void,
        quark2: *mut c_void,
        corr: *mut f64,
    );
    fn qudaFinalize();
    fn qudaSpinTaste(
        external_precision: c_int,
        quda_precision: c_int,
        links: *mut c_void,
        src: *mut c_void,
        dst: *mut c_void,
        spin: c_int,
        taste: c_int,
        reload: c_int,
    );
    fn qudaGaugeFixingOVR(
        precision: c_int,
        gauge_dir: u32,
        nsteps: c_int,
        verbose_interval: c_int,
        relax_boost: f64,
        tolerance: f64,
        reunit_interval: u32,
        stop_w_theta: u32,
        arg: *mut QudaMILCSiteArg_t,
    );
    fn qudaLoadUnitarizedLink(
        precision: c_int,
        args: QudaFatLinkArgs_t,
        coeff: *const f64,
        inlink: *mut c_void,
        fatlink: *mut c_void,
        ulink: *mut c_void,
    );
    fn qudaLoadKSLink(
        precision: c_int,
        args: QudaFatLinkArgs_t,
        coeff: *const f64,
        inlink: *mut c_void,
        fatlink: *mut c_void,
        longlink: *mut c_void,
    );
    fn qudaPlaquettePhased(
        precision: c_int,
        plaq: *mut f64,
        arg: *mut QudaMILCSiteArg_t,
        phase_in: c_int,
    );
    fn qudaPolyakovLoopPhased(
        precision: c_int,
        ploop: *mut f64,
        dir: c_int,
        arg: *mut QudaMILCSiteArg_t,
        phase_in: c_int,
    );
    #[allow(clippy::too_many_arguments)]
    fn qudaCloverInvert(
        external_precision: c_int,
        quda_precision: c_int,
        kappa: f64,
        clover_coeff: f64,
        inv_args: QudaInvertArgs_t,
        target_residual: f64,
        target_fermilab_residual: f64,
        milc_link: *const c_void,
        milc_clover: *mut c_void,
        milc_clover_inv: *mut c_void,
        source: *mut c_void,
        solution: *mut c_void,
        final_residual: *mut f64,
        final_fermilab_residual: *mut f64,
        num_iters: *mut c_int,
    );
    fn latsol_quda_last_status() -> i32;
}

#[path = "ranks_common/mod.rs"]
mod ranks_common;
use ranks_common::{eo, parse_grid, rel_diff, sites, volume, Checks};

const GLOBAL: [usize; 4] = [6, 4, 4, 8];
const KAPPA: f64 = 0.12;
/// The golden staggered set's mass (its meta.json).
const STAGGERED_MASS: f64 = 0.05;
/// latsol's status for a call failed on another rank (latsol.h).
const OTHER_RANK: i32 = 11;

fn golden(name: &str) -> Vec<f64> {
    golden_in("golden-clover-6x4x4x8", name)
}

fn golden_in(set: &str, name: &str) -> Vec<f64> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(set)
        .join(name);
    std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

/// This rank's part of the lattice: its extents and where it starts.
#[derive(Clone, Copy)]
struct Part {
    local: [usize; 4],
    origin: [usize; 4],
}

impl Part {
    fn global_site(&self, x: [usize; 4]) -> [usize; 4] {
        [0, 1, 2, 3].map(|mu| self.origin[mu] + x[mu])
    }

    /// The local part of a global field of `per` reals a site, even-odd
    /// ordered; `half`: only the even sites, of a field of even sites.
    fn of(&self, global: &[f64], per: usize, half: bool) -> Vec<f64> {
        let n = if half {
            volume(self.local) / 2
        } else {
            volume(self.local)
        };
        let mut out = vec![0.0; n * per];
        for x in sites(self.local) {
            let i = eo(self.local, x);
            if i < n {
                let g = eo(GLOBAL, self.global_site(x));
                out[i * per..][..per].copy_from_slice(&global[g * per..][..per]);
            }
        }
        out
    }

    /// The local links in QDP order (four arrays), the anti-periodic sign
    /// folded into the T links of the global last time slice if `sign`.
    fn links_qdp(&self, global: &[f64], sign: bool) -> Vec<Vec<f64>> {
        let vg = volume(GLOBAL);
        (0..4)
            .map(|mu| {
                let mut part = self.of(&global[mu * vg * 18..][..vg * 18], 18, false);
                if mu == 3 && sign {
                    for x in sites(self.local) {
                        if self.global_site(x)[3] == GLOBAL[3] - 1 {
                            let i = eo(self.local, x);
                            part[i * 18..][..18].iter_mut().for_each(|v| *v = -*v);
                        }
                    }
                }
                part
            })
            .collect()
    }

    /// The same links in MILC order (site-major, four links a site).
    fn links_milc(&self, global: &[f64], sign: bool) -> Vec<f64> {
        let qdp = self.links_qdp(global, sign);
        let v = volume(self.local);
        let mut out = vec![0.0; v * 72];
        for i in 0..v {
            for (mu, q) in qdp.iter().enumerate() {
                out[(4 * i + mu) * 18..][..18].copy_from_slice(&q[i * 18..][..18]);
            }
        }
        out
    }
}

/// tmLQCD's rank order: its own Cartesian communicator over (t, x, y, z).
unsafe extern "C" fn cartesian(coords: *const c_int, data: *mut c_void) -> c_int {
    let cart = unsafe { *data.cast::<mpi::ffi::MPI_Comm>() };
    let c = unsafe { std::slice::from_raw_parts(coords, 4) };
    let txyz = [c[3], c[0], c[1], c[2]];
    let mut rank = -1;
    unsafe { mpi::ffi::MPI_Cart_rank(cart, txyz.as_ptr(), &mut rank) };
    rank
}

fn status() -> i32 {
    unsafe { latsol_quda_last_status() }
}

/// What a run of the quda.h face gives, for the comparison with one rank.
struct Solved {
    plaquette: [f64; 3],
    bicgstab: (Vec<f64>, i32),
    multishift: (Vec<Vec<f64>>, i32),
}

fn gauge_param(part: &Part) -> QudaGaugeParam {
    let mut gp = unsafe { newQudaGaugeParam() };
    gp.X = part.local.map(|d| d as c_int);
    gp.anisotropy = 1.0;
    gp.r#type = QUDA_WILSON_LINKS;
    gp.gauge_order = QUDA_QDP_GAUGE_ORDER;
    gp.t_boundary = QUDA_ANTI_PERIODIC_T;
    gp.cpu_prec = QUDA_DOUBLE_PRECISION;
    gp.cuda_prec = QUDA_DOUBLE_PRECISION;
    gp.cuda_prec_sloppy = QUDA_DOUBLE_PRECISION;
    gp.reconstruct = QUDA_RECONSTRUCT_12;
    gp.reconstruct_sloppy = QUDA_RECONSTRUCT_12;
    gp.gauge_fix = QUDA_GAUGE_FIXED_NO;
    gp
}

fn invert_param(solution: QudaSolutionType, inverter: QudaInverterType) -> QudaInvertParam {
    let mut ip = unsafe { newQudaInvertParam() };
    ip.dslash_type = QUDA_CLOVER_WILSON_DSLASH;
    ip.kappa = KAPPA;
    ip.mass_normalization = QUDA_KAPPA_NORMALIZATION;
    ip.dagger = QUDA_DAG_NO;
    ip.cpu_prec = QUDA_DOUBLE_PRECISION;
    ip.cuda_prec = QUDA_DOUBLE_PRECISION;
    ip.cuda_prec_sloppy = QUDA_DOUBLE_PRECISION;
    ip.clover_cpu_prec = QUDA_DOUBLE_PRECISION;
    ip.clover_cuda_prec = QUDA_DOUBLE_PRECISION;
    ip.clover_cuda_prec_sloppy = QUDA_DOUBLE_PRECISION;
    ip.clover_order = QUDA_PACKED_CLOVER_ORDER;
    ip.dirac_order = QUDA_DIRAC_ORDER;
    ip.gamma_basis = QUDA_DEGRAND_ROSSI_GAMMA_BASIS;
    ip.solution_type = solution;
    ip.solve_type = if inverter == QUDA_CG_INVERTER {
        QUDA_NORMOP_PC_SOLVE
    } else {
        QUDA_DIRECT_PC_SOLVE
    };
    ip.matpc_type = QUDA_MATPC_EVEN_EVEN;
    ip.inv_type = inverter;
    ip.tol = 1e-12;
    ip.maxiter = 2000;
    ip.reliable_delta = 0.1;
    ip.verbosity = QUDA_SILENT;
    ip
}

/// The golden set through quda.h on this rank's part (the context already
/// started); the golden checks go to `checks` when `world` is given.
fn quda_face(
    part: &Part,
    world: Option<&mpi::topology::SimpleCommunicator>,
    checks: &mut Checks,
) -> Solved {
    let mut links = part.links_qdp(&golden("gauge_qdp.f64"), true);
    let mut ptrs: Vec<*mut c_void> = links.iter_mut().map(|l| l.as_mut_ptr().cast()).collect();
    let mut gp = gauge_param(part);
    unsafe { loadGaugeQuda(ptrs.as_mut_ptr().cast(), &mut gp) };
    checks.check(status() == 0, "loadGaugeQuda".into());
    let mut plaquette = [0.0; 3];
    unsafe { plaqQuda(plaquette.as_mut_ptr()) };
    checks.check(status() == 0, "plaqQuda".into());
    let mut clover = part.of(&golden("clover_packed.f64"), 72, false);
    let mut ip = invert_param(QUDA_MAT_SOLUTION, QUDA_BICGSTAB_INVERTER);
    unsafe { loadCloverQuda(clover.as_mut_ptr().cast(), ptr::null_mut(), &mut ip) };
    checks.check(status() == 0, "loadCloverQuda".into());

    let psi = golden("psi_dirac.f64");
    let mut psi_local = part.of(&psi, 24, false);
    if let Some(world) = world {
        // The operator against the golden set (QUDA's host reference).
        for (solution, file, half) in [
            (QUDA_MAT_SOLUTION, "M_psi.f64", false),
            (QUDA_MATPC_SOLUTION, "Mpc_even_sym_psi.f64", true),
        ] {
            let mut inp = part.of(&psi, 24, half);
            let want = part.of(&golden(file), 24, half);
            let mut out = vec![0.0; want.len()];
            let mut p = invert_param(solution, QUDA_BICGSTAB_INVERTER);
            unsafe { MatQuda(out.as_mut_ptr().cast(), inp.as_mut_ptr().cast(), &mut p) };
            let d = rel_diff(world, &out, &want);
            checks.check(
                status() == 0 && d <= 1e-13,
                format!("MatQuda {file}: {d:e}"),
            );
        }
    }
    // BiCGstab on M x = M ψ: the solution is ψ.
    let mut b = part.of(&golden("M_psi.f64"), 24, false);
    let mut x = vec![0.0; b.len()];
    unsafe { invertQuda(x.as_mut_ptr().cast(), b.as_mut_ptr().cast(), &mut ip) };
    checks.check(status() == 0, "invertQuda".into());
    if let Some(world) = world {
        let d = rel_diff(world, &x, &psi_local);
        checks.check(d <= 1e-9, format!("invertQuda against the golden ψ: {d:e}"));
    }
    let bicgstab = (x, ip.iter);
    // CG on M̂†M̂ + σ, two shifts, on the even part of ψ.
    let mut p = invert_param(QUDA_MATPCDAG_MATPC_SOLUTION, QUDA_CG_INVERTER);
    p.num_offset = 2;
    p.offset[0] = 0.0;
    p.offset[1] = 0.05;
    p.tol_offset[0] = 1e-12;
    p.tol_offset[1] = 1e-12;
    psi_local.truncate(psi_local.len() / 2);
    let mut xs = vec![vec![0.0; psi_local.len()]; 2];
    let mut xp: Vec<*mut c_void> = xs.iter_mut().map(|x| x.as_mut_ptr().cast()).collect();
    unsafe { invertMultiShiftQuda(xp.as_mut_ptr(), psi_local.as_mut_ptr().cast(), &mut p) };
    checks.check(status() == 0, "invertMultiShiftQuda".into());
    Solved {
        plaquette,
        bicgstab,
        multishift: (xs, p.iter),
    }
}

/// Collective errors through quda.h: each call fails on every rank.
fn quda_errors(part: &Part, rank: usize, size: usize, checks: &mut Checks) {
    let mut ip = invert_param(QUDA_MAT_SOLUTION, QUDA_BICGSTAB_INVERTER);
    let mut b = part.of(&golden("M_psi.f64"), 24, false);
    let mut x = vec![7.0; b.len()];
    let source = if rank == size - 1 {
        ptr::null_mut()
    } else {
        b.as_mut_ptr().cast()
    };
    unsafe { invertQuda(x.as_mut_ptr().cast(), source, &mut ip) };
    let s = status();
    let want_other = size > 1 && rank != size - 1;
    checks.check(
        s != 0 && (s == OTHER_RANK) == want_other,
        format!("NULL source on the last rank: status {s}"),
    );
    checks.check(
        x.iter().all(|v| *v == 7.0),
        "a failed invertQuda wrote x".into(),
    );
    let mut p = invert_param(QUDA_MAT_SOLUTION, QUDA_BICGSTAB_INVERTER);
    if rank == 0 {
        p.cpu_prec = QUDA_INVALID_PRECISION;
    }
    let mut out = vec![7.0; b.len()];
    unsafe { MatQuda(out.as_mut_ptr().cast(), b.as_mut_ptr().cast(), &mut p) };
    let s = status();
    let want_other = size > 1 && rank != 0;
    checks.check(
        s != 0 && (s == OTHER_RANK) == want_other,
        format!("a bad cpu_prec on rank 0: status {s}"),
    );
    // The context still solves.
    unsafe { invertQuda(x.as_mut_ptr().cast(), b.as_mut_ptr().cast(), &mut ip) };
    checks.check(status() == 0, "invertQuda after the failures".into());
}

/// Collective errors of the MILC face's new calls (return mode): a mask
/// out of range on the last rank of a `qudaSpinTaste` that the others make
/// with their kept links (their first step would be a face exchange), a
/// NULL `inlink` on rank 0 of `qudaLoadKSLink`; each fails on every rank,
/// writes nothing, and hangs none; then a call works.
fn milc_errors(part: &Part, rank: usize, size: usize, checks: &mut Checks) {
    let set = "golden-staggered-6x4x4x8";
    let mut chi = part.of(&golden_in(set, "chi.f64"), 6, false);
    let mut out = vec![7.0; chi.len()];
    let taste = if rank == size - 1 { 16 } else { 13 };
    unsafe {
        qudaSpinTaste(
            2,
            2,
            ptr::null_mut(),
            chi.as_mut_ptr().cast(),
            out.as_mut_ptr().cast(),
            2,
            taste,
            0,
        )
    };
    let s = status();
    let want_other = size > 1 && rank != size - 1;
    checks.check(
        s != 0 && (s == OTHER_RANK) == want_other && out.iter().all(|v| *v == 7.0),
        format!("qudaSpinTaste, taste 16 on the last rank: status {s}"),
    );
    let mut links = part.links_milc(&golden("gauge_qdp.f64"), true);
    let mut fat = vec![7.0; links.len()];
    let inlink = if rank == 0 {
        ptr::null_mut()
    } else {
        links.as_mut_ptr().cast()
    };
    let args = QudaFatLinkArgs_t {
        su3_source: 0,
        use_pinned_memory: 0,
    };
    let coeff = latsol::fat_links::HISQ_SECOND_LEVEL;
    unsafe {
        qudaLoadKSLink(
            2,
            args,
            coeff.as_ptr(),
            inlink,
            fat.as_mut_ptr().cast(),
            ptr::null_mut(),
        )
    };
    let s = status();
    let want_other = size > 1 && rank != 0;
    checks.check(
        s != 0 && (s == OTHER_RANK) == want_other && fat.iter().all(|v| *v == 7.0),
        format!("qudaLoadKSLink, NULL inlink on rank 0: status {s}"),
    );
    unsafe {
        qudaSpinTaste(
            2,
            2,
            links.as_mut_ptr().cast(),
            chi.as_mut_ptr().cast(),
            out.as_mut_ptr().cast(),
            2,
            13,
            1,
        )
    };
    checks.check(status() == 0, "qudaSpinTaste after the failures".into());
}

/// What a run of the MILC face gives, for the comparison with one rank.
struct MilcSolved {
    plaquette: [f64; 3],
    solution: Vec<f64>,
    iterations: c_int,
    /// `qudaContractFT` of the golden χ with M χ, two momenta.
    contraction: Vec<f64>,
    /// MILC's HISQ links of the golden links: V, W, fat, long.
    hisq: [Vec<f64>; 4],
    /// The golden links fixed to Coulomb gauge as ks_spectrum fixes them.
    coulomb: Vec<f64>,
    /// Spin-taste operators of one to four links on the golden χ.
    spin_taste: Vec<Vec<f64>>,
}

/// The MILC face on this rank's part (`qudaInit` already called): the
/// Polyakov loop against the golden links' own, the solve against the
/// golden ψ (`world`: the ranks it spans).
fn milc_face(part: &Part, world: &impl Communicator, checks: &mut Checks) -> MilcSolved {
    let gauge = golden("gauge_qdp.f64");
    let mut plain = part.links_milc(&gauge, false);
    let mut arg = QudaMILCSiteArg_t {
        site: ptr::null_mut(),
        link: plain.as_mut_ptr().cast(),
        link_offset: 0,
        mom: ptr::null_mut(),
        mom_offset: 0,
        size: 0,
    };
    let mut plaquette = [0.0; 3];
    unsafe { qudaPlaquettePhased(2, plaquette.as_mut_ptr(), &mut arg, 0) };
    checks.check(status() == 0, "qudaPlaquettePhased".into());
    // The Polyakov loop: MILC's links carry the sign, which QUDA's
    // negation cancels: the golden links' own loop, computed here.
    let mut signed = part.links_milc(&gauge, true);
    arg.link = signed.as_mut_ptr().cast();
    let mut ploop = [0.0; 2];
    unsafe { qudaPolyakovLoopPhased(2, ploop.as_mut_ptr(), 3, &mut arg, 0) };
    let want = polyakov_of_golden(&gauge);
    checks.check(
        status() == 0 && (ploop[0] - want[0]).abs() <= 1e-14 && (ploop[1] - want[1]).abs() <= 1e-14,
        format!("qudaPolyakovLoopPhased {ploop:?}, from the golden links {want:?}"),
    );
    let mut clover = part.of(&golden("clover_packed.f64"), 72, false);
    let mut b = part.of(&golden("M_psi.f64"), 24, false);
    let mut x = vec![0.0; b.len()];
    let args = QudaInvertArgs_t {
        max_iter: 2000,
        evenodd: QUDA_EVEN_PARITY,
        mixed_precision: 0,
        boundary_phase: [0.0; 4],
        make_resident_solution: 0,
        use_resident_solution: 0,
        solver_type: QUDA_BICGSTAB_INVERTER,
        tadpole: 1.0,
        naik_epsilon: 0.0,
    };
    let (mut res, mut fres, mut iters) = (0.0, 0.0, 0);
    unsafe {
        qudaCloverInvert(
            2,
            2,
            KAPPA,
            1.0,
            args,
            1e-12,
            0.0,
            signed.as_ptr().cast(),
            clover.as_mut_ptr().cast(),
            ptr::null_mut(),
            b.as_mut_ptr().cast(),
            x.as_mut_ptr().cast(),
            &mut res,
            &mut fres,
            &mut iters,
        )
    };
    checks.check(status() == 0, "qudaCloverInvert".into());
    let d = rel_diff(world, &x, &part.of(&golden("psi_dirac.f64"), 24, false));
    checks.check(
        d <= 1e-9,
        format!("qudaCloverInvert against the golden ψ: {d:e}"),
    );
    // A meson contraction with Fourier phases: global coordinates and the
    // sum over the ranks.
    let set = "golden-staggered-6x4x4x8";
    let mut q1 = part.of(&golden_in(set, "chi.f64"), 6, false);
    let mut q2 = part.of(&golden_in(set, "M_chi.f64"), 6, false);
    let mut modes = [1, 0, 2, 0, 0, 1, 1, 1];
    let mut kinds = [
        QUDA_FFT_SYMM_EO,
        QUDA_FFT_SYMM_EVEN,
        QUDA_FFT_SYMM_ODD,
        QUDA_FFT_SYMM_EVEN,
        QUDA_FFT_SYMM_EVEN,
        QUDA_FFT_SYMM_EO,
        QUDA_FFT_SYMM_EO,
        QUDA_FFT_SYMM_EO,
    ];
    let mut x0 = [1, 2, 0, 3];
    let mut cargs = QudaContractArgs_t {
        n_mom: 2,
        mom_modes: modes.as_mut_ptr(),
        fft_type: kinds.as_mut_ptr(),
        source_position: x0.as_mut_ptr(),
        flops: 0.0,
        dtime: 0.0,
    };
    let mut contraction = vec![0.0; 2 * 2 * GLOBAL[3]];
    unsafe {
        qudaContractFT(
            2,
            &mut cargs,
            q1.as_mut_ptr().cast(),
            q2.as_mut_ptr().cast(),
            contraction.as_mut_ptr(),
        )
    };
    checks.check(status() == 0, "qudaContractFT".into());
    MilcSolved {
        plaquette,
        solution: x,
        iterations: iters,
        contraction,
        spin_taste: spin_taste(&mut signed, &q1, checks),
        hisq: hisq_links(&mut signed, checks),
        coulomb: coulomb_gauge(&mut plain, checks),
    }
}

/// `qudaSpinTaste` of `chi` with `links` for operators of zero to four
/// links (their shifts cross the cut faces).
fn spin_taste(links: &mut [f64], chi: &[f64], checks: &mut Checks) -> Vec<Vec<f64>> {
    [(5, 5), (0, 2), (3, 5), (8, 7), (15, 0)]
        .iter()
        .map(|&(spin, taste)| {
            let mut src = chi.to_vec();
            let mut dst = vec![0.0; chi.len()];
            unsafe {
                qudaSpinTaste(
                    2,
                    2,
                    links.as_mut_ptr().cast(),
                    src.as_mut_ptr().cast(),
                    dst.as_mut_ptr().cast(),
                    spin,
                    taste,
                    1,
                )
            };
            checks.check(status() == 0, format!("qudaSpinTaste {spin} {taste}"));
            dst
        })
        .collect()
}

/// `links` (MILC order, no phases) fixed to Coulomb gauge with
/// ks_spectrum's arguments (MILC's generic/gaugefix2.c through QUDA).
fn coulomb_gauge(links: &mut [f64], checks: &mut Checks) -> Vec<f64> {
    let mut arg = QudaMILCSiteArg_t {
        site: ptr::null_mut(),
        link: links.as_mut_ptr().cast(),
        link_offset: 0,
        mom: ptr::null_mut(),
        mom_offset: 0,
        size: 0,
    };
    unsafe { qudaGaugeFixingOVR(2, 3, 500, 20, 1.8, 2e-6, 20, 0, &mut arg) };
    checks.check(status() == 0, "qudaGaugeFixingOVR".into());
    links.to_vec()
}

/// Both levels of MILC's HISQ links of `links` (MILC order): the paths
/// reach two sites across every cut face.
fn hisq_links(links: &mut [f64], checks: &mut Checks) -> [Vec<f64>; 4] {
    let p1 = [1.0 / 8.0, 0.0, -1.0 / 16.0, 1.0 / 64.0, -1.0 / 384.0, 0.0];
    let p2 = [
        1.0,
        -1.0 / 24.0,
        -1.0 / 16.0,
        1.0 / 64.0,
        -1.0 / 384.0,
        -1.0 / 8.0,
    ];
    let args = QudaFatLinkArgs_t {
        su3_source: 0,
        use_pinned_memory: 0,
    };
    let mut out: [Vec<f64>; 4] = std::array::from_fn(|_| vec![0.0; links.len()]);
    let [v, w, fat, long] = &mut out;
    unsafe {
        qudaLoadUnitarizedLink(
            2,
            args,
            p1.as_ptr(),
            links.as_mut_ptr().cast(),
            v.as_mut_ptr().cast(),
            w.as_mut_ptr().cast(),
        );
        checks.check(status() == 0, "qudaLoadUnitarizedLink".into());
        qudaLoadKSLink(
            2,
            args,
            p2.as_ptr(),
            w.as_mut_ptr().cast(),
            fat.as_mut_ptr().cast(),
            long.as_mut_ptr().cast(),
        );
        checks.check(status() == 0, "qudaLoadKSLink".into());
    }
    out
}

/// The largest `|a_i − b_i|`.
fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// `(1/V₃) Σ tr Π_t U_t` of the golden links (no sign in them).
fn polyakov_of_golden(gauge: &[f64]) -> [f64; 2] {
    type M = [[(f64, f64); 3]; 3];
    let link = |x: [usize; 4]| -> M {
        let at = (3 * volume(GLOBAL) + eo(GLOBAL, x)) * 18;
        std::array::from_fn(|i| {
            std::array::from_fn(|j| (gauge[at + 6 * i + 2 * j], gauge[at + 6 * i + 2 * j + 1]))
        })
    };
    let mul = |a: &M, b: &M| -> M {
        std::array::from_fn(|i| {
            std::array::from_fn(|j| {
                (0..3).fold((0.0, 0.0), |s, k| {
                    let (p, q) = (a[i][k], b[k][j]);
                    (s.0 + p.0 * q.0 - p.1 * q.1, s.1 + p.0 * q.1 + p.1 * q.0)
                })
            })
        })
    };
    let mut sum = (0.0, 0.0);
    for s in sites([GLOBAL[0], GLOBAL[1], GLOBAL[2], 1]) {
        let line = (1..GLOBAL[3]).fold(link(s), |p, t| mul(&p, &link([s[0], s[1], s[2], t])));
        sum = (
            sum.0 + line[0][0].0 + line[1][1].0 + line[2][2].0,
            sum.1 + line[0][0].1 + line[1][1].1 + line[2][2].1,
        );
    }
    let v3 = (GLOBAL[0] * GLOBAL[1] * GLOBAL[2]) as f64;
    [sum.0 / v3, sum.1 / v3]
}

/// The whole lattice's plaquette on the ranks and alone: the same sums of
/// the same leaves in another order, to the rounding of a sum of V terms.
fn same_plaquette(checks: &mut Checks, cut: [f64; 3], alone: [f64; 3]) {
    let rounding = volume(GLOBAL) as f64 * f64::EPSILON;
    checks.check(
        cut.iter()
            .zip(&alone)
            .all(|(a, b)| (a - b).abs() <= rounding),
        format!("plaquette {cut:?} on the ranks, {alone:?} alone"),
    );
}

/// The golden staggered set (6x4x4x8, phases and signs in the links)
/// through quda.h on this rank's part: ASQTAD_FAT_LINKS and
/// ASQTAD_LONG_LINKS, then `invertQuda` (CG, even-odd) on `M x = M χ`;
/// the solution and the iterations.
fn staggered_face(part: &Part, checks: &mut Checks) -> (Vec<f64>, c_int) {
    let set = "golden-staggered-6x4x4x8";
    for (file, kind) in [
        ("fat_qdp.f64", QUDA_ASQTAD_FAT_LINKS),
        ("long_qdp.f64", QUDA_ASQTAD_LONG_LINKS),
    ] {
        let mut links = part.links_qdp(&golden_in(set, file), false);
        let mut ptrs: Vec<*mut c_void> = links.iter_mut().map(|l| l.as_mut_ptr().cast()).collect();
        let mut gp = gauge_param(part);
        gp.r#type = kind;
        gp.t_boundary = QUDA_PERIODIC_T;
        gp.reconstruct = QUDA_RECONSTRUCT_NO;
        gp.reconstruct_sloppy = QUDA_RECONSTRUCT_NO;
        unsafe { loadGaugeQuda(ptrs.as_mut_ptr().cast(), &mut gp) };
        checks.check(status() == 0, format!("loadGaugeQuda {file}"));
    }
    let mut ip = invert_param(QUDA_MAT_SOLUTION, QUDA_CG_INVERTER);
    ip.dslash_type = QUDA_ASQTAD_DSLASH;
    ip.mass = STAGGERED_MASS;
    ip.solve_type = QUDA_DIRECT_PC_SOLVE;
    ip.mass_normalization = QUDA_MASS_NORMALIZATION;
    ip.maxiter = 5000;
    let mut b = part.of(&golden_in(set, "M_chi.f64"), 6, false);
    let mut x = vec![0.0; b.len()];
    unsafe { invertQuda(x.as_mut_ptr().cast(), b.as_mut_ptr().cast(), &mut ip) };
    checks.check(status() == 0, "invertQuda (asqtad)".into());
    (x, ip.iter)
}

/// Grid coordinates of `rank` under `map`.
fn coords_of(rank: usize, grid: [usize; 4], map: impl Fn([usize; 4]) -> usize) -> [usize; 4] {
    sites(grid)
        .find(|&g| map(g) == rank)
        .expect("every rank on the grid")
}

fn main() {
    // A failed call returns (and says why) rather than exiting.
    std::env::set_var("LATSOL_QUDA_ON_ERROR", "return");
    unsafe { setVerbosityQuda(QUDA_SILENT, c"".as_ptr(), ptr::null_mut()) };
    let args: Vec<String> = std::env::args().collect();
    let grid = parse_grid(&args);
    let cart_map = args.windows(2).any(|w| w[0] == "--map" && w[1] == "cart");
    let milc = args.windows(2).any(|w| w[0] == "--face" && w[1] == "milc");
    let staggered = args.iter().any(|a| a == "--staggered");
    let universe = mpi::initialize().expect("MPI_Init");
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let local = [0, 1, 2, 3].map(|mu| GLOBAL[mu] / grid[mu]);
    let mut checks = Checks::default();
    let mut world_raw = world.as_raw();
    let mut self_raw = mpi::topology::SimpleCommunicator::self_comm().as_raw();
    let mut grid_c = grid.map(|g| g as c_int);
    let mut ones = [1 as c_int; 4];
    let mut global_c = GLOBAL.map(|g| g as c_int);

    if milc {
        // One rank first (the whole lattice on MPI_COMM_SELF), then the
        // grid, ranks x fastest as MILC's layout numbers them.
        let whole = Part {
            local: GLOBAL,
            origin: [0; 4],
        };
        let init = |latsize: &mut [c_int; 4], machsize: &mut [c_int; 4]| QudaInitArgs_t {
            verbosity: QUDA_SILENT,
            layout: QudaLayout_t {
                latsize: latsize.as_mut_ptr(),
                machsize: machsize.as_mut_ptr(),
                device: -1,
            },
        };
        let self_comm = mpi::topology::SimpleCommunicator::self_comm();
        unsafe { qudaSetMPICommHandle((&raw mut self_raw).cast()) };
        unsafe { qudaInit(init(&mut global_c, &mut ones)) };
        checks.check(status() == 0, "qudaInit on MPI_COMM_SELF".into());
        let alone = milc_face(&whole, &self_comm, &mut checks);
        unsafe { qudaFinalize() };
        let coords = coords_of(rank, grid, |g| {
            g[0] + grid[0] * (g[1] + grid[1] * (g[2] + grid[2] * g[3]))
        });
        let part = Part {
            local,
            origin: [0, 1, 2, 3].map(|mu| coords[mu] * local[mu]),
        };
        unsafe { qudaSetMPICommHandle((&raw mut world_raw).cast()) };
        unsafe { qudaInit(init(&mut global_c, &mut grid_c)) };
        checks.check(status() == 0, "qudaInit on the grid".into());
        let cut = milc_face(&part, &world, &mut checks);
        milc_errors(&part, rank, size, &mut checks);
        unsafe { qudaFinalize() };
        same_plaquette(&mut checks, cut.plaquette, alone.plaquette);
        // The same sums in another order: every rank holds them all.
        let norm = alone.contraction.iter().map(|v| v * v).sum::<f64>().sqrt();
        let diff = cut
            .contraction
            .iter()
            .zip(&alone.contraction)
            .map(|(a, b)| (a - b) * (a - b))
            .sum::<f64>()
            .sqrt();
        checks.check(
            diff <= 1e-13 * norm,
            format!(
                "qudaContractFT on the ranks and alone differ by {:e}",
                diff / norm
            ),
        );
        // Each site's paths are summed in one order whatever the
        // partition: the same numbers.
        for (k, name) in ["V", "W", "fat", "long"].iter().enumerate() {
            let whole = part.of(&alone.hisq[k], 72, false);
            let d = max_abs_diff(&cut.hisq[k], &whole);
            checks.check(
                d == 0.0,
                format!("HISQ {name} links on the ranks and alone differ by {d:e}"),
            );
        }
        for (k, got) in cut.spin_taste.iter().enumerate() {
            let whole = part.of(&alone.spin_taste[k], 6, false);
            let d = max_abs_diff(got, &whole);
            checks.check(
                d == 0.0,
                format!("qudaSpinTaste operator {k} on the ranks and alone differ by {d:e}"),
            );
        }
        // Every site's transformation is computed alike; only the global
        // sums of the stopping rule are added in another order.
        let whole = part.of(&alone.coulomb, 72, false);
        let d = max_abs_diff(&cut.coulomb, &whole);
        checks.check(
            d <= 1e-12,
            format!("qudaGaugeFixingOVR on the ranks and alone differ by {d:e}"),
        );
        let d = rel_diff(&world, &cut.solution, &part.of(&alone.solution, 24, false));
        let (k, l) = (cut.iterations, alone.iterations);
        checks.check(
            (k - l).abs() <= 1,
            format!("qudaCloverInvert: {k} iterations on the ranks, {l} alone"),
        );
        checks.check(
            d <= 1e-12,
            format!("qudaCloverInvert: solutions differ by {d:e}"),
        );
        if rank == 0 {
            println!("quda_ranks: qudaCloverInvert {k} iterations on the ranks, {l} alone, |dx|/|x| {d:.1e}");
        }
        checks.finish(&world, &format!("quda_ranks: MILC face, grid {grid:?}"));
        return;
    }

    // One rank first: the whole lattice on MPI_COMM_SELF.
    let whole = Part {
        local: GLOBAL,
        origin: [0; 4],
    };
    unsafe { setMPICommHandleQuda((&raw mut self_raw).cast()) };
    unsafe { initCommsGridQuda(4, ones.as_mut_ptr(), None, ptr::null_mut()) };
    unsafe { initQuda(-1) };
    checks.check(status() == 0, "initQuda on MPI_COMM_SELF".into());
    let alone = quda_face(&whole, None, &mut checks);
    let alone_ks = staggered.then(|| staggered_face(&whole, &mut checks));
    unsafe { endQuda() };

    // Then the grid of ranks, in QUDA's order or tmLQCD's.
    let mut cart = unsafe { mpi::ffi::RSMPI_COMM_NULL };
    let (map, data): (QudaCommsMap, *mut c_void) = if cart_map {
        let dims = [grid[3], grid[0], grid[1], grid[2]].map(|g| g as c_int);
        let periods = [1 as c_int; 4];
        unsafe {
            mpi::ffi::MPI_Cart_create(world_raw, 4, dims.as_ptr(), periods.as_ptr(), 0, &mut cart)
        };
        (Some(cartesian), (&raw mut cart).cast())
    } else {
        (None, ptr::null_mut())
    };
    let coords = if cart_map {
        coords_of(
            rank,
            grid,
            |g| unsafe { cartesian(g.map(|c| c as c_int).as_ptr(), data) } as usize,
        )
    } else {
        coords_of(rank, grid, |g| {
            ((g[0] * grid[1] + g[1]) * grid[2] + g[2]) * grid[3] + g[3]
        })
    };
    let part = Part {
        local,
        origin: [0, 1, 2, 3].map(|mu| coords[mu] * local[mu]),
    };
    unsafe { setMPICommHandleQuda((&raw mut world_raw).cast()) };
    unsafe { initCommsGridQuda(4, grid_c.as_mut_ptr(), map, data) };
    unsafe { initQuda(-1) };
    checks.check(status() == 0, "initQuda on the grid".into());
    let cut = quda_face(&part, Some(&world), &mut checks);
    let slack = 1;
    same_plaquette(&mut checks, cut.plaquette, alone.plaquette);
    if let Some((y, l)) = alone_ks {
        // ‖x − χ‖/‖χ‖ ≤ κ · tol, κ(2m − D) ≤ (2m + 25)/2m for the golden
        // links (tests/quda_face_asqtad.rs): the bound for either solve
        // against χ, and for the two solves against each other.
        let bound = 1e-12 * (2.0 * STAGGERED_MASS + 25.0) / (2.0 * STAGGERED_MASS);
        let (x, k) = staggered_face(&part, &mut checks);
        let chi = golden_in("golden-staggered-6x4x4x8", "chi.f64");
        let d_chi = rel_diff(&world, &x, &part.of(&chi, 6, false));
        let d = rel_diff(&world, &x, &part.of(&y, 6, false));
        checks.check(
            d_chi <= bound,
            format!("asqtad invertQuda against the golden χ: {d_chi:e}"),
        );
        checks.check(
            d <= bound,
            format!("asqtad invertQuda: solutions differ by {d:e}"),
        );
        checks.check(
            (k - l).abs() <= slack,
            format!("asqtad invertQuda: {k} iterations on the ranks, {l} alone"),
        );
        if rank == 0 {
            println!("quda_ranks: asqtad CG {k} iterations on the ranks, {l} alone, |dx|/|x| {d:.1e}, |x - χ|/|χ| {d_chi:.1e}");
        }
    }
    for (name, half, (x, k), (y, l)) in [
        (
            "BiCGstab",
            false,
            (&cut.bicgstab.0, cut.bicgstab.1),
            (&alone.bicgstab.0, alone.bicgstab.1),
        ),
        (
            "multi-shift CG σ=0",
            true,
            (&cut.multishift.0[0], cut.multishift.1),
            (&alone.multishift.0[0], alone.multishift.1),
        ),
        (
            "multi-shift CG σ=0.05",
            true,
            (&cut.multishift.0[1], cut.multishift.1),
            (&alone.multishift.0[1], alone.multishift.1),
        ),
    ] {
        let d = rel_diff(&world, x, &part.of(y, 24, half));
        checks.check(
            (k - l).abs() <= slack,
            format!("{name}: {k} iterations on the ranks, {l} alone"),
        );
        checks.check(d <= 1e-12, format!("{name}: solutions differ by {d:e}"));
        if rank == 0 {
            println!("quda_ranks: {name} {k} iterations on the ranks, {l} alone, |dx|/|x| {d:.1e}");
        }
    }
    quda_errors(&part, rank, size, &mut checks);
    unsafe { endQuda() };
    let map = if cart_map {
        "tmLQCD's Cartesian map"
    } else {
        "QUDA's default map"
    };
    checks.finish(&world, &format!("quda_ranks: quda.h, grid {grid:?}, {map}"));
}
