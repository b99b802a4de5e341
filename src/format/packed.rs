//! The packed shared-exponent formats of seed clark2022 (§4 and Appendix
//! A), one site at a time: the `n` reals of a site (24 of a Wilson spinor,
//! 6 of a staggered colour vector) as signed `B`-bit integers (B = 20 or
//! 30) times one power-of-two scale `s` shared by the site, `x ≈ v · s`.
//!
//! The scale is the seed's "rounded up exponent": `s = 2^(e+1)` where `2^e`
//! is the power of two at or below `max|x| / M`, `M = 2^(B−1) − 1`, so every
//! `|x|/s < M` fits and the rounding error is at most `s/2 < max|x| / M`.
//! Storing only the 8-bit exponent (not an f32 norm as half does) frees the
//! bits that widen every component: a Wilson spinor in 20 bits fills 16
//! words (64 bytes), in 30 bits 23 words (92 bytes, less than single's 96);
//! a colour vector (the seed's Listings 2 and 3) 4 words (16 bytes, half's
//! size) and 6 words (24 bytes, single's).
//!
//! Layout of a site: one little-endian bit string over its words, component
//! k in bits `[kB, (k+1)B)`, then the biased exponent `e + 1 + 127` in the
//! next 8 bits (0 marks an all-zero site). As the seed advises, the bit
//! manipulation is on unsigned integers; the sign is restored by an
//! arithmetic shift.

use crate::field::SPINOR_REALS as SITE;
use crate::precision::Precision;

/// Exponent bias of the stored byte (as IEEE single).
const BIAS: i32 = 127;

/// Component width of a packed precision.
pub fn bits(p: Precision) -> u32 {
    match p {
        Precision::Packed20 => 20,
        Precision::Packed30 => 30,
        _ => unreachable!("{p:?} is not a packed format"),
    }
}

/// The packed precision of a component width.
pub fn precision(bits: u32) -> Precision {
    if bits == 20 {
        Precision::Packed20
    } else {
        Precision::Packed30
    }
}

/// 32-bit words per site of `reals` components and the exponent byte.
pub const fn words(bits: u32, reals: usize) -> usize {
    (reals * bits as usize + 8).div_ceil(32)
}

/// The largest magnitude stored, `2^(B−1) − 1`.
#[inline(always)]
fn max_int(bits: u32) -> f64 {
    ((1u64 << (bits - 1)) - 1) as f64
}

/// `2^e` as an f64 (e within the normal range).
#[inline(always)]
fn pow2(e: i32) -> f64 {
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// The `reals` (≤ 24) reals of site `i`, the rest of the array zero.
#[inline(always)]
pub fn load(bits: u32, reals: usize, w: &[u32], i: usize) -> [f64; SITE] {
    let n = words(bits, reals);
    let site = &w[i * n..(i + 1) * n];
    let mut out = [0.0; SITE];
    let exp_bit = reals * bits as usize;
    let stored = read_bits(site, exp_bit, 8) as i32;
    if stored == 0 {
        return out;
    }
    let s = pow2(stored - BIAS);
    let shift = 32 - bits;
    for (k, o) in out[..reals].iter_mut().enumerate() {
        let u = read_bits(site, k * bits as usize, bits);
        // Sign-extend the B-bit two's complement number.
        let v = ((u << shift) as i32) >> shift;
        *o = v as f64 * s;
    }
    out
}

/// Stores the reals `x` (as many as the site holds) at site `i`, rounding
/// to the nearest multiple of the site's scale.
#[inline(always)]
pub fn store(bits: u32, w: &mut [u32], i: usize, x: &[f64]) {
    let n = words(bits, x.len());
    let site = &mut w[i * n..(i + 1) * n];
    site.iter_mut().for_each(|v| *v = 0);
    let max = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let m = max_int(bits);
    let ratio = max / m;
    // An all-zero site, or one too small for the 8-bit exponent to scale
    // (below 2^-126 · M, far under any residual a solver iterates on), is
    // stored as zero.
    if ratio < pow2(-BIAS + 1) || !ratio.is_finite() {
        return;
    }
    // 2^e ≤ ratio < 2^(e+1), read off the f64 exponent; s = 2^(e+1).
    let e = ((ratio.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let e = (e + 1).min(BIAS);
    let inv = pow2(-e);
    let mask = if bits == 32 {
        u32::MAX
    } else {
        (1u32 << bits) - 1
    };
    for (k, v) in x.iter().enumerate() {
        let q = (v * inv).round().clamp(-m, m) as i32;
        write_bits(site, k * bits as usize, bits, q as u32 & mask);
    }
    write_bits(site, x.len() * bits as usize, 8, (e + BIAS) as u32);
}

/// The `len` bits at bit offset `at` of a little-endian word string.
#[inline(always)]
fn read_bits(w: &[u32], at: usize, len: u32) -> u32 {
    let (word, off) = (at / 32, (at % 32) as u32);
    let mut v = (w[word] as u64) >> off;
    if off + len > 32 {
        v |= (w[word + 1] as u64) << (32 - off);
    }
    (v & ((1u64 << len) - 1)) as u32
}

/// Writes the `len` low bits of `v` at bit offset `at` (the bits must be 0).
#[inline(always)]
fn write_bits(w: &mut [u32], at: usize, len: u32, v: u32) {
    let (word, off) = (at / 32, (at % 32) as u32);
    let v = v as u64 & ((1u64 << len) - 1);
    w[word] |= (v << off) as u32;
    if off + len > 32 {
        w[word + 1] |= (v >> (32 - off)) as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_the_seed_budget() {
        // Wilson, 20-bit: 24·20 + 8 bits in 16 words; 30-bit: 24·30 + 8 in 23.
        assert_eq!(words(20, SITE), 16);
        assert_eq!(words(30, SITE), 23);
        // Colour vectors (the seed's Listings 2 and 3): 6·20 + 8 = 128 bits,
        // half's 12 + 4 bytes; 6·30 + 8 = 188 bits in single's 24 bytes.
        assert_eq!(words(20, 6), 4);
        assert_eq!(words(30, 6), 6);
    }

    /// Extremes of the integer range and both signs survive the bit string
    /// (the words are shared between neighbouring components).
    #[test]
    fn extremes_and_signs_round_trip() {
        for (b, n) in [(20, SITE), (30, SITE), (20, 6), (30, 6)] {
            let m = max_int(b);
            let mut x = vec![0.0; n];
            for (k, v) in x.iter_mut().enumerate() {
                *v = match k % 4 {
                    0 => 1.0,
                    1 => -1.0,
                    2 => -0.5,
                    _ => 1.0 / m,
                };
            }
            let mut w = vec![0u32; words(b, n) * 2];
            store(b, &mut w, 1, &x);
            let y = load(b, n, &w, 1);
            assert_eq!(load(b, n, &w, 0), [0.0; SITE], "site 0 untouched");
            assert!(y[n..].iter().all(|&v| v == 0.0), "beyond the site's reals");
            for k in 0..n {
                // max = 1 → s = 2/M at most: error ≤ 1/M.
                assert!(
                    (x[k] - y[k]).abs() <= 1.0 / m,
                    "{b} bits, k {k}: {} vs {}",
                    x[k],
                    y[k]
                );
                assert_eq!(x[k].signum(), y[k].signum(), "{b} bits, k {k}");
            }
        }
    }

    /// The scale follows the site's magnitude over the 8-bit exponent's
    /// range, so the relative error holds from 1e-25 to 1e25; below
    /// 2^-126 · M a site underflows to zero (documented in `store`).
    #[test]
    fn dynamic_range() {
        for (b, n) in [(20, SITE), (30, SITE), (20, 6), (30, 6)] {
            let mut w = vec![0u32; words(b, n)];
            store(b, &mut w, 0, &vec![1e-40; n]);
            assert_eq!(load(b, n, &w, 0), [0.0; SITE], "{b} bits underflow");
            for e in [-25, -8, 0, 8, 25] {
                let scale = 10f64.powi(e);
                let x: Vec<f64> = (0..n).map(|k| scale * ((k as f64) * 0.37).sin()).collect();
                let mut w = vec![0u32; words(b, n)];
                store(b, &mut w, 0, &x);
                let y = load(b, n, &w, 0);
                let max = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                for k in 0..n {
                    assert!(
                        (x[k] - y[k]).abs() <= max / max_int(b),
                        "{b} bits, 1e{e}, k {k}"
                    );
                }
            }
        }
    }
}
