//! The small types of the `Backend` trait's signatures and what every
//! backend's fields report about themselves (split from `backend/mod.rs`,
//! which re-exports them: `crate::backend::SpinorField` and the rest).

use std::sync::Arc;

use crate::error::Result;
use crate::field::{Fermion, GaugeField};
use crate::lattice::{Lattice, Parity, Subset};
use crate::precision::{Precision, Reconstruct, TBoundary};

/// What a backend's scan of a caller's gauge array found
/// (`Backend::import_gauge`): what the host path's checks and plaquette
/// compute, in the same definitions (`Su3::su3_deviation`,
/// `GaugeField::plaquette`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GaugeScan {
    /// Links holding a NaN or an infinity.
    pub non_finite: usize,
    /// The largest deviation of a link from SU(3).
    pub max_su3_deviation: f64,
    /// The largest deviation from 1 of a T link off the last time slice.
    pub max_temporal_deviation: f64,
    /// Average, spatial and temporal plaquette.
    pub plaquette: [f64; 3],
}

/// The steps of gauge fixing by over-relaxation on links a backend holds
/// (`Backend::ovr_sweeps`); `gauge_fixing::ovr` runs its loop on them, the
/// host's or the device's alike.
pub trait OvrSweeps {
    /// Every site of parity `p` transformed (`gauge_fixing::ovr`).
    fn half_sweep(&mut self, p: Parity) -> Result<()>;
    /// The links projected on U(3) (the polar factor; SU(3) links stay).
    fn reunitarize(&mut self) -> Result<()>;
    /// This rank's `Σ Re tr U_μ` over the fixed directions and `Σ tr ΔΔ†`
    /// (`gauge_fixing::quality::local_sums`).
    fn quality_sums(&mut self) -> Result<[f64; 2]>;
    /// The links as they are now.
    fn links(&mut self) -> Result<GaugeField>;
}

/// Fat links and, where asked for, long links (`Backend::fat_links`).
pub type FatAndLong = (GaugeField, Option<GaugeField>);

/// Staggered phases to fold into links as they are stored
/// (`Backend::import_staggered`; `dirac::staggered::fold_phases`): MILC's
/// η, the T boundary of the hops that cross it, and the long links'
/// coefficient (the fat links' is 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhaseFold {
    pub t_boundary: TBoundary,
    pub long_coefficient: f64,
}

/// What a caller's gauge array stands for, beside its order
/// (`Backend::import_gauge`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GaugeForm {
    /// The boundary the operator applies on the last time slice.
    pub t_boundary: TBoundary,
    /// Stored as `upload_gauge_temporal` stores a temporal-gauge field.
    pub temporal: bool,
    /// The array's T links on the last time slice carry the anti-periodic
    /// sign (QUDA's convention), which the import takes out.
    pub sign_in_links: bool,
}

/// What every backend's spinor field reports about itself.
pub trait SpinorField: Send {
    fn lattice(&self) -> &Arc<Lattice>;
    fn subset(&self) -> Subset;
    fn precision(&self) -> Precision;
    /// What a site holds: a Wilson spinor or a staggered colour vector.
    fn fermion(&self) -> Fermion;
    /// Number of sites held.
    fn sites(&self) -> usize {
        self.lattice().sites(self.subset())
    }
}

/// What every backend's gauge field reports about itself.
pub trait GaugeStorage: Send + Sync {
    fn lattice(&self) -> &Arc<Lattice>;
    fn precision(&self) -> Precision;
    fn reconstruct(&self) -> Reconstruct;
}

/// What every backend's clover field reports about itself.
pub trait CloverStorage: Send + Sync {
    fn lattice(&self) -> &Arc<Lattice>;
    /// The spinor format it is stored for (`clover_format` of it).
    fn precision(&self) -> Precision;
}

/// What every backend's staggered links report about themselves.
pub trait StaggeredStorage: Send + Sync {
    fn lattice(&self) -> &Arc<Lattice>;
    fn precision(&self) -> Precision;
    /// Long (three-hop) links stored: the improved operator; else naive.
    fn improved(&self) -> bool;
}

/// Where the clover term enters a hopping-term application
/// (`Backend::wilson_clover_dslash`); each form is one pass over memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloverForm {
    /// `out = a · A⁻¹ D in (+ x)`: the inverse on the hopping term (the
    /// symmetric even-odd operator, the intermediate of both even-odd forms).
    InverseOnHopping,
    /// `out = a · D in + A x`: the clover term on the xpay field (the full
    /// operator, the asymmetric even-odd operator); `x` is required.
    DirectOnX,
}

/// The operators whose device code `Backend::prepare` makes ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperatorFamily {
    Wilson,
    Clover,
    Staggered,
}
