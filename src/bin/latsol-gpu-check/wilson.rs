//! latsol-gpu-check, one part: the Wilson hopping term against the CPU
//! backend (both parities, dagger, xpay, full and single-parity fields,
//! reconstruct 18/12/8, every form of a format that has several), the
//! small-volume forms against the one-thread form and the links' prefetch
//! against none, bit for bit.

use std::sync::Arc;

use latsol::backend::cuda::{CudaBackend, DslashForm, LinkPrefetch};
use latsol::backend::Backend;
use latsol::field::GaugeField;
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::precision::{Precision, Reconstruct, TBoundary};
use latsol::random;
use num_complex::Complex64 as C64;

use crate::common::{compare_parity, down, e, nan_field, up, Pair, R};
use crate::report::Report;

/// Every form of `pair.prec`'s hopping term against the CPU (each
/// small-volume form of a format that has several, also on a 6^4 lattice),
/// those forms against the one-thread form bit for bit, and the links'
/// prefetch against none bit for bit, in every form. The form chosen before
/// is set again at the end.
pub fn check_forms(pair: &Pair<CudaBackend>, gauge: &GaugeField, rep: &mut Report) -> R<()> {
    let (cpu, gpu, prec) = (pair.cpu, pair.gpu, pair.prec);
    // Every form of a format that has several (the tuner picks one
    // per size), each against the CPU.
    let chosen = gpu.dslash_form();
    let small_volume_forms = [
        (DslashForm::Plain, ""),
        (DslashForm::Split, " split"),
        (DslashForm::Wide, " wide"),
    ];
    let forms = if latsol::backend::cuda::has_small_volume_forms(prec) {
        small_volume_forms.to_vec()
    } else {
        vec![(chosen, "")]
    };
    for (forms, label) in forms {
        gpu.set_dslash_form(forms);
        let r = check_dslash(pair, gauge, label, rep);
        rep.flag(
            &format!(
                "dslash{label} {prec:?} ran {}",
                r.as_ref().err().cloned().unwrap_or_default()
            ),
            r.is_ok(),
        );
    }
    gpu.set_dslash_form(chosen);
    if latsol::backend::cuda::has_small_volume_forms(prec) {
        // Also on a lattice whose parity is no multiple of a block
        // (648 sites: the split form's and the tuned blocks' tails).
        let tail = Arc::new(Lattice::new([6, 6, 6, 6]).map_err(e)?);
        for g in [gauge, &random::hot_gauge(&tail, 4)] {
            for (other, label) in &small_volume_forms[1..] {
                match form_matches_plain(gpu, g, *other) {
                    Ok((differing, compared)) => rep.check(
                        &format!(
                            "dslash{label} = one thread a site, bit for bit, {:?}, {compared} forms",
                            g.lattice().dims()
                        ),
                        differing as f64,
                        0.0,
                    ),
                    Err(err) => rep.flag(&format!("dslash{label} comparison ran {err}"), false),
                }
            }
        }
        let tail_pair = Pair { cpu, gpu, prec };
        for (forms, label) in small_volume_forms {
            gpu.set_dslash_form(forms);
            let r = check_dslash(&tail_pair, &random::hot_gauge(&tail, 4), label, rep);
            rep.flag(
                &format!(
                    "dslash{label} {prec:?} on 6^4 ran {}",
                    r.as_ref().err().cloned().unwrap_or_default()
                ),
                r.is_ok(),
            );
        }
        gpu.set_dslash_form(chosen);
    }
    // The links' prefetch (on where it pays: half at small
    // volumes) changes no value: every format, and each form of a
    // format that has several, also on the 6^4 lattice (a block's
    // sites cut short at the parity's end).
    let forms = if latsol::backend::cuda::has_small_volume_forms(prec) {
        vec![DslashForm::Plain, DslashForm::Split, DslashForm::Wide]
    } else {
        vec![gpu.dslash_form()]
    };
    let tail = random::hot_gauge(&Arc::new(Lattice::new([6, 6, 6, 6]).map_err(e)?), 4);
    let chosen = gpu.dslash_form();
    for form in forms {
        gpu.set_dslash_form(form);
        for g in [gauge, &tail] {
            match prefetch_changes_nothing(gpu, g, prec) {
                Ok((differing, compared)) => rep.check(
                    &format!(
                        "dslash {prec:?} {form:?} with the links prefetched = without, bit \
                         for bit, {:?}, {compared} forms",
                        g.lattice().dims()
                    ),
                    differing as f64,
                    0.0,
                ),
                Err(err) => rep.flag(&format!("dslash prefetch comparison ran {err}"), false),
            }
        }
    }
    gpu.set_dslash_form(chosen);
    Ok(())
}

/// The hopping term in every form on one lattice.
/// (`form` names the GPU's form of the kernel in the report.)
fn check_dslash<T: Backend>(
    pair: &Pair<T>,
    gauge: &GaugeField,
    form: &str,
    rep: &mut Report,
) -> R<()> {
    for rec in [Reconstruct::Full18, Reconstruct::Twelve, Reconstruct::Eight] {
        check_dslash_with(pair, gauge, rec, form, rep)?;
    }
    Ok(())
}

fn check_dslash_with<T: Backend>(
    pair: &Pair<T>,
    gauge: &GaugeField,
    rec: Reconstruct,
    form: &str,
    rep: &mut Report,
) -> R<()> {
    let (cpu, gpu, prec) = (pair.cpu, pair.gpu, pair.prec);
    let lat = gauge.lattice();
    let anti = TBoundary::AntiPeriodic;
    let cg = cpu.upload_gauge(gauge, anti, prec, rec).map_err(e)?;
    let gg = gpu.upload_gauge(gauge, anti, prec, rec).map_err(e)?;
    for full in [true, false] {
        for parity in [Parity::Even, Parity::Odd] {
            let (out_s, in_s) = if full {
                (Subset::Full, Subset::Full)
            } else {
                (Subset::Single(parity), Subset::Single(parity.other()))
            };
            let (ci, gi) = pair.up(&random::spinor(lat, in_s, 21))?;
            let (cx, gx) = pair.up(&random::spinor(lat, out_s, 22))?;
            for dagger in [false, true] {
                for xpay in [false, true] {
                    // Poison: NaN (which fixed point stores as 0).
                    let (mut co, mut go) = pair.up(&nan_field(lat, out_s))?;
                    let before = down(gpu, &go)?;
                    let (xc, xg) = if xpay {
                        (Some(&cx), Some(&gx))
                    } else {
                        (None, None)
                    };
                    cpu.wilson_dslash(&mut co, parity, &cg, &ci, dagger, -0.3, xc)
                        .map_err(e)?;
                    gpu.wilson_dslash(&mut go, parity, &gg, &gi, dagger, -0.3, xg)
                        .map_err(e)?;
                    let (hc, hg) = (down(cpu, &co)?, down(gpu, &go)?);
                    let what = format!(
                        "dslash{form} {prec:?} r{} {:?} {parity:?}{}{}",
                        rec.reals(),
                        lat.dims(),
                        if dagger { " dag" } else { "" },
                        if xpay { " xpay" } else { "" },
                    ) + if full { " full" } else { " single" };
                    compare_parity(rep, &what, prec, parity, full, &before, &hc, &hg);
                }
            }
        }
    }
    Ok(())
}

/// A small-volume form (`Split`, `Wide`) of the half hopping term
/// against the one-thread form on `lat`: every reconstruct, dagger and
/// xpay form, both parities; all add the same terms in the same order,
/// so the stored outputs must be identical. Returns the differing values
/// and the forms compared.
fn form_matches_plain(
    gpu: &CudaBackend,
    gauge: &GaugeField,
    other: DslashForm,
) -> R<(usize, usize)> {
    let chosen = gpu.dslash_form();
    let r = same_bits_both_ways(gpu, gauge, Precision::Half, |second| {
        gpu.set_dslash_form(if second { other } else { DslashForm::Plain })
    });
    gpu.set_dslash_form(chosen);
    r
}

/// The hopping term of `p` with its links prefetched against without
/// (`LinkPrefetch`): a prefetch changes no value, so the outputs must be
/// identical. Returns the differing values and the forms compared.
fn prefetch_changes_nothing(
    gpu: &CudaBackend,
    gauge: &GaugeField,
    p: Precision,
) -> R<(usize, usize)> {
    let chosen = gpu.link_prefetch();
    let r = same_bits_both_ways(gpu, gauge, p, |second| {
        gpu.set_link_prefetch(if second {
            LinkPrefetch::On
        } else {
            LinkPrefetch::Off
        })
    });
    gpu.set_link_prefetch(chosen);
    r
}

/// The hopping term of `p` on `gauge` with the backend set by
/// `set(false)` and by `set(true)`: every reconstruct, dagger and xpay
/// form, both parities. Returns the values that differ in their bits
/// and the forms compared.
fn same_bits_both_ways(
    gpu: &CudaBackend,
    gauge: &GaugeField,
    p: Precision,
    set: impl Fn(bool),
) -> R<(usize, usize)> {
    let lat = gauge.lattice();
    let (mut differing, mut compared) = (0, 0);
    for rec in [Reconstruct::Full18, Reconstruct::Twelve, Reconstruct::Eight] {
        let g = gpu
            .upload_gauge(gauge, TBoundary::AntiPeriodic, p, rec)
            .map_err(e)?;
        for parity in [Parity::Even, Parity::Odd] {
            let inp = up(
                gpu,
                &random::spinor(lat, Subset::Single(parity.other()), 31),
                p,
            )?;
            let x = up(gpu, &random::spinor(lat, Subset::Single(parity), 32), p)?;
            for dagger in [false, true] {
                for xpay in [false, true] {
                    let mut outs = Vec::new();
                    for second in [false, true] {
                        set(second);
                        let mut out = gpu
                            .alloc_spinor(lat, Subset::Single(parity), p)
                            .map_err(e)?;
                        let xs = if xpay { Some(&x) } else { None };
                        gpu.wilson_dslash(&mut out, parity, &g, &inp, dagger, -0.3, xs)
                            .map_err(e)?;
                        outs.push(down(gpu, &out)?);
                    }
                    let bits = |z: &C64| (z.re.to_bits(), z.im.to_bits());
                    differing += outs[0]
                        .data()
                        .iter()
                        .zip(outs[1].data())
                        .filter(|(a, b)| bits(a) != bits(b))
                        .count();
                    compared += 1;
                }
            }
        }
    }
    Ok((differing, compared))
}
