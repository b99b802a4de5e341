//! Host-side fields in the library's canonical layout, the meeting point of
//! the host conversions (`layout`) and the backends' uploads:
//! - gauge: links as `Su3`, ordered `[parity][cb][mu]` (even-odd sites, the
//!   four directions of a site together), exactly as the caller gave them
//!   (no boundary sign: the backends apply it on upload);
//! - spinor: 12 complex numbers per site `[spin][color]` in the UKQCD basis,
//!   sites in even-odd order (even half first) for a full field; a staggered
//!   field (`Fermion::Staggered`) holds 3 complex numbers per site, a colour
//!   vector, in the same site order.

use std::sync::Arc;

use num_complex::Complex64 as C64;
use rayon::prelude::*;

use crate::lattice::{Lattice, Parity, Subset};
use crate::su3::Su3;

/// Complex numbers per site of a Wilson spinor (4 spins × 3 colours).
pub const SPINOR_COMPLEX: usize = 12;
/// Reals per site of a Wilson spinor.
pub const SPINOR_REALS: usize = 24;

/// What a fermion field holds at a site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fermion {
    /// A Wilson spinor: 4 spins × 3 colours.
    Wilson,
    /// A staggered field: one colour vector (3 colours), no spin.
    Staggered,
}

impl Fermion {
    /// Complex numbers a site.
    pub const fn complex(self) -> usize {
        match self {
            Fermion::Wilson => SPINOR_COMPLEX,
            Fermion::Staggered => 3,
        }
    }

    /// Reals a site.
    pub const fn reals(self) -> usize {
        2 * self.complex()
    }

    /// The fermion of `reals` reals a site.
    pub fn of_reals(reals: usize) -> Fermion {
        if reals == 6 {
            Fermion::Staggered
        } else {
            Fermion::Wilson
        }
    }
}

/// The gauge field on the host, canonical order, double precision.
#[derive(Debug, Clone)]
pub struct GaugeField {
    lattice: Arc<Lattice>,
    links: Vec<Su3>,
}

impl GaugeField {
    /// A field of unit links (the free field).
    pub fn unit(lattice: Arc<Lattice>) -> GaugeField {
        let n = 4 * lattice.volume();
        GaugeField {
            lattice,
            links: vec![Su3::identity(); n],
        }
    }

    /// `unit`, or `OutOfMemory` when the field does not fit.
    pub fn try_unit(lattice: Arc<Lattice>) -> crate::error::Result<GaugeField> {
        let what = format!("the gauge field of a {:?} lattice", lattice.dims());
        let links = crate::alloc::filled(4 * lattice.volume(), Su3::identity(), &what)?;
        Ok(GaugeField { lattice, links })
    }

    pub fn lattice(&self) -> &Arc<Lattice> {
        &self.lattice
    }

    fn index(&self, p: Parity, cb: usize, mu: usize) -> usize {
        (p.index() * self.lattice.half_volume() + cb) * 4 + mu
    }

    /// The link `U_mu(x)` of checkerboard site `cb` of parity `p`.
    pub fn link(&self, p: Parity, cb: usize, mu: usize) -> &Su3 {
        &self.links[self.index(p, cb, mu)]
    }

    pub fn link_mut(&mut self, p: Parity, cb: usize, mu: usize) -> &mut Su3 {
        let i = self.index(p, cb, mu);
        &mut self.links[i]
    }

    /// The link `U_mu(x)` at coordinates `x`.
    pub fn link_at(&self, x: [usize; 4], mu: usize) -> &Su3 {
        let p = self.lattice.parity_of(x);
        self.link(p, self.lattice.cb_index(x), mu)
    }

    pub fn link_at_mut(&mut self, x: [usize; 4], mu: usize) -> &mut Su3 {
        let p = self.lattice.parity_of(x);
        let cb = self.lattice.cb_index(x);
        self.link_mut(p, cb, mu)
    }

    /// All links, `[parity][cb][mu]`.
    pub fn links(&self) -> &[Su3] {
        &self.links
    }

    pub fn links_mut(&mut self) -> &mut [Su3] {
        &mut self.links
    }

    /// Plaquette `Re tr(U_p) / 3` averaged over all plaquettes, over the
    /// three spatial planes and over the three temporal planes. A unit field
    /// gives (1, 1, 1). The boundary sign is not part of the links.
    pub fn plaquette(&self) -> [f64; 3] {
        let lat = &self.lattice;
        // Sums over fixed chunks of sites, in parallel, then over the
        // chunks in order: the same result whatever the thread count.
        const CHUNK: usize = 4096;
        let sites = lat.volume();
        let partial: Vec<(f64, f64)> = (0..sites.div_ceil(CHUNK))
            .into_par_iter()
            .map(|k| {
                let (mut spatial, mut temporal) = (0.0, 0.0);
                for i in k * CHUNK..((k + 1) * CHUNK).min(sites) {
                    let (p, cb) = (
                        Parity::from_index(i / lat.half_volume()),
                        i % lat.half_volume(),
                    );
                    let [s, t] = self.plaquettes_at(lat.coords(p, cb));
                    spatial += s;
                    temporal += t;
                }
                (spatial, temporal)
            })
            .collect();
        let (spatial, temporal) = partial
            .iter()
            .fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
        let planes = 3.0 * lat.volume() as f64;
        let (s, t) = (spatial / planes, temporal / planes);
        [(s + t) / 2.0, s, t]
    }

    /// The sums of `Re tr U_p / 3` over the three spatial and the three
    /// temporal plaquettes whose corner is `x`.
    pub fn plaquettes_at(&self, x: [usize; 4]) -> [f64; 2] {
        let lat = &self.lattice;
        let (mut spatial, mut temporal) = (0.0, 0.0);
        for mu in 0..4 {
            for nu in (mu + 1)..4 {
                let u = self
                    .link_at(x, mu)
                    .mul(self.link_at(lat.shift(x, mu, 1), nu))
                    .mul(&self.link_at(lat.shift(x, nu, 1), mu).adjoint())
                    .mul(&self.link_at(x, nu).adjoint());
                let t = u.trace().re / 3.0;
                if nu == 3 {
                    temporal += t;
                } else {
                    spatial += t;
                }
            }
        }
        [spatial, temporal]
    }

    /// Largest deviation of any link from SU(3), with its location.
    pub fn max_su3_deviation(&self) -> (f64, usize) {
        // The largest deviation, the first link with it (a total order on
        // (deviation, −index), so the parallel reduction is exact).
        self.links
            .par_iter()
            .enumerate()
            .map(|(i, u)| (u.su3_deviation(), i))
            .reduce(
                || (0.0, 0),
                |a, b| {
                    if b.0 > a.0 || (b.0 == a.0 && b.1 < a.1) {
                        b
                    } else {
                        a
                    }
                },
            )
    }
}

/// A fermion field on the host, canonical order (a Wilson spinor in the
/// UKQCD basis, or a staggered colour vector), double.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSpinor {
    lattice: Arc<Lattice>,
    subset: Subset,
    fermion: Fermion,
    data: Vec<C64>,
}

impl HostSpinor {
    /// A zeroed Wilson spinor field.
    pub fn zeros(lattice: Arc<Lattice>, subset: Subset) -> HostSpinor {
        Self::try_zeros(lattice, subset).expect("memory for a spinor field")
    }

    /// A zeroed Wilson spinor field, or `OutOfMemory` when it does not fit.
    pub fn try_zeros(lattice: Arc<Lattice>, subset: Subset) -> crate::error::Result<HostSpinor> {
        Self::try_zeros_of(lattice, subset, Fermion::Wilson)
    }

    /// A zeroed field of `fermion`, or `OutOfMemory` when it does not fit.
    pub fn try_zeros_of(
        lattice: Arc<Lattice>,
        subset: Subset,
        fermion: Fermion,
    ) -> crate::error::Result<HostSpinor> {
        let n = lattice.sites(subset) * fermion.complex();
        let what = format!("a {fermion:?} field of a {:?} lattice", lattice.dims());
        let data = crate::alloc::filled(n, C64::new(0.0, 0.0), &what)?;
        Ok(HostSpinor {
            lattice,
            subset,
            fermion,
            data,
        })
    }

    pub fn fermion(&self) -> Fermion {
        self.fermion
    }

    pub fn lattice(&self) -> &Arc<Lattice> {
        &self.lattice
    }
    pub fn subset(&self) -> Subset {
        self.subset
    }
    pub fn sites(&self) -> usize {
        self.lattice.sites(self.subset)
    }

    /// `[site][spin][color]` complex numbers (`[site][color]` staggered).
    pub fn data(&self) -> &[C64] {
        &self.data
    }
    pub fn data_mut(&mut self) -> &mut [C64] {
        &mut self.data
    }

    /// The numbers of site `i` (index within the field's sites): 12 of a
    /// Wilson spinor, 3 of a staggered colour vector.
    pub fn site(&self, i: usize) -> &[C64] {
        let n = self.fermion.complex();
        &self.data[i * n..(i + 1) * n]
    }
    pub fn site_mut(&mut self, i: usize) -> &mut [C64] {
        let n = self.fermion.complex();
        &mut self.data[i * n..(i + 1) * n]
    }

    /// One parity half of a full field as its own field.
    pub fn parity_part(&self, p: Parity) -> HostSpinor {
        assert_eq!(
            self.subset,
            Subset::Full,
            "parity_part of a single-parity field"
        );
        let n = self.lattice.half_volume() * self.fermion.complex();
        HostSpinor {
            lattice: self.lattice.clone(),
            subset: Subset::Single(p),
            fermion: self.fermion,
            data: self.data[p.index() * n..(p.index() + 1) * n].to_vec(),
        }
    }

    /// Overwrites the parity half `p` of a full field with a single-parity field.
    pub fn set_parity_part(&mut self, p: Parity, part: &HostSpinor) {
        assert_eq!(
            self.subset,
            Subset::Full,
            "set_parity_part of a single-parity field"
        );
        assert_eq!(
            part.subset,
            Subset::Single(p),
            "set_parity_part: parity mismatch"
        );
        assert_eq!(
            self.fermion, part.fermion,
            "set_parity_part: fermion mismatch"
        );
        let n = self.lattice.half_volume() * self.fermion.complex();
        self.data[p.index() * n..(p.index() + 1) * n].copy_from_slice(&part.data);
    }

    pub fn norm2(&self) -> f64 {
        self.data.iter().map(|z| z.norm_sqr()).sum()
    }

    pub fn is_finite(&self) -> bool {
        self.data
            .iter()
            .all(|z| z.re.is_finite() && z.im.is_finite())
    }

    /// The largest absolute real or imaginary part.
    pub fn max_abs(&self) -> f64 {
        self.data
            .iter()
            .fold(0.0f64, |m, z| m.max(z.re.abs()).max(z.im.abs()))
    }
}
