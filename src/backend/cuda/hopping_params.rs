//! What every hopping-term kernel is given (`struct DslashParams` of
//! kernels/wilson_dslash.cuh, which the clover forms extend): the parity
//! blocks of the fields, the links, the lattice and its fast division, and
//! the checks that the fields match.

use cudarc::driver::{CudaStream, DeviceRepr};

use super::driver::device::Device;
use super::driver::launch;
use super::fields::{same_lattice, spinor_block_bytes, CudaGauge, CudaSpinor};
use super::halo::{Block, DeferredFailure, GaugeHalo, HaloView, SiteRows};
use crate::backend::{GaugeStorage, SpinorField};
use crate::error::{Error, Result};
use crate::lattice::{Parity, Subset};

/// Kernel arguments (`struct DslashParams` in wilson_dslash.cuh).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DslashParams {
    pub out: u64,
    pub inp: u64,
    pub x: u64,
    pub gauge: u64,
    pub a: f64,
    pub gauge_scale: f64,
    pub t_sign: f64,
    pub dims: [i32; 4],
    pub parity: i32,
    pub vh: i32,
    pub stride: i32,
    pub gauge_stride: i32,
    /// The clover forms only (`backend/cuda/clover.rs`); 0 otherwise.
    pub clover: u64,
    pub clover_norm: u64,
    pub clover_stride: i32,
    /// 1: the kernel asks L2 for its links before it waits for its
    /// predecessor (`links_prefetched`).
    pub prefetch_links: i32,
    /// Division by X, Y, Z without the division sequence
    /// (`division_magic`): the site coordinates of `dslash_site`.
    pub div_magic: [u32; 3],
    pub div_shift: [u32; 3],
    /// On a cut lattice, bit mu where mu is cut: the launch computes the
    /// interior sites only (`launch_on_cut`); 0: every site.
    pub interior_cut: i32,
    pub pad: i32,
}
// SAFETY: plain old data with the C layout of `DslashParams`.
unsafe impl DeviceRepr for DslashParams {}

/// Right-hand sides of one several-field launch (`LATSOL_MAX_RHS`).
pub const MAX_RHS: usize = 16;
/// Threads a block of the several-field kernels (`LATSOL_RHS_BLOCK`).
pub const RHS_BLOCK: u32 = 128;

/// The several-field launch (`struct DslashRhsParams` in wilson_dslash.cuh):
/// the one-field arguments and each field's output, input and xpay blocks.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct DslashRhsParams {
    pub d: DslashParams,
    pub out: [u64; MAX_RHS],
    pub inp: [u64; MAX_RHS],
    pub x: [u64; MAX_RHS],
    pub count: i32,
    /// 0: right-hand side fastest; g: g blocks of sites of each field in
    /// turn (`LATSOL_RHS_GROUP`, an experiment switch).
    pub group: i32,
}
// SAFETY: plain old data with the C layout of `DslashRhsParams`.
unsafe impl DeviceRepr for DslashRhsParams {}

/// The launch order of the several-field kernels: `LATSOL_RHS_GROUP`
/// (an experiment switch, read at each launch so that a benchmark may
/// change it; a lookup of one variable, no allocation when unset), else
/// 0, right-hand side fastest.
fn rhs_group() -> u32 {
    std::env::var_os("LATSOL_RHS_GROUP")
        .and_then(|g| g.to_str().and_then(|g| g.parse().ok()))
        .unwrap_or(0)
}

/// Launches kernel `name` (a `_rhs` form) over the fields of `params`
/// (one `hopping_params` each, equal but for their fields), up to
/// `MAX_RHS` a launch: the grid is the one-field grid times the count,
/// right-hand side fastest (kernels/wilson_dslash.cuh, `wilson_dslash_rhs`).
pub(crate) fn launch_rhs(dev: &Device, name: &str, params: &[DslashParams]) -> Result<()> {
    let Some(first) = params.first() else {
        return Ok(());
    };
    let fields = |p: &DslashParams| DslashParams {
        out: 0,
        inp: 0,
        x: 0,
        ..*p
    };
    let common = fields(first);
    if params.iter().any(|p| fields(p) != common) {
        return Err(Error::Internal(
            "several-field dslash: the fields differ in more than their blocks".into(),
        ));
    }
    let kernel = dev.kernel(name)?;
    let group = rhs_group();
    let mut blocks = (first.vh as u32).div_ceil(RHS_BLOCK);
    if group > 0 {
        blocks = blocks.div_ceil(group) * group;
    }
    for chunk in params.chunks(MAX_RHS) {
        let mut m = DslashRhsParams {
            d: common,
            out: [0; MAX_RHS],
            inp: [0; MAX_RHS],
            x: [0; MAX_RHS],
            count: chunk.len() as i32,
            group: group as i32,
        };
        for (k, p) in chunk.iter().enumerate() {
            (m.out[k], m.inp[k], m.x[k]) = (p.out, p.inp, p.x);
        }
        launch::launch(
            &dev.stream,
            &kernel,
            blocks * chunk.len() as u32,
            RHS_BLOCK,
            &m,
        )?;
    }
    Ok(())
}

/// The edges' launch (`struct EdgeParams` in wilson_dslash.cuh).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct EdgeParams {
    pub d: DslashParams,
    pub h: HaloView,
}
// SAFETY: plain old data with the C layout of `EdgeParams`.
unsafe impl DeviceRepr for EdgeParams {}

/// A hopping term, `launch_all` launching kernel `name` with `params`
/// over every site; on a cut lattice (the links have a halo) over the
/// interior sites, the edges after (`launch_on_cut`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn launch_hopping(
    dev: &Device,
    failure: &DeferredFailure,
    gauge: &CudaGauge,
    parity: Parity,
    inp: &CudaSpinor,
    params: &DslashParams,
    name: &str,
    launch_all: impl FnOnce(&DslashParams) -> Result<()>,
) -> Result<()> {
    match &gauge.halo {
        None => launch_all(params),
        Some(halo) => {
            let edges = format!("{name}_edges");
            launch_on_cut(dev, failure, halo, parity, inp, params, &edges, launch_all)
        }
    }
}

/// A hopping term on a cut lattice (`GaugeHalo::apply`): `interior`
/// launches the one-device kernel with `params` over the interior sites
/// while the faces of `inp` travel, then the kernel `edges` (the same
/// form + "_edges") computes the sites on a cut face.
#[allow(clippy::too_many_arguments)]
fn launch_on_cut(
    dev: &Device,
    failure: &DeferredFailure,
    halo: &GaugeHalo,
    parity: Parity,
    inp: &CudaSpinor,
    params: &DslashParams,
    edges: &str,
    interior: impl FnOnce(&DslashParams) -> Result<()>,
) -> Result<()> {
    let block = Block {
        ptr: params.inp,
        stride: inp.stride,
        rows: SiteRows::of_field(inp.precision(), inp.fermion),
    };
    let inside = DslashParams {
        interior_cut: halo.cut_bits(),
        ..*params
    };
    let key = (inp.precision(), inp.fermion);
    halo.apply(
        dev,
        failure,
        parity,
        block,
        key,
        || interior(&inside),
        |stream, view| {
            let kernel = dev.kernel(edges)?;
            let p = EdgeParams {
                d: *params,
                h: *view,
            };
            const BLOCK: u32 = 128;
            let grid = launch::grid_for(view.n_edges as usize, BLOCK)?;
            launch::launch(stream, &kernel, grid, BLOCK, &p)
        },
    )
}

/// The multiplier m and shift s with which kernels/core.cuh
/// `divide` gives n / d for every 32-bit n (d ≥ 2): t = umulhi(n, m),
/// n / d = (t + ((n − t) >> 1)) >> s. The round-up method of Granlund and
/// Montgomery (1994, "Division by invariant integers using
/// multiplication", §4), with l = ⌈log2 d⌉: m = ⌊2^32 (2^l − d) / d⌋ + 1,
/// s = l − 1. Two integer multiplications' worth of instructions where a
/// division is about fifteen (the coordinates are a tenth of the small
/// hopping term's work).
pub fn division_magic(d: u32) -> (u32, u32) {
    assert!(d >= 2, "division_magic: a lattice extent is at least 2");
    let l = 32 - (d - 1).leading_zeros();
    let m = ((1u64 << 32) * ((1u64 << l) - d as u64)) / d as u64 + 1;
    (m as u32, l - 1)
}

/// Index of the parity block `p` within a field of `subset` (0 or 1), or
/// an error if a single-parity field holds the other parity.
pub fn block_of(subset: Subset, p: Parity, what: &str) -> Result<usize> {
    match subset {
        Subset::Full => Ok(p.index()),
        Subset::Single(q) if q == p => Ok(0),
        Subset::Single(q) => Err(Error::Internal(format!(
            "dslash: {what} holds parity {q:?} where {p:?} is needed"
        ))),
    }
}

/// The checked arguments of a hopping-term kernel (no clover).
pub(crate) fn hopping_params(
    stream: &CudaStream,
    out: &CudaSpinor,
    parity: Parity,
    gauge: &CudaGauge,
    inp: &CudaSpinor,
    a: f64,
    x: Option<&CudaSpinor>,
) -> Result<DslashParams> {
    let lat = &gauge.lattice;
    let same = |f: &CudaSpinor| same_lattice(&f.lattice, lat);
    if !same(out) || !same(inp) || x.is_some_and(|x| !same(x)) {
        return Err(Error::Internal(
            "dslash: fields on different lattices".into(),
        ));
    }
    let prec = out.precision();
    if inp.precision() != prec || x.is_some_and(|x| x.precision() != prec) {
        return Err(Error::Internal(
            "dslash: fields of different precisions".into(),
        ));
    }
    // The links uploaded for this format (for the packed formats: the
    // fixed-point links of seed clark2022 §4 that `upload_gauge` stores).
    if gauge.precision() != prec {
        return Err(Error::Unsupported(format!(
            "dslash with {:?} links on {prec:?} spinors (the CUDA backend needs the links \
             uploaded for the spinors' precision)",
            gauge.precision()
        )));
    }
    let vh = lat.half_volume();
    let s = stream;
    let stride = out.stride;
    if inp.stride != stride || x.is_some_and(|x| x.stride != stride) {
        return Err(Error::Internal(
            "dslash: fields of different strides".into(),
        ));
    }
    let block_bytes = spinor_block_bytes(prec, stride) as u64;
    let at = |f: &CudaSpinor, p: Parity, what: &str| -> Result<u64> {
        Ok(f.data.ptr(s) + block_of(f.subset, p, what)? as u64 * block_bytes)
    };
    let d = lat.dims();
    let magic = [0, 1, 2].map(|mu| division_magic(d[mu] as u32));
    let params = DslashParams {
        out: at(out, parity, "the output")?,
        inp: at(inp, parity.other(), "the input")?,
        x: match x {
            Some(x) => at(x, parity, "the xpay field")?,
            None => 0,
        },
        gauge: gauge.links.ptr(s),
        a,
        gauge_scale: gauge.scale,
        t_sign: gauge.t_sign,
        dims: [d[0] as i32, d[1] as i32, d[2] as i32, d[3] as i32],
        parity: parity.index() as i32,
        vh: vh as i32,
        stride: stride as i32,
        gauge_stride: gauge.stride as i32,
        div_magic: magic.map(|(m, _)| m),
        div_shift: magic.map(|(_, s)| s),
        ..Default::default()
    };
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lattice::Parity;

    #[test]
    fn parameter_struct_matches_the_kernel() {
        // wilson_dslash.cuh static_asserts the same size.
        assert_eq!(std::mem::size_of::<DslashParams>(), 144);
        assert_eq!(std::mem::offset_of!(DslashParams, interior_cut), 136);
        assert_eq!(std::mem::size_of::<EdgeParams>(), 144 + 288);
        assert_eq!(std::mem::offset_of!(DslashParams, div_magic), 112);
        assert_eq!(std::mem::offset_of!(DslashParams, div_shift), 124);
        assert_eq!(std::mem::offset_of!(DslashParams, clover), 88);
        assert_eq!(std::mem::offset_of!(DslashParams, clover_stride), 104);
        assert_eq!(std::mem::offset_of!(DslashParams, a), 32);
        assert_eq!(std::mem::offset_of!(DslashParams, t_sign), 48);
        assert_eq!(std::mem::offset_of!(DslashParams, dims), 56);
        assert_eq!(std::mem::offset_of!(DslashParams, gauge_stride), 84);
    }

    /// `divide` of wilson_dslash.cuh, as the kernel computes it.
    fn divide(n: u32, (m, s): (u32, u32)) -> u32 {
        let t = ((n as u64 * m as u64) >> 32) as u32;
        (t + ((n - t) >> 1)) >> s
    }

    #[test]
    fn magic_division_is_exact() {
        let mut rng = crate::random::rng(5);
        for d in (2..=1100).chain([4095, 4096, 65535, 65536, 1 << 20, (1 << 31) + 1, u32::MAX]) {
            let magic = division_magic(d);
            let edges = [
                0,
                1,
                d - 1,
                d,
                d.saturating_add(1),
                u32::MAX - 1,
                u32::MAX,
                1 << 31,
            ];
            let multiples = (1..64u32).flat_map(|k| {
                let q = k.saturating_mul(d);
                [q.saturating_sub(1), q]
            });
            let random = (0..256).map(|_| rand::RngCore::next_u32(&mut rng));
            for n in edges.into_iter().chain(multiples).chain(random) {
                assert_eq!(divide(n, magic), n / d, "{n} / {d}");
            }
        }
        // The kernel's text does what `divide` does.
        let text = include_str!("../../../kernels/core.cuh");
        assert!(text.contains("const unsigned t = __umulhi(n, m);"));
        assert!(text.contains("return (t + ((n - t) >> 1)) >> s;"));
    }

    #[test]
    fn parity_blocks_of_full_and_single_fields() {
        assert_eq!(block_of(Subset::Full, Parity::Odd, "f").unwrap(), 1);
        assert_eq!(block_of(Subset::Full, Parity::Even, "f").unwrap(), 0);
        assert_eq!(
            block_of(Subset::Single(Parity::Odd), Parity::Odd, "f").unwrap(),
            0
        );
        assert!(block_of(Subset::Single(Parity::Odd), Parity::Even, "f").is_err());
    }
}
