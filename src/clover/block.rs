//! One site's clover term as two Hermitian 6×6 chiral blocks (the
//! DeGrand–Rossi basis of the host; `clover/mod.rs` states the convention).

use num_complex::Complex64 as C64;

/// One chiral block, `[row][column]`.
pub type Block = [[C64; 6]; 6];

/// The two chiral blocks of a site.
pub type SiteBlocks = [Block; 2];

/// Reals per site in the packed order (two blocks of 6 + 2·15).
pub const PACKED_REALS: usize = 72;

/// The unit block.
pub fn unit_block() -> Block {
    let mut b = [[C64::new(0.0, 0.0); 6]; 6];
    for (i, row) in b.iter_mut().enumerate() {
        row[i] = C64::new(1.0, 0.0);
    }
    b
}
