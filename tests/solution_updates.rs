//! The fused solution updates of the mixed-precision solvers on the CPU
//! backend: `axpy_many` (sloppy fields added to a precise sum) and
//! `xpay_into` give exactly what the unfused sequences they replace give
//! (`copy` to the sum's precision then `axpy`; `copy` then `xpay`), in
//! every storage format. latsol-gpu-check compares the CUDA kernels with
//! these.

use std::sync::Arc;

use latsol::backend::cpu::{CpuBackend, CpuSpinor};
use latsol::backend::Backend;
use latsol::field::HostSpinor;
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::precision::Precision;
use latsol::random;

fn setup() -> (CpuBackend, Arc<Lattice>, Subset) {
    let cpu = CpuBackend::new(2).unwrap();
    let lat = Arc::new(Lattice::new([4, 4, 4, 6]).unwrap());
    (cpu, lat, Subset::Single(Parity::Odd))
}

fn field(
    cpu: &CpuBackend,
    lat: &Arc<Lattice>,
    subset: Subset,
    p: Precision,
    seed: u64,
) -> CpuSpinor {
    let mut f = cpu.alloc_spinor(lat, subset, p).unwrap();
    cpu.upload_spinor(&mut f, &random::spinor(lat, subset, seed))
        .unwrap();
    f
}

fn host(cpu: &CpuBackend, f: &CpuSpinor) -> HostSpinor {
    let mut h = HostSpinor::zeros(f.lattice().clone(), f.subset());
    cpu.download_spinor(f, &mut h).unwrap();
    h
}

use latsol::backend::SpinorField;

#[test]
fn axpy_many_is_copy_then_axpy_term_by_term() {
    let (cpu, lat, subset) = setup();
    let a = [0.37, -1.25, 2.5e-3];
    for hi in [Precision::Double, Precision::Single] {
        for lo in Precision::ALL {
            let xs: Vec<CpuSpinor> = (0..3)
                .map(|j| field(&cpu, &lat, subset, lo, 10 + j))
                .collect();
            let refs: Vec<&CpuSpinor> = xs.iter().collect();
            let mut fused = field(&cpu, &lat, subset, hi, 1);
            cpu.axpy_many(&a, &refs, &mut fused).unwrap();

            let mut unfused = field(&cpu, &lat, subset, hi, 1);
            let mut tmp = cpu.alloc_spinor(&lat, subset, hi).unwrap();
            for (&aj, xj) in a.iter().zip(&xs) {
                cpu.copy(&mut tmp, xj).unwrap();
                cpu.axpy(aj, &tmp, &mut unfused).unwrap();
            }
            assert_eq!(
                host(&cpu, &fused).data(),
                host(&cpu, &unfused).data(),
                "{lo:?} into {hi:?}"
            );
        }
    }
}

#[test]
fn axpy_many_refuses_what_it_cannot_keep() {
    let (cpu, lat, subset) = setup();
    let x = field(&cpu, &lat, subset, Precision::Half, 2);
    let x1 = field(&cpu, &lat, subset, Precision::Single, 3);
    let mut y = field(&cpu, &lat, subset, Precision::Double, 4);
    let before = host(&cpu, &y);
    // One coefficient per field.
    assert!(cpu.axpy_many(&[1.0, 2.0], &[&x], &mut y).is_err());
    // The fields in one precision.
    assert!(cpu.axpy_many(&[1.0, 2.0], &[&x, &x1], &mut y).is_err());
    assert_eq!(
        host(&cpu, &y).data(),
        before.data(),
        "a refused call writes nothing"
    );
    // The sum in double or single.
    let mut y_half = field(&cpu, &lat, subset, Precision::Half, 5);
    assert!(cpu.axpy_many(&[1.0], &[&x1], &mut y_half).is_err());
    // Nothing to add: nothing changes.
    cpu.axpy_many(&[], &[], &mut y).unwrap();
    assert_eq!(host(&cpu, &y).data(), before.data());
}

#[test]
fn xpay_into_is_copy_then_xpay() {
    let (cpu, lat, subset) = setup();
    for p in Precision::ALL {
        let x = field(&cpu, &lat, subset, p, 20);
        let y = field(&cpu, &lat, subset, p, 21);
        let mut out = field(&cpu, &lat, subset, p, 22);
        cpu.xpay_into(&x, -0.83, &y, &mut out).unwrap();
        let mut want = cpu.alloc_spinor(&lat, subset, p).unwrap();
        cpu.copy(&mut want, &y).unwrap();
        cpu.xpay(&x, -0.83, &mut want).unwrap();
        assert_eq!(host(&cpu, &out).data(), host(&cpu, &want).data(), "{p:?}");
    }
}
