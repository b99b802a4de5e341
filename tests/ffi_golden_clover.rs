//! The golden Wilson-clover data (`tests/data/golden-clover-6x4x4x8`, a
//! copy of `../shared/data/`, computed with QUDA's host reference code)
//! through the C ABI: the clover field in QUDA's packed order,
//! `latsol_apply_clover` reproduces `A ψ`, `A⁻¹ ψ`, `D ψ`, `M ψ`, `M† ψ` and
//! the eight even-odd forms (symmetric/asymmetric, even/odd, dagger) to
//! 1e-12 relative; every solver and mixed scheme solves `M x = M ψ` to
//! 1e-10 with the true residual checked. κ = 0.12, anti-periodic in time,
//! DeGrand–Rossi basis, DIRAC order.

mod ffi_common;

use std::ffi::c_void;
use std::path::PathBuf;
use std::ptr;

use ffi_common::*;
use latsol::ffi::*;

fn read_f64(name: &str) -> Vec<f64> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/golden-clover-6x4x4x8")
        .join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

const DIMS: [i32; 4] = [6, 4, 4, 8];
const KAPPA: f64 = 0.12;

struct Golden {
    ctx: *mut latsol_context,
    gauge: *mut latsol_gauge,
    clover: *mut latsol_clover,
    param: latsol_invert_param,
    psi: Vec<f64>,
}

impl Golden {
    fn load(precision: latsol_precision, sloppy: latsol_precision) -> Golden {
        let v = volume(DIMS);
        let links = read_f64("gauge_qdp.f64");
        let table: [*const c_void; 4] =
            std::array::from_fn(|mu| links[mu * v * 18..].as_ptr().cast());
        let ctx = cpu_context();
        let mut gp = latsol_gauge_param_default();
        gp.dims = DIMS;
        gp.t_boundary = LATSOL_T_BOUNDARY_ANTIPERIODIC;
        gp.precision = precision;
        gp.precision_sloppy = sloppy;
        let mut gauge = ptr::null_mut();
        ok(unsafe { latsol_gauge_load(ctx, &gp, table.as_ptr().cast(), &mut gauge) });
        let packed = read_f64("clover_packed.f64");
        assert_eq!(packed.len(), v * 72);
        let mut cp = latsol_clover_param_default();
        cp.precision = precision;
        cp.precision_sloppy = sloppy;
        let mut clover = ptr::null_mut();
        ok(unsafe {
            latsol_clover_load(
                ctx,
                gauge,
                &cp,
                packed.as_ptr().cast(),
                ptr::null(),
                &mut clover,
            )
        });
        let mut param = latsol_invert_param_default();
        param.dslash = LATSOL_DSLASH_CLOVER_WILSON;
        param.kappa = KAPPA;
        param.precision = precision;
        param.precision_sloppy = sloppy;
        param.tol = 1e-10;
        Golden {
            ctx,
            gauge,
            clover,
            param,
            psi: read_f64("psi_dirac.f64"),
        }
    }

    fn apply(&self, p: &latsol_invert_param, op: latsol_operator, x: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; x.len()];
        ok(unsafe {
            latsol_apply_clover(
                self.ctx,
                self.gauge,
                self.clover,
                p,
                op,
                out.as_mut_ptr().cast(),
                x.as_ptr().cast(),
            )
        });
        out
    }

    /// Solves `M x = b` with `p`; the solution.
    fn invert(&self, p: &latsol_invert_param, b: &[f64]) -> Vec<f64> {
        let mut x = vec![0.0; b.len()];
        let mut res = latsol_invert_result_default();
        ok(unsafe {
            latsol_invert_clover(
                self.ctx,
                self.gauge,
                self.clover,
                p,
                x.as_mut_ptr().cast(),
                b.as_ptr().cast(),
                &mut res,
            )
        });
        assert!(
            res.true_residual < 1e-10,
            "reported residual {:.2e}",
            res.true_residual
        );
        x
    }

    fn half(&self, parity: usize) -> Vec<f64> {
        let n = self.psi.len() / 2;
        self.psi[parity * n..(parity + 1) * n].to_vec()
    }
}

impl Drop for Golden {
    fn drop(&mut self) {
        unsafe {
            ok(latsol_clover_free(self.clover));
            ok(latsol_gauge_free(self.gauge));
            ok(latsol_end(self.ctx));
        }
    }
}

fn check(name: &str, got: &[f64], file: &str) {
    let want = read_f64(file);
    let d = rel_diff(got, &want);
    assert!(d < 1e-12, "{name}: relative difference {d:.3e} from {file}");
}

#[test]
fn site_terms_hopping_term_and_full_operator_match() {
    let g = Golden::load(LATSOL_PRECISION_DOUBLE, LATSOL_PRECISION_DOUBLE);
    let p = g.param;
    check("A psi", &g.apply(&p, LATSOL_OP_CLOVER, &g.psi), "A_psi.f64");
    check(
        "A^-1 psi",
        &g.apply(&p, LATSOL_OP_CLOVER_INV, &g.psi),
        "Ainv_psi.f64",
    );
    check(
        "D psi",
        &g.apply(&p, LATSOL_OP_DSLASH, &g.psi),
        "Dslash_psi.f64",
    );
    check("M psi", &g.apply(&p, LATSOL_OP_M, &g.psi), "M_psi.f64");
    check(
        "M^dag psi",
        &g.apply(&p, LATSOL_OP_MDAG, &g.psi),
        "Mdag_psi.f64",
    );
}

#[test]
fn the_four_even_odd_forms_and_their_adjoints_match() {
    let g = Golden::load(LATSOL_PRECISION_DOUBLE, LATSOL_PRECISION_DOUBLE);
    let forms = [
        (LATSOL_MATPC_EVEN_EVEN, 0, "even_sym"),
        (LATSOL_MATPC_EVEN_EVEN_ASYMMETRIC, 0, "even_asym"),
        (LATSOL_MATPC_ODD_ODD, 1, "odd_sym"),
        (LATSOL_MATPC_ODD_ODD_ASYMMETRIC, 1, "odd_asym"),
    ];
    for (matpc, parity, name) in forms {
        let mut p = g.param;
        p.matpc = matpc;
        let x = g.half(parity);
        check(
            name,
            &g.apply(&p, LATSOL_OP_MPC, &x),
            &format!("Mpc_{name}_psi.f64"),
        );
        check(
            name,
            &g.apply(&p, LATSOL_OP_MPC_DAG, &x),
            &format!("Mpcdag_{name}_psi.f64"),
        );
    }
}

/// `‖b − M x‖/‖b‖` through `latsol_apply_clover`.
fn true_residual(g: &Golden, x: &[f64], b: &[f64]) -> f64 {
    let mx = g.apply(&g.param, LATSOL_OP_M, x);
    rel_diff(&mx, b)
}

#[test]
fn every_solver_and_form_solves_the_clover_system() {
    let g = Golden::load(LATSOL_PRECISION_DOUBLE, LATSOL_PRECISION_DOUBLE);
    let b = read_f64("M_psi.f64");
    let cases = [
        (
            LATSOL_SOLVER_BICGSTAB,
            LATSOL_SOLVE_DIRECT_PC,
            LATSOL_MATPC_EVEN_EVEN,
        ),
        (
            LATSOL_SOLVER_BICGSTAB,
            LATSOL_SOLVE_DIRECT_PC,
            LATSOL_MATPC_ODD_ODD_ASYMMETRIC,
        ),
        (
            LATSOL_SOLVER_BICGSTAB,
            LATSOL_SOLVE_DIRECT,
            LATSOL_MATPC_EVEN_EVEN,
        ),
        (
            LATSOL_SOLVER_CG,
            LATSOL_SOLVE_NORMOP_PC,
            LATSOL_MATPC_EVEN_EVEN_ASYMMETRIC,
        ),
        (
            LATSOL_SOLVER_CG,
            LATSOL_SOLVE_DIRECT_PC,
            LATSOL_MATPC_ODD_ODD,
        ),
        (
            LATSOL_SOLVER_CG,
            LATSOL_SOLVE_NORMOP,
            LATSOL_MATPC_EVEN_EVEN,
        ),
    ];
    for (solver, solve_type, matpc) in cases {
        let mut p = g.param;
        p.solver = solver;
        p.solve_type = solve_type;
        p.matpc = matpc;
        let x = g.invert(&p, &b);
        let r = true_residual(&g, &x, &b);
        let case = format!("solver {solver} solve {solve_type} matpc {matpc}");
        assert!(r < 1e-10, "{case}: residual {r:.2e}");
        // The solution is ψ to the accuracy the residual and the
        // condition of M (eigenvalues of A in [0.37, 1.64]) allow.
        assert!(rel_diff(&x, &g.psi) < 1e-8, "{case}: |x − ψ| too large");
    }
}

#[test]
fn mixed_precision_schemes_solve_the_clover_system() {
    for sloppy in [LATSOL_PRECISION_SINGLE, LATSOL_PRECISION_HALF] {
        let g = Golden::load(LATSOL_PRECISION_DOUBLE, sloppy);
        let b = read_f64("M_psi.f64");
        let cases = [
            (
                LATSOL_SOLVER_BICGSTAB,
                LATSOL_MIXED_RELIABLE_UPDATES,
                LATSOL_MATPC_EVEN_EVEN,
            ),
            (
                LATSOL_SOLVER_BICGSTAB,
                LATSOL_MIXED_DEFECT_CORRECTION,
                LATSOL_MATPC_ODD_ODD_ASYMMETRIC,
            ),
            (
                LATSOL_SOLVER_CG,
                LATSOL_MIXED_RELIABLE_UPDATES,
                LATSOL_MATPC_EVEN_EVEN_ASYMMETRIC,
            ),
            (
                LATSOL_SOLVER_CG,
                LATSOL_MIXED_DEFECT_CORRECTION_CORRECTED,
                LATSOL_MATPC_EVEN_EVEN,
            ),
        ];
        for (solver, mixed, matpc) in cases {
            let mut p = g.param;
            p.solver = solver;
            p.mixed = mixed;
            p.matpc = matpc;
            let x = g.invert(&p, &b);
            let r = true_residual(&g, &x, &b);
            assert!(
                r < 1e-10,
                "sloppy {sloppy} solver {solver} mixed {mixed}: residual {r:.2e}"
            );
        }
    }
}

#[test]
fn multishift_cg_solves_the_shifted_clover_normal_systems() {
    let g = Golden::load(LATSOL_PRECISION_DOUBLE, LATSOL_PRECISION_SINGLE);
    let mut p = g.param;
    p.solve_type = LATSOL_SOLVE_DIRECT_PC;
    p.matpc = LATSOL_MATPC_EVEN_EVEN;
    let b = g.half(0);
    let shifts = [0.0, 0.05, 0.4];
    let mut xs: Vec<Vec<f64>> = shifts.iter().map(|_| vec![0.0; b.len()]).collect();
    let mut ptrs: Vec<*mut c_void> = xs.iter_mut().map(|x| x.as_mut_ptr().cast()).collect();
    let mut res = latsol_multishift_result_default();
    ok(unsafe {
        latsol_invert_multishift_clover(
            g.ctx,
            g.gauge,
            g.clover,
            &p,
            shifts.len() as i32,
            shifts.as_ptr(),
            ptr::null(),
            ptrs.as_mut_ptr(),
            b.as_ptr().cast(),
            &mut res,
        )
    });
    // (M̂†M̂ + σ) x = b, checked through the operator itself.
    for (s, x) in shifts.iter().zip(&xs) {
        let mx = g.apply(&p, LATSOL_OP_MPC, x);
        let mut ax = g.apply(&p, LATSOL_OP_MPC_DAG, &mx);
        for (a, xi) in ax.iter_mut().zip(x) {
            *a += s * xi;
        }
        let r = rel_diff(&ax, &b);
        assert!(r < 1e-10, "shift {s}: residual {r:.2e}");
    }
}
