//! latsol-gpu-check, one part: the vector operations against the CPU
//! backend (every operation and `gamma5`, the conversions between all
//! formats, the solvers' fused updates, the reductions and their
//! reproducibility) and their effective bandwidth (`bench_blas`).

use std::sync::Arc;

use latsol::backend::cpu::CpuBackend;
use latsol::backend::cuda::CudaBackend;
use latsol::backend::Backend;
use latsol::field::HostSpinor;
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::precision::Precision;
use latsol::random;
use num_complex::Complex64 as C64;

use crate::common::{
    down, e, is_packed, is_per_site, nan_field, rel, rel_scalar, tolerance, up, Pair,
    ALL_PRECISIONS, R,
};
use crate::report::Report;
use crate::timing::time_ms;

/// Every vector operation and gamma5 on one subset.
pub fn check_blas<T: Backend>(
    pair: &Pair<T>,
    lat: &Arc<Lattice>,
    subset: Subset,
    rep: &mut Report,
) -> R<()> {
    let (cpu, gpu, prec) = (pair.cpu, pair.gpu, pair.prec);
    let tag = format!("{prec:?} {subset:?}");
    let hx = random::spinor(lat, subset, 11);
    let hy = random::spinor(lat, subset, 12);
    let hz = random::spinor(lat, subset, 13);
    let (cx, gx) = pair.up(&hx)?;
    let (cy, gy) = pair.up(&hy)?;
    let a = 0.731;
    let (ca, cb) = (C64::new(0.3, -1.1), C64::new(-0.7, 0.45));
    let tol = tolerance(prec);

    // Outputs that are written without being read: poisoned first.
    let poison = nan_field(lat, subset);
    let (mut co, mut go) = pair.up(&poison)?;
    cpu.copy(&mut co, &cx).map_err(e)?;
    gpu.copy(&mut go, &gx).map_err(e)?;
    pair.compare(rep, &format!("copy {tag}"), &co, &go)?;
    // The packed formats store what the CPU stores, bit for bit, where
    // the arithmetic is the same: uploads (from double) and conversions
    // from and to double and single.
    if is_packed(prec) {
        let (hc, hg) = (down(cpu, &cx)?, down(gpu, &gx)?);
        rep.check(
            &format!("upload {tag} bit for bit"),
            rel(hg.data(), hc.data()),
            0.0,
        );
    }
    // Conversions from and to every other format: bit for bit between
    // a packed format and double, single or the other packed format
    // (double arithmetic on both backends); otherwise within the coarser
    // format's bound (the GPU reads half and quarter in single).
    for other in ALL_PRECISIONS.into_iter().filter(|&q| q != prec) {
        let exact = is_packed(prec) && (is_packed(other) || !is_per_site(other));
        let tol = if exact {
            0.0
        } else {
            tolerance(prec).max(tolerance(other))
        };
        let (cs, gs) = (up(cpu, &hx, other)?, up(gpu, &hx, other)?);
        let (mut co, mut go) = pair.up(&poison)?;
        cpu.copy(&mut co, &cs).map_err(e)?;
        gpu.copy(&mut go, &gs).map_err(e)?;
        let (hc, hg) = (down(cpu, &co)?, down(gpu, &go)?);
        rep.check(
            &format!("copy from {other:?} {tag}"),
            rel(hg.data(), hc.data()),
            tol,
        );
        let (mut co, mut go) = (up(cpu, &poison, other)?, up(gpu, &poison, other)?);
        cpu.copy(&mut co, &cx).map_err(e)?;
        gpu.copy(&mut go, &gx).map_err(e)?;
        let (hc, hg) = (down(cpu, &co)?, down(gpu, &go)?);
        rep.check(
            &format!("copy to {other:?} {tag}"),
            rel(hg.data(), hc.data()),
            tol,
        );
    }
    let (mut co, mut go) = pair.up(&poison)?;
    cpu.gamma5(&mut co, &cx).map_err(e)?;
    gpu.gamma5(&mut go, &gx).map_err(e)?;
    pair.compare(rep, &format!("gamma5 {tag}"), &co, &go)?;
    let (_, mut go) = pair.up(&poison)?;
    gpu.zero(&mut go).map_err(e)?;
    let zero_ok = down(gpu, &go)?
        .data()
        .iter()
        .all(|z| z.re == 0.0 && z.im == 0.0);
    rep.flag(&format!("zero {tag}"), zero_ok);

    // In-place updates: y (or z) starts from random data.
    type Upd<'f, B> = Box<
        dyn Fn(&B, &<B as Backend>::Spinor, &mut <B as Backend>::Spinor) -> latsol::Result<f64>
            + 'f,
    >;
    macro_rules! updates {
        ($B:ty) => {{
            let v: Vec<(&str, Upd<$B>)> = vec![
                ("ax", Box::new(move |b, _x, y| b.ax(a, y).map(|_| 0.0))),
                (
                    "axpy",
                    Box::new(move |b, x, y| b.axpy(a, x, y).map(|_| 0.0)),
                ),
                (
                    "xpay",
                    Box::new(move |b, x, y| b.xpay(x, a, y).map(|_| 0.0)),
                ),
                (
                    "axpby",
                    Box::new(move |b, x, y| b.axpby(a, x, -0.37, y).map(|_| 0.0)),
                ),
                (
                    "caxpy",
                    Box::new(move |b, x, y| b.caxpy(ca, x, y).map(|_| 0.0)),
                ),
                ("axpy_norm2", Box::new(move |b, x, y| b.axpy_norm2(a, x, y))),
                (
                    "caxpy_norm2",
                    Box::new(move |b, x, y| b.caxpy_norm2(ca, x, y)),
                ),
                ("xmy_norm2", Box::new(move |b, x, y| b.xmy_norm2(x, y))),
            ];
            v
        }};
    }
    for ((name, fc), (_, fg)) in updates!(CpuBackend).into_iter().zip(updates!(T)) {
        let (mut cy2, mut gy2) = pair.up(&hy)?;
        let rc = fc(cpu, &cx, &mut cy2).map_err(e)?;
        let rg = fg(gpu, &gx, &mut gy2).map_err(e)?;
        pair.compare(rep, &format!("{name} {tag}"), &cy2, &gy2)?;
        if name.ends_with("norm2") {
            rep.check(
                &format!("{name} (scalar) {tag}"),
                rel_scalar(rg.into(), rc.into()),
                tol,
            );
        }
    }
    let (mut cz, mut gz) = pair.up(&hz)?;
    cpu.cxpaypbz(&cx, ca, &cy, cb, &mut cz).map_err(e)?;
    gpu.cxpaypbz(&gx, ca, &gy, cb, &mut gz).map_err(e)?;
    pair.compare(rep, &format!("cxpaypbz {tag}"), &cz, &gz)?;
    // BiCGstab's fused update: p = x, s = y, x = z, t = gamma5 x, r̂ = y.
    let (mut cs, mut gs) = pair.up(&hy)?;
    let (mut cxx, mut gxx) = pair.up(&hz)?;
    let (mut ct, mut gt) = pair.up(&hz)?;
    cpu.gamma5(&mut ct, &cx).map_err(e)?;
    gpu.gamma5(&mut gt, &gx).map_err(e)?;
    let rc = cpu
        .bicgstab_update(ca, &cx, cb, &mut cs, &mut cxx, &ct, &cy)
        .map_err(e)?;
    let rg = gpu
        .bicgstab_update(ca, &gx, cb, &mut gs, &mut gxx, &gt, &gy)
        .map_err(e)?;
    // The fused update's sums, (r̂, s) and ‖s‖², against the CPU's.
    let check_sums = |rep: &mut Report, what: &str, rg: (C64, f64), rc: (C64, f64)| {
        rep.check(&format!("{what} (dot) {tag}"), rel_scalar(rg.0, rc.0), tol);
        rep.check(
            &format!("{what} (norm) {tag}"),
            rel_scalar(rg.1.into(), rc.1.into()),
            tol,
        );
    };
    pair.compare(rep, &format!("bicgstab_update (s) {tag}"), &cs, &gs)?;
    pair.compare(rep, &format!("bicgstab_update (x) {tag}"), &cxx, &gxx)?;
    check_sums(rep, "bicgstab_update", rg, rc);
    // The same with x̂ in single beside the formats coarser than single
    // (the widened partial solution of the mixed BiCGstab:
    // half, quarter, 20-bit).
    if prec.partial_solution() != prec {
        let (mut cs, mut gs) = pair.up(&hy)?;
        let single = Precision::Single;
        let (mut cxw, mut gxw) = (up(cpu, &hz, single)?, up(gpu, &hz, single)?);
        let rc = cpu
            .bicgstab_update(ca, &cx, cb, &mut cs, &mut cxw, &ct, &cy)
            .map_err(e)?;
        let rg = gpu
            .bicgstab_update(ca, &gx, cb, &mut gs, &mut gxw, &gt, &gy)
            .map_err(e)?;
        pair.compare(
            rep,
            &format!("bicgstab_update x̂ single (s) {tag}"),
            &cs,
            &gs,
        )?;
        let (hc, hg) = (down(cpu, &cxw)?, down(gpu, &gxw)?);
        rep.check(
            &format!("bicgstab_update x̂ single (x) {tag}"),
            rel(hg.data(), hc.data()),
            tol,
        );
        check_sums(rep, "bicgstab_update x̂ single", rg, rc);
    }

    // Reductions, and their reproducibility bit for bit.
    let n = (cpu.norm2(&cx).map_err(e)?, gpu.norm2(&gx).map_err(e)?);
    rep.check(
        &format!("norm2 {tag}"),
        rel_scalar(n.1.into(), n.0.into()),
        tol,
    );
    let d = (
        cpu.cdot(&cx, &cy).map_err(e)?,
        gpu.cdot(&gx, &gy).map_err(e)?,
    );
    rep.check(&format!("cdot {tag}"), rel_scalar(d.1, d.0), tol);
    let (dc, nc) = cpu.cdot_norm2(&cx, &cy).map_err(e)?;
    let (dg, ng) = gpu.cdot_norm2(&gx, &gy).map_err(e)?;
    rep.check(&format!("cdot_norm2 (dot) {tag}"), rel_scalar(dg, dc), tol);
    rep.check(
        &format!("cdot_norm2 (norm) {tag}"),
        rel_scalar(ng.into(), nc.into()),
        tol,
    );
    // MILC's heavy-quark residual of Wilson fields (qudaCloverInvert's
    // Fermilab target): the same stored numbers summed in another order;
    // the per-site formats widened on each side by its own rule.
    let hq = (
        cpu.heavy_quark_residual2(&cx, &cy).map_err(e)?,
        gpu.heavy_quark_residual2(&gx, &gy).map_err(e)?,
    );
    let exact = matches!(prec, Precision::Double | Precision::Single);
    rep.check(
        &format!("heavy-quark residual {tag}"),
        (hq.1 - hq.0).abs() / hq.0,
        if exact { 1e-12 } else { tol },
    );
    let same = (0..5).all(|_| {
        gpu.norm2(&gx)
            .map(|v| v.to_bits() == n.1.to_bits())
            .unwrap_or(false)
            && gpu
                .cdot(&gx, &gy)
                .map(|v| v.re.to_bits() == d.1.re.to_bits())
                .unwrap_or(false)
    });
    rep.flag(&format!("reductions reproducible bit for bit {tag}"), same);
    Ok(())
}

/// The solvers' fused updates with `pair.prec` as the sloppy format:
/// `xpay_into`, `axpy_norm2_pr`, and `axpy_many` into a double and a
/// single sum, the latter also against the GPU's own unfused sequence
/// (`copy` then `axpy`), which it must equal bit for bit.
pub fn check_solution_updates<T: Backend>(
    pair: &Pair<T>,
    lat: &Arc<Lattice>,
    subset: Subset,
    rep: &mut Report,
) -> R<()> {
    let (cpu, gpu, prec) = (pair.cpu, pair.gpu, pair.prec);
    let tag = format!("{prec:?} {subset:?}");
    let tol = tolerance(prec);
    let hx = random::spinor(lat, subset, 31);
    let hy = random::spinor(lat, subset, 32);
    let (cx, gx) = pair.up(&hx)?;
    let (cy, gy) = pair.up(&hy)?;
    let (mut co, mut go) = pair.up(&nan_field(lat, subset))?;
    cpu.xpay_into(&cx, -0.61, &cy, &mut co).map_err(e)?;
    gpu.xpay_into(&gx, -0.61, &gy, &mut go).map_err(e)?;
    pair.compare(rep, &format!("xpay_into {tag}"), &co, &go)?;

    let (mut cy2, mut gy2) = pair.up(&hy)?;
    let rc = cpu.axpy_norm2_pr(-0.44, &cx, &mut cy2).map_err(e)?;
    let rg = gpu.axpy_norm2_pr(-0.44, &gx, &mut gy2).map_err(e)?;
    pair.compare(rep, &format!("axpy_norm2_pr {tag}"), &cy2, &gy2)?;
    rep.check(
        &format!("axpy_norm2_pr (norm) {tag}"),
        rel_scalar(rg.0.into(), rc.0.into()),
        tol,
    );
    rep.check(
        &format!("axpy_norm2_pr (PR numerator) {tag}"),
        rel_scalar(rg.1.into(), rc.1.into()),
        tol,
    );

    // Ten terms: one full launch of MANY_MAX (8) fields and a partial one.
    let a: Vec<f64> = (0..10).map(|j| 0.37 - 0.29 * j as f64).collect();
    let hxs: Vec<HostSpinor> = (0..a.len() as u64)
        .map(|j| random::spinor(lat, subset, 40 + j))
        .collect();
    let cxs = hxs
        .iter()
        .map(|h| up(cpu, h, prec))
        .collect::<R<Vec<_>>>()?;
    let gxs = hxs
        .iter()
        .map(|h| up(gpu, h, prec))
        .collect::<R<Vec<_>>>()?;
    for hi in [Precision::Double, Precision::Single] {
        let (mut cs, mut gs) = (up(cpu, &hy, hi)?, up(gpu, &hy, hi)?);
        let crefs: Vec<_> = cxs.iter().collect();
        let grefs: Vec<_> = gxs.iter().collect();
        cpu.axpy_many(&a, &crefs, &mut cs).map_err(e)?;
        gpu.axpy_many(&a, &grefs, &mut gs).map_err(e)?;
        let (hc, hg) = (down(cpu, &cs)?, down(gpu, &gs)?);
        rep.check(
            &format!("axpy_many into {hi:?} {tag}"),
            rel(hg.data(), hc.data()),
            tol.max(tolerance(hi)),
        );
        let mut unfused = up(gpu, &hy, hi)?;
        let mut tmp = gpu.alloc_spinor(lat, subset, hi).map_err(e)?;
        for (&aj, xj) in a.iter().zip(&gxs) {
            gpu.copy(&mut tmp, xj).map_err(e)?;
            gpu.axpy(aj, &tmp, &mut unfused).map_err(e)?;
        }
        let same = down(gpu, &unfused)?.data() == hg.data();
        rep.flag(
            &format!("axpy_many into {hi:?} = copy + axpy bit for bit {tag}"),
            same,
        );
    }
    Ok(())
}

/// Effective bandwidth of the vector operations a solver calls, on one
/// parity of a 32³×64 lattice (reductions include their host sync).
pub fn bench_blas(gpu: &CudaBackend, roof: f64, prec: Precision, out: &mut Vec<String>) -> R<()> {
    let lat = Arc::new(Lattice::new([32, 32, 32, 64]).map_err(e)?);
    let sub = Subset::Single(Parity::Even);
    let field_in = |p: Precision, seed| up(gpu, &random::spinor(&lat, sub, seed), p);
    let x = field_in(prec, 1)?;
    let y = field_in(prec, 2)?;
    let w = field_in(prec, 4)?;
    let mut z = field_in(prec, 3)?;
    let mut s = field_in(prec, 5)?;
    // Bytes of one field: 24 reals per site, and a norm per site for
    // half and quarter.
    let bytes = |p: Precision| {
        let norm = if matches!(p, Precision::Half | Precision::Quarter) {
            4
        } else {
            0
        };
        (lat.half_volume() * (24 * p.bytes_per_real() + norm)) as f64
    };
    let field = bytes(prec);
    // The mixed BiCGstab's partial solution beside fields of `prec`.
    let acc = prec.partial_solution();
    let mut xh = field_in(acc, 6)?;
    let mut xd = field_in(Precision::Double, 7)?;
    let (a, c) = (1e-3, C64::new(1e-3, -2e-3));
    type Op<'f> = Box<dyn FnMut() -> latsol::Result<()> + 'f>;
    // (name, bytes read + written, the call)
    // CG's buffered solution update (below) adds eight distinct fields
    // (a field read twice by a thread would come from cache and
    // inflate the rate).
    let dirs = (0..8)
        .map(|j| field_in(prec, 20 + j))
        .collect::<R<Vec<_>>>()?;
    let mut ops: Vec<(&str, f64, Op)> = Vec::new();
    let (xr, yr) = (&x, &y);
    let mut v = field_in(prec, 9)?;
    ops.push((
        "axpy",
        3.0 * field,
        Box::new(move || gpu.axpy(a, xr, &mut v)),
    ));
    ops.push((
        "cxpaypbz",
        4.0 * field,
        Box::new(move || gpu.cxpaypbz(xr, c, yr, c, &mut z)),
    ));
    ops.push(("norm2", field, Box::new(move || gpu.norm2(xr).map(|_| ()))));
    ops.push((
        "cdot",
        2.0 * field,
        Box::new(move || gpu.cdot(xr, yr).map(|_| ())),
    ));
    ops.push((
        "cdot_norm2",
        2.0 * field,
        Box::new(move || gpu.cdot_norm2(xr, yr).map(|_| ())),
    ));
    // The mixed solvers' fused updates (a = 1e-3: the fields stay put).
    ops.push((
        "axpy_norm2_pr",
        3.0 * field,
        Box::new(move || gpu.axpy_norm2_pr(a, xr, &mut s).map(|_| ())),
    ));
    let (wr, mut s2) = (&w, field_in(prec, 8)?);
    ops.push((
        "bicgstab_update",
        5.0 * field + 2.0 * bytes(acc),
        Box::new(move || {
            gpu.bicgstab_update(c, xr, c, &mut s2, &mut xh, wr, yr)
                .map(|_| ())
        }),
    ));
    // CG's buffered solution update: eight directions into double.
    let dir_refs: Vec<&_> = dirs.iter().collect();
    ops.push((
        "axpy_many 8>f64",
        8.0 * field + 2.0 * bytes(Precision::Double),
        Box::new(move || gpu.axpy_many(&[a; 8], &dir_refs, &mut xd)),
    ));
    for (name, moved, f) in ops.iter_mut() {
        f().map_err(e)?;
        let ms = time_ms(gpu, 50, |_| f().map_err(e))?;
        let gbs = *moved / (ms * 1e-3);
        out.push(format!(
            "blas {name:15} {prec:?} 32x32x32x64 one parity: {:7.1} us, {:5.0} GB/s = {:3.0}% of the copy",
            ms * 1e3,
            gbs / 1e9,
            100.0 * gbs / roof
        ));
    }
    Ok(())
}
