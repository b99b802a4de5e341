//! The links in the files' order: sites lexicographic (x fastest, t
//! slowest), the four links of a site together (x, y, z, t), each 3×3
//! row-major (re, im), all three rows or the first two.

use std::sync::Arc;

use num_complex::Complex64 as C64;

use crate::error::Result;
use crate::field::GaugeField;
use crate::lattice::Lattice;
use crate::su3::{conj_cross, Su3};

/// The coordinates of lexicographic site `rank`.
pub(super) fn coords(dims: [usize; 4], mut rank: usize) -> [usize; 4] {
    let mut x = [0; 4];
    for (xi, &d) in x.iter_mut().zip(&dims) {
        *xi = rank % d;
        rank /= d;
    }
    x
}

/// The field's links in file order, `rows` (2 or 3) rows of each.
pub(super) fn links(field: &GaugeField, rows: usize) -> Result<Vec<f64>> {
    let lat = field.lattice();
    let per_link = 6 * rows;
    let mut out =
        crate::alloc::filled(lat.volume() * 4 * per_link, 0.0, "the links in file order")?;
    let mut full = [0.0; 18];
    for (rank, site) in out.chunks_exact_mut(4 * per_link).enumerate() {
        let x = coords(lat.dims(), rank);
        for (mu, link) in site.chunks_exact_mut(per_link).enumerate() {
            field.link_at(x, mu).to_row_major(&mut full);
            link.copy_from_slice(&full[..per_link]);
        }
    }
    Ok(out)
}

/// The field of reals in file order, `rows` (2 or 3) rows of each link; two
/// rows are completed to SU(3) by `row2 = (row0 × row1)*`.
pub(super) fn field(dims: [usize; 4], reals: &[f64], rows: usize) -> Result<GaugeField> {
    let lat = Arc::new(Lattice::new(dims)?);
    let per_link = 6 * rows;
    debug_assert_eq!(reals.len(), lat.volume() * 4 * per_link);
    let mut field = GaugeField::try_unit(lat.clone())?;
    for (rank, site) in reals.chunks_exact(4 * per_link).enumerate() {
        let x = coords(dims, rank);
        for (mu, link) in site.chunks_exact(per_link).enumerate() {
            let mut m = Su3::zero();
            for r in 0..rows {
                for c in 0..3 {
                    let k = 6 * r + 2 * c;
                    m.0[r][c] = C64::new(link[k], link[k + 1]);
                }
            }
            if rows == 2 {
                m.0[2] = conj_cross(&m.0[0], &m.0[1]);
            }
            *field.link_at_mut(x, mu) = m;
        }
    }
    Ok(field)
}

/// The average of `Re tr U_μ(x) / 3` over sites and directions (NERSC
/// `LINK_TRACE`: 1 for unit links).
pub(super) fn link_trace(field: &GaugeField) -> f64 {
    let n = field.links().len() as f64;
    field
        .links()
        .iter()
        .map(|u| u.trace().re / 3.0)
        .sum::<f64>()
        / n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random;

    #[test]
    fn two_rows_and_three_rows_give_the_same_su3_field() {
        let lat = Arc::new(Lattice::new([4, 2, 2, 6]).unwrap());
        let u = random::hot_gauge(&lat, 7);
        let dims = lat.dims();
        for rows in [2, 3] {
            let back = field(dims, &links(&u, rows).unwrap(), rows).unwrap();
            for (a, b) in u.links().iter().zip(back.links()) {
                for r in 0..3 {
                    for c in 0..3 {
                        assert!((a.0[r][c] - b.0[r][c]).norm() < 1e-14, "rows {rows}");
                    }
                }
            }
        }
        // x fastest: rank 1 is x = 1, rank X is y = 1.
        assert_eq!(coords(dims, 1), [1, 0, 0, 0]);
        assert_eq!(coords(dims, 4), [0, 1, 0, 0]);
        assert_eq!(coords(dims, 4 * 2 * 2 * 5 + 3), [3, 0, 0, 5]);
    }
}
