//! Domain blocks of a Schwarz preconditioner (seed 002 §2.2, after
//! Lüscher's SAP): the local lattice tiled by boxes of one extent, coloured
//! black and white like a chessboard of boxes, with every link that leaves
//! a box cut (Dirichlet boundaries). A box never crosses a rank: its extent
//! divides the local one, so the links across a rank's faces are cut too
//! and the box operator needs no communication.

use crate::error::{Error, Result};
use crate::field::GaugeField;
use crate::su3::Su3;

/// The boxes of one rank's lattice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Domains {
    /// The rank's local extents.
    local: [usize; 4],
    /// A box's extents.
    extent: [usize; 4],
    /// The global coordinates of this rank's first site.
    origin: [usize; 4],
}

impl Domains {
    /// Boxes of `extent` on a local lattice of `local` extents starting at
    /// global `origin`. Each box extent must be even (a box holds both
    /// parities, for its even-odd block solve) and divide the local extent.
    pub fn new(local: [usize; 4], extent: [usize; 4], origin: [usize; 4]) -> Result<Domains> {
        for mu in 0..4 {
            let (e, l) = (extent[mu], local[mu]);
            if e < 2 || !e.is_multiple_of(2) || !l.is_multiple_of(e) {
                return Err(Error::InvalidArgument(format!(
                    "SAP domain extent {extent:?}: extent {e} in direction {mu} must be even, \
                     at least 2 and divide the local extent {l}"
                )));
            }
        }
        Ok(Domains {
            local,
            extent,
            origin,
        })
    }

    /// The default box: 4 in every direction where 4 divides the local
    /// extent, else 2 (the local extents are even).
    pub fn default_extent(local: [usize; 4]) -> [usize; 4] {
        local.map(|l| if l.is_multiple_of(4) { 4 } else { 2 })
    }

    pub fn extent(&self) -> [usize; 4] {
        self.extent
    }

    pub fn origin(&self) -> [usize; 4] {
        self.origin
    }

    pub fn local(&self) -> [usize; 4] {
        self.local
    }

    /// The colour (0 black, 1 white) of the box holding local site `x`:
    /// the parity of the sum of its global box coordinates, so that two
    /// boxes sharing a face differ in colour wherever the boxes along a
    /// direction are even in number, on one rank or many.
    #[inline]
    pub fn colour(&self, x: [usize; 4]) -> usize {
        (0..4)
            .map(|mu| (self.origin[mu] + x[mu]) / self.extent[mu])
            .sum::<usize>()
            % 2
    }

    /// Whether the forward link from local site `x` in direction `mu`
    /// leaves its box (then it is cut).
    #[inline]
    pub fn leaves(&self, x: [usize; 4], mu: usize) -> bool {
        (x[mu] + 1).is_multiple_of(self.extent[mu])
    }

    /// The box operator's links: `links` with every link that leaves a box
    /// set to zero.
    pub fn cut_links(&self, mut links: GaugeField) -> Result<GaugeField> {
        let dims = links.lattice().dims();
        if dims != self.local {
            return Err(Error::Internal(format!(
                "cut_links: links of {dims:?} for boxes of a {:?} lattice",
                self.local
            )));
        }
        let zero = Su3::zero();
        for x3 in 0..self.local[3] {
            for x2 in 0..self.local[2] {
                for x1 in 0..self.local[1] {
                    for x0 in 0..self.local[0] {
                        let x = [x0, x1, x2, x3];
                        for mu in (0..4).filter(|&mu| self.leaves(x, mu)) {
                            *links.link_at_mut(x, mu) = zero;
                        }
                    }
                }
            }
        }
        Ok(links)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lattice::Lattice;
    use std::sync::Arc;

    #[test]
    fn extents_must_be_even_and_divide_the_local_lattice() {
        assert!(Domains::new([8, 8, 8, 8], [4, 4, 4, 4], [0; 4]).is_ok());
        assert!(Domains::new([8, 8, 8, 8], [3, 4, 4, 4], [0; 4]).is_err());
        assert!(Domains::new([6, 8, 8, 8], [4, 4, 4, 4], [0; 4]).is_err());
        assert!(Domains::new([8, 8, 8, 8], [0, 4, 4, 4], [0; 4]).is_err());
        assert_eq!(Domains::default_extent([8, 6, 4, 2]), [4, 2, 4, 2]);
    }

    #[test]
    fn neighbouring_boxes_differ_in_colour_across_ranks() {
        // Two ranks along T, each 4 sites, boxes of 2: the last box of rank 0
        // and the first of rank 1 are neighbours of opposite colour.
        let r0 = Domains::new([4, 4, 4, 4], [2; 4], [0, 0, 0, 0]).unwrap();
        let r1 = Domains::new([4, 4, 4, 4], [2; 4], [0, 0, 0, 4]).unwrap();
        assert_ne!(r0.colour([0, 0, 0, 3]), r1.colour([0, 0, 0, 0]));
        assert_ne!(r0.colour([1, 0, 0, 0]), r0.colour([2, 0, 0, 0]));
        assert_eq!(r0.colour([0, 0, 0, 0]), r0.colour([1, 1, 1, 1]));
    }

    #[test]
    fn only_the_links_leaving_a_box_are_cut() {
        let lat = Arc::new(Lattice::new([4, 4, 2, 2]).unwrap());
        let d = Domains::new([4, 4, 2, 2], [2, 4, 2, 2], [0; 4]).unwrap();
        let cut = d.cut_links(GaugeField::unit(lat)).unwrap();
        let norm = |x: [usize; 4], mu: usize| cut.link_at(x, mu).0[0][0].norm();
        assert_eq!(norm([0, 0, 0, 0], 0), 1.0);
        assert_eq!(norm([1, 0, 0, 0], 0), 0.0);
        assert_eq!(norm([3, 0, 0, 0], 0), 0.0);
        assert_eq!(norm([0, 2, 0, 0], 1), 1.0);
        assert_eq!(norm([0, 3, 0, 0], 1), 0.0);
        assert_eq!(norm([0, 0, 1, 1], 3), 0.0);
    }
}
