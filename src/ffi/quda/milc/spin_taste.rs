//! `qudaSpinTaste` (MILC's `WANT_SPIN_TASTE_GPU`: ks_spectrum's
//! generic_ks/spin_taste_ops.c): `γ_spin ⊗ ξ_taste` of a full-lattice
//! colour-vector field (`Context::apply_spin_taste`; docs/milc-spin-taste.md).
//! As QUDA's (lib/milc_interface.cpp): MILC-order arrays of this rank's
//! sites in `external_precision` (2 double, else single), `dst` may be
//! `src`; the links (MILC order, their phases as MILC put them) are loaded
//! where `reloadGaugeField` is not 0, or where none of that precision are
//! kept, else the kept ones are used; the local operators (spin = taste
//! up to the shift: `spin XOR taste` = 0) need none. Masks outside 0..15
//! are refused (QUDA returns zeros). Computed in double.

use std::os::raw::{c_int, c_void};

use super::layout::dims;
use crate::error::{Error, Result};
use crate::ffi::quda::errors::quda_collective;
use crate::ffi::quda::host::{host_reals, host_reals_mut, not_null};
use crate::ffi::quda::state;
use crate::lattice::Lattice;
use crate::layout::{HostGauge, HostRealsMut};
use crate::su3::ColorVector;
use num_complex::Complex64 as C64;

fn mask(v: c_int, name: &str) -> Result<u32> {
    u32::try_from(v)
        .ok()
        .filter(|&m| m <= 15)
        .ok_or_else(|| Error::InvalidArgument(format!("{name} = {v}: a gamma mask 0..15")))
}

/// `qudaSpinTaste(external_precision, quda_precision, links, src, dst,
/// spin, taste, reloadGaugeField)`.
///
/// # Safety
/// `src` and `dst` hold this rank's V·6 reals, `links` (if not NULL) its
/// V·4·18, in `external_precision`.
#[no_mangle]
#[allow(non_snake_case)]
pub unsafe extern "C" fn qudaSpinTaste(
    external_precision: c_int,
    _quda_precision: c_int,
    links: *mut c_void,
    src: *mut c_void,
    dst: *mut c_void,
    spin: c_int,
    taste: c_int,
    reloadGaugeField: c_int,
) {
    quda_collective("qudaSpinTaste", || {
        let (spin, taste) = (mask(spin, "spin")?, mask(taste, "taste")?);
        not_null(src, "src")?;
        not_null(dst, "dst")?;
        let d = dims()?;
        let lat = std::sync::Arc::new(Lattice::new(d)?);
        let v = lat.volume();
        let double = external_precision == 2;
        // SAFETY: the caller's source.
        let h = unsafe { host_reals(src, 6 * v, double) };
        let chi: Vec<ColorVector> = (0..v)
            .map(|i| {
                std::array::from_fn(|c| C64::new(h.get(6 * i + 2 * c), h.get(6 * i + 2 * c + 1)))
            })
            .collect();
        if chi
            .iter()
            .flatten()
            .any(|z| !z.re.is_finite() || !z.im.is_finite())
        {
            return Err(Error::InvalidArgument(
                "src: not finite (NaN or Inf)".into(),
            ));
        }
        let shifted = spin ^ taste != 0;
        let out = state::with(|s| {
            let kept = s
                .spin_taste_links
                .as_ref()
                .is_some_and(|(f, dbl)| *dbl == double && f.lattice().dims() == d);
            if !links.is_null() && (reloadGaugeField != 0 || !kept) {
                // SAFETY: the caller's links.
                let host = HostGauge::Milc(unsafe { host_reals(links, v * 72, double) });
                let field = s.context.agree(crate::layout::gauge::import(&lat, &host))?;
                s.spin_taste_links = Some((field, double));
            } else if shifted && !kept {
                return s.context.agree(Err(Error::InvalidArgument(format!(
                    "links: NULL and none kept; spin = {spin}, taste = {taste} shift the field"
                ))));
            }
            let field = s.spin_taste_links.as_ref().map(|(f, _)| f);
            s.context
                .apply_spin_taste(field.filter(|_| shifted), &lat, &chi, spin, taste)
        })?;
        let reals: Vec<f64> = out.iter().flatten().flat_map(|z| [z.re, z.im]).collect();
        // SAFETY: the caller's destination (it may be the source, read above).
        match unsafe { host_reals_mut(dst, 6 * v, double) } {
            HostRealsMut::F64(o) => o.copy_from_slice(&reals),
            HostRealsMut::F32(o) => o.iter_mut().zip(&reals).for_each(|(o, &x)| *o = x as f32),
        }
        Ok(())
    })
}
