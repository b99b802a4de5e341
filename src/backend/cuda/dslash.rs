//! Host side of the Wilson hopping term (`kernels/wilson_dslash.cuh`):
//! `out[p] = a · D_{p,p̄} in[p̄] (+ x[p])`, the semantics of
//! `Backend::wilson_dslash`. Picks the parity blocks of full or
//! single-parity fields, checks that every field matches, and launches the
//! kernel for the precision, dagger and xpay form with a tuned block size.

use cudarc::driver::DeviceRepr;

use super::blas::suffix;
use super::dslash_forms::has_small_volume_forms;
use super::modules::Module;
use super::{launch, same_lattice, spinor_block_bytes, CudaBackend, CudaGauge, CudaSpinor};
use crate::backend::{GaugeStorage, SpinorField};
use crate::error::{Error, Result};
use crate::lattice::{Parity, Subset};
use crate::precision::{Precision, Reconstruct};

/// Kernel arguments (`struct DslashParams` in wilson_dslash.cuh).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
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
}
// SAFETY: plain old data with the C layout of `DslashParams`.
unsafe impl DeviceRepr for DslashParams {}

/// The multiplier m and shift s with which kernels/wilson_dslash.cuh
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

/// The kernel's name for a storage format, reconstruction and form.
pub fn kernel_name(p: Precision, r: Reconstruct, dagger: bool, xpay: bool) -> String {
    format!(
        "wilson_dslash_{}_r{}{}{}",
        suffix(p),
        r.reals(),
        if dagger { "_dag" } else { "" },
        if xpay { "_xpay" } else { "" }
    )
}

/// Every kernel of `kernels/wilson_dslash_<suffix(p)>.cu`: one storage
/// format, every reconstruction, dagger and xpay, one thread a site (the
/// small-volume forms: `small_volume_kernel_names`).
pub fn kernel_names(p: Precision) -> Vec<String> {
    let mut v = Vec::new();
    for r in [Reconstruct::Full18, Reconstruct::Twelve, Reconstruct::Eight] {
        for dagger in [false, true] {
            for xpay in [false, true] {
                v.push(kernel_name(p, r, dagger, xpay));
            }
        }
    }
    v
}

/// The small-volume forms of `kernel_names(p)` (none where the format has
/// none): the kernels of kernels/wilson_dslash_<suffix(p)>_small.cu.
pub fn small_volume_kernel_names(p: Precision) -> Vec<String> {
    if !has_small_volume_forms(p) {
        return Vec::new();
    }
    let plain = kernel_names(p);
    ["_split", "_wide"]
        .iter()
        .flat_map(|suffix| plain.iter().map(move |n| format!("{n}{suffix}")))
        .collect()
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

impl CudaBackend {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn dslash_impl(
        &self,
        out: &mut CudaSpinor,
        parity: Parity,
        gauge: &CudaGauge,
        inp: &CudaSpinor,
        dagger: bool,
        a: f64,
        x: Option<&CudaSpinor>,
    ) -> Result<()> {
        let mut params = self.dslash_params(out, parity, gauge, inp, a, x)?;
        let name = kernel_name(out.precision(), gauge.reconstruct, dagger, x.is_some());
        let plain = self.kernel(&name)?;
        let sizes = (
            gauge.links.bytes(),
            spinor_block_bytes(out.precision(), out.stride),
        );
        let sites = gauge.lattice.half_volume();
        let (kernel, grid, block, prefetch) =
            self.launch_choice(&plain, sites, &params, out.precision(), sizes)?;
        params.prefetch_links = prefetch as i32;
        launch::launch(&self.stream, &kernel, grid, block, &params)
    }

    /// The modules of the small-volume forms of `formats` (kernels/
    /// wilson_dslash_<format>_small.cu; none for a format without them).
    pub(crate) fn small_volume_modules(formats: &[(Precision, Reconstruct)]) -> Vec<Module> {
        formats
            .iter()
            .filter(|(p, _)| has_small_volume_forms(*p))
            .filter_map(|(p, r)| {
                Module::named(&format!(
                    "wilson_dslash_{}_small_r{}",
                    suffix(*p),
                    r.reals()
                ))
            })
            .collect()
    }

    /// Compiles (or loads from the cache) the small-volume forms' modules of
    /// `formats` now, in parallel, as a gauge field's import does for a
    /// small lattice.
    pub fn prepare_small_volume_forms(&self, formats: &[(Precision, Reconstruct)]) -> Result<()> {
        let modules = Self::small_volume_modules(formats);
        self.load_modules(&mut *self.loaded()?, &modules)
    }

    /// The checked arguments of a hopping-term kernel (no clover).
    pub(crate) fn dslash_params(
        &self,
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
        let s = &self.stream;
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cuda::dslash_forms::{SPLIT_BLOCK, SPLIT_SITES, WIDE_BLOCK};

    #[test]
    fn parameter_struct_matches_the_kernel() {
        // wilson_dslash.cuh static_asserts the same size.
        assert_eq!(std::mem::size_of::<DslashParams>(), 136);
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
        let text = include_str!("../../../kernels/wilson_dslash.cuh");
        assert!(text.contains("const unsigned t = __umulhi(n, m);"));
        assert!(text.contains("return (t + ((n - t) >> 1)) >> s;"));
    }

    #[test]
    fn the_split_block_is_the_kernels() {
        let text = include_str!("../../../kernels/wilson_dslash.cuh");
        assert!(text.contains(&format!("#define LATSOL_SPLIT_SITES {SPLIT_SITES}")));
        assert_eq!(
            SPLIT_BLOCK,
            4 * SPLIT_SITES,
            "a warp of sites per direction"
        );
    }

    #[test]
    fn small_volume_forms_are_in_their_own_modules() {
        use crate::backend::cuda::modules::Module;
        for r in [Reconstruct::Full18, Reconstruct::Twelve, Reconstruct::Eight] {
            let modules = CudaBackend::small_volume_modules(&[(Precision::Half, r)]);
            assert_eq!(modules.len(), 1, "{r:?}");
            let name = format!("wilson_dslash_f16_small_r{}", r.reals());
            assert_eq!(modules[0].name(), name);
            for form in ["split", "wide"] {
                let kernel = format!("wilson_dslash_f16_r{}_dag_xpay_{form}", r.reals());
                assert_eq!(
                    Module::of_kernel(&kernel).map(|m| m.name()),
                    Some(name.clone())
                );
            }
            let plain = kernel_name(Precision::Half, r, true, true);
            assert_eq!(
                Module::of_kernel(&plain).map(|m| m.name()),
                Some(format!("wilson_dslash_f16_r{}", r.reals()))
            );
        }
        assert!(
            CudaBackend::small_volume_modules(&[(Precision::Double, Reconstruct::Twelve)])
                .is_empty()
        );
    }

    #[test]
    fn the_wide_block_is_the_kernels() {
        let text = include_str!("../../../kernels/wilson_dslash.cuh");
        assert!(text.contains(&format!("#define LATSOL_WIDE_BOUNDS {WIDE_BLOCK}, 1\n")));
    }

    #[test]
    fn kernel_names_follow_precision_dagger_and_xpay() {
        assert_eq!(
            kernel_name(Precision::Single, Reconstruct::Full18, true, false),
            "wilson_dslash_f32_r18_dag"
        );
        assert_eq!(
            kernel_name(Precision::Half, Reconstruct::Twelve, false, true),
            "wilson_dslash_f16_r12_xpay"
        );
        assert_eq!(
            kernel_name(Precision::Quarter, Reconstruct::Full18, true, true),
            "wilson_dslash_f8_r18_dag_xpay"
        );
    }

    #[test]
    fn kernel_names_exist_in_the_sources() {
        use crate::backend::cuda::modules::SOURCES;
        let mut instantiated = 0;
        for src in SOURCES
            .iter()
            .filter(|s| s.name.starts_with("wilson_dslash"))
        {
            for n in (src.kernels)() {
                // Each name is a LATSOL_DSLASH_FORMS (or _SPLIT_FORMS,
                // _WIDE_FORMS) prefix plus a form suffix.
                let forms = if n.ends_with("_split") {
                    "SPLIT_FORMS"
                } else if n.ends_with("_wide") {
                    "WIDE_FORMS"
                } else {
                    "FORMS"
                };
                let prefix = n
                    .trim_end_matches("_split")
                    .trim_end_matches("_wide")
                    .trim_end_matches("_xpay")
                    .trim_end_matches("_dag");
                assert!(
                    src.text
                        .contains(&format!("LATSOL_DSLASH_{forms}({prefix},")),
                    "{n} in {}",
                    src.name
                );
                instantiated += 1;
            }
        }
        assert_eq!(
            instantiated,
            6 * 3 * 4 + 2 * 3 * 4,
            "6 formats, 3 reconstructions, 4 forms; half's split and wide forms"
        );
    }

    /// The packed modules pair their spinors with the links of seed
    /// clark2022 §4 (16-bit beside 20-bit, 32-bit beside 30-bit), as the
    /// CPU backend's `links.rs` and `upload_gauge` store them.
    #[test]
    fn packed_modules_use_the_packed_links() {
        use crate::backend::cuda::modules::SOURCES;
        let text = |name: &str| SOURCES.iter().find(|s| s.name == name).unwrap().text;
        for r in [18, 12, 8] {
            assert!(text("wilson_dslash_p20").contains(&format!(
                "LATSOL_DSLASH_FORMS(wilson_dslash_p20_r{r}, packed20, short, {r})"
            )));
            assert!(text("wilson_dslash_p30").contains(&format!(
                "LATSOL_DSLASH_FORMS(wilson_dslash_p30_r{r}, packed30, int, {r})"
            )));
        }
        assert_eq!(
            kernel_name(Precision::Packed30, Reconstruct::Eight, true, true),
            "wilson_dslash_p30_r8_dag_xpay"
        );
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
