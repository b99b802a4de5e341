//! Improved staggered links from thin links: the fat links of a sum of
//! staple paths, the Naik (long) links, and the projection of fat links on
//! U(3) that HISQ's two levels put between them. What QUDA's
//! `computeKSLinkQuda` computes for MILC's `qudaLoadUnitarizedLink` and
//! `qudaLoadKSLink` (learned from QUDA 9521952 lib/interface_quda.cpp,
//! lib/llfat_quda.cu, lib/unitarize_links_quda.cu and MILC 9782cb0
//! generic_ks/fermion_links_hisq_load.c; docs/milc-hisq-fattening.md;
//! nothing copied).
//!
//! The links given carry whatever phases and boundary signs the caller
//! folded into them (MILC's do); the lattice is indexed periodically, so
//! the results carry the same phases. A rank's part of a cut lattice is
//! computed on its field extended by `EXTENSION` layers of its neighbours'
//! links (`comm::extend`): every path reaches at most two sites from its
//! base site in any one direction.
//!
//! `paths` is the host implementation, `unitarize` the U(3) projection;
//! a backend may compute both itself (`Backend::fat_links`,
//! `Backend::unitarize_links`) with the same numbers up to rounding.

pub mod paths;
pub mod unitarize;

pub use paths::{fat_links, long_links};
pub use unitarize::{unitarize, UnitarizeParams};

/// Layers of neighbour links a rank's paths reach (the Lepage term's
/// doubled staple, the Naik link's third hop).
pub const EXTENSION: usize = 2;

/// Staple coefficients below which QUDA's fattening skips a path family.
pub const NEGLIGIBLE: f64 = 1e-7;

/// The six path coefficients in QUDA's and MILC's order
/// (`act_path_coeff[6]`): one-link, Naik, three-, five-, seven-staple,
/// Lepage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathCoefficients {
    pub one_link: f64,
    pub naik: f64,
    pub three_staple: f64,
    pub five_staple: f64,
    pub seven_staple: f64,
    pub lepage: f64,
}

impl PathCoefficients {
    /// From QUDA's and MILC's array order.
    pub fn from_array(c: [f64; 6]) -> PathCoefficients {
        PathCoefficients {
            one_link: c[0],
            naik: c[1],
            three_staple: c[2],
            five_staple: c[3],
            seven_staple: c[4],
            lepage: c[5],
        }
    }

    pub fn to_array(&self) -> [f64; 6] {
        [
            self.one_link,
            self.naik,
            self.three_staple,
            self.five_staple,
            self.seven_staple,
            self.lepage,
        ]
    }

    /// Whether any staple is computed (QUDA skips all of them where every
    /// staple coefficient is below `NEGLIGIBLE`).
    pub fn has_staples(&self) -> bool {
        [
            self.three_staple,
            self.five_staple,
            self.seven_staple,
            self.lepage,
        ]
        .iter()
        .any(|c| c.abs() >= NEGLIGIBLE)
    }

    /// Whether the seven-staple paths are computed.
    pub fn has_seven_staple(&self) -> bool {
        self.seven_staple.abs() > NEGLIGIBLE
    }

    /// Whether the Lepage paths are computed.
    pub fn has_lepage(&self) -> bool {
        self.lepage != 0.0
    }

    /// The one-link coefficient with the Lepage term's backtracking
    /// paths taken out (the doubled staple contains each link twice over a
    /// retraced path: `−6 c_L U_μ` removes them, exactly for unitary links).
    pub fn corrected_one_link(&self) -> f64 {
        self.one_link - 6.0 * self.lepage
    }

    pub fn is_finite(&self) -> bool {
        self.to_array().iter().all(|c| c.is_finite())
    }
}

/// The two levels of MILC's HISQ action (`hisq_u3_action.h`, no tadpole
/// factors): the fat7 smearing of the thin links, before the U(3)
/// projection.
pub const HISQ_FIRST_LEVEL: [f64; 6] = [1.0 / 8.0, 0.0, -1.0 / 16.0, 1.0 / 64.0, -1.0 / 384.0, 0.0];

/// HISQ's second level: the asqtad paths of the U(3) links (one-link
/// coefficient 1 with the Lepage correction, Naik −1/24).
pub const HISQ_SECOND_LEVEL: [f64; 6] = [
    1.0,
    -1.0 / 24.0,
    -1.0 / 16.0,
    1.0 / 64.0,
    -1.0 / 384.0,
    -1.0 / 8.0,
];
