//! The quenched SU(3) generator (`gauge_gen`) through the public API:
//! - the SU(2) heatbath draws `x0` from `sqrt(1 − x0²) exp(α x0)`
//!   (Kolmogorov–Smirnov), for both samplers;
//! - the Cabibbo–Marinari heatbath on one link with a fixed staple samples
//!   `exp(γ Re tr U)` on SU(3) (its mean against the Weyl-formula integral);
//! - overrelaxation keeps the action (to rounding) and the links in SU(3);
//! - ⟨P⟩ at β = 6.0 against the published 0.59368, at strong coupling
//!   against the single-plaquette integral (≈ β/18), at weak coupling
//!   against perturbation theory (1 − 2/β − 1.2208/β²);
//! - runs are reproducible whatever the thread count, and resume exactly;
//! - configurations round-trip through `gauge_gen::io`, and a damaged file
//!   is refused.

use std::path::PathBuf;
use std::sync::Arc;

use latsol::gauge_gen::{
    heatbath_link, io, overrelax_sweep, plaquette, reunitarise, stats, su2, Generator, Start,
};
use latsol::lattice::{Lattice, Parity};
use latsol::random;
use latsol::su3::Su3;
use num_complex::Complex64 as C64;

fn lattice(dims: [usize; 4]) -> Arc<Lattice> {
    Arc::new(Lattice::new(dims).unwrap())
}

/// ⟨Re tr V⟩ for V in SU(3) with density ∝ exp(γ Re tr V) (Haar measure),
/// from the Weyl integration formula: eigenvalue angles θ1, θ2,
/// θ3 = −θ1 − θ2, weight Π_{i<j} |e^{iθi} − e^{iθj}|². The integrand is
/// smooth and periodic, so the trapezoidal rule on an n×n grid converges
/// exponentially.
fn su3_mean_re_tr(gamma: f64) -> f64 {
    let n = 200;
    let h = 2.0 * std::f64::consts::PI / n as f64;
    let (mut num, mut den) = (0.0, 0.0);
    for a in 0..n {
        for b in 0..n {
            let t = [a as f64 * h, b as f64 * h, -(a + b) as f64 * h];
            let mut vandermonde = 1.0;
            for i in 0..3 {
                for j in (i + 1)..3 {
                    let d = (t[i] - t[j]) / 2.0;
                    vandermonde *= 4.0 * d.sin() * d.sin();
                }
            }
            let re_tr: f64 = t.iter().map(|x| x.cos()).sum();
            let w = vandermonde * (gamma * re_tr).exp();
            num += w * re_tr;
            den += w;
        }
    }
    num / den
}

#[test]
fn weyl_integral_has_the_known_limits() {
    // γ = 0: Haar, ⟨Re tr V⟩ = 0; small γ: ⟨(Re tr V)²⟩ γ = γ/2.
    assert!(su3_mean_re_tr(0.0).abs() < 1e-14);
    let g = 1e-4;
    assert!((su3_mean_re_tr(g) / g - 0.5).abs() < 1e-3);
}

/// The distribution function of `sqrt(1 − x²) exp(α x)` on [−1, 1], on a
/// grid in θ = arccos(−x) (where the density, sin²θ exp(−α cos θ), is smooth).
fn x0_cdf(alpha: f64) -> impl Fn(f64) -> f64 {
    let n = 20_000;
    let h = std::f64::consts::PI / n as f64;
    let f = |i: usize| {
        let th = i as f64 * h;
        th.sin().powi(2) * (-alpha * th.cos()).exp()
    };
    let mut cdf = vec![0.0; n + 1];
    for i in 1..=n {
        cdf[i] = cdf[i - 1] + 0.5 * h * (f(i - 1) + f(i));
    }
    let z = cdf[n];
    cdf.iter_mut().for_each(|c| *c /= z);
    move |x: f64| {
        let t = (-x).clamp(-1.0, 1.0).acos() / h;
        let i = (t.floor() as usize).min(n - 1);
        cdf[i] + (t - i as f64) * (cdf[i + 1] - cdf[i])
    }
}

/// Kolmogorov–Smirnov distance between samples and a distribution function.
fn ks_distance(mut xs: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len() as f64;
    xs.iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = cdf(x);
            (f - i as f64 / n).abs().max((f - (i + 1) as f64 / n).abs())
        })
        .fold(0.0, f64::max)
}

#[test]
fn su2_heatbath_draws_the_expected_density() {
    let n = 100_000;
    // 1.95/√n: the KS critical value at significance 0.001. Fixed seeds,
    // so the test is deterministic; a wrong density (e.g. a missing
    // sqrt(1 − x0²) or α off by 2) gives distances of 0.02 and more.
    let critical = 1.95 / (n as f64).sqrt();
    let mut rng = random::rng(11);
    type Sampler = fn(f64, &mut rand_chacha::ChaCha8Rng) -> f64;
    let samplers: [(&str, Sampler); 3] = [
        ("kennedy-pendleton", su2::kennedy_pendleton_x0),
        ("creutz", su2::creutz_x0),
        ("sample_x0", su2::sample_x0),
    ];
    for (name, sample) in samplers {
        for alpha in [0.05, 1.0, 4.0, 12.0] {
            let xs: Vec<f64> = (0..n).map(|_| sample(alpha, &mut rng)).collect();
            let d = ks_distance(xs, x0_cdf(alpha));
            assert!(
                d < critical,
                "{name}, alpha {alpha}: KS distance {d} > {critical}"
            );
        }
    }
    // The full quaternion: the direction of (x1, x2, x3) is uniform, so each
    // component has mean 0 and ⟨x_k²⟩ = (1 − ⟨x0²⟩)/3.
    let alpha = 3.0;
    let qs: Vec<su2::Quaternion> = (0..n).map(|_| su2::heatbath(alpha, &mut rng)).collect();
    let m = |f: &dyn Fn(&su2::Quaternion) -> f64| qs.iter().map(f).sum::<f64>() / n as f64;
    let x0sq = m(&|q| q.0[0] * q.0[0]);
    for k in 1..4 {
        assert!(m(&|q| q.0[k]).abs() < 5.0 / (n as f64).sqrt());
        let xk2 = m(&|q| q.0[k] * q.0[k]);
        assert!((xk2 - (1.0 - x0sq) / 3.0).abs() < 0.005, "k {k}: {xk2}");
    }
}

#[test]
fn single_link_heatbath_samples_the_su3_weight() {
    // A fixed staple A = c G (G a random SU(3) matrix): the link's weight is
    // exp((β/3) Re tr(U A)) = exp(γ Re tr(U G)), γ = βc/3, and U G is
    // distributed as V in `su3_mean_re_tr`.
    let mut rng = random::rng(12);
    let g = random::su3(&mut rng);
    let beta = 6.0;
    for gamma in [0.3, 2.0, 6.0] {
        let a = g.scale(C64::new(3.0 * gamma / beta, 0.0));
        let mut u = random::su3(&mut rng);
        for _ in 0..50 {
            u = heatbath_link(&u, &a, beta, &mut rng);
        }
        let series: Vec<f64> = (0..20_000)
            .map(|_| {
                u = heatbath_link(&u, &a, beta, &mut rng);
                u.mul(&g).trace().re
            })
            .collect();
        let (mean, err, _) = stats::binned_error(&series);
        let exact = su3_mean_re_tr(gamma);
        assert!(err < 0.02, "gamma {gamma}: error {err} too large to test");
        assert!(
            (mean - exact).abs() < 5.0 * err,
            "gamma {gamma}: <Re tr UG> = {mean} +- {err}, exact {exact}"
        );
        assert!(u.su3_deviation() < 1e-12);
    }
}

#[test]
fn overrelaxation_keeps_the_action_and_su3() {
    let lat = lattice([4, 4, 4, 4]);
    let mut gen = Generator::new(lat, 6.0, 3, Start::Hot).unwrap();
    for _ in 0..5 {
        gen.sweep();
    }
    let mut field = gen.into_field();
    let mut scratch = Vec::new();
    let before = field.clone();
    let p0 = plaquette(&field)[0];
    // Many sweeps without reunitarisation: rounding must stay at rounding.
    for _ in 0..20 {
        overrelax_sweep(&mut field, &mut scratch);
        let p = plaquette(&field)[0];
        assert!((p - p0).abs() < 1e-12, "plaquette {p0} -> {p}");
    }
    let (dev, _) = field.max_su3_deviation();
    assert!(dev < 1e-12, "SU(3) deviation {dev}");
    // And it moved the field: not a trivial map.
    let moved = field
        .links()
        .iter()
        .zip(before.links())
        .map(|(a, b)| {
            a.0.iter()
                .flatten()
                .zip(b.0.iter().flatten())
                .map(|(x, y)| (x - y).norm())
                .fold(0.0, f64::max)
        })
        .fold(0.0, f64::max);
    assert!(
        moved > 0.5,
        "overrelaxation left the links in place ({moved})"
    );
    reunitarise(&mut field);
    assert!((plaquette(&field)[0] - p0).abs() < 1e-12);
}

/// Thermalises from a hot start and measures the plaquette after every
/// sweep: (mean, binned jackknife error).
fn measure(
    dims: [usize; 4],
    beta: f64,
    seed: u64,
    start: Start,
    therm: usize,
    n: usize,
) -> (f64, f64) {
    let mut gen = Generator::new(lattice(dims), beta, seed, start).unwrap();
    for _ in 0..therm {
        gen.sweep();
    }
    let series: Vec<f64> = (0..n)
        .map(|_| {
            gen.sweep();
            gen.plaquette()[0]
        })
        .collect();
    let (dev, _) = gen.field().max_su3_deviation();
    assert!(dev < 1e-12, "SU(3) deviation {dev}");
    let (mean, err, _) = stats::binned_error(&series);
    eprintln!("{dims:?} beta {beta}: <P> = {mean:.6} +- {err:.6} over {n} sweeps");
    (mean, err)
}

#[test]
fn plaquette_at_beta_6_matches_the_published_value() {
    // Published: <P> = 0.59368 at β = 6.0 in large volumes. The test runs on
    // 6⁴, which is deconfined at β = 6 (N_t = 6 < N_t,c ≈ 8) and has a
    // larger plaquette. FINITE_VOLUME_SHIFT is the shift this generator
    // measures on 6⁴ (5000 sweeps: 0.59477(9)); the same runs give 4⁴:
    // 0.59693(10), 8⁴: 0.59423(9), and 16³×32 agrees with 0.59368 (see
    // docs or the generator's report). SHIFT_ERROR is that run's error.
    const PUBLISHED: f64 = 0.59368;
    const FINITE_VOLUME_SHIFT: f64 = 0.00109;
    const SHIFT_ERROR: f64 = 0.0001;
    let (mean, err) = measure([6, 6, 6, 6], 6.0, 2026, Start::Hot, 40, 300);
    let tol = 4.0 * (err * err + SHIFT_ERROR * SHIFT_ERROR).sqrt();
    assert!(err < 0.001, "error {err}: not a test");
    assert!(
        (mean - PUBLISHED - FINITE_VOLUME_SHIFT).abs() < tol,
        "<P> = {mean} +- {err} on 6^4, expected {PUBLISHED} + {FINITE_VOLUME_SHIFT} within {tol}"
    );
}

#[test]
fn strong_coupling_gives_the_single_plaquette_value() {
    // To O(β⁴) the plaquette is the single-plaquette average
    // u(β) = ⟨Re tr U / 3⟩ with weight exp((β/3) Re tr U) = β/18 + β²/216 + …;
    // the first multi-plaquette term (the cube, 4u⁵) is below 1e-5 here.
    for beta in [0.5, 1.5] {
        let (mean, err) = measure([4, 4, 4, 4], beta, 7, Start::Hot, 10, 300);
        let u = su3_mean_re_tr(beta / 3.0) / 3.0;
        assert!(
            (mean - u).abs() < 5.0 * err,
            "beta {beta}: <P> = {mean} +- {err}, single plaquette {u}"
        );
        // And the leading term alone, within its O(β²) correction.
        assert!(
            (mean - beta / 18.0).abs() < beta * beta / 100.0,
            "beta {beta}: {mean}"
        );
    }
}

#[test]
fn weak_coupling_follows_perturbation_theory() {
    // ⟨P⟩ = 1 − 2/β − 1.2208/β² + O(β⁻³) in infinite volume; on 4⁴ the
    // zero modes shift the 2/β term by O(1/V) ≈ 2e-4 at β = 50.
    let beta = 50.0;
    let (mean, err) = measure([4, 4, 4, 4], beta, 5, Start::Cold, 30, 100);
    let pt = 1.0 - 2.0 / beta - 1.2208 / (beta * beta);
    assert!(err < 1e-4);
    assert!((mean - pt).abs() < 1e-3, "<P> = {mean} +- {err}, PT {pt}");
    assert!(
        mean < 1.0 - 1.5 / beta,
        "{mean}: not thermalised away from the cold start"
    );
}

fn run_in_pool(threads: usize, seed: u64) -> Vec<Su3> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let mut gen = Generator::new(lattice([4, 4, 2, 6]), 5.8, seed, Start::Hot).unwrap();
        for _ in 0..3 {
            gen.sweep();
        }
        gen.into_field().links().to_vec()
    })
}

#[test]
fn same_seed_same_field_whatever_the_thread_count() {
    let one = run_in_pool(1, 99);
    assert_eq!(one, run_in_pool(3, 99));
    assert_eq!(one, run_in_pool(4, 99));
    assert_ne!(one, run_in_pool(2, 100));
}

fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("latsol-heatbath-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn info_of(gen: &Generator) -> io::ConfigInfo {
    io::ConfigInfo {
        dims: gen.field().lattice().dims(),
        beta: gen.beta(),
        sweeps: gen.sweeps(),
        seed: gen.seed(),
        overrelax: gen.overrelax(),
        plaquette: [0.0; 3],
    }
}

#[test]
fn configurations_round_trip_and_resume_exactly() {
    let dims = [4, 2, 2, 6];
    let mut straight = Generator::new(lattice(dims), 5.7, 41, Start::Hot).unwrap();
    let mut first = straight.clone();
    for _ in 0..4 {
        straight.sweep();
    }
    for _ in 0..2 {
        first.sweep();
    }
    let path = temp_path("resume.milc");
    io::save(first.field(), &info_of(&first), &path).unwrap();

    let (field, info) = io::load(&path).unwrap();
    assert_eq!(field.links(), first.field().links());
    assert_eq!(info.dims, dims);
    assert_eq!((info.beta, info.sweeps, info.seed), (5.7, 2, 41));
    assert_eq!(info.plaquette, plaquette(first.field()));

    // The file is MILC order, little-endian f64: the link U_mu(x) of site
    // x = (1, 0, 1, 3) (odd) starts at ((Vh + cb)·4 + mu)·18 reals.
    let bytes = std::fs::read(&path).unwrap();
    let lat = field.lattice().clone();
    assert_eq!(bytes.len(), lat.volume() * 4 * 18 * 8);
    let (x, mu) = ([1usize, 0, 1, 3], 2usize);
    assert_eq!(lat.parity_of(x), Parity::Odd);
    let start = ((lat.half_volume() + lat.cb_index(x)) * 4 + mu) * 18;
    let re_im: Vec<f64> = bytes[start * 8..(start + 18) * 8]
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(Su3::from_row_major(&re_im), *field.link_at(x, mu));

    // Resuming from the file continues the same chain.
    let mut resumed = Generator::resume(field, info.beta, info.seed, info.sweeps).unwrap();
    for _ in 0..2 {
        resumed.sweep();
    }
    assert_eq!(resumed.field().links(), straight.field().links());

    // A damaged file (one exponent byte changed) or a truncated one is refused.
    let mut damaged = bytes.clone();
    damaged[start * 8 + 7] ^= 0x01;
    std::fs::write(&path, &damaged).unwrap();
    let e = io::load(&path).unwrap_err().to_string();
    assert!(e.contains("plaquette"), "{e}");
    std::fs::write(&path, &bytes[..bytes.len() - 8]).unwrap();
    let e = io::load(&path).unwrap_err().to_string();
    assert!(e.contains("bytes"), "{e}");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}
