//! The whole call through QUDA's interface, as Chroma- and tmLQCD-style
//! programs make it (issue 18): `loadGaugeQuda` (QDP order, double, the
//! anti-periodic sign folded into the links as those programs pass them),
//! optionally `loadCloverQuda` computing the clover term, then `invertQuda`
//! several times (MAT or MATPC solution), printing each call's wall time
//! beside QUDA's `secs` and the iterations. With `-v` the library's debug
//! line splits each call (source in, solver, solution out).
//!
//! `latsol-bench-quda --dims 32,32,32,64 --sloppy half --solution matpc`

use std::os::raw::c_void;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::{Parser, ValueEnum};
use latsol::ffi::quda::abi::*;
use latsol::lattice::{parse_dims, Lattice};
use latsol::layout::{self, GaugeOrder, HostRealsMut};

// QUDA's functions, as a caller declares them (quda.h); latsol's library
// provides them.
extern "C" {
    fn initQuda(device: i32);
    fn endQuda();
    fn setVerbosityQuda(v: QudaVerbosity, prefix: *const std::os::raw::c_char, out: *mut c_void);
    fn newQudaGaugeParam() -> QudaGaugeParam;
    fn newQudaInvertParam() -> QudaInvertParam;
    fn loadGaugeQuda(h_gauge: *mut c_void, param: *mut QudaGaugeParam);
    fn loadCloverQuda(h_clover: *mut c_void, h_clovinv: *mut c_void, param: *mut QudaInvertParam);
    fn invertQuda(h_x: *mut c_void, h_b: *mut c_void, param: *mut QudaInvertParam);
    fn invertMultiSrcQuda(
        hp_x: *mut *mut c_void,
        hp_b: *mut *mut c_void,
        param: *mut QudaInvertParam,
    );
    fn latsol_quda_last_status() -> i32;
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Solution {
    Mat,
    Matpc,
    /// The normal equations on one parity (Chroma's HMC force solves):
    /// CG whatever `--cg` says.
    Matpcdagmatpc,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Sloppy {
    Double,
    Single,
    Half,
}

/// Time loadGaugeQuda and invertQuda on a smooth field.
#[derive(Parser, Debug)]
#[command(name = "latsol-bench-quda", version)]
struct Options {
    /// Lattice extents X,Y,Z,T.
    #[arg(long, value_parser = parse_dims, default_value = "16,16,16,16")]
    dims: [usize; 4],
    #[arg(long, default_value_t = 0.12)]
    kappa: f64,
    /// Wilson-clover with the clover term computed by loadCloverQuda
    /// (tmLQCD's way) for this c_SW; Wilson without.
    #[arg(long)]
    csw: Option<f64>,
    #[arg(long, value_enum, default_value = "half")]
    sloppy: Sloppy,
    #[arg(long, value_enum, default_value = "mat")]
    solution: Solution,
    /// CG on the normal equations instead of BiCGstab.
    #[arg(long)]
    cg: bool,
    #[arg(long, default_value_t = 1e-12)]
    tol: f64,
    /// invertQuda calls on the loaded fields.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// loadGaugeQuda calls (the first compiles the kernels).
    #[arg(long, default_value_t = 2)]
    loads: usize,
    /// Then this many sources: in turn through invertQuda, and in one
    /// invertMultiSrcQuda (the next source's upload behind the current
    /// solve), their solutions compared.
    #[arg(long, default_value_t = 0)]
    sources: usize,
    /// Instead of Wilson: the improved staggered operator of this mass,
    /// its fat and long links (the field's links, and the same times
    /// −1/24) loaded by loadGaugeQuda as ASQTAD_FAT_LINKS and
    /// ASQTAD_LONG_LINKS (MILC order), then MATPC CG solves.
    #[arg(long)]
    asqtad: Option<f64>,
    /// The library's debug lines (QUDA_DEBUG_VERBOSE).
    #[arg(short, long)]
    verbose: bool,
}

fn main() -> ExitCode {
    let o = Options::parse();
    match run(&o) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("latsol-bench-quda: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(o: &Options) -> Result<(), Box<dyn std::error::Error>> {
    std::env::set_var("LATSOL_QUDA_ON_ERROR", "return");
    let lat = Arc::new(Lattice::new(o.dims)?);
    let (v, vh) = (lat.volume(), lat.half_volume());
    let field = latsol::random::try_smooth_gauge(&lat, 0.2, 2026)?;
    let mut qdp = latsol::alloc::filled(4 * v * 18, 0.0f64, "the links")?;
    {
        let mut parts: Vec<HostRealsMut> = qdp.chunks_mut(v * 18).map(HostRealsMut::F64).collect();
        layout::gauge::export(&field, GaugeOrder::Qdp, &mut parts)?;
    }
    // The anti-periodic sign in the T links of the last time slice.
    let t_last = o.dims[3] - 1;
    for (i, link) in qdp[3 * v * 18..].chunks_mut(18).enumerate() {
        let p = if i < vh {
            latsol::lattice::Parity::Even
        } else {
            latsol::lattice::Parity::Odd
        };
        if lat.coords(p, i % vh)[3] == t_last {
            link.iter_mut().for_each(|x| *x = -*x);
        }
    }
    let status = || unsafe { latsol_quda_last_status() };
    let check = |what: &str| -> Result<(), String> {
        match status() {
            0 => Ok(()),
            s => Err(format!("{what} failed (status {s})")),
        }
    };

    let started = Instant::now();
    unsafe {
        if o.verbose {
            setVerbosityQuda(
                QUDA_DEBUG_VERBOSE,
                c"latsol-bench-quda: ".as_ptr(),
                std::ptr::null_mut(),
            );
        }
        initQuda(0);
    }
    check("initQuda")?;
    println!("initQuda {:.3} s", started.elapsed().as_secs_f64());

    let sloppy = match o.sloppy {
        Sloppy::Double => QUDA_DOUBLE_PRECISION,
        Sloppy::Single => QUDA_SINGLE_PRECISION,
        Sloppy::Half => QUDA_HALF_PRECISION,
    };
    if let Some(mass) = o.asqtad {
        asqtad(o, &field, mass, sloppy)?;
        unsafe { endQuda() };
        return Ok(());
    }
    let mut gp = unsafe { newQudaGaugeParam() };
    gp.X = o.dims.map(|d| d as i32);
    gp.anisotropy = 1.0;
    gp.r#type = QUDA_WILSON_LINKS;
    gp.gauge_order = QUDA_QDP_GAUGE_ORDER;
    gp.t_boundary = QUDA_ANTI_PERIODIC_T;
    gp.cpu_prec = QUDA_DOUBLE_PRECISION;
    gp.cuda_prec = QUDA_DOUBLE_PRECISION;
    gp.reconstruct = QUDA_RECONSTRUCT_NO;
    gp.cuda_prec_sloppy = sloppy;
    gp.reconstruct_sloppy = QUDA_RECONSTRUCT_12;
    gp.gauge_fix = QUDA_GAUGE_FIXED_NO;
    let mut parts: Vec<*mut c_void> = qdp
        .chunks_mut(v * 18)
        .map(|c| c.as_mut_ptr() as *mut c_void)
        .collect();
    for k in 0..o.loads.max(1) {
        let t = Instant::now();
        unsafe { loadGaugeQuda(parts.as_mut_ptr() as *mut c_void, &mut gp) };
        check("loadGaugeQuda")?;
        println!("loadGaugeQuda {k}: {:.3} s", t.elapsed().as_secs_f64());
    }

    let mut ip = unsafe { newQudaInvertParam() };
    ip.dslash_type = if o.csw.is_some() {
        QUDA_CLOVER_WILSON_DSLASH
    } else {
        QUDA_WILSON_DSLASH
    };
    ip.kappa = o.kappa;
    ip.mass_normalization = QUDA_KAPPA_NORMALIZATION;
    ip.dagger = QUDA_DAG_NO;
    ip.cpu_prec = QUDA_DOUBLE_PRECISION;
    ip.cuda_prec = QUDA_DOUBLE_PRECISION;
    ip.cuda_prec_sloppy = sloppy;
    ip.dirac_order = QUDA_DIRAC_ORDER;
    ip.gamma_basis = QUDA_DEGRAND_ROSSI_GAMMA_BASIS;
    ip.solution_type = match o.solution {
        Solution::Mat => QUDA_MAT_SOLUTION,
        Solution::Matpc => QUDA_MATPC_SOLUTION,
        Solution::Matpcdagmatpc => QUDA_MATPCDAG_MATPC_SOLUTION,
    };
    ip.solve_type = if o.cg {
        QUDA_NORMOP_PC_SOLVE
    } else {
        QUDA_DIRECT_PC_SOLVE
    };
    ip.inv_type = if o.cg {
        QUDA_CG_INVERTER
    } else {
        QUDA_BICGSTAB_INVERTER
    };
    ip.matpc_type = QUDA_MATPC_EVEN_EVEN;
    ip.tol = o.tol;
    ip.maxiter = 20_000;
    ip.reliable_delta = 0.1;
    if let Some(csw) = o.csw {
        ip.clover_cpu_prec = QUDA_DOUBLE_PRECISION;
        ip.clover_cuda_prec = QUDA_DOUBLE_PRECISION;
        ip.clover_cuda_prec_sloppy = sloppy;
        ip.clover_order = QUDA_PACKED_CLOVER_ORDER;
        ip.clover_csw = csw;
        ip.clover_coeff = csw * o.kappa;
        ip.compute_clover = 1;
        ip.compute_clover_inverse = 1;
        let t = Instant::now();
        unsafe { loadCloverQuda(std::ptr::null_mut(), std::ptr::null_mut(), &mut ip) };
        check("loadCloverQuda")?;
        println!(
            "loadCloverQuda (computed): {:.3} s",
            t.elapsed().as_secs_f64()
        );
    }

    let n = match o.solution {
        Solution::Mat => v * 24,
        Solution::Matpc | Solution::Matpcdagmatpc => vh * 24,
    };
    let what = format!(
        "{:?} {:?} sloppy, {}{}",
        o.solution,
        o.sloppy,
        if o.cg { "CG" } else { "BiCGstab" },
        if o.csw.is_some() { ", clover" } else { "" }
    );
    timed_solves(o.repeat, &mut ip, n, &what)?;
    if o.sources > 0 {
        several_sources(o, &mut ip, n)?;
    }
    unsafe { endQuda() };
    Ok(())
}

/// `o.sources` point sources (spin-colour 0..12 at sites 0, 1, ...), in
/// turn and in one invertMultiSrcQuda call: wall times and the largest
/// difference of the solutions.
fn several_sources(
    o: &Options,
    ip: &mut QudaInvertParam,
    n: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let k = o.sources;
    let mut bs: Vec<Vec<f64>> = (0..k)
        .map(|j| {
            let mut b = vec![0.0f64; n];
            b[(j / 12) * 24 + 2 * (j % 12)] = 1.0;
            b
        })
        .collect();
    // Every array written once before the clock starts: a program's
    // vectors are mapped (a fresh calloc'd one page-faults on first write).
    let touched = || {
        let mut v = vec![1.0f64; n];
        v.fill(0.0);
        v
    };
    let mut in_turn: Vec<Vec<f64>> = (0..k).map(|_| touched()).collect();
    let t = Instant::now();
    for (b, x) in bs.iter_mut().zip(&mut in_turn) {
        unsafe {
            invertQuda(
                x.as_mut_ptr() as *mut c_void,
                b.as_mut_ptr() as *mut c_void,
                ip,
            )
        };
        if unsafe { latsol_quda_last_status() } != 0 {
            return Err("invertQuda failed".into());
        }
    }
    let turn_s = t.elapsed().as_secs_f64();
    let mut together: Vec<Vec<f64>> = (0..k).map(|_| touched()).collect();
    let mut pb: Vec<*mut c_void> = bs
        .iter_mut()
        .map(|b| b.as_mut_ptr() as *mut c_void)
        .collect();
    let mut px: Vec<*mut c_void> = together
        .iter_mut()
        .map(|x| x.as_mut_ptr() as *mut c_void)
        .collect();
    ip.num_src = k as i32;
    let t = Instant::now();
    unsafe { invertMultiSrcQuda(px.as_mut_ptr(), pb.as_mut_ptr(), ip) };
    if unsafe { latsol_quda_last_status() } != 0 {
        return Err("invertMultiSrcQuda failed".into());
    }
    let multi_s = t.elapsed().as_secs_f64();
    let diff = together
        .iter()
        .flatten()
        .zip(in_turn.iter().flatten())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f64, f64::max);
    println!(
        "{k} sources: invertQuda in turn {turn_s:.3} s ({:.3} s each), invertMultiSrcQuda \
         {multi_s:.3} s ({:.3} s each, {} iterations); solutions differ by at most {diff:.1e}",
        turn_s / k as f64,
        multi_s / k as f64,
        ip.iter
    );
    Ok(())
}

/// `--asqtad`: loadGaugeQuda of fat and long links (MILC order, double),
/// then `o.repeat` MATPC CG solves of the improved staggered operator (the
/// first converts the links on the device).
fn asqtad(
    o: &Options,
    field: &latsol::field::GaugeField,
    mass: f64,
    sloppy: QudaPrecision,
) -> Result<(), Box<dyn std::error::Error>> {
    let status = || unsafe { latsol_quda_last_status() };
    let v = field.lattice().volume();
    let mut fat = latsol::alloc::filled(4 * v * 18, 0.0f64, "the fat links")?;
    layout::gauge::export(field, GaugeOrder::Milc, &mut [HostRealsMut::F64(&mut fat)])?;
    let mut long: Vec<f64> = fat.iter().map(|x| x / -24.0).collect();
    let mut gp = unsafe { newQudaGaugeParam() };
    gp.X = o.dims.map(|d| d as i32);
    gp.anisotropy = 1.0;
    gp.gauge_order = QUDA_MILC_GAUGE_ORDER;
    gp.t_boundary = QUDA_PERIODIC_T;
    gp.cpu_prec = QUDA_DOUBLE_PRECISION;
    gp.cuda_prec = QUDA_DOUBLE_PRECISION;
    gp.cuda_prec_sloppy = sloppy;
    gp.reconstruct = QUDA_RECONSTRUCT_NO;
    gp.reconstruct_sloppy = QUDA_RECONSTRUCT_NO;
    gp.gauge_fix = QUDA_GAUGE_FIXED_NO;
    for k in 0..o.loads.max(1) {
        for (links, kind, name) in [
            (&mut fat, QUDA_ASQTAD_FAT_LINKS, "fat"),
            (&mut long, QUDA_ASQTAD_LONG_LINKS, "long"),
        ] {
            gp.r#type = kind;
            let t = Instant::now();
            unsafe { loadGaugeQuda(links.as_mut_ptr() as *mut c_void, &mut gp) };
            if status() != 0 {
                return Err(format!("loadGaugeQuda ({name} links) failed").into());
            }
            println!(
                "loadGaugeQuda {k} ({name} links): {:.3} s",
                t.elapsed().as_secs_f64()
            );
        }
    }
    let mut ip = unsafe { newQudaInvertParam() };
    ip.dslash_type = QUDA_ASQTAD_DSLASH;
    ip.inv_type = QUDA_CG_INVERTER;
    ip.mass = mass;
    ip.mass_normalization = QUDA_MASS_NORMALIZATION;
    ip.solution_type = QUDA_MATPC_SOLUTION;
    ip.solve_type = QUDA_DIRECT_PC_SOLVE;
    ip.matpc_type = QUDA_MATPC_EVEN_EVEN;
    ip.dagger = QUDA_DAG_NO;
    ip.cpu_prec = QUDA_DOUBLE_PRECISION;
    ip.cuda_prec = QUDA_DOUBLE_PRECISION;
    ip.cuda_prec_sloppy = sloppy;
    ip.tol = o.tol;
    ip.maxiter = 20_000;
    ip.reliable_delta = 0.1;
    let n = field.lattice().half_volume() * 6;
    timed_solves(
        o.repeat,
        &mut ip,
        n,
        &format!("asqtad MATPC CG, {:?} sloppy", o.sloppy),
    )?;
    Ok(())
}

/// `repeat` invertQuda calls on a point source (`n` reals) from a zero
/// guess, each printed with its wall time beside QUDA's `secs`.
fn timed_solves(
    repeat: usize,
    ip: &mut QudaInvertParam,
    n: usize,
    what: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut b = latsol::alloc::filled(n, 0.0f64, "the source")?;
    b[0] = 1.0;
    let mut x = latsol::alloc::filled(n, 0.0f64, "the solution")?;
    for k in 0..repeat.max(1) {
        x.fill(0.0);
        let t = Instant::now();
        unsafe {
            invertQuda(
                x.as_mut_ptr() as *mut c_void,
                b.as_mut_ptr() as *mut c_void,
                ip,
            )
        };
        if unsafe { latsol_quda_last_status() } != 0 {
            return Err(format!("invertQuda ({what}) failed").into());
        }
        println!(
            "invertQuda {k}: {what}: {} iterations, true_res {:.2e}, wall {:.3} s, secs {:.3} s",
            ip.iter,
            ip.true_res[0],
            t.elapsed().as_secs_f64(),
            ip.secs
        );
    }
    Ok(())
}
