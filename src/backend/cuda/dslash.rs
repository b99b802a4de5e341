//! Host side of the Wilson hopping term (`kernels/wilson_dslash.cuh`):
//! `out[p] = a · D_{p,p̄} in[p̄] (+ x[p])`, the semantics of
//! `Backend::wilson_dslash`: the kernel for the precision, dagger and xpay
//! form, launched in the form and block `dslash_forms` chooses, on the
//! parity blocks and checks of `hopping_params`.

use super::driver::launch;
use super::driver::modules::{Module, Source};
use super::dslash_forms::{has_small_volume_forms, WilsonKernels};
use super::fields::{spinor_block_bytes, suffix, CudaGauge, CudaSpinor};
use super::hopping_params::{hopping_params, launch_hopping, launch_rhs, DslashParams};
use crate::backend::SpinorField;
use crate::error::Result;
use crate::lattice::Parity;
use crate::precision::{Precision, Reconstruct};

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

/// The modules of the small-volume forms of `formats` (kernels/
/// wilson_dslash_<format>_small.cu; none for a format without them).
pub(crate) fn small_volume_modules(
    sources: &'static [Source],
    formats: &[(Precision, Reconstruct)],
) -> Vec<Module> {
    formats
        .iter()
        .filter(|(p, _)| has_small_volume_forms(*p))
        .filter_map(|(p, r)| {
            Module::named(
                sources,
                &format!("wilson_dslash_{}_small_r{}", suffix(*p), r.reals()),
            )
        })
        .collect()
}

impl WilsonKernels<'_> {
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
        let params = hopping_params(&self.stream, out, parity, gauge, inp, a, x)?;
        let name = kernel_name(out.precision(), gauge.reconstruct, dagger, x.is_some());
        let launch_all = |params: &DslashParams| -> Result<()> {
            let plain = self.kernel(&name)?;
            let sizes = (
                gauge.links.bytes(),
                spinor_block_bytes(out.precision(), out.stride),
            );
            let sites = gauge.lattice.half_volume();
            let mut params = *params;
            let (kernel, grid, block, prefetch) =
                self.launch_choice(&plain, sites, &params, out.precision(), sizes)?;
            params.prefetch_links = prefetch as i32;
            launch::launch(&self.stream, &kernel, grid, block, &params)
        };
        let (dev, failure) = (self.dev, self.failure);
        launch_hopping(dev, failure, gauge, parity, inp, &params, &name, launch_all)
    }

    /// `dslash_impl` for several fields on the same links, in launches of
    /// up to `MAX_RHS` (kernels/wilson_rhs_<format>.cu); on a cut lattice
    /// (links with a halo) one field at a time.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn dslash_rhs_impl(
        &self,
        out: &mut [CudaSpinor],
        parity: Parity,
        gauge: &CudaGauge,
        inp: &[&CudaSpinor],
        dagger: bool,
        a: f64,
        x: Option<&[&CudaSpinor]>,
    ) -> Result<()> {
        let xk = |k: usize| x.map(|x| x[k]);
        if gauge.halo.is_some() {
            for (k, (o, i)) in out.iter_mut().zip(inp).enumerate() {
                self.dslash_impl(o, parity, gauge, i, dagger, a, xk(k))?;
            }
            return Ok(());
        }
        let params = out
            .iter()
            .zip(inp)
            .enumerate()
            .map(|(k, (o, i))| hopping_params(&self.stream, o, parity, gauge, i, a, xk(k)))
            .collect::<Result<Vec<_>>>()?;
        let Some(first) = out.first() else {
            return Ok(());
        };
        let name = kernel_name(first.precision(), gauge.reconstruct, dagger, x.is_some());
        launch_rhs(self.dev, &format!("{name}_rhs"), &params)
    }

    /// The modules of the small-volume forms of `formats` in this device's
    /// catalogue (`small_volume_modules`).
    pub(crate) fn small_volume_modules(&self, formats: &[(Precision, Reconstruct)]) -> Vec<Module> {
        small_volume_modules(self.catalogue(), formats)
    }

    /// Compiles (or loads from the cache) the small-volume forms' modules of
    /// `formats` now, in parallel, as a gauge field's import does for a
    /// small lattice.
    pub(crate) fn prepare_small_volume_forms(
        &self,
        formats: &[(Precision, Reconstruct)],
    ) -> Result<()> {
        let modules = self.small_volume_modules(formats);
        self.prepare_modules(&modules)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cuda::dslash_forms::{SPLIT_BLOCK, SPLIT_SITES, WIDE_BLOCK};

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
}
