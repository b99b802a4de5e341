//! kernels/gauge_fixing.cu run on the host without a GPU (beside the
//! host path it is compared with; the kernel's launcher is
//! src/backend/cuda/gauge_fixing.rs)
//! (kernels/host/gauge_fixing.cpp, through kernels/host/shim.h) and
//! compared with the host path: each site's quality sums
//! (`gauge_fixing::quality::local_sums` of the whole field equals their
//! total) and the links after an even and an odd half sweep
//! (`gauge_fixing::ovr::HostSweeps`), Coulomb and Landau.

use crate::backend::cuda::emulation::{build_emulation, f64s, run_with_files};
use crate::backend::cuda::fat_links::{neighbour_words, reals_of};
use crate::backend::OvrSweeps;
use crate::fat_links::paths::Neighbours;
use crate::gauge_fixing::ovr::HostSweeps;
use crate::gauge_fixing::quality::local_sums;
use crate::lattice::{Lattice, Parity};
use crate::random;

#[test]
fn device_half_sweeps_and_quality_are_the_host_paths() {
    let Some(exe) = build_emulation("gauge_fixing") else {
        return;
    };
    let lat = std::sync::Arc::new(Lattice::new([4, 6, 4, 4]).unwrap());
    let links = random::smooth_gauge(&lat, 0.5, 12);
    let v = lat.volume();
    for (dirs, boost) in [(3usize, 1.7f64), (4, 1.0)] {
        let mut input = Vec::new();
        input.extend((v as i64).to_le_bytes());
        input.extend((dirs as i32).to_le_bytes());
        input.extend(boost.to_le_bytes());
        reals_of(links.links())
            .iter()
            .for_each(|x| input.extend(x.to_le_bytes()));
        neighbour_words(&Neighbours::of(&lat))
            .iter()
            .for_each(|x| input.extend(x.to_le_bytes()));
        let bytes = run_with_files(&exe, "gf", &input);
        let got = f64s(&bytes);
        let (sums, swept) = got.split_at(2 * v);
        let total = sums
            .chunks(2)
            .fold([0.0, 0.0], |s, p| [s[0] + p[0], s[1] + p[1]]);
        let want = local_sums(None, &links, dirs).unwrap();
        for k in 0..2 {
            assert!(
                (total[k] - want[k]).abs() < 1e-12 * want[k].abs().max(1.0),
                "{dirs} {k}"
            );
        }
        let mut host = HostSweeps {
            ranks: None,
            links: links.clone(),
            dirs,
            relax_boost: boost,
        };
        host.half_sweep(Parity::Even).unwrap();
        host.half_sweep(Parity::Odd).unwrap();
        let worst = swept
            .chunks(18)
            .zip(host.links.links())
            .map(|(r, l)| crate::su3::Su3::from_row_major(r).max_diff(l))
            .fold(0.0, f64::max);
        assert!(worst < 1e-13, "{dirs}: {worst:e}");
    }
}
