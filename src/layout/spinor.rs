//! Host Wilson spinor orders ↔ the canonical `field::HostSpinor`, with the
//! change of gamma basis.
//!
//! Follows docs/conventions.md, "Host spinor (color-spinor) orders" and "Gamma
//! matrices": 4 spins × 3 colours complex numbers ((re, im) pairs) per site;
//! DIRAC order: even-odd sites, spin outer, colour inner; QDP order: even-odd
//! sites, colour outer, spin inner; CPS order: odd sites first, then even,
//! spin outer, colour inner. A single-parity field holds the `Vh` sites of
//! its parity in cb order, the same for every order (CPS included).
//!
//! The canonical field is in the UKQCD basis, `[site][spin][colour]`, sites
//! in even-odd order. DeGrand–Rossi host data is rotated on the way in by
//! `ψ_UKQCD = T† ψ_DR` and on the way out by `ψ_DR = T ψ_UKQCD`, with `T`
//! from `gamma.rs`; UKQCD host data is copied. The rotation is irrational
//! (entries ±1/√2), so a DeGrand–Rossi round trip is exact only to a few
//! ulp; everything else is a permutation and round-trips bit for bit.

use std::sync::Arc;

use num_complex::Complex64 as C64;
use rayon::prelude::*;

use super::{DiracOrder, GammaBasis, HostReals, HostRealsMut};
use crate::error::Result;
use crate::field::{HostSpinor, SPINOR_COMPLEX, SPINOR_REALS};
use crate::format::Float;
use crate::gamma::{self, SpinMatrix};
use crate::invalid;
use crate::lattice::{Lattice, Parity, Subset};

fn order_name(order: DiracOrder) -> &'static str {
    match order {
        DiracOrder::Dirac => "DIRAC",
        DiracOrder::Qdp => "QDP",
        DiracOrder::CpsWilson => "CPS",
    }
}

/// `perm[spin·3 + colour]` = complex index of that component within a host
/// site.
fn site_permutation(order: DiracOrder) -> [usize; SPINOR_COMPLEX] {
    std::array::from_fn(|k| {
        let (spin, color) = (k / 3, k % 3);
        match order {
            DiracOrder::Dirac | DiracOrder::CpsWilson => spin * 3 + color,
            DiracOrder::Qdp => color * 4 + spin,
        }
    })
}

/// Host site of canonical site `i` (and, being an involution, the converse).
/// Only a full CPS field differs: its halves are swapped.
#[inline(always)]
fn host_site(i: usize, order: DiracOrder, subset: Subset, vh: usize) -> usize {
    match (order, subset) {
        (DiracOrder::CpsWilson, Subset::Full) => {
            if i < vh {
                i + vh
            } else {
                i - vh
            }
        }
        _ => i,
    }
}

/// Parity and cb index of canonical site `i`.
fn parity_cb(i: usize, subset: Subset, vh: usize) -> (Parity, usize) {
    match subset {
        Subset::Full => (Parity::from_index(i / vh), i % vh),
        Subset::Single(p) => (p, i),
    }
}

/// `out[s][c] = Σ_k m[s][k] z[k][c]`: the spin matrix on each colour.
#[inline(always)]
fn spin_rotate(m: &SpinMatrix, z: &[C64; SPINOR_COMPLEX]) -> [C64; SPINOR_COMPLEX] {
    std::array::from_fn(|k| {
        let (s, c) = (k / 3, k % 3);
        m[s][0] * z[c] + m[s][1] * z[3 + c] + m[s][2] * z[6 + c] + m[s][3] * z[9 + c]
    })
}

/// Returns the smallest host site index of a site with a non-finite
/// number. Parallel over the canonical sites (a 32³×64 field is 50 million
/// reals: single-threaded, this reordering cost more than a mixed solve).
fn read_sites<T: Float>(
    src: &[T],
    dst: &mut HostSpinor,
    order: DiracOrder,
    rotation: Option<&SpinMatrix>,
    scale: (f64, f64),
) -> std::result::Result<(), usize> {
    let subset = dst.subset();
    let vh = dst.lattice().half_volume();
    let perm = site_permutation(order);
    let bad = dst
        .data_mut()
        .par_chunks_exact_mut(SPINOR_COMPLEX)
        .enumerate()
        .filter_map(|(i, out)| {
            let h = host_site(i, order, subset, vh);
            let s = &src[h * SPINOR_REALS..(h + 1) * SPINOR_REALS];
            // The power-of-two scale first (exact), then the rotation.
            let z: [C64; SPINOR_COMPLEX] = std::array::from_fn(|k| {
                let (re, im) = (s[2 * perm[k]].to_f64(), s[2 * perm[k] + 1].to_f64());
                C64::new(re * scale.0 * scale.1, im * scale.0 * scale.1)
            });
            if !z.iter().all(|w| w.re.is_finite() && w.im.is_finite()) {
                return Some(h);
            }
            out.copy_from_slice(&match rotation {
                Some(m) => spin_rotate(m, &z),
                None => z,
            });
            None
        })
        .min();
    bad.map_or(Ok(()), Err)
}

/// The converse of `read_sites`, parallel over the host sites (`host_site`
/// is an involution, so each host site knows its canonical one).
fn write_sites<T: Float>(
    src: &HostSpinor,
    dst: &mut [T],
    order: DiracOrder,
    rotation: Option<&SpinMatrix>,
    scale: (f64, f64),
) {
    let subset = src.subset();
    let vh = src.lattice().half_volume();
    let perm = site_permutation(order);
    let data = src.data();
    dst.par_chunks_exact_mut(SPINOR_REALS)
        .enumerate()
        .for_each(|(h, d)| {
            let i = host_site(h, order, subset, vh);
            let mut z = [C64::new(0.0, 0.0); SPINOR_COMPLEX];
            z.copy_from_slice(&data[i * SPINOR_COMPLEX..(i + 1) * SPINOR_COMPLEX]);
            if let Some(m) = rotation {
                z = spin_rotate(m, &z);
            }
            for (k, w) in z.iter().enumerate() {
                d[2 * perm[k]] = T::from_f64(w.re * scale.0 * scale.1);
                d[2 * perm[k] + 1] = T::from_f64(w.im * scale.0 * scale.1);
            }
        });
}

fn subset_name(subset: Subset) -> &'static str {
    match subset {
        Subset::Full => "full",
        Subset::Single(Parity::Even) => "even-parity",
        Subset::Single(Parity::Odd) => "odd-parity",
    }
}

/// Reads a host spinor of `subset` (V sites, or Vh of one parity) into the
/// canonical order and the UKQCD basis.
///
/// Errors (`InvalidArgument`): the array does not hold `sites·24` reals, or
/// it holds a NaN/Inf (the message names the site).
pub fn import(
    lattice: &Arc<Lattice>,
    subset: Subset,
    order: DiracOrder,
    basis: GammaBasis,
    host: HostReals,
) -> Result<HostSpinor> {
    import_scaled(lattice, subset, order, basis, host, 0)
}

/// `import`, multiplying the host numbers by `2^exp` (exactly, before the
/// basis change, so that neither overflows nor loses a subnormal field:
/// see `layout::normalising_exponent`).
pub fn import_scaled(
    lattice: &Arc<Lattice>,
    subset: Subset,
    order: DiracOrder,
    basis: GammaBasis,
    host: HostReals,
    exp: i32,
) -> Result<HostSpinor> {
    check_len(lattice.sites(subset), subset, order, host.len())?;
    let rotation = rotation_in(basis);
    let mut field = HostSpinor::try_zeros(lattice.clone(), subset)?;
    let factors = super::power_of_two_factors(exp);
    let read = match host {
        HostReals::F64(s) => read_sites(s, &mut field, order, rotation.as_ref(), factors),
        HostReals::F32(s) => read_sites(s, &mut field, order, rotation.as_ref(), factors),
    };
    if let Err(h) = read {
        return Err(non_finite_error(lattice, subset, order, h));
    }
    Ok(field)
}

/// The basis change of host data in `basis` into the UKQCD basis (None:
/// already in it).
pub(crate) fn rotation_in(basis: GammaBasis) -> Option<SpinMatrix> {
    match basis {
        GammaBasis::DegrandRossi => Some(gamma::degrand_rossi_to_ukqcd()),
        GammaBasis::Chiral => Some(gamma::chiral_to_ukqcd()),
        GammaBasis::Ukqcd => None,
    }
}

/// The basis change from the UKQCD basis out to `basis`.
pub(crate) fn rotation_out(basis: GammaBasis) -> Option<SpinMatrix> {
    match basis {
        GammaBasis::DegrandRossi => Some(gamma::ukqcd_to_degrand_rossi()),
        // Its own inverse.
        GammaBasis::Chiral => Some(gamma::chiral_to_ukqcd()),
        GammaBasis::Ukqcd => None,
    }
}

/// The error of a host array of `len` reals for a field of `sites` sites.
pub(crate) fn check_len(sites: usize, subset: Subset, order: DiracOrder, len: usize) -> Result<()> {
    let expected = sites * SPINOR_REALS;
    if len != expected {
        return invalid!(
            "{} spinor array ({} field) has {len} reals, expected {sites} sites * 24 = {expected}",
            order_name(order),
            subset_name(subset),
        );
    }
    Ok(())
}

/// The error of a host output array of `len` reals for `sites` sites.
pub(crate) fn check_out_len(
    sites: usize,
    subset: Subset,
    order: DiracOrder,
    len: usize,
) -> Result<()> {
    let expected = sites * SPINOR_REALS;
    if len != expected {
        return invalid!(
            "{} spinor output ({} field) has {len} reals, expected {sites} sites * 24 = {expected}",
            order_name(order),
            subset_name(subset),
        );
    }
    Ok(())
}

/// The error of a non-finite number at host site `h`, naming the site.
pub(crate) fn non_finite_error(
    lattice: &Lattice,
    subset: Subset,
    order: DiracOrder,
    h: usize,
) -> crate::error::Error {
    let vh = lattice.half_volume();
    let i = host_site(h, order, subset, vh);
    let (p, cb) = parity_cb(i, subset, vh);
    let x = lattice.coords(p, cb);
    crate::error::Error::InvalidArgument(format!(
        "{} spinor ({} field): host site {h} = (x, y, z, t) ({}, {}, {}, {}) \
         ({p:?} parity, cb {cb}) holds a non-finite number (NaN or Inf)",
        order_name(order),
        subset_name(subset),
        x[0],
        x[1],
        x[2],
        x[3]
    ))
}

/// Writes the canonical field in a host order and basis. `out` must hold
/// `sites·24` reals; if it does not, the error (`InvalidArgument`) comes
/// before anything is written.
pub fn export(
    field: &HostSpinor,
    order: DiracOrder,
    basis: GammaBasis,
    out: HostRealsMut,
) -> Result<()> {
    export_scaled(field, order, basis, out, 0)
}

/// `export`, multiplying by `2^exp` after the basis change. Refuses, with
/// nothing written, a field that would not fit the host precision (the
/// rotation can grow a component by √2).
pub fn export_scaled(
    field: &HostSpinor,
    order: DiracOrder,
    basis: GammaBasis,
    out: HostRealsMut,
    exp: i32,
) -> Result<()> {
    check_out_len(field.sites(), field.subset(), order, out.len())?;
    let rotation = rotation_out(basis);
    check_export_range(field, &out, exp)?;
    let factors = super::power_of_two_factors(exp);
    match out {
        HostRealsMut::F64(d) => write_sites(field, d, order, rotation.as_ref(), factors),
        HostRealsMut::F32(d) => write_sites(field, d, order, rotation.as_ref(), factors),
    }
    Ok(())
}

/// Whether `export_scaled(field, …, out, exp)` fits `out`'s precision (the
/// basis change can grow a component by √2): the check it makes before
/// writing anything, for callers that export several fields all or none.
pub fn check_export_range(field: &HostSpinor, out: &HostRealsMut, exp: i32) -> Result<()> {
    check_range(field.max_abs(), out, exp)
}

/// `check_export_range` for a field whose largest |component| is `max`.
pub(crate) fn check_range(max: f64, out: &HostRealsMut, exp: i32) -> Result<()> {
    let largest = match out {
        HostRealsMut::F64(_) => f64::MAX,
        HostRealsMut::F32(_) => f32::MAX as f64,
    };
    if max == 0.0 {
        return Ok(());
    }
    // log2 of the largest component after the rotation and the scale.
    let grown = (max * std::f64::consts::SQRT_2).log2() + exp as f64;
    if !grown.is_finite() || grown >= largest.log2() {
        return invalid!(
            "the result exceeds the range of the host precision (|x| up to 2^{grown:.1} > \
             {largest:e}): scale the source down"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    /// splitmix64: deterministic, dependency-free.
    struct Rng(u64);
    impl Rng {
        fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        /// Uniform in [-1, 1).
        fn real(&mut self) -> f64 {
            (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        }
        fn reals(&mut self, n: usize) -> Vec<f64> {
            (0..n).map(|_| self.real()).collect()
        }
    }

    fn lattice() -> Arc<Lattice> {
        Arc::new(Lattice::new([4, 6, 2, 8]).unwrap())
    }

    const ORDERS: [DiracOrder; 3] = [DiracOrder::Dirac, DiracOrder::Qdp, DiracOrder::CpsWilson];
    const SUBSETS: [Subset; 3] = [
        Subset::Full,
        Subset::Single(Parity::Even),
        Subset::Single(Parity::Odd),
    ];
    const BASES: [GammaBasis; 3] = [
        GammaBasis::Ukqcd,
        GammaBasis::DegrandRossi,
        GammaBasis::Chiral,
    ];

    fn export_f64(f: &HostSpinor, order: DiracOrder, basis: GammaBasis) -> Vec<f64> {
        let mut out = vec![f64::NAN; f.sites() * 24];
        export(f, order, basis, HostRealsMut::F64(&mut out)).unwrap();
        out
    }

    fn random_field(lat: &Arc<Lattice>, subset: Subset, rng: &mut Rng) -> HostSpinor {
        let mut f = HostSpinor::zeros(lat.clone(), subset);
        for z in f.data_mut() {
            *z = C64::new(rng.real(), rng.real());
        }
        f
    }

    #[test]
    fn round_trip_double() {
        let lat = lattice();
        let mut rng = Rng(11);
        for order in ORDERS {
            for subset in SUBSETS {
                for basis in BASES {
                    let host = rng.reals(lat.sites(subset) * 24);
                    let f = import(&lat, subset, order, basis, HostReals::F64(&host)).unwrap();
                    let back = export_f64(&f, order, basis);
                    if basis == GammaBasis::Ukqcd {
                        assert_eq!(back, host, "{order:?} {subset:?}");
                    } else {
                        for (a, b) in back.iter().zip(&host) {
                            assert!((a - b).abs() < 4e-16, "{order:?} {subset:?}: {a} {b}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn round_trip_single() {
        let lat = lattice();
        let mut rng = Rng(12);
        for order in ORDERS {
            for subset in SUBSETS {
                for basis in BASES {
                    let host: Vec<f32> = rng
                        .reals(lat.sites(subset) * 24)
                        .iter()
                        .map(|&x| x as f32)
                        .collect();
                    let f = import(&lat, subset, order, basis, HostReals::F32(&host)).unwrap();
                    let mut back = vec![f32::NAN; host.len()];
                    export(&f, order, basis, HostRealsMut::F32(&mut back)).unwrap();
                    if basis == GammaBasis::Ukqcd {
                        assert_eq!(back, host);
                    } else {
                        for (a, b) in back.chunks(24).zip(host.chunks(24)) {
                            let norm = b.iter().map(|x| x * x).sum::<f32>().sqrt();
                            for (x, y) in a.iter().zip(b) {
                                assert!(
                                    (x - y).abs() <= 1e-7 * norm,
                                    "{order:?} {subset:?}: {x} {y}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// `T (γ^UK_μ ψ) = γ^DR_μ (T ψ)`, checked through `export`, and
    /// `T† (γ^DR_μ χ) = γ^UK_μ (T† χ)` through `import`.
    #[test]
    fn basis_change_maps_gammas() {
        let lat = lattice();
        let mut rng = Rng(13);
        let psi = random_field(&lat, Subset::Full, &mut rng);
        let apply = |m: &SpinMatrix, f: &HostSpinor| {
            let mut g = f.clone();
            for site in g.data_mut().chunks_exact_mut(12) {
                let z: [C64; 12] = std::array::from_fn(|k| site[k]);
                site.copy_from_slice(&spin_rotate(m, &z));
            }
            g
        };
        let as_field = |host: &[f64]| {
            let mut f = HostSpinor::zeros(lat.clone(), Subset::Full);
            for (z, p) in f.data_mut().iter_mut().zip(host.chunks(2)) {
                *z = C64::new(p[0], p[1]);
            }
            f
        };
        let max_diff = |a: &HostSpinor, b: &HostSpinor| {
            a.data()
                .iter()
                .zip(b.data())
                .map(|(x, y)| (x - y).norm())
                .fold(0.0, f64::max)
        };
        let t_psi = as_field(&export_f64(
            &psi,
            DiracOrder::Dirac,
            GammaBasis::DegrandRossi,
        ));
        for mu in 1..=5 {
            let lhs = as_field(&export_f64(
                &apply(&gamma::ukqcd(mu), &psi),
                DiracOrder::Dirac,
                GammaBasis::DegrandRossi,
            ));
            let rhs = apply(&gamma::degrand_rossi(mu), &t_psi);
            assert!(max_diff(&lhs, &rhs) < 1e-15, "export, gamma_{mu}");

            // Inverse direction: a DR host spinor γ^DR χ imports as γ^UK (T† χ).
            let chi_host = export_f64(&t_psi, DiracOrder::Dirac, GammaBasis::Ukqcd);
            let g_chi = export_f64(&rhs, DiracOrder::Dirac, GammaBasis::Ukqcd);
            let a = import(
                &lat,
                Subset::Full,
                DiracOrder::Dirac,
                GammaBasis::DegrandRossi,
                HostReals::F64(&g_chi),
            )
            .unwrap();
            let chi = import(
                &lat,
                Subset::Full,
                DiracOrder::Dirac,
                GammaBasis::DegrandRossi,
                HostReals::F64(&chi_host),
            )
            .unwrap();
            assert!(
                max_diff(&a, &apply(&gamma::ukqcd(mu), &chi)) < 1e-15,
                "import, gamma_{mu}"
            );
            assert!(max_diff(&chi, &psi) < 1e-15);
        }
    }

    #[test]
    fn hand_placed_components_land_where_conventions_say() {
        let lat = lattice();
        let [nx, ny, nz, _] = lat.dims();
        let vh = lat.half_volume();
        let x = [1usize, 4, 1, 3];
        let parity = (x[0] + x[1] + x[2] + x[3]) % 2;
        let cb = (x[0] + nx * (x[1] + ny * (x[2] + nz * x[3]))) / 2;
        assert_eq!((parity, cb), (1, 92));
        let (spin, color) = (2usize, 1usize);
        for order in ORDERS {
            for subset in [Subset::Full, Subset::Single(Parity::Odd)] {
                // Host site, written out from docs/conventions.md.
                let h = match (order, subset) {
                    (DiracOrder::CpsWilson, Subset::Full) => cb, // odd sites first
                    (_, Subset::Full) => vh + cb,
                    _ => cb,
                };
                let within = match order {
                    DiracOrder::Qdp => color * 4 + spin,
                    _ => spin * 3 + color,
                };
                let mut host = vec![0.0; lat.sites(subset) * 24];
                host[h * 24 + 2 * within] = 0.75;
                host[h * 24 + 2 * within + 1] = -0.125;
                let f = import(
                    &lat,
                    subset,
                    order,
                    GammaBasis::Ukqcd,
                    HostReals::F64(&host),
                )
                .unwrap();
                let i = match subset {
                    Subset::Full => lat.eo_index(x),
                    _ => lat.cb_index(x),
                };
                for (j, z) in f.data().iter().enumerate() {
                    if j == i * 12 + spin * 3 + color {
                        assert_eq!(*z, C64::new(0.75, -0.125));
                    } else {
                        assert_eq!(*z, C64::new(0.0, 0.0), "{order:?} {subset:?} at {j}");
                    }
                }
            }
        }
    }

    #[test]
    fn cps_puts_odd_sites_first() {
        let lat = lattice();
        let vh = lat.half_volume();
        let mut host = vec![0.0; lat.volume() * 24];
        host[0] = 1.0; // host site 0: odd cb 0
        host[vh * 24 + 1] = 2.0; // host site Vh: even cb 0
        let f = import(
            &lat,
            Subset::Full,
            DiracOrder::CpsWilson,
            GammaBasis::Ukqcd,
            HostReals::F64(&host),
        )
        .unwrap();
        assert_eq!(f.site(vh)[0], C64::new(1.0, 0.0));
        assert_eq!(f.site(0)[0], C64::new(0.0, 2.0));
        assert_eq!(lat.coords(Parity::Odd, 0), [1, 0, 0, 0]);
        // The same array as DIRAC order reads the other way round.
        let g = import(
            &lat,
            Subset::Full,
            DiracOrder::Dirac,
            GammaBasis::Ukqcd,
            HostReals::F64(&host),
        )
        .unwrap();
        assert_eq!(g.site(0)[0], C64::new(1.0, 0.0));
        assert_eq!(g.site(vh)[0], C64::new(0.0, 2.0));
    }

    #[test]
    fn wrong_length_is_refused_and_nothing_written() {
        let lat = lattice();
        let v = lat.volume();
        let host = vec![0.0; v * 24];
        for subset in [Subset::Single(Parity::Even), Subset::Single(Parity::Odd)] {
            match import(
                &lat,
                subset,
                DiracOrder::Dirac,
                GammaBasis::Ukqcd,
                HostReals::F64(&host),
            ) {
                Err(Error::InvalidArgument(m)) => {
                    assert!(
                        m.contains(&format!("{}", v * 12)) && m.contains(&format!("{}", v * 24)),
                        "{m}"
                    )
                }
                r => panic!("{r:?}"),
            }
        }
        let f = HostSpinor::zeros(lat.clone(), Subset::Full);
        let mut out = vec![3.0f32; v * 24 - 1];
        let r = export(
            &f,
            DiracOrder::Qdp,
            GammaBasis::DegrandRossi,
            HostRealsMut::F32(&mut out),
        );
        assert!(matches!(r, Err(Error::InvalidArgument(_))));
        assert!(out.iter().all(|&x| x == 3.0));
        let mut out = vec![3.0; v * 12];
        let r = export(
            &f,
            DiracOrder::Dirac,
            GammaBasis::Ukqcd,
            HostRealsMut::F64(&mut out),
        );
        assert!(matches!(r, Err(Error::InvalidArgument(_))));
        assert!(out.iter().all(|&x| x == 3.0));
    }

    #[test]
    fn nan_is_refused_naming_the_site() {
        let lat = lattice();
        let x = [3usize, 2, 0, 6];
        for order in ORDERS {
            for subset in SUBSETS {
                // Host site of x: CPS swaps the halves of a full field.
                let h = match subset {
                    Subset::Full => host_site(lat.eo_index(x), order, subset, lat.half_volume()),
                    Subset::Single(p) if p == lat.parity_of(x) => lat.cb_index(x),
                    Subset::Single(_) => continue,
                };
                let mut host = vec![0.0f32; lat.sites(subset) * 24];
                host[h * 24 + 13] = f32::NAN;
                match import(
                    &lat,
                    subset,
                    order,
                    GammaBasis::DegrandRossi,
                    HostReals::F32(&host),
                ) {
                    Err(Error::InvalidArgument(m)) => assert!(m.contains("(3, 2, 0, 6)"), "{m}"),
                    r => panic!("{r:?}"),
                }
                host[h * 24 + 13] = f32::INFINITY;
                assert!(matches!(
                    import(
                        &lat,
                        subset,
                        order,
                        GammaBasis::Ukqcd,
                        HostReals::F32(&host)
                    ),
                    Err(Error::InvalidArgument(_))
                ));
            }
        }
    }
}
