//! The golden Wilson data of a peer implementation
//! (`tests/data/golden-wilson-6x4x4x8`, a copy of `../shared/data/`, docs/conventions.md) through the C
//! ABI: `latsol_apply` reproduces `M ψ`, `M† ψ` and `D ψ` to 1e-12,
//! `latsol_invert` of `M ψ` gives back `ψ` to 1e-10, and
//! `latsol_gauge_plaquette` gives the value pinned for the field (meta.json's
//! differs: see that test). DeGrand–Rossi basis, DIRAC spinor order, QDP
//! gauge order, anti-periodic in time.

mod ffi_common;

use std::ffi::c_void;
use std::path::PathBuf;
use std::ptr;

use ffi_common::*;
use latsol::ffi::*;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden-wilson-6x4x4x8")
}

fn read_f64(name: &str) -> Vec<f64> {
    let path = golden_dir().join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// A number from meta.json (a flat object; no JSON crate needed).
fn meta_number(key: &str) -> f64 {
    let meta = std::fs::read_to_string(golden_dir().join("meta.json")).unwrap();
    let at = meta
        .find(&format!("\"{key}\""))
        .unwrap_or_else(|| panic!("meta.json lacks {key}"));
    let rest = &meta[at + key.len() + 2..];
    let rest = rest[rest.find(':').unwrap() + 1..].trim_start();
    let end = rest.find([',', '\n', '}']).unwrap();
    rest[..end].trim().parse().unwrap()
}

struct Golden {
    ctx: *mut latsol_context,
    gauge: *mut latsol_gauge,
    param: latsol_invert_param,
    psi: Vec<f64>,
}

impl Golden {
    fn load() -> Golden {
        let dims = [6, 4, 4, 8];
        let v = volume(dims);
        let links = read_f64("gauge_qdp.f64");
        assert_eq!(links.len(), 4 * v * 18);
        let table: [*const c_void; 4] =
            std::array::from_fn(|mu| links[mu * v * 18..].as_ptr().cast());
        let ctx = cpu_context();
        let mut gp = latsol_gauge_param_default();
        gp.dims = dims;
        gp.order = LATSOL_GAUGE_ORDER_QDP;
        gp.t_boundary = LATSOL_T_BOUNDARY_ANTIPERIODIC;
        gp.host_precision = LATSOL_PRECISION_DOUBLE;
        let mut gauge = ptr::null_mut();
        ok(unsafe { latsol_gauge_load(ctx, &gp, table.as_ptr().cast(), &mut gauge) });
        let mut param = latsol_invert_param_default();
        param.kappa = meta_number("kappa");
        param.mass_normalization = LATSOL_NORMALIZATION_KAPPA;
        param.dirac_order = LATSOL_DIRAC_ORDER_DIRAC;
        param.gamma_basis = LATSOL_GAMMA_DEGRAND_ROSSI;
        param.host_precision = LATSOL_PRECISION_DOUBLE;
        param.tol = 1e-12;
        Golden {
            ctx,
            gauge,
            param,
            psi: read_f64("psi_dirac.f64"),
        }
    }

    fn apply(&self, op: latsol_operator) -> Vec<f64> {
        let mut out = vec![0.0; self.psi.len()];
        ok(unsafe {
            latsol_apply(
                self.ctx,
                self.gauge,
                &self.param,
                op,
                out.as_mut_ptr().cast(),
                self.psi.as_ptr().cast(),
            )
        });
        out
    }
}

impl Drop for Golden {
    fn drop(&mut self) {
        unsafe {
            latsol_gauge_free(self.gauge);
            latsol_end(self.ctx);
        }
    }
}

#[test]
fn apply_reproduces_the_golden_operators() {
    let g = Golden::load();
    assert_eq!(g.param.kappa, 0.12);
    for (op, file) in [
        (LATSOL_OP_M, "M_psi_dirac.f64"),
        (LATSOL_OP_MDAG, "Mdag_psi_dirac.f64"),
        (LATSOL_OP_DSLASH, "Dslash_psi_dirac.f64"),
    ] {
        let got = g.apply(op);
        let want = read_f64(file);
        let err = rel_diff(&got, &want);
        assert!(err < 1e-12, "{file}: relative difference {err:e}");
    }
}

#[test]
fn invert_gives_back_psi() {
    let g = Golden::load();
    let b = read_f64("M_psi_dirac.f64");
    for (solver, solve_type) in [
        (LATSOL_SOLVER_BICGSTAB, LATSOL_SOLVE_DIRECT_PC),
        (LATSOL_SOLVER_CG, LATSOL_SOLVE_DIRECT_PC),
        (LATSOL_SOLVER_BICGSTAB, LATSOL_SOLVE_DIRECT),
    ] {
        let mut p = g.param;
        p.solver = solver;
        p.solve_type = solve_type;
        let mut x = vec![0.0; b.len()];
        let mut r = latsol_invert_result_default();
        ok(unsafe {
            latsol_invert(
                g.ctx,
                g.gauge,
                &p,
                x.as_mut_ptr().cast(),
                b.as_ptr().cast(),
                &mut r,
            )
        });
        assert!(r.converged == 1 && r.true_residual <= 1e-12, "{r:?}");
        let err = rel_diff(&x, &g.psi);
        assert!(
            err < 1e-10,
            "solver {solver}, solve type {solve_type}: |x - psi|/|psi| = {err:e}"
        );
    }
}

/// meta.json's plaquette is not reproduced by latsol, nor by an
/// independent computation over the same file (docs/conventions.md,
/// "Golden data": the peer evidently used another definition, while the
/// operator data match to 1e-13, so the links are read as intended). The
/// C ABI must give the value the project pinned for this field
/// (`tests/golden.rs`), to 1e-12 relative.
#[test]
fn plaquette_matches_the_pinned_value() {
    let g = Golden::load();
    let mut plaq = [0.0; 3];
    ok(unsafe { latsol_gauge_plaquette(g.gauge, plaq.as_mut_ptr()) });
    let pinned = [
        3.170111482039324e-05,
        -4.3307694783625145e-04,
        4.964791774770379e-04,
    ];
    for (k, (got, want)) in plaq.iter().zip(pinned).enumerate() {
        assert!(
            (got - want).abs() <= 1e-12 * want.abs(),
            "plaq[{k}]: {got} vs {want}"
        );
    }
    // The average is the mean of the spatial and temporal halves.
    assert!((plaq[0] - 0.5 * (plaq[1] + plaq[2])).abs() < 1e-16);
    // meta.json holds the peer's different numbers; if it ever agrees, this
    // test and docs/conventions.md should be revisited.
    assert!((meta_number("plaquette") - plaq[0]).abs() > 1e-6);
}
