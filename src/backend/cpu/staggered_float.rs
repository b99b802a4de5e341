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

use super::floats::{Float, FloatVec, Floats, FloatsMut};
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
    /// The adjoints of the links of the backward hops, stored at the site
    /// they enter (`adjoint_behind`), in the same order.
    pub back: Behind<'a>,
    /// The other parity's colour vectors, 6 reals a site.
    pub inp: Floats<'a>,
    pub a: f64,
    pub x: Option<(f64, Floats<'a>)>,
}

/// The adjoint backward links of the fat and the long hops.
#[derive(Clone, Copy)]
pub(crate) struct Behind<'a> {
    pub fat: Floats<'a>,
    pub long: Option<Floats<'a>>,
}

/// `U_μ(x − d μ̂)†` of every site `x` of each parity, at the index of the
/// forward link `((parity · Vh + cb) · 4 + mu)`: the backward hops of a site
/// then read their links from one stream, beside its forward links, not
/// from the sites behind (MILC keeps its "back links" so, `generic_ks`).
/// `links` as `Operands::fat`; `behind[parity][mu]` the checkerboard index
/// of the site `d` hops behind. Conjugating is exact, so the hop's numbers
/// are the same. Where a lattice is cut, the links behind its edge sites
/// are not this rank's (those sites take the general path): they hold the
/// rank's own periodic neighbour's.
pub(crate) fn adjoint_behind(
    links: Floats,
    vh: usize,
    behind: [[&[u32]; 4]; 2],
) -> crate::error::Result<FloatVec> {
    fn of<T: Float>(u: &[T], vh: usize, behind: [[&[u32]; 4]; 2]) -> crate::error::Result<Vec<T>> {
        let what = "the adjoint backward staggered links";
        let mut out = crate::alloc::with_capacity(8 * vh * 18, what)?;
        for (p, tables) in behind.iter().enumerate() {
            for cb in 0..vh {
                for (mu, table) in tables.iter().enumerate() {
                    let at = (((1 - p) * vh + table[cb] as usize) * 4 + mu) * 18;
                    let m = &u[at..at + 18];
                    for r in 0..3 {
                        for c in 0..3 {
                            let k = 6 * c + 2 * r;
                            out.push(m[k]);
                            out.push(T::from_f64(-m[k + 1].to_f64()));
                        }
                    }
                }
            }
        }
        Ok(out)
    }
    Ok(match links {
        Floats::F64(u) => FloatVec::F64(of(u, vh, behind)?),
        Floats::F32(u) => FloatVec::F32(of(u, vh, behind)?),
    })
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

/// Compiled also for AVX2, chosen at run time by the CPU (`multiversion`;
/// docs/performance.md has what it gains). No fused multiply-adds are
/// formed (Rust does not contract), so every version gives the same bits.
#[multiversion::multiversion(targets("x86_64+avx2+fma+avx"))]
fn typed<T: Float>(ops: &Operands, region: Region, first: usize, out: &mut [T]) -> bool {
    let (Some(fat), Some(inp)) = (T::slice(ops.fat), T::slice(ops.inp)) else {
        return false;
    };
    let Some(back_fat) = T::slice(ops.back.fat) else {
        return false;
    };
    let long = match (ops.long, ops.three, ops.back.long) {
        (Some(l), Some(three), Some(bl)) => match (T::slice(l), T::slice(bl)) {
            (Some(l), Some(bl)) => Some((l, bl, three)),
            _ => return false,
        },
        (None, None, None) => None,
        _ => return false,
    };
    let x = match ops.x {
        Some((b, x)) => match T::slice(x) {
            Some(x) => Some((b, x)),
            None => return false,
        },
        None => None,
    };
    let here = |cb: usize, mu: usize| (ops.parity * ops.vh + cb) * 4 + mu;
    for (k, o) in out.chunks_exact_mut(6).enumerate() {
        let cb = first + k;
        if !region.has(cb) {
            continue;
        }
        let mut acc = [0.0f64; 6];
        for mu in 0..4 {
            let [fwd, bwd] = ops.one[mu].map(|t| t[cb] as usize);
            mul_acc::<false>(link(fat, here(cb, mu)), &vector(inp, fwd), &mut acc);
            mul_acc::<true>(link(back_fat, here(cb, mu)), &vector(inp, bwd), &mut acc);
            if let Some((long, back_long, three)) = long {
                let [fwd3, bwd3] = three[mu].map(|t| t[cb] as usize);
                mul_acc::<false>(link(long, here(cb, mu)), &vector(inp, fwd3), &mut acc);
                mul_acc::<true>(link(back_long, here(cb, mu)), &vector(inp, bwd3), &mut acc);
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
            *o = T::from_f64(v);
        }
    }
    true
}

#[inline(always)]
fn vector<T: Float>(v: &[T], site: usize) -> [f64; 6] {
    let s: &[T; 6] = v[site * 6..site * 6 + 6].try_into().expect("6 reals");
    s.map(T::to_f64)
}

#[inline(always)]
fn link<T: Float>(u: &[T], index: usize) -> [f64; 18] {
    let s: &[T; 18] = u[index * 18..index * 18 + 18].try_into().expect("18 reals");
    s.map(T::to_f64)
}

/// `acc += U v` (`SUB`: `acc −= U v`): row `r` as `su3::Su3::mul_vec` sums
/// it, `(U_r0 v_0 + U_r1 v_1) + U_r2 v_2` in complex arithmetic. With `U`
/// an adjoint backward link these are `su3::Su3::adj_mul_vec`'s numbers:
/// its products of `conj(U_cr)` differ from these only by exact sign flips.
#[inline(always)]
fn mul_acc<const SUB: bool>(u: [f64; 18], v: &[f64; 6], acc: &mut [f64; 6]) {
    for r in 0..3 {
        let prod = |c: usize| {
            let (ur, ui) = (u[6 * r + 2 * c], u[6 * r + 2 * c + 1]);
            (
                ur * v[2 * c] - ui * v[2 * c + 1],
                ur * v[2 * c + 1] + ui * v[2 * c],
            )
        };
        let (p0, p1, p2) = (prod(0), prod(1), prod(2));
        let (re, im) = ((p0.0 + p1.0) + p2.0, (p0.1 + p1.1) + p2.1);
        if SUB {
            acc[2 * r] -= re;
            acc[2 * r + 1] -= im;
        } else {
            acc[2 * r] += re;
            acc[2 * r + 1] += im;
        }
    }
}
