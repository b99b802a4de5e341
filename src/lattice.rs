//! Lattice geometry: extents, parity, checkerboard indexing and neighbour
//! tables. Nothing here knows about colour or spin.
//!
//! Conventions (docs/conventions.md, "Lattice, sites, parity"): dims are
//! `{X, Y, Z, T}`, every extent even; the parity of (x, y, z, t) is
//! `(x + y + z + t) mod 2`; within a parity sites run lexicographically with x
//! fastest, and the checkerboard index is `(x + X (y + Y (z + Z t))) / 2`.

use crate::error::{Error, Result};

/// Even (0) or odd (1) sites.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Parity {
    Even = 0,
    Odd = 1,
}

impl Parity {
    pub fn other(self) -> Parity {
        match self {
            Parity::Even => Parity::Odd,
            Parity::Odd => Parity::Even,
        }
    }
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn from_index(i: usize) -> Parity {
        if i.is_multiple_of(2) {
            Parity::Even
        } else {
            Parity::Odd
        }
    }
}

/// Which sites a field holds: one parity (`Vh` sites) or all (`V` sites,
/// the even half first, then the odd half).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Subset {
    Full,
    Single(Parity),
}

/// `tables[parity][mu][dir][cb]`: the checkerboard index (in the other
/// parity) of the neighbour of site `cb` in direction `+mu` (dir 0) or
/// `-mu` (dir 1).
type NeighbourTables = [[[Vec<u32>; 2]; 4]; 2];

/// The four-dimensional lattice with its neighbour tables.
#[derive(Debug, Clone)]
pub struct Lattice {
    dims: [usize; 4],
    volume: usize,
    /// Built when first needed (the CPU backend's hopping term, the gauge
    /// generator): 16 tables of Vh entries take a serial pass of about
    /// 0.3 s at 32³×64, which a gauge load on the GPU never needs.
    neighbours: std::sync::OnceLock<NeighbourTables>,
}

/// Four extents written `X,Y,Z,T` (the command-line tools' `--dims`); the
/// extents themselves are checked by `Lattice::new`.
pub fn parse_dims(s: &str) -> std::result::Result<[usize; 4], String> {
    let bad = || format!("'{s}' is not four extents X,Y,Z,T");
    let d: Vec<usize> = s
        .split(',')
        .map(|v| v.trim().parse().map_err(|_| bad()))
        .collect::<std::result::Result<_, _>>()?;
    d.try_into().map_err(|_| bad())
}

/// Lattices are equal when their extents are: the neighbour tables follow
/// from them, built or not.
impl PartialEq for Lattice {
    fn eq(&self, other: &Lattice) -> bool {
        self.dims == other.dims
    }
}

impl Lattice {
    /// Checks the extents (positive, even, volume within `u32` indexing).
    pub fn new(dims: [usize; 4]) -> Result<Lattice> {
        for (mu, &d) in dims.iter().enumerate() {
            if d == 0 || d % 2 != 0 {
                return Err(Error::InvalidArgument(format!(
                    "dims[{mu}] = {d}: every lattice extent must be positive and even"
                )));
            }
        }
        let volume = dims
            .iter()
            .try_fold(1usize, |v, &d| v.checked_mul(d))
            .filter(|&v| v < (u32::MAX as usize))
            .ok_or_else(|| {
                Error::InvalidArgument(format!("dims = {dims:?}: the volume is too large"))
            })?;
        Ok(Lattice {
            dims,
            volume,
            neighbours: Default::default(),
        })
    }

    /// Builds the neighbour tables now, if they are not yet built, with an
    /// allocation failure reported rather than raised: code that reads
    /// them (`neighbour_table`) calls this first where it can fail.
    pub fn build_neighbour_tables(&self) -> Result<()> {
        if self.neighbours.get().is_none() {
            let tables = self.build_neighbours()?;
            // Another thread may have built them meanwhile: the same tables.
            let _ = self.neighbours.set(tables);
        }
        Ok(())
    }

    pub fn dims(&self) -> [usize; 4] {
        self.dims
    }
    pub fn volume(&self) -> usize {
        self.volume
    }
    pub fn half_volume(&self) -> usize {
        self.volume / 2
    }
    /// Number of sites a field of this subset holds.
    pub fn sites(&self, subset: Subset) -> usize {
        match subset {
            Subset::Full => self.volume,
            Subset::Single(_) => self.half_volume(),
        }
    }

    pub fn parity_of(&self, x: [usize; 4]) -> Parity {
        Parity::from_index(x.iter().sum::<usize>())
    }

    /// Lexicographic index, x fastest.
    pub fn lex_index(&self, x: [usize; 4]) -> usize {
        let d = self.dims;
        x[0] + d[0] * (x[1] + d[1] * (x[2] + d[2] * x[3]))
    }

    /// Checkerboard index of a site within its parity.
    pub fn cb_index(&self, x: [usize; 4]) -> usize {
        self.lex_index(x) / 2
    }

    /// Coordinates of checkerboard site `cb` of parity `p`.
    pub fn coords(&self, p: Parity, cb: usize) -> [usize; 4] {
        let d = self.dims;
        // Two lexicographic sites share each cb index; x0 picks the one of parity p.
        let lex = 2 * cb;
        let x1 = (lex / d[0]) % d[1];
        let x2 = (lex / (d[0] * d[1])) % d[2];
        let x3 = lex / (d[0] * d[1] * d[2]);
        let x0 = lex % d[0] + ((x1 + x2 + x3 + p.index()) % 2);
        [x0, x1, x2, x3]
    }

    /// Index into an even-odd ordered full field (all even sites, then odd).
    pub fn eo_index(&self, x: [usize; 4]) -> usize {
        self.parity_of(x).index() * self.half_volume() + self.cb_index(x)
    }

    /// The site displaced by `step` (±1) in direction `mu`, periodically.
    pub fn shift(&self, mut x: [usize; 4], mu: usize, step: isize) -> [usize; 4] {
        let d = self.dims[mu] as isize;
        x[mu] = ((x[mu] as isize + step).rem_euclid(d)) as usize;
        x
    }

    /// Neighbour table for sites of parity `p`: cb indices in the other parity.
    /// `forward` selects `x + mu` (true) or `x - mu` (false).
    /// Built on first use (`build_neighbour_tables` reports an allocation
    /// failure; here it would be a panic).
    pub fn neighbour_table(&self, p: Parity, mu: usize, forward: bool) -> &[u32] {
        let tables = self.neighbours.get_or_init(|| {
            self.build_neighbours()
                .expect("memory for the neighbour tables (build_neighbour_tables reports it)")
        });
        &tables[p.index()][mu][if forward { 0 } else { 1 }]
    }

    fn build_neighbours(&self) -> Result<NeighbourTables> {
        let vh = self.half_volume();
        let mut tables: NeighbourTables = Default::default();
        for p in [Parity::Even, Parity::Odd] {
            for (mu, by_dir) in tables[p.index()].iter_mut().enumerate() {
                for (dir, step) in [(0usize, 1isize), (1, -1)] {
                    let sites = (0..vh).map(|cb| {
                        let x = self.shift(self.coords(p, cb), mu, step);
                        self.cb_index(x) as u32
                    });
                    let what = format!("the neighbour tables of a {:?} lattice", self.dims);
                    by_dir[dir] = crate::alloc::collect(vh, sites, &what)?;
                }
            }
        }
        Ok(tables)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coords_and_cb_index_are_inverse() {
        let lat = Lattice::new([6, 4, 2, 8]).unwrap();
        for p in [Parity::Even, Parity::Odd] {
            for cb in 0..lat.half_volume() {
                let x = lat.coords(p, cb);
                assert_eq!(lat.parity_of(x), p);
                assert_eq!(lat.cb_index(x), cb);
            }
        }
    }

    #[test]
    fn neighbours_have_opposite_parity_and_invert() {
        let lat = Lattice::new([4, 6, 4, 2]).unwrap();
        for p in [Parity::Even, Parity::Odd] {
            for mu in 0..4 {
                let fwd = lat.neighbour_table(p, mu, true);
                let bwd_other = lat.neighbour_table(p.other(), mu, false);
                for cb in 0..lat.half_volume() {
                    assert_eq!(bwd_other[fwd[cb] as usize] as usize, cb);
                }
            }
        }
    }

    #[test]
    fn odd_or_zero_extent_is_refused() {
        assert!(Lattice::new([4, 4, 3, 4]).is_err());
        assert!(Lattice::new([4, 0, 4, 4]).is_err());
    }

    #[test]
    fn dims_parse_as_four_extents() {
        assert_eq!(parse_dims("24,24,24,48"), Ok([24, 24, 24, 48]));
        assert_eq!(parse_dims("8, 8, 8, 16"), Ok([8, 8, 8, 16]));
        assert!(parse_dims("8,8,8").is_err());
        assert!(parse_dims("8,8,8,x").is_err());
    }
}
