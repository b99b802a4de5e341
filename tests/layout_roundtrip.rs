//! Host layouts through the public API (`latsol::layout`): conversions between
//! the host orders agree with each other, single-parity fields are the halves
//! of full ones, and the DeGrand–Rossi ↔ UKQCD change maps the gammas onto
//! each other (docs/conventions.md, "Host gauge field orders", "Host spinor
//! orders", "Gamma matrices").

use std::sync::Arc;

use num_complex::Complex64 as C64;

use latsol::field::{GaugeField, HostSpinor};
use latsol::gamma;
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::layout::{gauge, spinor};
use latsol::layout::{DiracOrder, GammaBasis, GaugeOrder, HostGauge, HostReals, HostRealsMut};
use latsol::Error;

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
    fn real(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
    fn reals(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.real()).collect()
    }
}

fn lattice() -> Arc<Lattice> {
    Arc::new(Lattice::new([6, 4, 2, 4]).unwrap())
}

const ORDERS: [DiracOrder; 3] = [DiracOrder::Dirac, DiracOrder::Qdp, DiracOrder::CpsWilson];

fn export_gauge(f: &GaugeField, order: GaugeOrder) -> Vec<Vec<f64>> {
    let v = f.lattice().volume();
    let (n, len) = match order {
        GaugeOrder::Qdp => (4, v * 18),
        _ => (1, v * 72),
    };
    let mut bufs = vec![vec![f64::NAN; len]; n];
    let mut outs: Vec<HostRealsMut> = bufs.iter_mut().map(|b| HostRealsMut::F64(b)).collect();
    gauge::export(f, order, &mut outs).unwrap();
    bufs
}

fn export_spinor(f: &HostSpinor, order: DiracOrder, basis: GammaBasis) -> Vec<f64> {
    let mut out = vec![f64::NAN; f.sites() * 24];
    spinor::export(f, order, basis, HostRealsMut::F64(&mut out)).unwrap();
    out
}

fn max_diff(a: &HostSpinor, b: &HostSpinor) -> f64 {
    assert_eq!(a.subset(), b.subset());
    a.data()
        .iter()
        .zip(b.data())
        .map(|(x, y)| (x - y).norm())
        .fold(0.0, f64::max)
}

#[test]
fn gauge_orders_convert_into_each_other() {
    let lat = lattice();
    let mut rng = Rng(21);
    let milc = rng.reals(lat.volume() * 72);
    let f = gauge::import(&lat, &HostGauge::Milc(HostReals::F64(&milc))).unwrap();

    let qdp = export_gauge(&f, GaugeOrder::Qdp);
    let q = HostGauge::Qdp(std::array::from_fn(|mu| HostReals::F64(&qdp[mu])));
    assert_eq!(gauge::import(&lat, &q).unwrap().links(), f.links());

    let cps = export_gauge(&f, GaugeOrder::CpsWilson).remove(0);
    let c = gauge::import(&lat, &HostGauge::CpsWilson(HostReals::F64(&cps))).unwrap();
    assert_eq!(c.links(), f.links());
    for (m, c) in milc.chunks(18).zip(cps.chunks(18)) {
        for r in 0..3 {
            for col in 0..3 {
                assert_eq!(m[2 * (3 * r + col)], c[2 * (3 * col + r)]);
                assert_eq!(m[2 * (3 * r + col) + 1], c[2 * (3 * col + r) + 1]);
            }
        }
    }
    // Links are stored as given, at the site the coordinates say.
    let x = [5, 3, 1, 2];
    let k = lat.eo_index(x) * 4 + 1;
    assert_eq!(
        f.link_at(x, 1).0[2][0],
        C64::new(milc[k * 18 + 12], milc[k * 18 + 13])
    );
}

#[test]
fn spinor_orders_convert_into_each_other() {
    let lat = lattice();
    let mut rng = Rng(22);
    let host = rng.reals(lat.volume() * 24);
    for basis in [GammaBasis::Ukqcd, GammaBasis::DegrandRossi] {
        let f = spinor::import(
            &lat,
            Subset::Full,
            DiracOrder::Dirac,
            basis,
            HostReals::F64(&host),
        )
        .unwrap();
        for order in ORDERS {
            let h = export_spinor(&f, order, basis);
            let g = spinor::import(&lat, Subset::Full, order, basis, HostReals::F64(&h)).unwrap();
            if basis == GammaBasis::Ukqcd {
                assert_eq!(g, f, "{order:?}");
            } else {
                assert!(max_diff(&g, &f) < 1e-15, "{order:?}");
            }
        }
    }
}

#[test]
fn single_parity_fields_are_the_halves_of_full_ones() {
    let lat = lattice();
    let n = lat.half_volume() * 24;
    let mut rng = Rng(23);
    let host = rng.reals(lat.volume() * 24);
    for order in ORDERS {
        let full = spinor::import(
            &lat,
            Subset::Full,
            order,
            GammaBasis::DegrandRossi,
            HostReals::F64(&host),
        )
        .unwrap();
        // CPS stores the odd half first; the others the even half.
        let (first, second) = match order {
            DiracOrder::CpsWilson => (Parity::Odd, Parity::Even),
            _ => (Parity::Even, Parity::Odd),
        };
        for (p, half) in [(first, &host[..n]), (second, &host[n..])] {
            let single = spinor::import(
                &lat,
                Subset::Single(p),
                order,
                GammaBasis::DegrandRossi,
                HostReals::F64(half),
            )
            .unwrap();
            assert_eq!(single, full.parity_part(p), "{order:?} {p:?}");
            assert_eq!(
                export_spinor(&single, order, GammaBasis::DegrandRossi),
                export_spinor(&full, order, GammaBasis::DegrandRossi)
                    [if p == first { 0..n } else { n..2 * n }]
                .to_vec()
            );
        }
    }
}

/// `T (γ^UK_μ ψ) = γ^DR_μ (T ψ)`, with `T` applied by `spinor::export`.
#[test]
fn export_maps_ukqcd_gammas_onto_degrand_rossi() {
    let lat = lattice();
    let mut rng = Rng(24);
    let mut psi = HostSpinor::zeros(lat.clone(), Subset::Single(Parity::Odd));
    for z in psi.data_mut() {
        *z = C64::new(rng.real(), rng.real());
    }
    let apply = |m: &gamma::SpinMatrix, site: &[C64]| -> Vec<C64> {
        (0..12)
            .map(|k| (0..4).map(|j| m[k / 3][j] * site[j * 3 + k % 3]).sum())
            .collect()
    };
    for order in ORDERS {
        let t_psi = export_spinor(&psi, order, GammaBasis::DegrandRossi);
        let t_psi = spinor::import(
            &lat,
            psi.subset(),
            order,
            GammaBasis::Ukqcd,
            HostReals::F64(&t_psi),
        )
        .unwrap();
        for mu in 1..=5 {
            let mut g_psi = psi.clone();
            for i in 0..psi.sites() {
                let s = apply(&gamma::ukqcd(mu), psi.site(i));
                g_psi.site_mut(i).copy_from_slice(&s);
            }
            let lhs = export_spinor(&g_psi, order, GammaBasis::DegrandRossi);
            let lhs = spinor::import(
                &lat,
                psi.subset(),
                order,
                GammaBasis::Ukqcd,
                HostReals::F64(&lhs),
            )
            .unwrap();
            for i in 0..psi.sites() {
                let rhs = apply(&gamma::degrand_rossi(mu), t_psi.site(i));
                for (a, b) in lhs.site(i).iter().zip(&rhs) {
                    assert!((a - b).norm() < 1e-15, "{order:?} gamma_{mu} site {i}");
                }
            }
        }
    }
}

#[test]
fn bad_input_is_refused() {
    let lat = lattice();
    let v = lat.volume();
    let short = vec![0.0f32; v * 72 - 18];
    assert!(matches!(
        gauge::import(&lat, &HostGauge::CpsWilson(HostReals::F32(&short))),
        Err(Error::InvalidArgument(_))
    ));
    let mut h = vec![0.0; v * 24];
    h[17] = f64::NAN;
    assert!(matches!(
        spinor::import(
            &lat,
            Subset::Full,
            DiracOrder::Qdp,
            GammaBasis::Ukqcd,
            HostReals::F64(&h)
        ),
        Err(Error::InvalidArgument(_))
    ));
}
