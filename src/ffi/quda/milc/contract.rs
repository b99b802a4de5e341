//! `qudaContractFT`: MILC's meson contraction of two staggered propagators
//! with Fourier phases (ks_spectrum's `WANT_KS_CONT_GPU`), as QUDA 9521952
//! computes it (lib/milc_interface.cpp → `contractFTQuda`,
//! include/kernels/contraction.cuh, `StaggeredContractFT`; learned from
//! there, nothing copied):
//!
//! `corr[k][t] += Σ_{x: x_t = t} Π_{μ=0..3} f_μ(θ_μ) Σ_c conj(q1_c(x)) q2_c(x)`,
//! `θ_μ = 2π n_{kμ} (x_μ − x0_μ) / L_μ` with global coordinates and extents,
//! `f` = cos θ (EVEN), i sin θ (ODD), e^{+iθ} (EO) per direction, the time
//! direction's factor included; `corr` is `[n_mom][L_t][re, im]`, summed
//! over the ranks (every rank gets the whole array) and added to, not
//! overwritten (as QUDA; MILC zeroes it first). The fields are host arrays
//! (even sites first, 3 complex numbers a site): computed on the host in
//! one pass over them.

use std::f64::consts::PI;
use std::os::raw::{c_int, c_void};

use num_complex::Complex64 as C64;
use rayon::prelude::*;

use super::layout::{dims, host_double};
use crate::error::{Error, Result};
use crate::ffi::quda::abi::*;
use crate::ffi::quda::errors::quda_collective;
use crate::ffi::quda::host::not_null;
use crate::ffi::quda::state;
use crate::lattice::{Lattice, Parity};

/// The phase factor of one direction for `kind` at angle `theta`.
fn factor(kind: QudaFFTSymmType, theta: f64) -> C64 {
    match kind {
        QUDA_FFT_SYMM_EVEN => C64::new(theta.cos(), 0.0),
        QUDA_FFT_SYMM_ODD => C64::new(0.0, theta.sin()),
        _ => C64::new(theta.cos(), theta.sin()),
    }
}

/// `Σ_c conj(a_c) b_c` of every site of this rank, in the fields' order:
/// MILC's, which is latsol's even-odd order (`Lattice::eo_index`).
fn site_products(a: &[f64], b: &[f64], volume: usize) -> Vec<C64> {
    (0..volume)
        .into_par_iter()
        .map(|site| {
            (0..3)
                .map(|c| {
                    let k = 6 * site + 2 * c;
                    C64::new(a[k], -a[k + 1]) * C64::new(b[k], b[k + 1])
                })
                .sum()
        })
        .collect()
}

/// `qudaContractFT(external_precision, cont_args, quark1, quark2, corr)`.
///
/// # Safety
/// `cont_args` points to a `QudaContractArgs_t` whose arrays hold `4 n_mom`
/// momentum components, `4 n_mom` FFT types and 4 source coordinates; the
/// fields hold this rank's sites (6 reals a site) in `external_precision`;
/// `corr` holds `2 n_mom L_t` doubles.
#[no_mangle]
pub unsafe extern "C" fn qudaContractFT(
    external_precision: c_int,
    cont_args: *mut QudaContractArgs_t,
    quark1: *mut c_void,
    quark2: *mut c_void,
    corr: *mut f64,
) {
    quda_collective("qudaContractFT", || {
        // SAFETY: forwarded from the caller.
        let checked = unsafe { inputs(external_precision, cont_args, quark1, quark2, corr) };
        state::with(|s| {
            // Agreed first: no rank waits in the sum for one that failed.
            let Some(c) = s.context.agree(checked)? else {
                return Ok(());
            };
            let (origin, global) = s.context.place(c.lattice.dims());
            let mut sums = contract(&c, origin, global);
            s.context.sum_over_ranks(&mut sums)?;
            // SAFETY: 2 n_mom L_t doubles, as the caller promises.
            let out = unsafe { std::slice::from_raw_parts_mut(corr, sums.len()) };
            out.iter_mut().zip(&sums).for_each(|(o, v)| *o += v);
            Ok(())
        })
    })
}

/// What `qudaContractFT` reads, checked and copied.
struct Inputs<'a> {
    modes: &'a [c_int],
    kinds: &'a [QudaFFTSymmType],
    x0: &'a [c_int],
    lattice: Lattice,
    /// `Σ_c conj(q1_c) q2_c` of every site, in even-odd order.
    products: Vec<C64>,
}

/// The checked arguments of `qudaContractFT` (`None`: no momenta, nothing
/// to add).
///
/// # Safety
/// As `qudaContractFT`.
unsafe fn inputs<'a>(
    external_precision: c_int,
    cont_args: *mut QudaContractArgs_t,
    quark1: *mut c_void,
    quark2: *mut c_void,
    corr: *mut f64,
) -> Result<Option<Inputs<'a>>> {
    not_null(cont_args, "cont_args")?;
    // SAFETY: checked non-null; the caller's struct.
    let args = unsafe { &*cont_args };
    let n = args.n_mom;
    if n < 0 {
        return Err(Error::InvalidArgument(format!(
            "cont_args->n_mom = {n}: the number of momenta, not negative"
        )));
    }
    if n == 0 {
        return Ok(None);
    }
    let n = n as usize;
    not_null(args.mom_modes, "cont_args->mom_modes")?;
    not_null(args.fft_type, "cont_args->fft_type")?;
    not_null(args.source_position, "cont_args->source_position")?;
    not_null(quark1, "quark1")?;
    not_null(quark2, "quark2")?;
    not_null(corr, "corr")?;
    // SAFETY: 4 n_mom entries each and 4 coordinates, as the caller promises.
    let (modes, kinds, x0) = unsafe {
        (
            std::slice::from_raw_parts(args.mom_modes, 4 * n),
            std::slice::from_raw_parts(args.fft_type, 4 * n),
            std::slice::from_raw_parts(args.source_position, 4),
        )
    };
    if let Some((i, k)) = kinds
        .iter()
        .enumerate()
        .find(|(_, k)| !(1..=3).contains(*k))
    {
        return Err(Error::InvalidArgument(format!(
            "cont_args->fft_type[{i}] = {k}: QUDA_FFT_SYMM_ODD, _EVEN or _EO"
        )));
    }
    let lattice = Lattice::new(dims()?)?;
    let volume = lattice.volume();
    let reals = volume * 6;
    // SAFETY: this rank's sites, 6 reals each, in the host precision.
    let products = unsafe {
        if host_double(external_precision) {
            let a = std::slice::from_raw_parts(quark1 as *const f64, reals);
            let b = std::slice::from_raw_parts(quark2 as *const f64, reals);
            site_products(a, b, volume)
        } else {
            let wide = |p: *mut c_void| -> Vec<f64> {
                std::slice::from_raw_parts(p as *const f32, reals)
                    .iter()
                    .map(|&x| x as f64)
                    .collect()
            };
            site_products(&wide(quark1), &wide(quark2), volume)
        }
    };
    Ok(Some(Inputs {
        modes,
        kinds,
        x0,
        lattice,
        products,
    }))
}

/// This rank's sums, `[n_mom][L_t][re, im]` (zero on the time slices of
/// other ranks), for the part at `origin` of a lattice of extents `global`.
fn contract(c: &Inputs, origin: [usize; 4], global: [usize; 4]) -> Vec<f64> {
    let (lat, nt) = (&c.lattice, global[3]);
    let (d, half) = (lat.dims(), lat.half_volume());
    (0..c.modes.len() / 4)
        .into_par_iter()
        .flat_map_iter(|k| {
            // Each direction's factor by local coordinate, then the sum of
            // each of this rank's time slices.
            let tables: Vec<Vec<C64>> = (0..4)
                .map(|mu| {
                    (0..d[mu])
                        .map(|x| {
                            let dx = (origin[mu] + x) as f64 - c.x0[mu] as f64;
                            let n = c.modes[4 * k + mu] as f64;
                            factor(c.kinds[4 * k + mu], 2.0 * PI * n * dx / global[mu] as f64)
                        })
                        .collect()
                })
                .collect();
            let mut slices = vec![C64::new(0.0, 0.0); nt];
            for (site, p) in c.products.iter().enumerate() {
                let x = lat.coords(Parity::from_index(site / half), site % half);
                let f = (0..4).fold(C64::new(1.0, 0.0), |f, mu| f * tables[mu][x[mu]]);
                slices[origin[3] + x[3]] += f * p;
            }
            slices.into_iter().flat_map(|z| [z.re, z.im])
        })
        .collect()
}
