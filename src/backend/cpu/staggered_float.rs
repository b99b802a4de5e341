//! The staggered hopping term's fast path (`staggered::dslash`): links of
//! 18 reals and colour vectors stored as plain floats of one type (double
//! or single), read as slices with no per-site format dispatch, the loop
//! monomorphised for the type. The arithmetic is `staggered::hop_site`'s,
//! operation for operation (the same products, sums and order, no fused
//! multiply-adds), so the two paths give bitwise the same numbers and a
//! partitioned lattice may mix them (this path inside, the faces' path on
//! the sites whose hops leave the rank).
//!
//! Issue 34 measured the general path at 3.5× the time per CG iteration of
//! MILC's C code; docs/performance.md has this path's numbers.

use super::floats::{Float, Floats, FloatsMut};
use super::halo::Region;

/// Neighbour tables of one parity's hops: `[mu][forward, backward][cb]`.
pub(super) type Hops<'a> = [[&'a [u32]; 2]; 4];

/// The operands of `out = a · D_{p,p̄} inp + b · x` as stored.
pub(super) struct Operands<'a> {
    /// Parity of the output sites (0 even, 1 odd); sites per parity.
    pub parity: usize,
    pub vh: usize,
    /// One-hop and, improved, three-hop neighbours of the output parity.
    pub one: Hops<'a>,
    pub three: Option<Hops<'a>>,
    /// Links at `((parity · Vh + cb) · 4 + mu) · 18`.
    pub fat: Floats<'a>,
    pub long: Option<Floats<'a>>,
    /// The other parity's colour vectors, 6 reals a site.
    pub inp: Floats<'a>,
    pub a: f64,
    pub x: Option<(f64, Floats<'a>)>,
}

/// Computes the sites `first..` of `out` (a chunk, 6 reals a site) that
/// `region` names, if every operand is a float slice of `out`'s type;
/// `false` (nothing written) otherwise, for the general path. No hop may
/// leave the rank from those sites (the caller's `region`).
pub(super) fn chunk(ops: &Operands, region: Region, first: usize, out: FloatsMut) -> bool {
    match out {
        FloatsMut::F64(o) => typed::<f64>(ops, region, first, o),
        FloatsMut::F32(o) => typed::<f32>(ops, region, first, o),
    }
}

/// Compiled also for AVX2 and AVX-512, chosen at run time by the CPU
/// (`multiversion`): the wider vectors take 25-45% off the time of the
/// baseline x86-64 build (docs/performance.md). No fused multiply-adds are
/// formed (Rust does not contract), so every version gives the same bits.
#[multiversion::multiversion(targets("x86_64+avx2+fma+avx"))]
fn typed<T: Float>(ops: &Operands, region: Region, first: usize, out: &mut [T]) -> bool {
    let (Some(fat), Some(inp)) = (T::slice(ops.fat), T::slice(ops.inp)) else {
        return false;
    };
    let long = match (ops.long, ops.three) {
        (Some(l), Some(three)) => match T::slice(l) {
            Some(l) => Some((l, three)),
            None => return false,
        },
        (None, None) => None,
        _ => return false,
    };
    let x = match ops.x {
        Some((b, x)) => match T::slice(x) {
            Some(x) => Some((b, x)),
            None => return false,
        },
        None => None,
    };
    let q = 1 - ops.parity;
    let here = |cb: usize, mu: usize| (ops.parity * ops.vh + cb) * 4 + mu;
    let there = |cb: usize, mu: usize| (q * ops.vh + cb) * 4 + mu;
    for (k, o) in out.chunks_exact_mut(6).enumerate() {
        let cb = first + k;
        if !region.has(cb) {
            continue;
        }
        let mut acc = [0.0f64; 6];
        for mu in 0..4 {
            let [fwd, bwd] = ops.one[mu].map(|t| t[cb] as usize);
            mul_add(link(fat, here(cb, mu)), &vector(inp, fwd), &mut acc);
            adj_mul_sub(link(fat, there(bwd, mu)), &vector(inp, bwd), &mut acc);
            if let Some((long, three)) = long {
                let [fwd3, bwd3] = three[mu].map(|t| t[cb] as usize);
                mul_add(link(long, here(cb, mu)), &vector(inp, fwd3), &mut acc);
                adj_mul_sub(link(long, there(bwd3, mu)), &vector(inp, bwd3), &mut acc);
            }
        }
        let mut v = acc.map(|d| ops.a * d);
        if let Some((b, x)) = x {
            let xs = vector(x, cb);
            for i in 0..6 {
                v[i] += b * xs[i];
            }
        }
        for (o, v) in o.iter_mut().zip(v) {
            *o = T::put(v);
        }
    }
    true
}

#[inline(always)]
fn vector<T: Float>(v: &[T], site: usize) -> [f64; 6] {
    let s: &[T; 6] = v[site * 6..site * 6 + 6].try_into().expect("6 reals");
    s.map(T::get)
}

#[inline(always)]
fn link<T: Float>(u: &[T], index: usize) -> [f64; 18] {
    let s: &[T; 18] = u[index * 18..index * 18 + 18].try_into().expect("18 reals");
    s.map(T::get)
}

/// `acc += U v`: row `r` as `su3::Su3::mul_vec` sums it, `(U_r0 v_0 +
/// U_r1 v_1) + U_r2 v_2` in complex arithmetic.
#[inline(always)]
fn mul_add(u: [f64; 18], v: &[f64; 6], acc: &mut [f64; 6]) {
    for r in 0..3 {
        let m = |c: usize| (u[6 * r + 2 * c], u[6 * r + 2 * c + 1]);
        let prod = |c: usize| {
            let (ur, ui) = m(c);
            (
                ur * v[2 * c] - ui * v[2 * c + 1],
                ur * v[2 * c + 1] + ui * v[2 * c],
            )
        };
        let (p0, p1, p2) = (prod(0), prod(1), prod(2));
        acc[2 * r] += (p0.0 + p1.0) + p2.0;
        acc[2 * r + 1] += (p0.1 + p1.1) + p2.1;
    }
}

/// `acc −= U† v`, as `su3::Su3::adj_mul_vec` sums it.
#[inline(always)]
fn adj_mul_sub(u: [f64; 18], v: &[f64; 6], acc: &mut [f64; 6]) {
    for r in 0..3 {
        // (U†)_{rc} = conj(U_{cr}).
        let prod = |c: usize| {
            let (ur, ui) = (u[6 * c + 2 * r], u[6 * c + 2 * r + 1]);
            (
                ur * v[2 * c] + ui * v[2 * c + 1],
                ur * v[2 * c + 1] - ui * v[2 * c],
            )
        };
        let (p0, p1, p2) = (prod(0), prod(1), prod(2));
        acc[2 * r] -= (p0.0 + p1.0) + p2.0;
        acc[2 * r + 1] -= (p0.1 + p1.1) + p2.1;
    }
}
