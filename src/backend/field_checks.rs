//! The argument checks the backends share: block fields, the precisions
//! of `axpy_many`, parity pairs, and the naming of a source's errors.

use super::signatures::SpinorField;
use crate::error::Result;
use crate::lattice::{Parity, Subset};

/// A block hopping term's fields: as many outputs as inputs (and xpay
/// fields, where given).
pub(crate) fn check_block_fields(
    what: &str,
    out: usize,
    inp: usize,
    x: Option<usize>,
) -> Result<()> {
    if out != inp || x.is_some_and(|x| x != inp) {
        return Err(crate::error::Error::Internal(format!(
            "{what}: {out} outputs, {inp} inputs and {x:?} xpay fields"
        )));
    }
    Ok(())
}

/// Prefixes an import error with the source it concerns.
pub(crate) fn name_source(e: crate::error::Error, k: usize) -> crate::error::Error {
    match e {
        crate::error::Error::InvalidArgument(m) => {
            crate::error::Error::InvalidArgument(format!("sources[{k}]: {m}"))
        }
        other => other,
    }
}

/// The precision rules of `Backend::axpy_many`, shared by the backends:
/// one coefficient per field, the fields in one precision, `y` double or
/// single.
pub(crate) fn check_many_precisions<S: SpinorField>(
    what: &str,
    coefficients: usize,
    x: &[&S],
    y: &S,
) -> Result<()> {
    let fail = |why: String| Err(crate::error::Error::Internal(format!("{what}: {why}")));
    if coefficients != x.len() {
        return fail(format!(
            "{coefficients} coefficients for {} fields",
            x.len()
        ));
    }
    if y.precision().is_sloppy_only() {
        return fail(format!("the sum is kept in {:?}", y.precision()));
    }
    if let Some(first) = x.first() {
        let p = first.precision();
        if x.iter().any(|f| f.precision() != p) {
            return fail("fields of different precisions".into());
        }
    }
    Ok(())
}

/// The check shared by the backends' `extract_parity`/`insert_parity`: a
/// full field and a field of parity `p` on one lattice, in one precision.
pub(crate) fn check_parity_pair<S: SpinorField>(
    what: &str,
    full: &S,
    part: &S,
    p: Parity,
) -> Result<()> {
    let ok = full.subset() == Subset::Full
        && part.subset() == Subset::Single(p)
        && full.fermion() == part.fermion()
        && full.lattice().dims() == part.lattice().dims()
        && full.precision() == part.precision();
    if ok {
        Ok(())
    } else {
        Err(crate::error::Error::Internal(format!(
            "{what}: a full field ({:?}, {:?}) and a field of parity {p:?} ({:?}, {:?}) are needed",
            full.subset(),
            full.precision(),
            part.subset(),
            part.precision()
        )))
    }
}
