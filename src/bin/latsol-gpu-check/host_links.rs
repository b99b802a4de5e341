//! latsol-gpu-check, shared: a gauge field's links as a caller holds them,
//! in every host order (QDP, MILC, CPS) and host precision (f64, f32), for
//! the checks of the device's gauge import and computed clover. Imports
//! only `common` of the binary's modules.

use latsol::field::GaugeField;
use latsol::layout::{self, GaugeOrder, HostGauge, HostReals, HostRealsMut};

use crate::common::{e, R};

/// The host arrays of `gauge` in `order` (one, or four for QDP), double.
pub fn host_arrays(gauge: &GaugeField, order: GaugeOrder) -> R<Vec<Vec<f64>>> {
    let v = gauge.lattice().volume();
    let (n, len) = match order {
        GaugeOrder::Qdp => (4, v * 18),
        _ => (1, v * 4 * 18),
    };
    let mut arrays = vec![vec![0.0; len]; n];
    let mut outs: Vec<HostRealsMut> = arrays.iter_mut().map(|a| HostRealsMut::F64(a)).collect();
    layout::gauge::export(gauge, order, &mut outs).map_err(e)?;
    Ok(arrays)
}

pub fn host_gauge<'a>(order: GaugeOrder, arrays: &'a [HostReals<'a>]) -> HostGauge<'a> {
    match order {
        GaugeOrder::Qdp => HostGauge::Qdp([arrays[0], arrays[1], arrays[2], arrays[3]]),
        GaugeOrder::Milc => HostGauge::Milc(arrays[0]),
        GaugeOrder::CpsWilson => HostGauge::CpsWilson(arrays[0]),
    }
}

/// The arrays rounded to f32 (a single-precision caller's).
pub fn to_single(arrays: &[Vec<f64>]) -> Vec<Vec<f32>> {
    arrays
        .iter()
        .map(|a| a.iter().map(|&x| x as f32).collect())
        .collect()
}

/// The arrays as the library takes them: the single or the double copy.
pub fn reals_of<'a>(single: bool, d: &'a [Vec<f64>], f: &'a [Vec<f32>]) -> Vec<HostReals<'a>> {
    if single {
        f.iter().map(|a| HostReals::F32(a)).collect()
    } else {
        d.iter().map(|a| HostReals::F64(a)).collect()
    }
}

/// `f` on the links of `gauge` as each caller may hold them: every host
/// order, double and single, with a name for the checks.
pub fn each_host_form(gauge: &GaugeField, mut f: impl FnMut(&str, &HostGauge) -> R<()>) -> R<()> {
    for order in [GaugeOrder::Qdp, GaugeOrder::Milc, GaugeOrder::CpsWilson] {
        let doubles = host_arrays(gauge, order)?;
        let singles = to_single(&doubles);
        for single in [false, true] {
            let arrays = reals_of(single, &doubles, &singles);
            let name = format!("{order:?} {}", if single { "f32" } else { "f64" });
            f(&name, &host_gauge(order, &arrays))?;
        }
    }
    Ok(())
}
