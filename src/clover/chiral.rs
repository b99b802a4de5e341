//! The clover blocks in the backends' storage basis.
//!
//! Spinors live in the UKQCD basis inside the library, where γ5 is not
//! diagonal: `γ5 (u, l) = (−l, −u)` (u, l the upper and lower spin pairs).
//! Its eigenvectors are the chiral combinations `χ0 = u + l` (γ5 = −1) and
//! `χ1 = u − l` (γ5 = +1), and `ψ = ((χ0 + χ1)/2, (χ0 − χ1)/2)`. The clover
//! term commutes with γ5, so in the χ coordinates it is block diagonal:
//! a site applies it as `χ = (u + l, u − l)`, `χ'_k = B̃_k χ_k`,
//! `ψ' = (χ'0 + χ'1, χ'0 − χ'1)`, with the 1/2 of the last step folded into
//! the stored `B̃_k` (as QUDA folds it: QUDA's clover_field_order.h halves a
//! QDP-ordered clover on load). With `ψ_DR = T ψ_UKQCD` (gamma.rs) the map
//! `χ → ψ_DR` is `W = T S`, block diagonal `diag(W0, W1)` (2×2 spin blocks),
//! and `B̃_k = W_k⁻¹ B_k W_k` for the DeGrand–Rossi block `B_k`.
//!
//! A stored site is 72 reals in the packed layout of `packed` (per block 6
//! real diagonal entries, then 15 complex lower entries), of `B̃_k / 2`.

use num_complex::Complex64 as C64;

use super::packed::{lower_entries, pack_block, BLOCK_REALS};
use super::{Block, SiteBlocks, PACKED_REALS};
use crate::gamma;

/// A 2×2 matrix on the spin index within a chiral block.
pub type Spin2 = [[C64; 2]; 2];

/// `W_k` (k = 0, 1): the 2×2 spin blocks of `T S`, with
/// `S = ½ ((1, 1), (1, −1))` the map from `(χ0, χ1)` to `(u, l)`.
fn w_blocks() -> [Spin2; 2] {
    let t = gamma::ukqcd_to_degrand_rossi();
    let half = C64::new(0.5, 0.0);
    // S[i][j] for spin indices: u = spins 0, 1; l = spins 2, 3;
    // χ0 = columns 0, 1; χ1 = columns 2, 3.
    let s = |i: usize, j: usize| -> C64 {
        let (ib, ii) = (i / 2, i % 2);
        let (jb, jj) = (j / 2, j % 2);
        if ii != jj {
            return C64::new(0.0, 0.0);
        }
        if ib == 1 && jb == 1 {
            -half
        } else {
            half
        }
    };
    let w = |i: usize, j: usize| -> C64 { (0..4).map(|k| t[i][k] * s(k, j)).sum() };
    [
        [[w(0, 0), w(0, 1)], [w(1, 0), w(1, 1)]],
        [[w(2, 2), w(2, 3)], [w(3, 2), w(3, 3)]],
    ]
}

fn inverse2(m: &Spin2) -> Spin2 {
    let det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    [
        [m[1][1] / det, -m[0][1] / det],
        [-m[1][0] / det, m[0][0] / det],
    ]
}

/// `W⁻¹ B W` with `W` acting on the spin index (`3 s + c`).
fn rotate(b: &Block, w: &Spin2) -> Block {
    let wi = inverse2(w);
    let mut out = [[C64::new(0.0, 0.0); 6]; 6];
    for s in 0..2 {
        for c in 0..3 {
            for t in 0..2 {
                for d in 0..3 {
                    let mut z = C64::new(0.0, 0.0);
                    for a in 0..2 {
                        for bb in 0..2 {
                            z += wi[s][a] * b[3 * a + c][3 * bb + d] * w[bb][t];
                        }
                    }
                    out[3 * s + c][3 * t + d] = z;
                }
            }
        }
    }
    out
}

/// `(W_k, W_k⁻¹)` for k = 0, 1: the rotation `storage_site` applies to
/// block k (for the device's computed clover, which applies it itself).
pub fn storage_rotation() -> [(Spin2, Spin2); 2] {
    w_blocks().map(|w| (w, inverse2(&w)))
}

/// The 72 stored reals of a site from its DeGrand–Rossi blocks.
pub fn storage_site(blocks: &SiteBlocks) -> [f64; PACKED_REALS] {
    let w = w_blocks();
    let mut out = [0.0; PACKED_REALS];
    for k in 0..2 {
        let mut bt = rotate(&blocks[k], &w[k]);
        bt.iter_mut().flatten().for_each(|z| *z *= 0.5);
        pack_block(&bt, |j, v| out[k * BLOCK_REALS + j] = v);
    }
    out
}

/// `χ' = B χ` for one stored block (36 reals) on a 6-vector.
#[inline(always)]
fn block_mul(b: &[f64], chi: &[C64; 6]) -> [C64; 6] {
    let mut out: [C64; 6] = std::array::from_fn(|i| b[i] * chi[i]);
    for (k, (r, c)) in lower_entries().into_iter().enumerate() {
        let z = C64::new(b[6 + 2 * k], b[7 + 2 * k]);
        out[r] += z * chi[c];
        out[c] += z.conj() * chi[r];
    }
    out
}

/// The clover term of one stored site applied to a UKQCD spinor site
/// (24 reals, `[spin][colour][re, im]`): the CPU backend's arithmetic, and
/// the reference for the CUDA kernels' epilogue.
#[inline]
pub fn apply_storage_site(site: &[f64], psi: &[f64; 24]) -> [f64; 24] {
    let z = |spin: usize, c: usize| C64::new(psi[2 * (3 * spin + c)], psi[2 * (3 * spin + c) + 1]);
    // χ_k[3 s + c], s the spin within the pair.
    let chi0: [C64; 6] = std::array::from_fn(|i| z(i / 3, i % 3) + z(2 + i / 3, i % 3));
    let chi1: [C64; 6] = std::array::from_fn(|i| z(i / 3, i % 3) - z(2 + i / 3, i % 3));
    let o0 = block_mul(&site[..BLOCK_REALS], &chi0);
    let o1 = block_mul(&site[BLOCK_REALS..], &chi1);
    let mut out = [0.0; 24];
    for i in 0..6 {
        let (u, l) = (o0[i] + o1[i], o0[i] - o1[i]);
        let (s, c) = (i / 3, i % 3);
        out[2 * (3 * s + c)] = u.re;
        out[2 * (3 * s + c) + 1] = u.im;
        out[2 * (3 * (s + 2) + c)] = l.re;
        out[2 * (3 * (s + 2) + c) + 1] = l.im;
    }
    out
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)] // dense spin algebra
mod tests {
    use super::*;
    use crate::clover::CloverField;

    #[test]
    fn the_basis_change_is_block_diagonal() {
        // W = T S has no γ5-mixing part: its off-diagonal 2×2 blocks vanish.
        let t = gamma::ukqcd_to_degrand_rossi();
        let s = |i: usize, j: usize| -> f64 {
            if i % 2 != j % 2 {
                0.0
            } else if i >= 2 && j >= 2 {
                -0.5
            } else {
                0.5
            }
        };
        for i in 0..4 {
            for j in 0..4 {
                let w: C64 = (0..4).map(|k| t[i][k] * s(k, j)).sum();
                if (i < 2) != (j < 2) {
                    assert!(w.norm() < 1e-15, "W[{i}][{j}] = {w}");
                }
            }
        }
    }

    #[test]
    fn stored_site_applies_the_degrand_rossi_blocks() {
        // A generic Hermitian site, applied through the storage basis to a
        // UKQCD spinor, equals T† B T ψ.
        let mut blocks = [super::super::unit_block(); 2];
        for (k, b) in blocks.iter_mut().enumerate() {
            for i in 0..6 {
                b[i][i] = C64::new(1.0 + 0.1 * (i + k) as f64, 0.0);
                for j in 0..i {
                    let z = C64::new(
                        0.2 * ((i * 5 + j + k) as f64).sin(),
                        0.1 * ((i + 2 * j) as f64).cos(),
                    );
                    b[i][j] = z;
                    b[j][i] = z.conj();
                }
            }
        }
        let stored = storage_site(&blocks);
        let psi: [f64; 24] = std::array::from_fn(|i| ((i * 13 % 7) as f64 - 3.0) * 0.3);
        let got = apply_storage_site(&stored, &psi);

        let t = gamma::ukqcd_to_degrand_rossi();
        let zu: Vec<C64> = (0..12)
            .map(|i| C64::new(psi[2 * i], psi[2 * i + 1]))
            .collect();
        // ψ_DR[spin][c] = Σ_s T[spin][s] ψ_U[s][c]
        let dr: Vec<C64> = (0..12)
            .map(|i| (0..4).map(|s| t[i / 3][s] * zu[3 * s + i % 3]).sum())
            .collect();
        let adr = CloverField::apply_site_degrand_rossi(&blocks, &dr);
        for i in 0..12 {
            let want: C64 = (0..4)
                .map(|s| t[s][i / 3].conj() * adr[3 * s + i % 3])
                .sum();
            let g = C64::new(got[2 * i], got[2 * i + 1]);
            assert!((g - want).norm() < 1e-14, "component {i}: {g} vs {want}");
        }
    }
}
