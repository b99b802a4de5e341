//! Which form of the Wilson hopping term a launch takes, at which block,
//! and whether it prefetches its links (issue 18, small volumes). A
//! half-precision lattice of up to `SMALL_VOLUME_SITES` sites a parity has
//! three forms (one thread a site, four threads a site, one thread a site
//! at the widest register budget: kernels/wilson_dslash.cuh); the fastest,
//! each at its best block, is timed on first use on copies of the fields
//! that are not in L2 (`ColdCopies`) and kept in the tuning table. A launch
//! whose grid fits beside its predecessor's asks L2 for its links before it
//! waits for that kernel (`links_prefetched`).

use std::cell::OnceCell;
use std::sync::Arc;

use std::sync::atomic::{AtomicU8, Ordering};

use super::cold_fields::ColdCopies;
use super::driver::device::Device;
use super::driver::launch;
use super::driver::modules::Kernel;
use super::halo::DeferredFailure;
use super::hopping_params::DslashParams;
use crate::error::Result;
use crate::precision::Precision;

/// Sites a parity up to which the small-volume forms are timed beside the
/// plain one (and their module compiled with a gauge field's): 20^4 (80000)
/// is below, 24^4 (165888) above, where the plain form won every tuned
/// choice of reconstruct 18 and 12 on the H100 (docs/performance.md).
pub const SMALL_VOLUME_SITES: usize = 1 << 17;

/// A wide form's block where untuned: its `__launch_bounds__` largest.
pub(super) const WIDE_BLOCK: u32 = 256;

/// Sites a block of a split form serves (`LATSOL_SPLIT_SITES`), and its
/// threads (four a site).
pub(super) const SPLIT_SITES: u32 = 32;
pub(super) const SPLIT_BLOCK: u32 = 4 * SPLIT_SITES;

/// Whether a format also has the small-volume forms: four threads a site
/// (`wilson_dslash_split` in kernels/wilson_dslash.cuh, named
/// `<kernel>_split`) and one thread a site at the widest register budget
/// (`LATSOL_DSLASH_WIDE`, named `<kernel>_wide`), in a source of their own
/// (kernels/wilson_dslash_<suffix>_small.cu).
pub fn has_small_volume_forms(p: Precision) -> bool {
    p == Precision::Half
}

/// Whether the hopping terms ask L2 for their links before they wait for
/// their predecessor (`WilsonKernels::links_prefetched`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkPrefetch {
    /// Where it measured faster (the default).
    Auto = 0,
    Off = 1,
    On = 2,
}

impl LinkPrefetch {
    /// `LATSOL_LINK_PREFETCH` (`0`, `1`), else `Auto`.
    pub(super) fn from_env() -> LinkPrefetch {
        match std::env::var("LATSOL_LINK_PREFETCH").as_deref() {
            Ok("0") => LinkPrefetch::Off,
            Ok("1") => LinkPrefetch::On,
            _ => LinkPrefetch::Auto,
        }
    }
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

/// Which forms of the hopping term to launch where a format has several
/// (`DslashForm`, from `LATSOL_DSLASH_FORM` or `LATSOL_DSLASH_SPLIT`) and
/// whether they prefetch their links (`LinkPrefetch`, from
/// `LATSOL_LINK_PREFETCH`); settable for checks.
pub(crate) struct DslashForms {
    form: AtomicU8,
    prefetch: AtomicU8,
}

impl DslashForms {
    /// The environment's choices.
    pub(crate) fn from_env() -> DslashForms {
        DslashForms {
            form: AtomicU8::new(DslashForm::from_env() as u8),
            prefetch: AtomicU8::new(LinkPrefetch::from_env() as u8),
        }
    }

    /// Which forms of the hopping term are launched.
    pub fn form(&self) -> DslashForm {
        match self.form.load(Ordering::Relaxed) {
            1 => DslashForm::Split,
            2 => DslashForm::Plain,
            3 => DslashForm::Wide,
            _ => DslashForm::Tuned,
        }
    }

    /// Whether the hopping terms prefetch their links (`links_prefetched`).
    pub fn link_prefetch(&self) -> LinkPrefetch {
        match self.prefetch.load(Ordering::Relaxed) {
            1 => LinkPrefetch::Off,
            2 => LinkPrefetch::On,
            _ => LinkPrefetch::Auto,
        }
    }

    /// Sets it (checks compare the outputs with and without).
    pub fn set_link_prefetch(&self, prefetch: LinkPrefetch) {
        self.prefetch.store(prefetch as u8, Ordering::Relaxed);
    }

    /// Sets the forms to launch (checks run each form against the CPU).
    pub fn set_form(&self, forms: DslashForm) {
        self.form.store(forms as u8, Ordering::Relaxed);
    }
}

/// The Wilson hopping term's kernels on one device, launched in the forms
/// `forms` asks for.
pub(crate) struct WilsonKernels<'d> {
    pub(crate) dev: &'d Device,
    pub(crate) forms: &'d DslashForms,
    /// Where a rank keeps a failure on a cut lattice (`halo`).
    pub(crate) failure: &'d DeferredFailure,
}

impl std::ops::Deref for WilsonKernels<'_> {
    type Target = Device;
    fn deref(&self) -> &Device {
        self.dev
    }
}

impl WilsonKernels<'_> {
    fn dslash_form(&self) -> DslashForm {
        self.forms.form()
    }

    fn link_prefetch(&self) -> LinkPrefetch {
        self.forms.link_prefetch()
    }

    /// Whether a hopping term of `grid` blocks of `block` threads asks L2
    /// for its links before it waits for its predecessor (kernels/
    /// wilson_dslash.cuh, `kernel_entry_after_links`): with half precision
    /// where the grid fits on the device beside another of its size, so
    /// that the next kernel's blocks are placed, and its links come, while
    /// this one runs (16^4 half r18 53% -> 60-68% of the roofline, r12
    /// about 49% -> 53-62% with the wide form). Not where they are placed
    /// only as the previous kernel's blocks leave (the prefetch is then no
    /// earlier than the loads: 24^4 half 81% -> 74%),
    /// nor for single precision (16^4 81% -> 71%: there the kernel is near
    /// the bandwidth already, docs/performance.md "Small volumes").
    /// `LATSOL_LINK_PREFETCH=0|1` forces it off or on (comparisons).
    pub(crate) fn links_prefetched(
        &self,
        k: &Kernel,
        prec: Precision,
        grid: u32,
        block: u32,
    ) -> Result<bool> {
        match self.link_prefetch() {
            LinkPrefetch::Off => Ok(false),
            LinkPrefetch::On => Ok(true),
            LinkPrefetch::Auto => Ok(prec == Precision::Half
                && k.programmatic
                && 2 * u64::from(grid) <= u64::from(self.resident_blocks(k, block)?)),
        }
    }

    /// The kernel, grid and block of a hopping-term launch of `plain`'s
    /// format on `sites` sites, and whether it prefetches its links. The
    /// form: the override (`dslash_form`) where the format has several, else
    /// up to `SMALL_VOLUME_SITES` the fastest of the three, above it the
    /// plain one. Up to `SMALL_VOLUME_SITES` the forms and their blocks are
    /// timed on copies of these fields that are not in L2 (`ColdCopies`;
    /// the caller's fields where the copies cannot be made, those choices
    /// then kept out of the table file), with the link
    /// prefetch each would launch with; above, the block on the caller's
    /// fields (`tuned_block`). `sizes`: the links' bytes and a parity
    /// block's. (The form is keyed by the one-thread kernel: once chosen, no
    /// name is formed and no other kernel looked up on the launch path
    /// unless another form is the one.)
    pub(super) fn launch_choice(
        &self,
        plain: &Arc<Kernel>,
        sites: usize,
        params: &DslashParams,
        prec: Precision,
        sizes: (usize, usize),
    ) -> Result<(Arc<Kernel>, u32, u32, bool)> {
        let several = has_small_volume_forms(prec);
        let small = several && sites <= SMALL_VOLUME_SITES;
        // The forms and blocks differ by a few per cent at the sizes where
        // more than one may win: each timed over enough launches to see it.
        const LAUNCHES: usize = 64;
        let cold = OnceCell::new();
        // Where the copies could not be made (memory), the choice being
        // tuned (`key`) is timed on the caller's fields, in L2 at these
        // sizes, where the forms differ by a few per cent only: kept for this
        // process, out of the table file (marked before the tuner writes
        // it), so that a later start times it from memory.
        let warm_only = |key: String| {
            if let Some(None) = cold.get() {
                self.tuner.keep_in_memory_only(&[key]);
            }
        };
        // Launches of `k` rotated over the copies: the median of three
        // timings (a launch is a few microseconds).
        let timed = |k: &Kernel, grid: u32, block: u32| -> Result<f32> {
            let copies = cold.get_or_init(|| ColdCopies::new(self.dev, params, sizes.0, sizes.1));
            let sets = copies
                .as_ref()
                .map_or(std::slice::from_ref(params), |c: &ColdCopies| &c.params[..]);
            let prefetch = self.links_prefetched(k, prec, grid, block)?;
            let mut i = 0;
            let mut t = [0f32; 3];
            for t in &mut t {
                *t = launch::time_launches_n(&self.stream, LAUNCHES, || {
                    let mut p = sets[i % sets.len()];
                    p.prefetch_links = prefetch as i32;
                    i += 1;
                    launch::launch(&self.stream, k, grid, block, &p)
                })?;
            }
            t.sort_by(f32::total_cmp);
            Ok(t[1])
        };
        // A form's kernel, grid and block (the output is never read: timing
        // runs while tuning are harmless).
        let launch_of = |form: DslashForm| -> Result<(Arc<Kernel>, u32, u32)> {
            let (k, default_block) = match form {
                DslashForm::Split => {
                    let split = self.kernel(&format!("{}_split", plain.name))?;
                    return Ok((split, launch::grid_for(sites, SPLIT_SITES)?, SPLIT_BLOCK));
                }
                DslashForm::Wide => (self.kernel(&format!("{}_wide", plain.name))?, WIDE_BLOCK),
                _ => (plain.clone(), 128),
            };
            let block = if small {
                self.tuner.block_for(&k, sites, default_block, |b| {
                    let t = timed(&k, launch::grid_for(sites, b)?, b);
                    warm_only(launch::tune_key(&k, sites));
                    t
                })?
            } else {
                self.tuned_block(&k, sites, default_block, params, None)?
            };
            Ok((k, launch::grid_for(sites, block)?, block))
        };
        let form = match self.dslash_form() {
            DslashForm::Tuned if small => {
                DslashForm::from_variant(self.tuner.variant_for(plain, sites, 3, |v| {
                    let (k, grid, block) = launch_of(DslashForm::from_variant(v))?;
                    let t = timed(&k, grid, block);
                    warm_only(format!("{}:form", launch::tune_key(plain, sites)));
                    t
                })?)
            }
            forced if several && forced != DslashForm::Tuned => forced,
            _ => DslashForm::Plain,
        };
        let (k, grid, block) = launch_of(form)?;
        let prefetch = self.links_prefetched(&k, prec, grid, block)?;
        Ok((k, grid, block, prefetch))
    }
}
