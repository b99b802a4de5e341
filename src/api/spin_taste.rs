//! Staggered spin-taste operators on a caller's colour vectors
//! (`spin_taste`), on the host, on this context's threads and ranks.

use super::context::Context;
use crate::error::Result;
use crate::field::GaugeField;
use crate::lattice::Lattice;
use crate::spin_taste::{check, spin_taste, ColourField};

impl Context {
    /// `γ_spin ⊗ ξ_taste` of `chi` (this rank's sites of `lat`, even-odd
    /// order); `links` (with the caller's phases) needed where spin and
    /// taste differ. Collective.
    pub fn apply_spin_taste(
        &self,
        links: Option<&GaugeField>,
        lat: &std::sync::Arc<Lattice>,
        chi: &ColourField,
        spin: u32,
        taste: u32,
    ) -> Result<ColourField> {
        let inner = &self.inner;
        // Agreed before the first exchange: a rank refusing its arguments
        // fails the call on every rank.
        inner.agree(check(links.is_some(), lat, chi, spin, taste))?;
        let r = inner.install(|| spin_taste(inner.ranks(), links, lat, chi, spin, taste));
        inner.agree(r)
    }
}
