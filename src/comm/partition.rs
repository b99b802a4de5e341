//! How one lattice is cut over a 4-d grid of ranks, with QUDA's semantics
//! as issue 34 states them for QUDA develop 9521952 (`initCommsGridQuda`,
//! MILC's `qudaSetLayout`; the QUDA and MILC sources were not read for
//! this file, and nothing of theirs is in it):
//! - every rank holds a *local* sub-lattice of the same extents, the global
//!   lattice being the local one times the grid, dimension by dimension;
//! - a rank sits at grid coordinates `(gx, gy, gz, gt)`; which rank number
//!   that is, is the caller's map: QUDA's default (no map function) runs t
//!   fastest, MILC's layout x fastest, tmLQCD's is `MPI_Cart_rank` of its
//!   own Cartesian communicator (a custom map);
//! - every local extent is even, so that a site's local parity is its
//!   global parity (the local origin `g_μ L_μ` is even) and the even-odd
//!   solvers need no knowledge of the cut;
//! - the improved staggered operator's three-hop Naik term needs every
//!   partitioned local extent ≥ 3 (one neighbour rank per hop direction).

use std::sync::Arc;

use crate::error::{Error, Result};

/// The dimensions of a 4-d grid or lattice, x, y, z, t.
pub type Dims = [usize; 4];

/// How grid coordinates number the ranks.
#[derive(Clone)]
pub enum RankMap {
    /// QUDA's default: `rank = ((gx G_y + gy) G_z + gz) G_t + gt`.
    TFastest,
    /// MILC's layout: `rank = gx + G_x (gy + G_y (gz + G_z gt))`.
    XFastest,
    /// The caller's function from grid coordinates to a rank (QUDA's
    /// `QudaCommsMap`, tmLQCD's `MPI_Cart_rank`); it must be a bijection
    /// onto `0..ranks`, which `Partition::new` checks.
    Custom(std::sync::Arc<dyn Fn(Dims) -> i64 + Send + Sync>),
}

impl std::fmt::Debug for RankMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RankMap::TFastest => f.write_str("TFastest"),
            RankMap::XFastest => f.write_str("XFastest"),
            RankMap::Custom(_) => f.write_str("Custom"),
        }
    }
}

impl RankMap {
    fn rank_of(&self, grid: Dims, g: Dims) -> i64 {
        match self {
            RankMap::TFastest => {
                (((g[0] * grid[1] + g[1]) * grid[2] + g[2]) * grid[3] + g[3]) as i64
            }
            RankMap::XFastest => {
                (g[0] + grid[0] * (g[1] + grid[1] * (g[2] + grid[2] * g[3]))) as i64
            }
            RankMap::Custom(f) => f(g),
        }
    }
}

/// The grid of ranks and this rank's place in it, whatever the lattice:
/// what a context knows from its start (QUDA's `initCommsGridQuda`).
#[derive(Debug, Clone)]
pub struct RankGrid {
    grid: Dims,
    rank: usize,
    /// The grid coordinates of every rank, by rank.
    coords: Arc<[Dims]>,
    /// The rank at every grid coordinate, lexicographic with x fastest.
    ranks: Arc<[usize]>,
}

/// One rank's place in the cut of a lattice over a grid of ranks: the
/// grid, and the sub-lattice every rank holds.
#[derive(Debug, Clone)]
pub struct Partition {
    grid: RankGrid,
    local: Dims,
}

/// Grid coordinates in lexicographic order, x fastest.
fn grid_points(grid: Dims) -> impl Iterator<Item = Dims> {
    let n = grid.iter().product::<usize>();
    (0..n).map(move |mut i| {
        let mut g = [0; 4];
        for (mu, gm) in g.iter_mut().enumerate() {
            *gm = i % grid[mu];
            i /= grid[mu];
        }
        g
    })
}

fn lex(grid: Dims, g: Dims) -> usize {
    g[0] + grid[0] * (g[1] + grid[1] * (g[2] + grid[2] * g[3]))
}

impl RankGrid {
    /// Rank `rank` of `ranks` on `grid`. Refuses a grid whose product is
    /// not the number of ranks and a map that is not a bijection onto the
    /// ranks.
    pub fn new(grid: Dims, ranks: usize, rank: usize, map: &RankMap) -> Result<RankGrid> {
        if grid.contains(&0) {
            return Err(Error::InvalidArgument(format!(
                "the rank grid {grid:?} has a zero extent"
            )));
        }
        let n: usize = grid.iter().product();
        if n != ranks {
            return Err(Error::InvalidArgument(format!(
                "the rank grid {grid:?} holds {n} ranks but the communicator has {ranks}"
            )));
        }
        if rank >= ranks {
            return Err(Error::InvalidArgument(format!("rank {rank} of {ranks}")));
        }
        let mut coords = vec![None; ranks];
        let mut table = vec![0; ranks];
        for g in grid_points(grid) {
            let r = map.rank_of(grid, g);
            let slot = usize::try_from(r)
                .ok()
                .filter(|&r| r < ranks)
                .ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "the rank map gives rank {r} for grid coordinates {g:?} (ranks 0..{ranks})"
                    ))
                })?;
            if let Some(other) = coords[slot] {
                return Err(Error::InvalidArgument(format!(
                    "the rank map gives rank {slot} for both {other:?} and {g:?}"
                )));
            }
            coords[slot] = Some(g);
            table[lex(grid, g)] = slot;
        }
        Ok(RankGrid {
            grid,
            rank,
            coords: coords
                .into_iter()
                .map(|c| c.expect("a bijection: checked"))
                .collect(),
            ranks: table.into(),
        })
    }

    /// One rank alone.
    pub fn single() -> RankGrid {
        RankGrid::new([1; 4], 1, 0, &RankMap::TFastest).expect("one rank")
    }

    pub fn grid(&self) -> Dims {
        self.grid
    }

    pub fn rank(&self) -> usize {
        self.rank
    }

    pub fn ranks(&self) -> usize {
        self.coords.len()
    }

    /// This rank's grid coordinates.
    pub fn coords(&self) -> Dims {
        self.coords[self.rank]
    }

    /// Grid coordinates of any rank.
    pub fn coords_of(&self, rank: usize) -> Dims {
        self.coords[rank]
    }

    /// The rank at grid coordinates `g` (each taken modulo the grid).
    pub fn rank_at(&self, g: Dims) -> usize {
        let g = [0, 1, 2, 3].map(|mu| g[mu] % self.grid[mu]);
        self.ranks[lex(self.grid, g)]
    }

    /// Whether direction `mu` is cut (more than one rank along it): only
    /// then do its hopping terms need faces from other ranks.
    pub fn is_partitioned(&self, mu: usize) -> bool {
        self.grid[mu] > 1
    }

    /// Whether any direction is cut.
    pub fn is_cut(&self) -> bool {
        (0..4).any(|mu| self.is_partitioned(mu))
    }

    /// The rank one grid step forward (`forward`) or backward along `mu`,
    /// periodic: this rank itself where the grid extent is 1, the same
    /// rank both ways where it is 2.
    pub fn neighbour(&self, mu: usize, forward: bool) -> usize {
        let mut g = self.coords();
        g[mu] = if forward {
            (g[mu] + 1) % self.grid[mu]
        } else {
            (g[mu] + self.grid[mu] - 1) % self.grid[mu]
        };
        self.rank_at(g)
    }

    /// The partition of a lattice whose every rank holds `local` sites.
    pub fn with_local(&self, local: Dims) -> Result<Partition> {
        if let Some(mu) = (0..4).find(|&mu| local[mu] == 0 || !local[mu].is_multiple_of(2)) {
            return Err(Error::InvalidArgument(format!(
                "local extent {} in direction {mu} of {local:?}: every local extent must be \
                 even and positive (local parity is global parity)",
                local[mu]
            )));
        }
        Ok(Partition {
            grid: self.clone(),
            local,
        })
    }
}

impl Partition {
    /// The partition of rank `rank` of `ranks` over `grid`, each holding
    /// `local` sites. Refuses a grid whose product is not the number of
    /// ranks, an odd or zero local extent, and a map that is not a
    /// bijection onto the ranks.
    pub fn new(
        grid: Dims,
        local: Dims,
        ranks: usize,
        rank: usize,
        map: &RankMap,
    ) -> Result<Partition> {
        RankGrid::new(grid, ranks, rank, map)?.with_local(local)
    }

    /// One rank holding the whole lattice.
    pub fn single(dims: Dims) -> Result<Partition> {
        RankGrid::single().with_local(dims)
    }

    /// The partition of a *global* lattice over `grid` (MILC's
    /// `qudaSetLayout`: the global extents and the machine grid given, the
    /// local ones divided out): refuses extents the grid does not divide.
    pub fn from_global(
        global: Dims,
        grid: Dims,
        ranks: usize,
        rank: usize,
        map: &RankMap,
    ) -> Result<Partition> {
        let ranks = RankGrid::new(grid, ranks, rank, map)?;
        ranks.with_local(local_of_global(global, grid)?)
    }

    /// The grid of ranks.
    pub fn rank_grid(&self) -> &RankGrid {
        &self.grid
    }

    /// This rank's sub-lattice.
    pub fn local(&self) -> Dims {
        self.local
    }

    pub fn global(&self) -> Dims {
        [0, 1, 2, 3].map(|mu| self.local[mu] * self.grid.grid[mu])
    }

    /// The global coordinates of local site `x`.
    pub fn global_site(&self, x: Dims) -> Dims {
        let g = self.grid.coords();
        [0, 1, 2, 3].map(|mu| g[mu] * self.local[mu] + x[mu])
    }

    /// For the improved staggered operator: every partitioned local extent
    /// holds the three hops of the Naik term.
    pub fn check_naik_depth(&self) -> Result<()> {
        match (0..4).find(|&mu| self.grid.is_partitioned(mu) && self.local[mu] < 3) {
            Some(mu) => Err(Error::InvalidArgument(format!(
                "local extent {} in the partitioned direction {mu}: the improved staggered \
                 operator's three-hop links need at least 3",
                self.local[mu]
            ))),
            None => Ok(()),
        }
    }
}

/// A partition's grid queries, on the partition itself.
impl std::ops::Deref for Partition {
    type Target = RankGrid;
    fn deref(&self) -> &RankGrid {
        &self.grid
    }
}

/// The local extents of a global lattice cut over `grid`: refuses extents
/// the grid does not divide (MILC's `qudaSetLayout` hands the global ones).
pub fn local_of_global(global: Dims, grid: Dims) -> Result<Dims> {
    if let Some(mu) = (0..4).find(|&mu| grid[mu] == 0 || !global[mu].is_multiple_of(grid[mu])) {
        return Err(Error::InvalidArgument(format!(
            "the global extent {} in direction {mu} is not divided by the grid's {}",
            global[mu], grid[mu]
        )));
    }
    Ok([0, 1, 2, 3].map(|mu| global[mu] / grid[mu]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_map_runs_t_fastest_and_milc_x_fastest() {
        let grid = [2, 1, 2, 3];
        let q = Partition::new(grid, [4; 4], 12, 0, &RankMap::TFastest).unwrap();
        assert_eq!(q.rank_at([0, 0, 0, 1]), 1);
        assert_eq!(q.rank_at([0, 0, 1, 0]), 3);
        assert_eq!(q.rank_at([1, 0, 0, 0]), 6);
        let m = Partition::new(grid, [4; 4], 12, 0, &RankMap::XFastest).unwrap();
        assert_eq!(m.rank_at([1, 0, 0, 0]), 1);
        assert_eq!(m.rank_at([0, 0, 1, 0]), 2);
        assert_eq!(m.rank_at([0, 0, 0, 1]), 4);
        for r in 0..12 {
            let p = Partition::new(grid, [4; 4], 12, r, &RankMap::XFastest).unwrap();
            assert_eq!(p.rank_at(p.coords()), r);
        }
    }

    #[test]
    fn a_custom_map_is_used_and_must_be_a_bijection() {
        // Ranks numbered backwards from QUDA's default.
        let back = RankMap::Custom(std::sync::Arc::new(|g: Dims| 3 - (g[2] * 2 + g[3]) as i64));
        let p = Partition::new([1, 1, 2, 2], [4; 4], 4, 0, &back).unwrap();
        assert_eq!(p.coords(), [0, 0, 1, 1]);
        assert_eq!(p.neighbour(3, true), 1);
        let constant = RankMap::Custom(std::sync::Arc::new(|_| 0));
        assert!(Partition::new([1, 1, 2, 2], [4; 4], 4, 0, &constant).is_err());
        let out_of_range = RankMap::Custom(std::sync::Arc::new(|g: Dims| 4 + g[3] as i64));
        assert!(Partition::new([1, 1, 1, 2], [4; 4], 2, 0, &out_of_range).is_err());
    }

    #[test]
    fn neighbours_wrap_and_degenerate_grids_point_home() {
        let p = Partition::new([1, 2, 3, 1], [2, 4, 6, 8], 6, 0, &RankMap::TFastest).unwrap();
        assert_eq!(
            p.neighbour(0, true),
            0,
            "a grid extent of 1: the rank itself"
        );
        assert_eq!(
            p.neighbour(1, true),
            p.neighbour(1, false),
            "extent 2: one rank both ways"
        );
        assert_ne!(p.neighbour(2, true), p.neighbour(2, false));
        assert_eq!(p.global(), [2, 8, 18, 8]);
        assert!(!p.is_partitioned(0) && p.is_partitioned(2));
    }

    #[test]
    fn sizes_are_checked() {
        let m = RankMap::TFastest;
        assert!(
            Partition::new([2, 1, 1, 1], [4; 4], 3, 0, &m).is_err(),
            "2 ranks in the grid"
        );
        assert!(
            Partition::new([1, 1, 1, 2], [4, 4, 4, 3], 2, 0, &m).is_err(),
            "odd local extent"
        );
        assert!(
            Partition::new([1, 1, 1, 2], [4; 4], 2, 2, &m).is_err(),
            "rank out of range"
        );
        assert!(Partition::from_global([8, 8, 8, 10], [1, 1, 1, 4], 4, 0, &m).is_err());
        let p = Partition::from_global([8, 8, 8, 16], [1, 1, 2, 4], 8, 5, &m).unwrap();
        assert_eq!(p.local(), [8, 8, 4, 4]);
        let thin = Partition::new([1, 1, 1, 2], [4, 4, 4, 2], 2, 0, &m).unwrap();
        assert!(thin.check_naik_depth().is_err());
        assert!(Partition::new([2, 1, 1, 1], [2, 4, 4, 4], 2, 0, &m)
            .map(|p| p.check_naik_depth().is_err())
            .unwrap());
        assert!(Partition::single([2, 4, 4, 4])
            .unwrap()
            .check_naik_depth()
            .is_ok());
    }

    #[test]
    fn global_sites_tile_the_lattice() {
        let grid = [1, 2, 1, 2];
        let local = [2, 2, 4, 2];
        let mut seen = std::collections::HashSet::new();
        for r in 0..4 {
            let p = Partition::new(grid, local, 4, r, &RankMap::XFastest).unwrap();
            for x in grid_points(local) {
                let g = p.global_site(x);
                assert!(seen.insert(g), "{g:?} twice");
                // Local parity is global parity.
                assert_eq!(x.iter().sum::<usize>() % 2, g.iter().sum::<usize>() % 2);
            }
        }
        assert_eq!(seen.len(), 2 * 4 * 4 * 4);
    }
}
