//! The catalogue of kernel sources: every `.cu` file of `kernels/`, the
//! kernels each defines (named by the family that launches them) and the
//! link reconstructs compiled as modules of their own. The backend hands it
//! to the device (`Device::start`), which compiles a module when a context
//! prepares its formats or at the first launch of one of its kernels.

use super::driver::modules::{Catalogue, Source};
use super::{
    blas, clover, clover_compute, dslash, fat_links, gauge_fixing, halo, host_gauge, host_spinor,
    staggered,
};
use crate::precision::Precision;

/// Reconstructs of the Wilson and Wilson-clover hopping-term sources.
const WILSON_RECONSTRUCTS: &[u32] = &[18, 12, 8];

/// Headers every kernel source may include, by include name.
pub const HEADERS: &[(&str, &str)] = &[
    ("core.cuh", include_str!("../../../kernels/core.cuh")),
    (
        "wilson_dslash.cuh",
        include_str!("../../../kernels/wilson_dslash.cuh"),
    ),
    ("blas.cuh", include_str!("../../../kernels/blas.cuh")),
    (
        "block_blas.cuh",
        include_str!("../../../kernels/block_blas.cuh"),
    ),
    ("clover.cuh", include_str!("../../../kernels/clover.cuh")),
    (
        "host_links.cuh",
        include_str!("../../../kernels/host_links.cuh"),
    ),
    (
        "staggered_dslash.cuh",
        include_str!("../../../kernels/staggered_dslash.cuh"),
    ),
    (
        "staggered_blas.cuh",
        include_str!("../../../kernels/staggered_blas.cuh"),
    ),
];

/// What `CudaBackend::start` hands the device.
pub static CATALOGUE: Catalogue = Catalogue {
    headers: HEADERS,
    sources: SOURCES,
};

/// The kernels of a staggered module: its hopping terms and its
/// colour-vector algebra (kernels/staggered_blas.cuh).
fn staggered_module_kernels(module: Precision) -> Vec<String> {
    let mut v = staggered::kernel_names(module);
    v.extend(blas::colour_kernel_names(module));
    v
}

/// The kernels of kernels/wilson_edges_<suffix(p)>.cu: every Wilson and
/// Wilson-clover hopping term of format `p` on the edge sites of a cut
/// lattice, named as the one-device kernel + "_edges".
pub fn edge_kernel_names(p: Precision) -> Vec<String> {
    let clover = clover::kernel_names(p);
    let hopping = clover.iter().filter(|n| !n.starts_with("clover_site_"));
    dslash::kernel_names(p)
        .iter()
        .chain(hopping)
        .map(|n| format!("{n}_edges"))
        .collect()
}

/// The kernels of kernels/wilson_rhs_<suffix(p)>.cu: every Wilson and
/// Wilson-clover hopping term of format `p` for several right-hand sides
/// in one launch, named as the one-field kernel + "_rhs".
pub fn rhs_kernel_names(p: Precision) -> Vec<String> {
    let clover = clover::kernel_names(p);
    let hopping = clover.iter().filter(|n| !n.starts_with("clover_site_"));
    dslash::kernel_names(p)
        .iter()
        .chain(hopping)
        .map(|n| format!("{n}_rhs"))
        .collect()
}

/// The staggered modules, by the format that names them (`Double` holds
/// single too).
const STAGGERED_MODULES: [Precision; 5] = [
    Precision::Double,
    Precision::Half,
    Precision::Quarter,
    Precision::Packed20,
    Precision::Packed30,
];

/// The kernels of kernels/staggered_edges.cu: every staggered hopping
/// term on the edge sites of a cut lattice, named as the one-device kernel
/// + "_edges".
fn staggered_edge_kernel_names() -> Vec<String> {
    STAGGERED_MODULES
        .iter()
        .flat_map(|&p| staggered::kernel_names(p))
        .map(|n| format!("{n}_edges"))
        .collect()
}

/// The kernels of kernels/staggered_rhs.cu: every staggered hopping term
/// for several right-hand sides in one launch, named as the one-field
/// kernel + "_rhs".
pub fn staggered_rhs_kernel_names() -> Vec<String> {
    STAGGERED_MODULES
        .iter()
        .flat_map(|&p| staggered::kernel_names(p))
        .map(|n| format!("{n}_rhs"))
        .collect()
}

/// Every source. Nothing is compiled at start: a module is compiled (or
/// loaded from the disk cache) when a context prepares the formats of a
/// solve (`Backend::prepare`, every module it needs in parallel threads:
/// `Device::prepare_modules`) or at the first launch of one of its kernels. The hopping terms
/// and the vector algebra are one source per storage format (half's
/// hopping term two: its small-volume forms apart), the hopping terms one
/// module per reconstruct, so a first solve waits for the slowest module of
/// its own formats, not for the sum of all.
pub const SOURCES: &[Source] = &[
    Source {
        name: "wilson_rhs_f64",
        text: include_str!("../../../kernels/wilson_rhs_f64.cu"),
        kernels: || rhs_kernel_names(Precision::Double),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_rhs_f32",
        text: include_str!("../../../kernels/wilson_rhs_f32.cu"),
        kernels: || rhs_kernel_names(Precision::Single),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_rhs_f16",
        text: include_str!("../../../kernels/wilson_rhs_f16.cu"),
        kernels: || rhs_kernel_names(Precision::Half),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_rhs_f8",
        text: include_str!("../../../kernels/wilson_rhs_f8.cu"),
        kernels: || rhs_kernel_names(Precision::Quarter),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_rhs_p20",
        text: include_str!("../../../kernels/wilson_rhs_p20.cu"),
        kernels: || rhs_kernel_names(Precision::Packed20),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_rhs_p30",
        text: include_str!("../../../kernels/wilson_rhs_p30.cu"),
        kernels: || rhs_kernel_names(Precision::Packed30),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_dslash_f64",
        text: include_str!("../../../kernels/wilson_dslash_f64.cu"),
        kernels: || dslash::kernel_names(Precision::Double),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_dslash_f32",
        text: include_str!("../../../kernels/wilson_dslash_f32.cu"),
        kernels: || dslash::kernel_names(Precision::Single),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_dslash_f16",
        text: include_str!("../../../kernels/wilson_dslash_f16.cu"),
        kernels: || dslash::kernel_names(Precision::Half),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_dslash_f16_small",
        text: include_str!("../../../kernels/wilson_dslash_f16_small.cu"),
        kernels: || dslash::small_volume_kernel_names(Precision::Half),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_dslash_f8",
        text: include_str!("../../../kernels/wilson_dslash_f8.cu"),
        kernels: || dslash::kernel_names(Precision::Quarter),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_dslash_p20",
        text: include_str!("../../../kernels/wilson_dslash_p20.cu"),
        kernels: || dslash::kernel_names(Precision::Packed20),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_dslash_p30",
        text: include_str!("../../../kernels/wilson_dslash_p30.cu"),
        kernels: || dslash::kernel_names(Precision::Packed30),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_clover_f64",
        text: include_str!("../../../kernels/wilson_clover_f64.cu"),
        kernels: || clover::kernel_names(Precision::Double),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_clover_f32",
        text: include_str!("../../../kernels/wilson_clover_f32.cu"),
        kernels: || clover::kernel_names(Precision::Single),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_clover_f16",
        text: include_str!("../../../kernels/wilson_clover_f16.cu"),
        kernels: || clover::kernel_names(Precision::Half),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_clover_f8",
        text: include_str!("../../../kernels/wilson_clover_f8.cu"),
        kernels: || clover::kernel_names(Precision::Quarter),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_clover_p20",
        text: include_str!("../../../kernels/wilson_clover_p20.cu"),
        kernels: || clover::kernel_names(Precision::Packed20),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_clover_p30",
        text: include_str!("../../../kernels/wilson_clover_p30.cu"),
        kernels: || clover::kernel_names(Precision::Packed30),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "staggered_dslash",
        text: include_str!("../../../kernels/staggered_dslash.cu"),
        kernels: || staggered_module_kernels(Precision::Double),
        reconstructs: &[],
    },
    Source {
        name: "staggered_f16",
        text: include_str!("../../../kernels/staggered_f16.cu"),
        kernels: || staggered_module_kernels(Precision::Half),
        reconstructs: &[],
    },
    Source {
        name: "staggered_f8",
        text: include_str!("../../../kernels/staggered_f8.cu"),
        kernels: || staggered_module_kernels(Precision::Quarter),
        reconstructs: &[],
    },
    Source {
        name: "staggered_p20",
        text: include_str!("../../../kernels/staggered_p20.cu"),
        kernels: || staggered_module_kernels(Precision::Packed20),
        reconstructs: &[],
    },
    Source {
        name: "staggered_p30",
        text: include_str!("../../../kernels/staggered_p30.cu"),
        kernels: || staggered_module_kernels(Precision::Packed30),
        reconstructs: &[],
    },
    Source {
        name: "wilson_edges_f64",
        text: include_str!("../../../kernels/wilson_edges_f64.cu"),
        kernels: || edge_kernel_names(Precision::Double),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_edges_f32",
        text: include_str!("../../../kernels/wilson_edges_f32.cu"),
        kernels: || edge_kernel_names(Precision::Single),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_edges_f16",
        text: include_str!("../../../kernels/wilson_edges_f16.cu"),
        kernels: || edge_kernel_names(Precision::Half),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_edges_f8",
        text: include_str!("../../../kernels/wilson_edges_f8.cu"),
        kernels: || edge_kernel_names(Precision::Quarter),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_edges_p20",
        text: include_str!("../../../kernels/wilson_edges_p20.cu"),
        kernels: || edge_kernel_names(Precision::Packed20),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "wilson_edges_p30",
        text: include_str!("../../../kernels/wilson_edges_p30.cu"),
        kernels: || edge_kernel_names(Precision::Packed30),
        reconstructs: WILSON_RECONSTRUCTS,
    },
    Source {
        name: "staggered_edges",
        text: include_str!("../../../kernels/staggered_edges.cu"),
        kernels: staggered_edge_kernel_names,
        reconstructs: &[],
    },
    Source {
        name: "staggered_rhs",
        text: include_str!("../../../kernels/staggered_rhs.cu"),
        kernels: staggered_rhs_kernel_names,
        reconstructs: &[],
    },
    Source {
        name: "halo",
        text: include_str!("../../../kernels/halo.cu"),
        kernels: halo::kernel_names,
        reconstructs: &[],
    },
    Source {
        name: "host_gauge",
        text: include_str!("../../../kernels/host_gauge.cu"),
        kernels: host_gauge::kernel_names,
        reconstructs: &[],
    },
    Source {
        name: "clover_compute",
        text: include_str!("../../../kernels/clover_compute.cu"),
        kernels: clover_compute::kernel_names,
        reconstructs: &[],
    },
    Source {
        name: "fat_links",
        text: include_str!("../../../kernels/fat_links.cu"),
        kernels: fat_links::kernel_names,
        reconstructs: &[],
    },
    Source {
        name: "gauge_fixing",
        text: include_str!("../../../kernels/gauge_fixing.cu"),
        kernels: gauge_fixing::kernel_names,
        reconstructs: &[],
    },
    Source {
        name: "host_spinor",
        text: include_str!("../../../kernels/host_spinor.cu"),
        kernels: host_spinor::kernel_names,
        reconstructs: &[],
    },
    Source {
        name: "blas_f64",
        text: include_str!("../../../kernels/blas_f64.cu"),
        kernels: || blas::kernel_names(Precision::Double),
        reconstructs: &[],
    },
    Source {
        name: "blas_f32",
        text: include_str!("../../../kernels/blas_f32.cu"),
        kernels: || blas::kernel_names(Precision::Single),
        reconstructs: &[],
    },
    Source {
        name: "blas_f16",
        text: include_str!("../../../kernels/blas_f16.cu"),
        kernels: || blas::kernel_names(Precision::Half),
        reconstructs: &[],
    },
    Source {
        name: "blas_f8",
        text: include_str!("../../../kernels/blas_f8.cu"),
        kernels: || blas::kernel_names(Precision::Quarter),
        reconstructs: &[],
    },
    Source {
        name: "blas_p20",
        text: include_str!("../../../kernels/blas_p20.cu"),
        kernels: || blas::kernel_names(Precision::Packed20),
        reconstructs: &[],
    },
    Source {
        name: "blas_p30",
        text: include_str!("../../../kernels/blas_p30.cu"),
        kernels: || blas::kernel_names(Precision::Packed30),
        reconstructs: &[],
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel waits for its predecessor before anything else, as
    /// programmatic launches require (kernels/core.cuh, `kernel_entry`).
    #[test]
    fn every_kernel_starts_with_its_entry() {
        let texts = HEADERS
            .iter()
            .map(|(name, text)| (*name, *text))
            .chain(SOURCES.iter().map(|s| (s.name, s.text)));
        let mut kernels = 0;
        for (name, text) in texts {
            for (at, _) in text.match_indices("__global__") {
                let open = at + text[at..].find('{').expect("a kernel body");
                let body = text[open + 1..].trim_start_matches([' ', '\\', '\n', '\r']);
                // The hopping terms first ask L2 for their links, then
                // wait (kernels/wilson_dslash.cuh, `kernel_entry_after_links`).
                assert!(
                    body.starts_with("kernel_entry();")
                        || body.starts_with("kernel_entry_after_links<"),
                    "{name}: the kernel at byte {at} does not start with kernel_entry()"
                );
                kernels += 1;
            }
        }
        assert!(kernels >= 40, "found {kernels} kernel definitions");
        let dslash = HEADERS
            .iter()
            .find(|(name, _)| *name == "wilson_dslash.cuh")
            .expect("the hopping term's header")
            .1;
        let entry = &dslash[dslash
            .find("void kernel_entry_after_links(")
            .expect("the hopping terms' entry")..];
        let body = &entry[..entry.find("\n}").expect("its end")];
        assert!(
            body.trim_end()
                .ends_with("if constexpr (wait) kernel_entry();"),
            "kernel_entry_after_links must end with the wait: {body}"
        );
        // Where it does not wait, the hopping term waits after its first
        // links (`links_first`), having read nothing else.
        let term = &dslash[dslash
            .find("void wilson_dslash(const DslashParams &P, int block) {")
            .expect("the hopping term")..];
        let before = &term[..term.find("kernel_entry();").expect("its wait")];
        // (.ci/compile_kernels.py checks the compiled kernels: nine global
        // loads before the wait in the plain half reconstruct-12 ones, six in
        // their wide form, eight in the reconstruct-8 ones, none in any
        // other kernel.)
        for read in [
            "P.in",
            "P.x",
            "P.out",
            "P.clover",
            "hops<",
            "hops_with_words<",
            "load<",
            "store",
            "dslash_site",
            "epilogue",
        ] {
            assert!(
                !before.contains(read),
                "wilson_dslash reads {read} before its wait: {before}"
            );
        }
        // u0 where the kernel has waited already (`links_first` 0), else
        // the stored words of the first `links_first` forward links.
        assert_eq!(before.matches("forward_link<").count(), 1, "{before}");
        assert_eq!(before.matches("G::load_words(").count(), 1, "{before}");
        assert!(
            before.contains("if constexpr (links_first == 0) {"),
            "{before}"
        );
    }
    use crate::backend::cuda::driver::modules::Module;
    use crate::precision::Reconstruct;

    #[test]
    fn small_volume_forms_are_in_their_own_modules() {
        for r in [Reconstruct::Full18, Reconstruct::Twelve, Reconstruct::Eight] {
            let modules = dslash::small_volume_modules(SOURCES, &[(Precision::Half, r)]);
            assert_eq!(modules.len(), 1, "{r:?}");
            let name = format!("wilson_dslash_f16_small_r{}", r.reals());
            assert_eq!(modules[0].name(), name);
            for form in ["split", "wide"] {
                let kernel = format!("wilson_dslash_f16_r{}_dag_xpay_{form}", r.reals());
                assert_eq!(
                    Module::of_kernel(SOURCES, &kernel).map(|m| m.name()),
                    Some(name.clone())
                );
            }
            let plain = dslash::kernel_name(Precision::Half, r, true, true);
            assert_eq!(
                Module::of_kernel(SOURCES, &plain).map(|m| m.name()),
                Some(format!("wilson_dslash_f16_r{}", r.reals()))
            );
        }
        assert!(
            dslash::small_volume_modules(SOURCES, &[(Precision::Double, Reconstruct::Twelve)])
                .is_empty()
        );
    }

    #[test]
    fn wilson_kernel_names_exist_in_the_sources() {
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
    fn packed_wilson_modules_use_the_packed_links() {
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
            dslash::kernel_name(Precision::Packed30, Reconstruct::Eight, true, true),
            "wilson_dslash_p30_r8_dag_xpay"
        );
    }

    #[test]
    fn clover_modules_are_split_by_reconstruct_and_found_by_kernel_name() {
        let m = Module::of_kernel(SOURCES, "wilson_clover_f16_r12_dag_inv_xpay").unwrap();
        assert_eq!(m.name(), "wilson_clover_f16_r12");
        // Only its own reconstruct, and the site kernel every module shares.
        let kernels = m.kernels();
        assert!(kernels
            .iter()
            .all(|k| !k.contains("_r18") && !k.contains("_r8")));
        assert!(kernels.contains(&"clover_site_f16".to_string()));
        assert_eq!(kernels.len(), 1 + 6);
        assert_eq!(
            Module::of_kernel(SOURCES, "clover_site_p30")
                .unwrap()
                .name(),
            "wilson_clover_p30_r18"
        );
        assert_eq!(
            Module::of_kernel(SOURCES, "wilson_dslash_f16_r12")
                .unwrap()
                .name(),
            "wilson_dslash_f16_r12"
        );
    }

    #[test]
    fn clover_kernel_names_exist_in_the_sources() {
        let mut n = 0;
        for src in SOURCES
            .iter()
            .filter(|s| s.name.starts_with("wilson_clover"))
        {
            for k in (src.kernels)() {
                let found = if let Some(rest) = k.strip_prefix("clover_site_") {
                    src.text
                        .contains(&format!("LATSOL_CLOVER_SITE(clover_site_{rest},"))
                } else {
                    let prefix = [
                        "_dag_inv_xpay",
                        "_inv_xpay",
                        "_dag_inv",
                        "_inv",
                        "_dag_dir",
                        "_dir",
                    ]
                    .iter()
                    .find_map(|f| k.strip_suffix(f))
                    .unwrap();
                    src.text.contains(&format!("LATSOL_CLOVER_FORMS({prefix},"))
                };
                assert!(found, "{k} in {}", src.name);
                n += 1;
            }
        }
        assert_eq!(
            n,
            6 * (1 + 3 * 6),
            "6 formats, 3 reconstructions, 6 forms, 1 site kernel"
        );
    }

    /// The module of each format defines every kernel `kernel_names` lists
    /// for it, literally or through the macros of blas.cuh, and no name is
    /// defined by two modules.
    #[test]
    fn every_named_kernel_is_defined_once() {
        let header = HEADERS.iter().find(|h| h.0 == "blas.cuh").unwrap().1;
        // LATSOL_BLAS_FORMAT(s, S) stamps out these names.
        for op in blas::MAPS
            .iter()
            .chain(blas::REDUCTIONS.iter().map(|r| &r.0))
        {
            assert!(header.contains(&format!("(blas_{op}_##s, S, ")), "{op}");
        }
        assert!(header.contains("LATSOL_AXPY_MANY(f64, double, s, S)"));
        assert!(header.contains("LATSOL_AXPY_MANY(f32, float, s, S)"));
        assert!(header.contains(&format!("#define MANY_MAX {}", blas::MANY_MAX)));
        let mut all = Vec::new();
        for p in Precision::ALL {
            let f = crate::backend::cuda::fields::suffix(p);
            let name = format!("blas_{f}");
            let src = SOURCES.iter().find(|s| s.name == name).unwrap();
            assert_eq!((src.kernels)(), blas::kernel_names(p), "{name}");
            assert!(src.text.contains("#include \"blas.cuh\""), "{name}");
            for k in blas::kernel_names(p) {
                let defined = if k.starts_with("blas_") && !k.contains("_wide_") {
                    src.text.contains(&format!("LATSOL_BLAS_FORMAT({f}, "))
                } else if k.starts_with("domain_project_") {
                    src.text.contains(&format!("LATSOL_DOMAIN_PROJECT({f}, "))
                } else if let Some(q) = k.strip_prefix(&format!("convert_{f}_to_")) {
                    src.text.contains(&format!("void {k}("))
                        || src.text.lines().any(|l| {
                            l.starts_with(&format!("LATSOL_CONVERT({f}, "))
                                && l.contains(&format!(", {q}, "))
                        })
                } else {
                    src.text.contains(&format!("({k},")) || src.text.contains(&format!("void {k}("))
                };
                assert!(defined, "{k} in {name}");
                all.push(k);
            }
        }
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n, "a kernel name in two modules");
    }

    #[test]
    fn staggered_kernel_names_exist_in_the_sources() {
        let mut all = Vec::new();
        for p in STAGGERED_MODULES {
            let module = staggered::module_name(p);
            let src = SOURCES.iter().find(|s| s.name == module).unwrap();
            assert_eq!((src.kernels)(), staggered_module_kernels(p), "{module}");
            let s = crate::backend::cuda::fields::colour_suffix(p);
            let ops = format!("LATSOL_BLAS_OPS({s}, ");
            // A packed module's ops, sums and conversions in one macro.
            let packed = format!("LATSOL_STAGGERED_PACKED_BLAS({s}, ");
            for n in staggered_module_kernels(p) {
                let declared = src.text.contains(&format!("void {n}("))
                    || src.text.contains(&format!("LATSOL_STAGGERED({n},"))
                    || src.text.contains(&format!("LATSOL_HEAVY_QUARK({n},"))
                    || src.text.contains(&format!("LATSOL_REDUCE_ONE({n},"))
                    || (n.starts_with("blas_") && !n.contains("many") && src.text.contains(&ops))
                    || (n.contains(&format!("_{s}")) && src.text.contains(&packed))
                    || n.strip_prefix("blas_axpy_many_").is_some_and(|rest| {
                        let lo = &rest[4..];
                        src.text
                            .contains(&format!("LATSOL_STAGGERED_AXPY_MANY({lo}, "))
                    })
                    || n.strip_prefix("convert_").is_some_and(|rest| {
                        let (from, to) = rest.split_once("_to_").unwrap();
                        src.text.contains(&format!("LATSOL_CONVERT({from}, "))
                            && src.text.lines().any(|l| {
                                l.starts_with(&format!("LATSOL_CONVERT({from}, "))
                                    && l.contains(&format!(", {to}, "))
                            })
                    });
                assert!(declared, "{n} in {module}");
                all.push(n);
            }
        }
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n, "a kernel name in two modules");
    }
}
