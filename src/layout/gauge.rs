//! Host gauge field orders ↔ the canonical `field::GaugeField`.
//!
//! Follows docs/conventions.md, "Host gauge field orders" and "Lattice, sites,
//! parity": every host order holds its sites in even-odd order (site index
//! `parity·Vh + cb`, `cb = (x + X(y + Y(z + Z t))) / 2`) and 18 reals per link
//! ((re, im) pairs). QDP keeps one array per direction μ = x, y, z, t; MILC
//! and CPS keep the four links of a site together (μ inner). QDP and MILC
//! links are row-major; CPS Wilson links are column-major, the transpose.
//!
//! The canonical field is `[parity][cb][mu]` with row-major `Su3`, so MILC is
//! the canonical order in the caller's precision. Links are copied as given:
//! no boundary sign (the backends apply it on upload) and no unitarity check
//! (smeared or general fields are legitimate input); only NaN/Inf is refused,
//! because it would poison every solve silently.

use std::sync::Arc;

use num_complex::Complex64 as C64;
use rayon::prelude::*;

use super::{GaugeOrder, HostGauge, HostReals, HostRealsMut};
use crate::error::Result;
use crate::field::GaugeField;
use crate::format::Float;
use crate::invalid;
use crate::lattice::{Lattice, Parity};
use crate::su3::Su3;

/// Reals per link: 3×3 complex.
pub const LINK_REALS: usize = 18;

/// Offset of the real part of `U[row][col]` within the 18 reals of a link.
#[inline(always)]
fn entry(row: usize, col: usize, col_major: bool) -> usize {
    if col_major {
        2 * (3 * col + row)
    } else {
        2 * (3 * row + col)
    }
}

/// Host array names, for error messages.
fn order_name(order: GaugeOrder) -> &'static str {
    match order {
        GaugeOrder::Qdp => "QDP",
        GaugeOrder::Milc => "MILC",
        GaugeOrder::CpsWilson => "CPS",
    }
}

/// Copies host links into `dst` (a parallel iterator over canonical links)
/// and returns the position, in iteration order, of the first non-finite
/// link. The check is done here while the link is in registers, so that a
/// valid field costs a single pass; the pass runs over links in parallel
/// (a 32³×64 field is 75 million reals).
fn read_links<'a, T: Float>(
    dst: impl IndexedParallelIterator<Item = &'a mut Su3>,
    src: &[T],
    col_major: bool,
) -> Option<usize> {
    dst.zip(src.par_chunks_exact(LINK_REALS))
        .enumerate()
        .filter_map(|(n, (u, s))| {
            for r in 0..3 {
                for c in 0..3 {
                    let k = entry(r, c, col_major);
                    u.0[r][c] = C64::new(s[k].to_f64(), s[k + 1].to_f64());
                }
            }
            (!u.is_finite()).then_some(n)
        })
        .min()
}

fn read_host<'a>(
    dst: impl IndexedParallelIterator<Item = &'a mut Su3>,
    src: HostReals,
    col_major: bool,
) -> Option<usize> {
    match src {
        HostReals::F64(s) => read_links(dst, s, col_major),
        HostReals::F32(s) => read_links(dst, s, col_major),
    }
}

fn write_links<'a, T: Float>(
    src: impl IndexedParallelIterator<Item = &'a Su3>,
    dst: &mut [T],
    col_major: bool,
) {
    src.zip(dst.par_chunks_exact_mut(LINK_REALS))
        .for_each(|(u, d)| {
            for r in 0..3 {
                for c in 0..3 {
                    let k = entry(r, c, col_major);
                    d[k] = T::from_f64(u.0[r][c].re);
                    d[k + 1] = T::from_f64(u.0[r][c].im);
                }
            }
        });
}

fn write_host<'a>(
    src: impl IndexedParallelIterator<Item = &'a Su3>,
    dst: &mut HostRealsMut,
    col_major: bool,
) {
    match dst {
        HostRealsMut::F64(d) => write_links(src, d, col_major),
        HostRealsMut::F32(d) => write_links(src, d, col_major),
    }
}

/// Number of host arrays and reals per array for `order` on `V` sites.
fn array_shape(order: GaugeOrder, volume: usize) -> (usize, usize) {
    match order {
        GaugeOrder::Qdp => (4, volume * LINK_REALS),
        GaugeOrder::Milc | GaugeOrder::CpsWilson => (1, 4 * volume * LINK_REALS),
    }
}

fn check_len(order: GaugeOrder, array: usize, actual: usize, expected: usize) -> Result<()> {
    if actual == expected {
        return Ok(());
    }
    let name = order_name(order);
    if order == GaugeOrder::Qdp {
        invalid!(
            "{name} gauge array {array} (mu = {array}) has {actual} reals, expected V*18 = {expected}"
        )
    } else {
        invalid!("{name} gauge array has {actual} reals, expected V*4*18 = {expected}")
    }
}

/// Reads a host gauge field into the canonical order.
///
/// Errors (`InvalidArgument`): an array of the wrong length (named, with the
/// expected and the actual length), or a NaN/Inf entry (the message names
/// the site coordinates and direction of the first such link in canonical
/// order, site-major with μ inner).
pub fn import(lattice: &Arc<Lattice>, host: &HostGauge) -> Result<GaugeField> {
    check_lengths(lattice, host)?;
    let order = host.order();
    let mut field = GaugeField::try_unit(lattice.clone())?;
    let links = field.links_mut();
    // Canonical index (site·4 + μ) of the first non-finite link.
    let first_bad = match *host {
        HostGauge::Qdp(arrays) => arrays
            .iter()
            .enumerate()
            .filter_map(|(mu, &a)| {
                read_host(links.par_iter_mut().skip(mu).step_by(4), a, false).map(|s| s * 4 + mu)
            })
            .min(),
        HostGauge::Milc(a) => read_host(links.par_iter_mut(), a, false),
        HostGauge::CpsWilson(a) => read_host(links.par_iter_mut(), a, true),
    };
    if let Some(j) = first_bad {
        let (site, mu) = (j / 4, j % 4);
        let vh = lattice.half_volume();
        let p = Parity::from_index(site / vh);
        let cb = site % vh;
        let x = lattice.coords(p, cb);
        let name = order_name(order);
        let at = match order {
            GaugeOrder::Qdp => format!("array {mu}, link {site}"),
            _ => format!("link {j}"),
        };
        return invalid!(
            "{name} gauge field: link at site (x, y, z, t) = ({}, {}, {}, {}), direction mu = {mu} \
             ({p:?} parity, cb {cb}; host {at}) is not finite (NaN or Inf)",
            x[0],
            x[1],
            x[2],
            x[3]
        );
    }
    Ok(field)
}

/// Refuses host arrays whose lengths do not fit the lattice (the error
/// names the order and the array).
pub fn check_lengths(lattice: &Lattice, host: &HostGauge) -> Result<()> {
    let order = host.order();
    let (_, expected) = array_shape(order, lattice.volume());
    match host {
        HostGauge::Qdp(arrays) => {
            for (mu, a) in arrays.iter().enumerate() {
                check_len(order, mu, a.len(), expected)?;
            }
            Ok(())
        }
        HostGauge::Milc(a) | HostGauge::CpsWilson(a) => check_len(order, 0, a.len(), expected),
    }
}

/// Writes the canonical field in a host order: `out` holds 4 arrays of
/// `V*18` reals for QDP (μ = x, y, z, t), one array of `V*4*18` for MILC and
/// CPS. On error (`InvalidArgument`: wrong number of arrays or a wrong
/// length) nothing is written.
pub fn export(field: &GaugeField, order: GaugeOrder, out: &mut [HostRealsMut<'_>]) -> Result<()> {
    let (arrays, expected) = array_shape(order, field.lattice().volume());
    if out.len() != arrays {
        return invalid!(
            "{} gauge export needs {arrays} output array(s), got {}",
            order_name(order),
            out.len()
        );
    }
    for (i, o) in out.iter().enumerate() {
        check_len(order, i, o.len(), expected)?;
    }
    let links = field.links();
    match order {
        GaugeOrder::Qdp => {
            for (mu, o) in out.iter_mut().enumerate() {
                write_host(links.par_iter().skip(mu).step_by(4), o, false);
            }
        }
        GaugeOrder::Milc => write_host(links.par_iter(), &mut out[0], false),
        GaugeOrder::CpsWilson => write_host(links.par_iter(), &mut out[0], true),
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

    // Non-cubic extents, so that a swapped dimension shows.
    fn lattice() -> Arc<Lattice> {
        Arc::new(Lattice::new([4, 6, 2, 8]).unwrap())
    }

    fn milc_to_qdp(milc: &[f64], v: usize) -> [Vec<f64>; 4] {
        std::array::from_fn(|mu| {
            (0..v)
                .flat_map(|s| {
                    milc[(s * 4 + mu) * 18..(s * 4 + mu + 1) * 18]
                        .iter()
                        .copied()
                })
                .collect()
        })
    }

    fn transpose_links(milc: &[f64]) -> Vec<f64> {
        let mut cps = vec![0.0; milc.len()];
        for (m, c) in milc.chunks_exact(18).zip(cps.chunks_exact_mut(18)) {
            for r in 0..3 {
                for col in 0..3 {
                    c[2 * (3 * col + r)] = m[2 * (3 * r + col)];
                    c[2 * (3 * col + r) + 1] = m[2 * (3 * r + col) + 1];
                }
            }
        }
        cps
    }

    fn export_vec(field: &GaugeField, order: GaugeOrder) -> Vec<Vec<f64>> {
        let v = field.lattice().volume();
        let (n, len) = array_shape(order, v);
        let mut bufs = vec![vec![f64::NAN; len]; n];
        let mut outs: Vec<HostRealsMut> = bufs.iter_mut().map(|b| HostRealsMut::F64(b)).collect();
        export(field, order, &mut outs).unwrap();
        bufs
    }

    #[test]
    fn round_trip_is_exact_in_double_for_every_order() {
        let lat = lattice();
        let v = lat.volume();
        let mut rng = Rng(1);
        let milc = rng.reals(v * 4 * 18);
        let qdp = milc_to_qdp(&milc, v);
        let cps = rng.reals(v * 4 * 18);

        let f = import(&lat, &HostGauge::Milc(HostReals::F64(&milc))).unwrap();
        assert_eq!(export_vec(&f, GaugeOrder::Milc), vec![milc.clone()]);

        let q = HostGauge::Qdp(std::array::from_fn(|mu| HostReals::F64(&qdp[mu])));
        let f = import(&lat, &q).unwrap();
        assert_eq!(export_vec(&f, GaugeOrder::Qdp), qdp.to_vec());

        let f = import(&lat, &HostGauge::CpsWilson(HostReals::F64(&cps))).unwrap();
        assert_eq!(export_vec(&f, GaugeOrder::CpsWilson), vec![cps]);
    }

    #[test]
    fn round_trip_in_single_precision() {
        let lat = lattice();
        let v = lat.volume();
        let mut rng = Rng(2);
        let host: Vec<f32> = rng.reals(v * 4 * 18).iter().map(|&x| x as f32).collect();
        let qdp: Vec<Vec<f32>> = (0..4)
            .map(|_| rng.reals(v * 18).iter().map(|&x| x as f32).collect())
            .collect();
        for order in [GaugeOrder::Milc, GaugeOrder::CpsWilson, GaugeOrder::Qdp] {
            let g = match order {
                GaugeOrder::Milc => HostGauge::Milc(HostReals::F32(&host)),
                GaugeOrder::CpsWilson => HostGauge::CpsWilson(HostReals::F32(&host)),
                GaugeOrder::Qdp => {
                    HostGauge::Qdp(std::array::from_fn(|mu| HostReals::F32(&qdp[mu])))
                }
            };
            let f = import(&lat, &g).unwrap();
            let (n, len) = array_shape(order, v);
            let mut bufs = vec![vec![f32::NAN; len]; n];
            let mut outs: Vec<HostRealsMut> =
                bufs.iter_mut().map(|b| HostRealsMut::F32(b)).collect();
            export(&f, order, &mut outs).unwrap();
            let expect: Vec<&[f32]> = match order {
                GaugeOrder::Qdp => qdp.iter().map(|a| a.as_slice()).collect(),
                _ => vec![&host],
            };
            // Widening to f64 and narrowing back is exact.
            for (b, e) in bufs.iter().zip(expect) {
                assert_eq!(b.as_slice(), e, "{order:?}");
            }
        }

        // A double field written as single is rounded, nothing worse.
        let milc = rng.reals(v * 4 * 18);
        let f = import(&lat, &HostGauge::Milc(HostReals::F64(&milc))).unwrap();
        let mut out = vec![f32::NAN; v * 4 * 18];
        export(
            &f,
            GaugeOrder::CpsWilson,
            &mut [HostRealsMut::F32(&mut out)],
        )
        .unwrap();
        let cps = transpose_links(&milc);
        for (x, y) in out.iter().zip(&cps) {
            assert!((*x as f64 - y).abs() <= 1e-7 * y.abs(), "{x} vs {y}");
        }
    }

    #[test]
    fn cps_is_the_transpose_of_milc() {
        let lat = lattice();
        let mut rng = Rng(3);
        let milc = rng.reals(lat.volume() * 4 * 18);
        let cps = transpose_links(&milc);
        let a = import(&lat, &HostGauge::Milc(HostReals::F64(&milc))).unwrap();
        let b = import(&lat, &HostGauge::CpsWilson(HostReals::F64(&cps))).unwrap();
        assert_eq!(a.links(), b.links());
        // And the two host arrays differ, so the test is not vacuous.
        assert_ne!(milc, cps);
        assert_eq!(export_vec(&a, GaugeOrder::CpsWilson), vec![cps]);
    }

    #[test]
    fn qdp_and_milc_give_the_same_field() {
        let lat = lattice();
        let v = lat.volume();
        let mut rng = Rng(4);
        let milc = rng.reals(v * 4 * 18);
        let qdp = milc_to_qdp(&milc, v);
        let a = import(&lat, &HostGauge::Milc(HostReals::F64(&milc))).unwrap();
        let q = HostGauge::Qdp(std::array::from_fn(|mu| HostReals::F64(&qdp[mu])));
        let b = import(&lat, &q).unwrap();
        assert_eq!(a.links(), b.links());
    }

    #[test]
    fn hand_placed_entry_lands_where_conventions_say() {
        let lat = lattice();
        let [nx, ny, nz, nt] = lat.dims();
        let v = nx * ny * nz * nt;
        let vh = v / 2;
        let (x, mu, row, col) = ([3usize, 1, 0, 5], 2usize, 0usize, 2usize);
        // Written out from docs/conventions.md, not through `Lattice`.
        let parity = (x[0] + x[1] + x[2] + x[3]) % 2;
        let cb = (x[0] + nx * (x[1] + ny * (x[2] + nz * x[3]))) / 2;
        let site = parity * vh + cb;
        assert_eq!((parity, cb), (1, 123));

        let check = |f: &GaugeField| {
            for p in [Parity::Even, Parity::Odd] {
                for c in 0..vh {
                    let y = lat.coords(p, c);
                    for m in 0..4 {
                        let u = f.link_at(y, m);
                        for r in 0..3 {
                            for cc in 0..3 {
                                let z = u.0[r][cc];
                                if (y, m, r, cc) == (x, mu, row, col) {
                                    assert_eq!(z, C64::new(0.25, -0.5));
                                } else {
                                    assert_eq!(z, C64::new(0.0, 0.0), "at {y:?} mu {m} ({r},{cc})");
                                }
                            }
                        }
                    }
                }
            }
        };

        let mut milc = vec![0.0; v * 4 * 18];
        let k = (site * 4 + mu) * 18 + 2 * (3 * row + col);
        milc[k] = 0.25;
        milc[k + 1] = -0.5;
        check(&import(&lat, &HostGauge::Milc(HostReals::F64(&milc))).unwrap());

        let mut cps = vec![0.0; v * 4 * 18];
        let k = (site * 4 + mu) * 18 + 2 * (3 * col + row);
        cps[k] = 0.25;
        cps[k + 1] = -0.5;
        check(&import(&lat, &HostGauge::CpsWilson(HostReals::F64(&cps))).unwrap());

        let mut qdp = [
            vec![0.0; v * 18],
            vec![0.0; v * 18],
            vec![0.0; v * 18],
            vec![0.0; v * 18],
        ];
        let k = site * 18 + 2 * (3 * row + col);
        qdp[mu][k] = 0.25;
        qdp[mu][k + 1] = -0.5;
        let q = HostGauge::Qdp(std::array::from_fn(|m| HostReals::F64(&qdp[m])));
        check(&import(&lat, &q).unwrap());
    }

    #[test]
    fn wrong_lengths_are_refused() {
        let lat = lattice();
        let v = lat.volume();
        let short = vec![0.0; v * 4 * 18 - 1];
        for g in [
            HostGauge::Milc(HostReals::F64(&short)),
            HostGauge::CpsWilson(HostReals::F64(&short)),
        ] {
            match import(&lat, &g) {
                Err(Error::InvalidArgument(m)) => {
                    assert!(
                        m.contains(&format!("{}", v * 72))
                            && m.contains(&format!("{}", v * 72 - 1)),
                        "{m}"
                    )
                }
                r => panic!("{r:?}"),
            }
        }
        let good = vec![0.0f32; v * 18];
        let bad = vec![0.0f32; v * 18 + 18];
        let q = HostGauge::Qdp([
            HostReals::F32(&good),
            HostReals::F32(&good),
            HostReals::F32(&bad),
            HostReals::F32(&good),
        ]);
        match import(&lat, &q) {
            Err(Error::InvalidArgument(m)) => assert!(m.contains("mu = 2"), "{m}"),
            r => panic!("{r:?}"),
        }

        // Export: wrong count or length, and nothing written.
        let f = GaugeField::unit(lat.clone());
        let mut a = vec![7.0; v * 18];
        let mut b = vec![7.0; v * 18];
        let mut outs = [HostRealsMut::F64(&mut a), HostRealsMut::F64(&mut b)];
        assert!(matches!(
            export(&f, GaugeOrder::Qdp, &mut outs),
            Err(Error::InvalidArgument(_))
        ));
        let mut outs = [HostRealsMut::F64(&mut a)];
        assert!(matches!(
            export(&f, GaugeOrder::Milc, &mut outs),
            Err(Error::InvalidArgument(_))
        ));
        let mut c = vec![7.0; v * 18];
        let mut d = vec![7.0; v * 17];
        let mut outs = [
            HostRealsMut::F64(&mut a),
            HostRealsMut::F64(&mut b),
            HostRealsMut::F64(&mut c),
            HostRealsMut::F64(&mut d),
        ];
        assert!(matches!(
            export(&f, GaugeOrder::Qdp, &mut outs),
            Err(Error::InvalidArgument(_))
        ));
        assert!(a.iter().chain(&b).chain(&c).chain(&d).all(|&x| x == 7.0));
    }

    #[test]
    fn nan_and_inf_are_refused_naming_site_and_direction() {
        let lat = lattice();
        let v = lat.volume();
        let x = [2usize, 5, 1, 6];
        let site = lat.eo_index(x);
        for (bad, order) in [
            (f64::NAN, GaugeOrder::Milc),
            (f64::INFINITY, GaugeOrder::CpsWilson),
            (f64::NEG_INFINITY, GaugeOrder::Qdp),
        ] {
            let mut milc = vec![0.0; v * 4 * 18];
            milc[(site * 4 + 3) * 18 + 7] = bad;
            // A later bad link must not be the one reported.
            milc[((site + 1) * 4) * 18] = f64::NAN;
            let qdp = milc_to_qdp(&milc, v);
            let g = match order {
                GaugeOrder::Milc => HostGauge::Milc(HostReals::F64(&milc)),
                GaugeOrder::CpsWilson => HostGauge::CpsWilson(HostReals::F64(&milc)),
                GaugeOrder::Qdp => HostGauge::Qdp(std::array::from_fn(|m| HostReals::F64(&qdp[m]))),
            };
            match import(&lat, &g) {
                Err(Error::InvalidArgument(m)) => {
                    assert!(m.contains("(2, 5, 1, 6)") && m.contains("mu = 3"), "{m}")
                }
                r => panic!("{order:?}: {r:?}"),
            }
        }
        let f32s = {
            let mut h = vec![0.0f32; v * 4 * 18];
            h[5] = f32::NAN;
            h
        };
        match import(&lat, &HostGauge::Milc(HostReals::F32(&f32s))) {
            Err(Error::InvalidArgument(m)) => {
                assert!(m.contains("(0, 0, 0, 0)") && m.contains("mu = 0"), "{m}")
            }
            r => panic!("{r:?}"),
        }
    }
}
