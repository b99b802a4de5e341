//! Host side of the Wilson hopping term (`kernels/wilson_dslash.cuh`):
//! `out[p] = a · D_{p,p̄} in[p̄] (+ x[p])`, the semantics of
//! `Backend::wilson_dslash`. Picks the parity blocks of full or
//! single-parity fields, checks that every field matches, and launches the
//! kernel for the precision, dagger and xpay form with a tuned block size.

use cudarc::driver::DeviceRepr;

use super::blas::suffix;
use super::modules::{Kernel, Module};
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
    pub pad: i32,
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

/// Whether a format also has the small-volume forms: four threads a site
/// (`wilson_dslash_split` in kernels/wilson_dslash.cuh, named
/// `<kernel>_split`) and one thread a site at the widest register budget
/// (`LATSOL_DSLASH_WIDE`, named `<kernel>_wide`), in a source of their own
/// (kernels/wilson_dslash_<suffix>_small.cu).
pub fn has_small_volume_forms(p: Precision) -> bool {
    p == Precision::Half
}

/// Sites a parity up to which the small-volume forms are timed beside the
/// plain one (and their module compiled with a gauge field's): 20^4 (80000)
/// is below, 24^4 (165888) above, where the plain form won every tuned
/// choice of reconstruct 18 and 12 on the H100 (docs/performance.md).
pub const SMALL_VOLUME_SITES: usize = 1 << 17;

/// A wide form's block where untuned: its `__launch_bounds__` largest.
const WIDE_BLOCK: u32 = 256;

/// Sites a block of a split form serves (`LATSOL_SPLIT_SITES`), and its
/// threads (four a site).
const SPLIT_SITES: u32 = 32;
const SPLIT_BLOCK: u32 = 4 * SPLIT_SITES;

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

/// Which form of the hopping term to launch where a format has several.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum DslashForm {
    /// The fastest at each kernel and size, timed on first use, up to
    /// `SMALL_VOLUME_SITES` sites a parity; the plain form above (the default).
    Tuned = 0,
    /// Always the split forms (four threads a site).
    Split = 1,
    /// Always one thread a site.
    Plain = 2,
    /// Always one thread a site at the widest register budget.
    Wide = 3,
}

impl DslashForm {
    /// `LATSOL_DSLASH_FORM` (`plain`, `split`, `wide`, `tuned`), else
    /// `LATSOL_DSLASH_SPLIT` (1 `Split`, 0 `Plain`), else `Tuned`.
    pub(super) fn from_env() -> DslashForm {
        match std::env::var("LATSOL_DSLASH_FORM").as_deref() {
            Ok("plain") => return DslashForm::Plain,
            Ok("split") => return DslashForm::Split,
            Ok("wide") => return DslashForm::Wide,
            Ok("tuned") => return DslashForm::Tuned,
            _ => {}
        }
        match std::env::var("LATSOL_DSLASH_SPLIT").as_deref() {
            Ok("1") => DslashForm::Split,
            Ok("0") => DslashForm::Plain,
            _ => DslashForm::Tuned,
        }
    }

    /// The form a tuned choice numbers (`Tuner::variant_for`), and back.
    fn from_variant(v: u32) -> DslashForm {
        match v {
            1 => DslashForm::Split,
            2 => DslashForm::Wide,
            _ => DslashForm::Plain,
        }
    }
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
        let params = self.dslash_params(out, parity, gauge, inp, a, x)?;
        let name = kernel_name(out.precision(), gauge.reconstruct, dagger, x.is_some());
        let sites = gauge.lattice.half_volume();
        let plain = self.kernel(&name)?;
        let form = if has_small_volume_forms(out.precision()) {
            self.form_chosen(&plain, sites, &params)?
        } else {
            DslashForm::Plain
        };
        match form {
            DslashForm::Split => {
                let split = self.kernel(&format!("{name}_split"))?;
                let grid = launch::grid_for(sites, SPLIT_SITES)?;
                launch::launch(&self.stream, &split, grid, SPLIT_BLOCK, &params)
            }
            DslashForm::Wide => {
                let wide = self.kernel(&format!("{name}_wide"))?;
                self.launch_tuned_kernel(&wide, sites, WIDE_BLOCK, &params, None)
            }
            // The output is never read: timing runs while tuning are harmless.
            _ => self.launch_tuned_kernel(&plain, sites, 128, &params, None),
        }
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

    /// Which forms of the hopping term this backend launches.
    pub fn dslash_form(&self) -> DslashForm {
        match self.dslash_form.load(std::sync::atomic::Ordering::Relaxed) {
            1 => DslashForm::Split,
            2 => DslashForm::Plain,
            3 => DslashForm::Wide,
            _ => DslashForm::Tuned,
        }
    }

    /// Sets the forms to launch (checks run each form against the CPU).
    pub fn set_dslash_form(&self, forms: DslashForm) {
        self.dslash_form
            .store(forms as u8, std::sync::atomic::Ordering::Relaxed);
    }

    /// Which form of kernel `plain` to launch on `sites` sites: the
    /// override, else up to `SMALL_VOLUME_SITES` the fastest of the three
    /// (above, the plain form), each at its best block, timed
    /// once with these arguments (the output is never read). (Keyed by the
    /// one-thread kernel: once chosen, no name is formed and no other kernel
    /// looked up on the launch path unless another form is the one.)
    fn form_chosen(
        &self,
        plain: &Kernel,
        sites: usize,
        params: &DslashParams,
    ) -> Result<DslashForm> {
        match self.dslash_form() {
            DslashForm::Tuned if sites <= SMALL_VOLUME_SITES => {}
            DslashForm::Tuned => return Ok(DslashForm::Plain),
            forced => return Ok(forced),
        }
        // The forms differ by a few per cent at the sizes where more than
        // one may win: each timed over enough launches to see it.
        const LAUNCHES: usize = 64;
        let timed_at_best_block = |k: &Kernel, default_block: u32| -> Result<f32> {
            let block = self.tuner.block_for(k, sites, default_block, |b| {
                let grid = launch::grid_for(sites, b)?;
                launch::time_launches(&self.stream, || {
                    launch::launch(&self.stream, k, grid, b, params)
                })
            })?;
            let grid = launch::grid_for(sites, block)?;
            launch::time_launches_n(&self.stream, LAUNCHES, || {
                launch::launch(&self.stream, k, grid, block, params)
            })
        };
        let v = self
            .tuner
            .variant_for(plain, sites, 3, |v| match DslashForm::from_variant(v) {
                DslashForm::Split => {
                    let split = self.kernel(&format!("{}_split", plain.name))?;
                    let grid = launch::grid_for(sites, SPLIT_SITES)?;
                    launch::time_launches_n(&self.stream, LAUNCHES, || {
                        launch::launch(&self.stream, &split, grid, SPLIT_BLOCK, params)
                    })
                }
                DslashForm::Wide => {
                    let wide = self.kernel(&format!("{}_wide", plain.name))?;
                    timed_at_best_block(&wide, WIDE_BLOCK)
                }
                _ => timed_at_best_block(plain, 128),
            })?;
        Ok(DslashForm::from_variant(v))
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
        assert!(text.contains(&format!("__launch_bounds__({WIDE_BLOCK}, 1) name(")));
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
