//! Fallible allocation of the lattice-sized buffers (issue 16): a lattice
//! that does not fit in host memory is an `Error::OutOfMemory` that names
//! the size and what it was for, never an abort of the host program.
//! Rust's `vec![…]` and `collect` abort the process when the allocator
//! fails; these reserve first and report.

use crate::error::{Error, Result};

/// The error for a failed allocation of `n` elements of `T` for `what`.
fn out_of_memory<T>(n: usize, what: &str) -> Error {
    let bytes = (n as u128) * (std::mem::size_of::<T>() as u128);
    Error::OutOfMemory(format!(
        "cannot allocate {bytes} bytes ({:.2} GiB) of host memory for {what}",
        bytes as f64 / (1u64 << 30) as f64
    ))
}

/// An empty vector with room for `n` elements (for `extend`, `par_extend`).
pub fn with_capacity<T>(n: usize, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| out_of_memory::<T>(n, what))?;
    Ok(v)
}

/// `n` copies of `value`.
pub fn filled<T: Clone>(n: usize, value: T, what: &str) -> Result<Vec<T>> {
    let mut v = with_capacity(n, what)?;
    v.resize(n, value);
    Ok(v)
}

/// A copy of `src`.
pub fn copied<T: Clone>(src: &[T], what: &str) -> Result<Vec<T>> {
    let mut v = with_capacity(src.len(), what)?;
    v.extend_from_slice(src);
    Ok(v)
}

/// `iter` collected into a vector of its exact length `n`, reserved first.
pub fn collect<T>(n: usize, iter: impl Iterator<Item = T>, what: &str) -> Result<Vec<T>> {
    let mut v = with_capacity(n, what)?;
    v.extend(iter);
    Ok(v)
}

/// A parallel iterator collected into a vector of its exact length `n`.
pub fn par_collect<T: Send>(
    n: usize,
    iter: impl rayon::iter::IndexedParallelIterator<Item = T>,
    what: &str,
) -> Result<Vec<T>> {
    use rayon::iter::ParallelExtend;
    let mut v = with_capacity(n, what)?;
    v.par_extend(iter);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_impossible_allocation_is_an_error_naming_its_purpose() {
        let e = filled(usize::MAX / 16, 0u64, "a test buffer").unwrap_err();
        match e {
            Error::OutOfMemory(m) => assert!(m.contains("a test buffer"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(filled(3, 7u8, "x").unwrap(), vec![7, 7, 7]);
        assert_eq!(collect(2, [1, 2].into_iter(), "x").unwrap(), vec![1, 2]);
    }
}
