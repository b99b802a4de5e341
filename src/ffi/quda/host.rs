//! The caller's host arrays (raw pointers from QUDA's and MILC's calls) as
//! latsol's host views: the numbers in double or single, the links in
//! QDP, MILC or CPS_WILSON order, and the NULL check every pointer gets.

use std::os::raw::c_void;

use crate::error::{Error, Result};
use crate::layout::{GaugeOrder, HostGauge, HostReals, HostRealsMut};

/// `n` host reals at `p` in double or single.
///
/// # Safety
/// `p` points to `n` readable numbers of that precision.
pub(crate) unsafe fn host_reals<'a>(p: *const c_void, n: usize, double: bool) -> HostReals<'a> {
    // SAFETY: as the caller promises.
    unsafe {
        if double {
            HostReals::F64(std::slice::from_raw_parts(p as *const f64, n))
        } else {
            HostReals::F32(std::slice::from_raw_parts(p as *const f32, n))
        }
    }
}

/// `n` writable host reals at `p`.
///
/// # Safety
/// `p` points to `n` writable numbers of that precision, aliasing nothing
/// else the call reads.
pub(crate) unsafe fn host_reals_mut<'a>(
    p: *mut c_void,
    n: usize,
    double: bool,
) -> HostRealsMut<'a> {
    // SAFETY: as the caller promises.
    unsafe {
        if double {
            HostRealsMut::F64(std::slice::from_raw_parts_mut(p as *mut f64, n))
        } else {
            HostRealsMut::F32(std::slice::from_raw_parts_mut(p as *mut f32, n))
        }
    }
}

pub(crate) fn not_null<T>(p: *const T, name: &str) -> Result<()> {
    if p.is_null() {
        return Err(Error::NullPointer(format!("{name} is NULL")));
    }
    Ok(())
}

/// The caller's links in `order`: QDP four arrays of `n` reals (V links;
/// `h_gauge` an array of four pointers), MILC and CPS_WILSON one array of
/// `4 n`.
///
/// # Safety
/// `h_gauge` holds the links so.
pub(crate) unsafe fn host_gauge<'a>(
    h_gauge: *mut c_void,
    order: GaugeOrder,
    n: usize,
    double: bool,
) -> Result<HostGauge<'a>> {
    // SAFETY: as the caller promises.
    unsafe {
        Ok(match order {
            GaugeOrder::Qdp => {
                let ptrs = std::slice::from_raw_parts(h_gauge as *const *const c_void, 4);
                for (mu, q) in ptrs.iter().enumerate() {
                    not_null(*q, &format!("h_gauge[{mu}]"))?;
                }
                HostGauge::Qdp(std::array::from_fn(|mu| host_reals(ptrs[mu], n, double)))
            }
            GaugeOrder::Milc => HostGauge::Milc(host_reals(h_gauge, 4 * n, double)),
            GaugeOrder::CpsWilson => HostGauge::CpsWilson(host_reals(h_gauge, 4 * n, double)),
        })
    }
}
