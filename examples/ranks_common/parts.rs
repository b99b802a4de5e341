//! A rank's part of fields of the whole lattice, differences over all
//! ranks, and the command line's named values: what the examples that
//! compare a backend on ranks with one holding the whole lattice share
//! (cpu_ranks, gpu_ranks).

use std::sync::Arc;

use latsol::clover::{CloverField, SiteBlocks};
use latsol::comm::{Comm, Partition, Reduction};
use latsol::field::{GaugeField, HostSpinor};
use latsol::lattice::{Lattice, Parity, Subset};

/// This rank's part of a global field of one parity.
pub fn local_spinor(
    global: &HostSpinor,
    p: &Partition,
    lat: &Arc<Lattice>,
    parity: Parity,
) -> HostSpinor {
    let g = global.lattice();
    let subset = Subset::Single(parity);
    let mut out = HostSpinor::try_zeros_of(lat.clone(), subset, global.fermion()).unwrap();
    for cb in 0..lat.half_volume() {
        let gx = p.global_site(lat.coords(parity, cb));
        out.site_mut(cb)
            .copy_from_slice(global.site(g.cb_index(gx)));
    }
    out
}

/// This rank's sites of a clover field of the whole lattice.
pub fn local_clover(global: &CloverField, p: &Partition, lat: &Arc<Lattice>) -> CloverField {
    let g = global.lattice();
    let sites: Vec<SiteBlocks> = (0..lat.volume())
        .map(|i| {
            let parity = Parity::from_index(i / lat.half_volume());
            let x = lat.coords(parity, i % lat.half_volume());
            *global.site(parity, g.cb_index(p.global_site(x)))
        })
        .collect();
    CloverField::from_sites(lat.clone(), sites).unwrap()
}

/// This rank's part of a global gauge field.
pub fn local_gauge(global: &GaugeField, p: &Partition, lat: &Arc<Lattice>) -> GaugeField {
    let mut local = GaugeField::unit(lat.clone());
    for parity in [Parity::Even, Parity::Odd] {
        for cb in 0..lat.half_volume() {
            let x = lat.coords(parity, cb);
            for mu in 0..4 {
                *local.link_at_mut(x, mu) = *global.link_at(p.global_site(x), mu);
            }
        }
    }
    local
}

/// `‖mine − reference‖ / ‖reference‖` over all ranks, `reference` this
/// rank's part of the one-rank result.
pub fn relative_difference(comm: &dyn Comm, reference: &HostSpinor, mine: &HostSpinor) -> f64 {
    let diff: f64 = reference
        .data()
        .iter()
        .zip(mine.data())
        .map(|(a, b)| (a - b).norm_sqr())
        .sum();
    let mut d = [diff, reference.norm2()];
    comm.sum(&mut d, Reduction::Deterministic).unwrap();
    (d[0] / d[1]).sqrt()
}

/// The value after `name` on the command line, if given.
pub fn arg<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .map(|i| args[i + 1].as_str())
}
