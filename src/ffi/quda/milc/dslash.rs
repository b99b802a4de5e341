//! `qudaDslash`: MILC's staggered hopping term between the parities of
//! full-lattice vectors.

use std::os::raw::{c_int, c_void};

use super::layout::host_double;
use super::staggered::{load_links, offset_reals, offset_reals_mut, parity};
use crate::ffi::quda::abi::*;
use crate::ffi::quda::errors::quda_collective;
use crate::ffi::quda::host::not_null;
use crate::ffi::quda::state;
use crate::layout::{HostReals, HostRealsMut};
use crate::precision::Precision;

/// `qudaDslash(...)`: the staggered hopping term into parity
/// `inv_args.evenodd` from the other parity of `source`,
/// `solution_p = D_pq source_q` (fat and, if not NULL, long links as
/// MILC passes them; D of docs/conventions.md, MILC's `dslash_fn`). Only
/// that parity's half of `solution` is written (`num_iters` is not).
///
/// # Safety
/// As `qudaInvert`.
#[no_mangle]
pub unsafe extern "C" fn qudaDslash(
    external_precision: c_int,
    quda_precision: c_int,
    inv_args: QudaInvertArgs_t,
    milc_fatlink: *const c_void,
    milc_longlink: *const c_void,
    source: *mut c_void,
    solution: *mut c_void,
    _num_iters: *mut c_int,
) {
    quda_collective("qudaDslash", || {
        not_null(source, "source")?;
        not_null(solution, "solution")?;
        let p = parity(inv_args.evenodd)?;
        let precision = if quda_precision == 2 {
            Precision::Double
        } else {
            Precision::Single
        };
        let double = host_double(external_precision);
        state::with(|s| {
            // SAFETY: the caller's links.
            let (links, d) = unsafe {
                load_links(s, milc_fatlink, milc_longlink, double, precision, precision)?
            };
            let vh = d.iter().product::<usize>() / 2;
            let q = p.other();
            // The other parity of the source, zero elsewhere.
            let mut inp = vec![0.0; 2 * vh * 6];
            // SAFETY: the caller's full-lattice source.
            match unsafe { offset_reals(source, q.index() * vh * 6, vh * 6, double) } {
                HostReals::F64(v) => inp[q.index() * vh * 6..][..vh * 6].copy_from_slice(v),
                HostReals::F32(v) => inp[q.index() * vh * 6..][..vh * 6]
                    .iter_mut()
                    .zip(v)
                    .for_each(|(o, &x)| *o = x as f64),
            }
            let mut out = vec![0.0; 2 * vh * 6];
            s.context.apply_staggered(
                &links,
                0.0,
                crate::api::StaggeredOp::Dslash,
                HostReals::F64(&inp),
                HostRealsMut::F64(&mut out),
            )?;
            let half = &out[p.index() * vh * 6..][..vh * 6];
            // SAFETY: the caller's full-lattice solution; parity p's half.
            match unsafe { offset_reals_mut(solution, p.index() * vh * 6, vh * 6, double) } {
                HostRealsMut::F64(o) => o.copy_from_slice(half),
                HostRealsMut::F32(o) => o.iter_mut().zip(half).for_each(|(o, &x)| *o = x as f32),
            }
            Ok(())
        })
    })
}
