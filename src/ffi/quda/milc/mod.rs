//! QUDA's MILC interface (`quda_milc_interface.h`): what MILC's
//! `generic_ks/*_gpu.c` and `generic_clover` call. Learned from QUDA's
//! lib/milc_interface.cpp and MILC's callers (docs/quda-compat.md, "MILC");
//! nothing copied. The contracts kept:
//! - the links (MILC order, even sites first) carry the staggered phases,
//!   the anti-periodic sign and the Naik coefficient: used as they are;
//!   they are read on every call (MILC's `num_iters = −1`, "the links
//!   changed", needs no cache to drop);
//! - the staggered solvers read only `evenodd`, `max_iter`,
//!   `mixed_precision` of `QudaInvertArgs_t` (MILC leaves the rest
//!   unset); precision codes 2 = double, else single; the outer precision
//!   is double unless `QUDA_MILC_OVERRIDE_DOUBLE_MULTISHIFT` is set (not
//!   "0"); `mixed_precision` 0/1/2 = sloppy as outer, single, half; a
//!   heavy-quark target makes the sloppy precision the outer one;
//!   `QUDA_MILC_HISQ_RECONSTRUCT` = 13 or 9 compresses the long links;
//! - `qudaInvert` solves `(4m² − D_pq D_qp) x_p = b_p` on parity
//!   `evenodd` of full-lattice arrays from the solution as initial guess;
//!   `qudaMultishiftInvert` solves `(−D_pq D_qp + offset_i) x_i = b_p`
//!   from zero; non-convergence is not an error (MILC compares the
//!   returned residuals with its targets).
//!
//! The files:
//! - `layout`: the lattice layout and MILC's precision code, which every
//!   call reads; `staggered`: what the staggered calls share.
//! - The entry points: `init` (start, end, host memory), `invert` (the
//!   staggered solves), `dslash`, `clover` (the Wilson-clover solve), `clover_fields`
//!   (the resident gauge and clover fields and the multi-shift solve on
//!   them), `clover_params` (what they share),
//!   `gauge` (plaquette, Polyakov loop), `contract` (meson contractions
//!   with Fourier phases); `targets`: the solves' two
//!   stopping targets.

pub(crate) mod clover;
pub(crate) mod clover_fields;
pub(crate) mod clover_params;
pub(crate) mod contract;
pub(crate) mod dslash;
pub(crate) mod fat_links;
pub(crate) mod gauge;
pub(crate) mod gauge_fixing;
pub(crate) mod init;
pub(crate) mod invert;
pub(crate) mod layout;
pub(crate) mod spin_taste;
pub(crate) mod staggered;
pub(crate) mod targets;
