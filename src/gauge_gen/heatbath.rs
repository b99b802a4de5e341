//! The Cabibbo–Marinari pseudo-heatbath for SU(3) with the Wilson action
//! (Cabibbo and Marinari, Phys. Lett. B 119 (1982) 387).
//!
//! A link `U` with staple sum `A` has weight `exp((β/3) Re tr(U A))`. For each
//! of the three SU(2) subgroups in turn, `U ← R U` with `R` the embedding of
//! an SU(2) element `r` drawn from the conditional weight: with `W = U A` and
//! `k V` the quaternion part of W's 2×2 block (`V ∈ SU(2)`),
//! `Re tr(R W) = 2k (r V)_0 + const`, so `x = r V` is drawn from the SU(2)
//! heatbath with `α = 2βk/3` and `r = x V†` (`su2::heatbath`: Kennedy and
//! Pendleton, Phys. Lett. B 156 (1985) 393, or Creutz for small α). Each
//! subgroup step satisfies detailed balance and the three together are
//! ergodic on SU(3).
//!
//! Random numbers: each link draws from its own ChaCha8 stream, keyed by the
//! run's seed, with the stream number naming (heatbath sweep, direction,
//! parity) and the word position naming the site. Which thread updates which
//! site then does not matter: a run is reproducible bit for bit whatever the
//! number of threads.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::su2::{self, Quaternion, SUBGROUPS};
use super::sweep::update_links;
use crate::field::GaugeField;
use crate::lattice::Parity;
use crate::su3::Su3;

/// Each site owns `2^SITE_WORDS_LOG2` 32-bit words of its stream: far more
/// than one link update draws (about 20 on average; a run of rejections long
/// enough to reach the next site's words has probability far below 1e-100).
const SITE_WORDS_LOG2: u32 = 24;

/// The per-link random streams of one run.
#[derive(Debug, Clone)]
pub struct Streams {
    key: ChaCha8Rng,
}

impl Streams {
    pub fn new(seed: u64) -> Streams {
        Streams {
            key: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// The generator of the link `(p, cb, mu)` in heatbath sweep `sweep`.
    /// Stream 0 is left out: `random::hot_gauge` draws the hot start from it.
    pub fn link(&self, sweep: u64, mu: usize, p: Parity, cb: usize) -> ChaCha8Rng {
        assert!(sweep < 1 << 60, "heatbath sweep counter overflow");
        let mut rng = self.key.clone();
        rng.set_stream(1 + ((sweep << 3) | ((mu as u64) << 1) | p.index() as u64));
        rng.set_word_pos((cb as u128) << SITE_WORDS_LOG2);
        rng
    }
}

/// The quaternion part of the `(i, j)` block of `u a`, computing only the
/// four entries needed.
#[inline(always)]
pub(crate) fn block_of_product(u: &Su3, a: &Su3, i: usize, j: usize) -> Quaternion {
    let entry =
        |r: usize, c: usize| u.0[r][0] * a.0[0][c] + u.0[r][1] * a.0[1][c] + u.0[r][2] * a.0[2][c];
    let mut w = Su3::zero();
    for r in [i, j] {
        for c in [i, j] {
            w.0[r][c] = entry(r, c);
        }
    }
    Quaternion::from_block(&w, i, j)
}

/// One Cabibbo–Marinari heatbath update of the link `u` with staple sum `a`.
pub fn heatbath_link(u: &Su3, a: &Su3, beta: f64, rng: &mut impl rand::Rng) -> Su3 {
    let mut u = *u;
    for (i, j) in SUBGROUPS {
        let q = block_of_product(&u, a, i, j);
        let k = q.norm();
        // k = 0: the weight is flat in this subgroup; any V will do.
        let v = if k > 0.0 {
            q.scale(1.0 / k)
        } else {
            Quaternion::identity()
        };
        let x = su2::heatbath(2.0 * beta * k / 3.0, rng);
        x.mul(&v.adjoint()).left_mul_rows(&mut u, i, j);
    }
    u
}

/// One heatbath sweep: every link once, direction by direction and parity
/// by parity, the links of one (direction, parity) in parallel. `sweep`
/// numbers the sweep within the run and selects the random streams.
pub fn heatbath_sweep(
    field: &mut GaugeField,
    beta: f64,
    streams: &Streams,
    sweep: u64,
    scratch: &mut Vec<Su3>,
) {
    for mu in 0..4 {
        for p in [Parity::Even, Parity::Odd] {
            update_links(field, p, mu, scratch, |cb, u, a| {
                let mut rng = streams.link(sweep, mu, p, cb);
                heatbath_link(u, a, beta, &mut rng)
            });
        }
    }
}
