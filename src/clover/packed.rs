//! QUDA's packed clover order (`QUDA_PACKED_CLOVER_ORDER`, Chroma's and
//! QDP's packing; tests/data/README.md, "golden-clover-6x4x4x8"):
//! per site, sites in even-odd order, 72 reals = two chiral blocks of 36.
//! A block's 36 reals are its 6 real diagonal entries `B[0][0] … B[5][5]`,
//! then the 15 complex strictly lower entries `B[r][c]`, `r > c`, column by
//! column: (1,0) (2,0) … (5,0) (2,1) … (5,1) (3,2) … (5,4); the upper
//! triangle is their conjugate.

use std::sync::Arc;

use num_complex::Complex64 as C64;

use super::{Block, CloverField, SiteBlocks, PACKED_REALS};
use crate::error::{Error, Result};
use crate::lattice::Lattice;
use crate::layout::{HostReals, HostRealsMut};

/// Reals per packed block.
pub const BLOCK_REALS: usize = 36;

/// The `(row, column)` of the k-th packed off-diagonal entry, k = 0..15.
pub fn lower_entry(k: usize) -> (usize, usize) {
    let mut n = 0;
    for c in 0..6 {
        for r in (c + 1)..6 {
            if n == k {
                return (r, c);
            }
            n += 1;
        }
    }
    panic!("packed clover entry {k} out of 0..15");
}

/// The 15 `(row, column)` pairs in packed order.
pub fn lower_entries() -> [(usize, usize); 15] {
    std::array::from_fn(lower_entry)
}

/// A Hermitian block from its 36 packed reals (read through `get`).
pub fn unpack_block(get: impl Fn(usize) -> f64) -> Block {
    let mut b = [[C64::new(0.0, 0.0); 6]; 6];
    for (i, row) in b.iter_mut().enumerate() {
        row[i] = C64::new(get(i), 0.0);
    }
    for (k, (r, c)) in lower_entries().into_iter().enumerate() {
        let z = C64::new(get(6 + 2 * k), get(7 + 2 * k));
        b[r][c] = z;
        b[c][r] = z.conj();
    }
    b
}

/// The 36 packed reals of a block (its lower triangle and real diagonal).
pub fn pack_block(b: &Block, mut set: impl FnMut(usize, f64)) {
    for (i, row) in b.iter().enumerate() {
        set(i, row[i].re);
    }
    for (k, (r, c)) in lower_entries().into_iter().enumerate() {
        set(6 + 2 * k, b[r][c].re);
        set(7 + 2 * k, b[r][c].im);
    }
}

/// Imports a host clover field in the packed order (V·72 reals); refuses a
/// NaN or Inf entry, naming the site and block.
pub fn import(lattice: &Arc<Lattice>, host: HostReals, what: &str) -> Result<CloverField> {
    let n = lattice.volume() * PACKED_REALS;
    if host.len() != n {
        return Err(Error::InvalidArgument(format!(
            "{what} holds {} reals; a clover field on {:?} needs {n} (72 per site)",
            host.len(),
            lattice.dims()
        )));
    }
    use rayon::prelude::*;
    let sites_iter = (0..lattice.volume()).into_par_iter().map(|i| {
        let base = i * PACKED_REALS;
        std::array::from_fn(|k| unpack_block(|j| host.get(base + k * BLOCK_REALS + j)))
    });
    let purpose = format!("the clover field of a {:?} lattice", lattice.dims());
    let sites: Vec<SiteBlocks> = crate::alloc::par_collect(lattice.volume(), sites_iter, &purpose)?;
    let field = CloverField::from_sites(lattice.clone(), sites)?;
    field.check_finite(what)?;
    Ok(field)
}

/// Writes a clover field in the packed order into a host array of V·72
/// reals.
pub fn export(field: &CloverField, out: &mut HostRealsMut) -> Result<()> {
    let n = field.lattice().volume() * PACKED_REALS;
    if out.len() != n {
        return Err(Error::InvalidArgument(format!(
            "the clover output holds {} reals; {n} are needed",
            out.len()
        )));
    }
    for (i, site) in field.sites().iter().enumerate() {
        for (k, b) in site.iter().enumerate() {
            pack_block(b, |j, v| out.set(i * PACKED_REALS + k * BLOCK_REALS + j, v));
        }
    }
    Ok(())
}
