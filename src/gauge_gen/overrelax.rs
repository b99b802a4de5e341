//! Microcanonical overrelaxation for SU(3) with the Wilson action, over the
//! three SU(2) subgroups (Creutz, Phys. Rev. D 36 (1987) 515; Brown and
//! Woch, Phys. Rev. Lett. 58 (1987) 2394).
//!
//! For a subgroup with `k V` the quaternion part of the block of `W = U A`,
//! `U ← R U` with `r = V†²`: then `Re tr(R W) = k Re tr(V†) = Re tr(W)` on
//! the block, and the rest of `W`'s trace is untouched, so the local action,
//! and hence the total action, is unchanged up to rounding. The new block
//! has `V' = V†`, so applying the step twice gives the identity: a
//! measure-preserving involution, which is detailed balance at fixed action.
//! It draws no random numbers; alternated with heatbath sweeps it
//! decorrelates long-wavelength modes much faster than heatbath alone.

use super::heatbath::block_of_product;
use super::su2::SUBGROUPS;
use super::sweep::update_links;
use crate::field::GaugeField;
use crate::lattice::Parity;
use crate::su3::Su3;

/// One overrelaxation step of the link `u` with staple sum `a`.
pub fn overrelax_link(u: &Su3, a: &Su3) -> Su3 {
    let mut u = *u;
    for (i, j) in SUBGROUPS {
        let q = block_of_product(&u, a, i, j);
        let k = q.norm();
        if k > 0.0 {
            let v_dag = q.scale(1.0 / k).adjoint();
            v_dag.mul(&v_dag).left_mul_rows(&mut u, i, j);
        }
    }
    u
}

/// One overrelaxation sweep, in the order of the heatbath sweep.
pub fn overrelax_sweep(field: &mut GaugeField, scratch: &mut Vec<Su3>) {
    for mu in 0..4 {
        for p in [Parity::Even, Parity::Odd] {
            update_links(field, p, mu, scratch, |_, u, a| overrelax_link(u, a));
        }
    }
}
