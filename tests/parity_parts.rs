//! `Backend::extract_parity` and `insert_parity` on the CPU backend: in
//! every storage format, the two parities of a full field taken apart and
//! put back give the very same field (a copy, no rounding), and a part
//! holds exactly the sites of its parity. The single-mass sequence moves
//! solutions between full and even-odd fields this way on the device.

use std::sync::Arc;

use latsol::backend::cpu::CpuBackend;
use latsol::backend::Backend;
use latsol::field::HostSpinor;
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::precision::Precision;
use latsol::random;

const FORMATS: [Precision; 6] = Precision::ALL;

#[test]
fn parities_taken_apart_and_put_back_are_the_same_field() {
    let cpu = CpuBackend::new(2).unwrap();
    let lat = Arc::new(Lattice::new([4, 4, 4, 6]).unwrap());
    let host = random::spinor(&lat, Subset::Full, 5);
    for prec in FORMATS {
        let mut full = cpu.alloc_spinor(&lat, Subset::Full, prec).unwrap();
        cpu.upload_spinor(&mut full, &host).unwrap();
        let mut stored = HostSpinor::zeros(lat.clone(), Subset::Full);
        cpu.download_spinor(&full, &mut stored).unwrap();

        let mut back = cpu.alloc_spinor(&lat, Subset::Full, prec).unwrap();
        for p in [Parity::Even, Parity::Odd] {
            let mut part = cpu.alloc_spinor(&lat, Subset::Single(p), prec).unwrap();
            cpu.extract_parity(&mut part, &full, p).unwrap();
            let mut got = HostSpinor::zeros(lat.clone(), Subset::Single(p));
            cpu.download_spinor(&part, &mut got).unwrap();
            assert_eq!(got.data(), stored.parity_part(p).data(), "{prec:?} {p:?}");
            cpu.insert_parity(&mut back, p, &part).unwrap();
        }
        let mut again = HostSpinor::zeros(lat.clone(), Subset::Full);
        cpu.download_spinor(&back, &mut again).unwrap();
        assert_eq!(again.data(), stored.data(), "{prec:?}");
    }
}

#[test]
fn a_part_of_the_wrong_parity_or_precision_is_refused() {
    let cpu = CpuBackend::new(1).unwrap();
    let lat = Arc::new(Lattice::new([4, 4, 4, 4]).unwrap());
    let full = cpu
        .alloc_spinor(&lat, Subset::Full, Precision::Double)
        .unwrap();
    let mut odd = cpu
        .alloc_spinor(&lat, Subset::Single(Parity::Odd), Precision::Double)
        .unwrap();
    let mut even_single = cpu
        .alloc_spinor(&lat, Subset::Single(Parity::Even), Precision::Single)
        .unwrap();
    assert!(cpu.extract_parity(&mut odd, &full, Parity::Even).is_err());
    assert!(cpu
        .extract_parity(&mut even_single, &full, Parity::Even)
        .is_err());
}
