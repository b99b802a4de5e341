//! Errors of Monte Carlo averages over a correlated time series (a
//! plaquette measured every sweep): binning with the jackknife over bins.
//! Bins longer than the autocorrelation time are independent, so the error
//! estimate grows with the bin size until it reaches a plateau; `binned_error`
//! takes the largest estimate over bin sizes that still leave enough bins.

/// The mean of `xs`.
pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Jackknife over bins of `bin` consecutive values (a trailing partial bin
/// is dropped): the mean of the binned series and its error. `None` with
/// fewer than two bins.
pub fn jackknife(xs: &[f64], bin: usize) -> Option<(f64, f64)> {
    let nb = xs.len() / bin.max(1);
    if nb < 2 {
        return None;
    }
    let bins: Vec<f64> = xs.chunks_exact(bin).take(nb).map(mean).collect();
    let total: f64 = bins.iter().sum();
    let n = nb as f64;
    // Leave-one-bin-out means, and the jackknife variance of their mean.
    let loo: Vec<f64> = bins.iter().map(|b| (total - b) / (n - 1.0)).collect();
    let m = mean(&loo);
    let var = (n - 1.0) / n * loo.iter().map(|x| (x - m) * (x - m)).sum::<f64>();
    Some((total / n, var.sqrt()))
}

/// Bins at least this many: fewer make the error of the error too large.
pub const MIN_BINS: usize = 16;

/// The mean and the largest jackknife error over bin sizes 1, 2, 4, …
/// that leave at least `MIN_BINS` bins (with a short series, bin size 1),
/// with the bin size that gave it.
pub fn binned_error(xs: &[f64]) -> (f64, f64, usize) {
    let mut best = (mean(xs), 0.0, 1);
    let mut bin = 1;
    while xs.len() / bin >= MIN_BINS.min(xs.len()).max(2) {
        if let Some((_, err)) = jackknife(xs, bin) {
            if err > best.1 {
                best = (mean(xs), err, bin);
            }
        }
        bin *= 2;
    }
    best
}

/// The integrated autocorrelation time estimated from the binned error:
/// `τ_int = (err_binned / err_naive)² / 2`.
pub fn tau_int(xs: &[f64]) -> f64 {
    let naive = jackknife(xs, 1).map_or(0.0, |(_, e)| e);
    let (_, binned, _) = binned_error(xs);
    if naive > 0.0 {
        0.5 * (binned / naive).powi(2)
    } else {
        0.5
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jackknife_of_unbinned_data_is_the_standard_error() {
        let xs: Vec<f64> = (0..100).map(|i| ((i * 37) % 11) as f64).collect();
        let m = mean(&xs);
        let var = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / 99.0;
        let (jm, je) = jackknife(&xs, 1).unwrap();
        assert!((jm - m).abs() < 1e-12);
        assert!((je - (var / 100.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn binning_sees_correlation() {
        // Each value repeated 8 times: the naive error is too small by √8.
        let xs: Vec<f64> = (0..1024).map(|i| ((i / 8 * 7919) % 13) as f64).collect();
        let naive = jackknife(&xs, 1).unwrap().1;
        let (_, err, bin) = binned_error(&xs);
        assert!(bin >= 8, "{bin}");
        assert!(err > 2.0 * naive, "{err} vs {naive}");
    }
}
