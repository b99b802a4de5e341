//! Staggered spin-taste operators `γ_S ⊗ ξ_T` on a colour-vector field, as
//! QUDA's `spinTasteQuda` applies them for MILC's `qudaSpinTaste` (learned
//! from QUDA 9521952 lib/interface_quda.cpp, include/kernels/spin_taste.cuh
//! and MILC 9782cb0 generic_ks/spin_taste_ops.c: docs/milc-spin-taste.md;
//! nothing copied).
//!
//! With the sign of a 4-bit mask b (bit μ: direction μ),
//! `σ_b(x) = Π_{μ∈b} (−1)^{Σ_{ν≠μ} x_ν}`, `ε = σ_15`, `Z_μ = σ_{2^μ}`, the
//! symmetric covariant shift `S_μ χ(x) = U_μ(x) χ(x+μ̂) + U_μ(x−μ̂)† χ(x−μ̂)`
//! (no ½) and `χ' = σ_spin χ`, by the number of bits of
//! `offset = spin XOR taste`:
//! - 0: `ε χ'`;
//! - 1 (μ): `½ ε Z_μ S_μ χ'`;
//! - 2 (d₀, d₁ as QUDA orders them: xy, yz, zx, xt, yt, zt):
//!   `⅛ ε [Z_{d₀}S_{d₀} Z_{d₁}S_{d₁} − Z_{d₁}S_{d₁} Z_{d₀}S_{d₀}] χ'`;
//! - 3 (the directions other than one, ascending, a b c): `1/48 ε Σ` over
//!   the three cyclic orders (p, q, r) of `[P(p, q, r) − P(r, q, p)] χ'`,
//!   `P(p, q, r) = Z_r S_r Z_q S_q Z_p S_p` (p acts first);
//! - 4: `1/384 ε Σ` over QUDA's twelve even and twelve odd orders of
//!   `[P(even) − P(odd)] χ'`.
//!
//! The links are used as given (MILC's carry the staggered phases and the
//! boundary sign). Coordinates are the rank's own: every local extent is
//! even, so their parities are the global ones. On many ranks a shift
//! reads the neighbours' faces (`comm::extend`).

use num_complex::Complex64 as C64;
use rayon::prelude::*;

use crate::comm::extend::neighbourhood;
use crate::comm::Ranks;
use crate::error::{Error, Result};
use crate::fat_links::paths::Neighbours;
use crate::field::GaugeField;
use crate::lattice::{Lattice, Parity};
use crate::su3::{ColorVector, Su3};

/// The directions of QUDA's two-link operators, by offset.
fn two_link(offset: u32) -> [usize; 2] {
    match offset {
        3 => [0, 1],
        6 => [1, 2],
        5 => [2, 0],
        9 => [0, 3],
        10 => [1, 3],
        _ => [2, 3],
    }
}

/// QUDA's orders of the four-link operator: even, then odd permutations
/// (each path's first direction acts first).
const FOUR_EVEN: [[usize; 4]; 12] = [
    [0, 1, 2, 3],
    [1, 2, 0, 3],
    [2, 0, 1, 3],
    [0, 3, 1, 2],
    [1, 3, 2, 0],
    [2, 3, 0, 1],
    [3, 2, 1, 0],
    [3, 0, 2, 1],
    [3, 1, 0, 2],
    [2, 1, 3, 0],
    [0, 2, 3, 1],
    [1, 0, 3, 2],
];
const FOUR_ODD: [[usize; 4]; 12] = [
    [0, 2, 1, 3],
    [1, 0, 2, 3],
    [2, 1, 0, 3],
    [0, 3, 2, 1],
    [1, 3, 0, 2],
    [2, 3, 1, 0],
    [3, 1, 2, 0],
    [3, 2, 0, 1],
    [3, 0, 1, 2],
    [1, 2, 3, 0],
    [2, 0, 3, 1],
    [0, 1, 3, 2],
];

/// `σ_b(x)`.
pub fn sign(b: u32, x: [usize; 4]) -> f64 {
    let total: usize = x.iter().sum();
    let odd = (0..4)
        .filter(|&mu| b & (1 << mu) != 0)
        .map(|mu| total - x[mu])
        .sum::<usize>();
    if odd % 2 == 0 {
        1.0
    } else {
        -1.0
    }
}

/// A colour-vector field of this rank's sites, even-odd order.
pub type ColourField = Vec<ColorVector>;

/// Where a shift finds the links and vectors one step away: the
/// lattice's own neighbour table on one rank; on a cut lattice the
/// neighbours' faces, brought by `comm::extend` (the links once, the
/// vectors at every shift).
enum Reach<'a> {
    Local(Neighbours),
    Cut {
        ranks: &'a Ranks,
        behind: crate::comm::extend::Neighbourhood,
    },
}

/// What the shifts read.
struct Shifts<'a> {
    lat: std::sync::Arc<Lattice>,
    links: &'a GaugeField,
    reach: Reach<'a>,
}

fn axpy_v(y: &mut ColorVector, a: C64, x: &ColorVector) {
    for c in 0..3 {
        y[c] += a * x[c];
    }
}

impl Shifts<'_> {
    fn coords(&self, i: usize) -> [usize; 4] {
        let vh = self.lat.half_volume();
        self.lat.coords(Parity::from_index(i / vh), i % vh)
    }

    /// `σ_b χ`.
    fn times_sign(&self, b: u32, chi: &ColourField) -> ColourField {
        chi.par_iter()
            .enumerate()
            .map(|(i, v)| {
                let s = sign(b, self.coords(i));
                v.map(|z| z * s)
            })
            .collect()
    }

    /// `Z_μ S_μ χ` (collective on many ranks).
    fn zs(&self, mu: usize, chi: &ColourField) -> Result<ColourField> {
        let shifted: ColourField = match &self.reach {
            Reach::Local(nb) => {
                let links = self.links.links();
                (0..chi.len())
                    .into_par_iter()
                    .map(|i| {
                        let (f, b) = (nb.step(i, mu, true), nb.step(i, mu, false));
                        let mut out = links[4 * i + mu].mul_vec(&chi[f]);
                        axpy_v(
                            &mut out,
                            C64::new(1.0, 0.0),
                            &links[4 * b + mu].adj_mul_vec(&chi[b]),
                        );
                        out
                    })
                    .collect()
            }
            Reach::Cut { ranks, behind } => {
                // The vectors ride in the first row of a link field.
                let mut carrier = GaugeField::try_unit(self.lat.clone())?;
                let zero = [C64::new(0.0, 0.0); 3];
                carrier
                    .links_mut()
                    .par_chunks_mut(4)
                    .zip(chi.par_iter())
                    .for_each(|(site, v)| site[0] = Su3([*v, zero, zero]));
                let near = neighbourhood(Some(ranks), &carrier)?;
                (0..chi.len())
                    .into_par_iter()
                    .map(|i| {
                        let x = self.coords(i);
                        let ahead = near.first_link(x, mu, 1).0[0];
                        let back = near.first_link(x, mu, -1).0[0];
                        let mut out = self.links.link_at(x, mu).mul_vec(&ahead);
                        let u_back = behind.link(x, mu, -1);
                        axpy_v(&mut out, C64::new(1.0, 0.0), &u_back.adj_mul_vec(&back));
                        out
                    })
                    .collect()
            }
        };
        Ok(shifted
            .into_par_iter()
            .enumerate()
            .map(|(i, v)| {
                let z = sign(1 << mu, self.coords(i));
                v.map(|c| c * z)
            })
            .collect())
    }

    /// `P(dirs) χ`: `Z S` along each direction in turn, the first first.
    fn path(&self, dirs: &[usize], chi: &ColourField) -> Result<ColourField> {
        let mut v = chi.clone();
        for &mu in dirs {
            v = self.zs(mu, &v)?;
        }
        Ok(v)
    }
}

/// The arguments `spin_taste` refuses: masks outside 0..15, a shifted
/// operator without links, a field of the wrong length (what every rank
/// agrees on before the first exchange).
pub fn check(
    links_given: bool,
    lat: &Lattice,
    chi: &ColourField,
    spin: u32,
    taste: u32,
) -> Result<()> {
    if spin > 15 || taste > 15 {
        return Err(Error::InvalidArgument(format!(
            "spin = {spin}, taste = {taste}: gamma masks 0..15"
        )));
    }
    if spin ^ taste != 0 && !links_given {
        return Err(Error::InvalidArgument(format!(
            "spin = {spin}, taste = {taste}: a shifted operator needs the links"
        )));
    }
    if chi.len() != lat.volume() {
        return Err(Error::InvalidArgument(format!(
            "the field has {} sites, the lattice {}",
            chi.len(),
            lat.volume()
        )));
    }
    Ok(())
}

/// `γ_spin ⊗ ξ_taste` applied to `chi` (this rank's sites); `links` may be
/// `None` where spin and taste agree (no shift). Collective.
pub fn spin_taste(
    ranks: Option<&Ranks>,
    links: Option<&GaugeField>,
    lat: &std::sync::Arc<Lattice>,
    chi: &ColourField,
    spin: u32,
    taste: u32,
) -> Result<ColourField> {
    check(links.is_some(), lat, chi, spin, taste)?;
    let offset = spin ^ taste;
    let shifted = offset != 0;
    let unit;
    let links = match links {
        Some(l) => l,
        None if !shifted => {
            unit = GaugeField::try_unit(lat.clone())?;
            &unit
        }
        None => unreachable!("refused by `check`"),
    };
    let reach = match ranks {
        Some(r) if shifted && r.partitioned() => Reach::Cut {
            ranks: r,
            behind: neighbourhood(Some(r), links)?,
        },
        _ => Reach::Local(Neighbours::of(lat)),
    };
    let s = Shifts {
        lat: lat.clone(),
        links,
        reach,
    };
    let start = s.times_sign(spin, chi);
    let (acc, scale) = match offset.count_ones() {
        0 => (start, 1.0),
        1 => (s.zs(offset.trailing_zeros() as usize, &start)?, 0.5),
        2 => {
            let [a, b] = two_link(offset);
            let ab = s.path(&[b, a], &start)?;
            let ba = s.path(&[a, b], &start)?;
            (difference(ab, &ba), 0.125)
        }
        3 => {
            let missing = (!offset & 15).trailing_zeros() as usize;
            let d: Vec<usize> = (0..4).filter(|&m| m != missing).collect();
            let mut acc = vec![[C64::new(0.0, 0.0); 3]; chi.len()];
            for i in 0..3 {
                let (p, q, r) = (d[i], d[(i + 1) % 3], d[(i + 2) % 3]);
                add_into(&mut acc, 1.0, &s.path(&[p, q, r], &start)?);
                add_into(&mut acc, -1.0, &s.path(&[r, q, p], &start)?);
            }
            (acc, 0.125 / 6.0)
        }
        _ => {
            let mut acc = vec![[C64::new(0.0, 0.0); 3]; chi.len()];
            for i in 0..12 {
                add_into(&mut acc, 1.0, &s.path(&FOUR_EVEN[i], &start)?);
                add_into(&mut acc, -1.0, &s.path(&FOUR_ODD[i], &start)?);
            }
            (acc, 0.0625 / 24.0)
        }
    };
    Ok(s.times_sign(15, &acc)
        .into_iter()
        .map(|v| v.map(|z| z * scale))
        .collect())
}

fn add_into(acc: &mut ColourField, a: f64, x: &ColourField) {
    acc.par_iter_mut()
        .zip(x.par_iter())
        .for_each(|(y, x)| axpy_v(y, C64::new(a, 0.0), x));
}

fn difference(mut a: ColourField, b: &ColourField) -> ColourField {
    add_into(&mut a, -1.0, b);
    a
}
