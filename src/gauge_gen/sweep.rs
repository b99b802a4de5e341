//! One sweep's update of the links of one parity and direction, all in
//! parallel: the step the heatbath and overrelaxation sweeps share.

use rayon::prelude::*;

use super::wilson_action::staple;
use crate::field::GaugeField;
use crate::lattice::Parity;
use crate::su3::Su3;

/// Smallest number of links one rayon task updates: below this, the task
/// overhead shows against a link update (~2 µs).
pub(super) const MIN_LINKS_PER_TASK: usize = 16;

/// Replaces every link `U_μ(x)` of parity `p` by `update(cb, U, A)`, `A` its
/// staple sum, all of them in parallel. Correct because none of these links
/// enters another one's staple; `scratch` holds the new links until all
/// staples have been read.
pub(crate) fn update_links<F>(
    field: &mut GaugeField,
    p: Parity,
    mu: usize,
    scratch: &mut Vec<Su3>,
    update: F,
) where
    F: Fn(usize, &Su3, &Su3) -> Su3 + Sync,
{
    let vh = field.lattice().half_volume();
    scratch.resize(vh, Su3::identity());
    let old = &*field;
    scratch
        .par_iter_mut()
        .with_min_len(MIN_LINKS_PER_TASK)
        .enumerate()
        .for_each(|(cb, new)| {
            let a = staple(old, p, cb, mu);
            *new = update(cb, old.link(p, cb, mu), &a);
        });
    for (cb, u) in scratch.iter().enumerate() {
        *field.link_mut(p, cb, mu) = *u;
    }
}
