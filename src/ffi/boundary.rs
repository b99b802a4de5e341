//! The boundary between C and Rust: the one guard every entry point runs
//! in, and the checked conversions of raw pointers into Rust values.
//!
//! - `call`: catches panics, maps `Error` to a status, and records the
//!   message for `latsol_last_error()` (in `status`'s per-thread store: the
//!   one piece of global state, and it is per thread); `guard_value`, the
//!   same fence for the functions that return a value.
//! - `Versioned`: structs that begin with `size_t struct_size` and only
//!   grow at the end. A caller's struct larger than ours is refused (it
//!   comes from a newer header and may set fields we would ignore); a
//!   smaller one is accepted if it holds at least the first version's
//!   fields, and the fields it lacks keep their defaults.
//! - `Handle`: opaque handles are `Box`es of `Checked<T>`, a check value
//!   (`magic`) first, so a stale, foreign or mistyped pointer is reported,
//!   not used. Freeing clears the check value first, so a second free is
//!   reported too (in practice: the memory may be reused by then).
//! - Host arrays: lengths come from the lattice, pointers are checked for
//!   NULL and alignment, and inputs may not overlap outputs (a Rust slice
//!   and a mutable slice over the same memory would be undefined).

use std::any::Any;
use std::ffi::c_void;
use std::mem::{align_of, size_of};
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::status::{latsol_status, record_error, status_of, LATSOL_SUCCESS};
use crate::error::{Error, Result};
use crate::layout::{HostReals, HostRealsMut};

/// Runs the body of an entry point: a panic becomes
/// `LATSOL_ERROR_INTERNAL`, an error its status code; either way the
/// message, prefixed with `function`, is kept for `latsol_last_error()`.
pub(crate) fn call(function: &'static str, body: impl FnOnce() -> Result<()>) -> latsol_status {
    // AssertUnwindSafe: after a panic the caller gets an error and no value
    // from the body; handles it touched stay valid Rust values.
    let error = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => return LATSOL_SUCCESS,
        Ok(Err(e)) => e,
        Err(payload) => Error::Internal(format!("panic: {}", panic_message(payload.as_ref()))),
    };
    record_error(function, &error);
    status_of(&error)
}

/// Runs an entry point that returns a value rather than a status (defaults,
/// strings): a panic yields `fallback()` instead of unwinding into C.
pub(crate) fn guard_value<T>(fallback: impl FnOnce() -> T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_| fallback())
}

fn panic_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "(no message)"
    }
}

/// Fails with `NullPointer` naming `name` if `p` is NULL, or with
/// `InvalidArgument` if it is not aligned for `T`.
pub(crate) fn check_ptr<T>(p: *const T, name: &str) -> Result<()> {
    if p.is_null() {
        return Err(Error::NullPointer(format!("{name} is NULL")));
    }
    if !(p as usize).is_multiple_of(align_of::<T>()) {
        return Err(Error::InvalidArgument(format!(
            "{name} = {p:p} is not aligned to {} bytes",
            align_of::<T>()
        )));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Versioned structs.

/// A parameter or result struct that crosses the boundary.
///
/// # Safety
/// Implementors are `#[repr(C)]`, begin with `struct_size: usize`, hold
/// only plain numbers and nullable pointers (any bit pattern a C caller can
/// produce from valid values is valid), and only ever grow at the end.
pub(crate) unsafe trait Versioned: Copy {
    /// The C name, for messages.
    const NAME: &'static str;
    /// The size of the first released version: every caller has at least
    /// these fields. Fields added later lie beyond it.
    const V1_SIZE: usize;
    /// Every field a valid choice, `struct_size` = `size_of::<Self>()`.
    fn defaults() -> Self;
}

/// Checks the `struct_size` a caller's struct declares and returns it.
///
/// # Safety
/// `p` is NULL or points to at least `size_of::<usize>()` readable bytes.
unsafe fn struct_size_of<T: Versioned>(p: *const T, name: &str) -> Result<usize> {
    check_ptr(p, name)?;
    // struct_size is the first field (`Versioned`'s contract).
    let size = unsafe { p.cast::<usize>().read() };
    if size > size_of::<T>() {
        return Err(Error::InvalidArgument(format!(
            "{name}->struct_size = {size} is larger than {} in this latsol ({} bytes): the caller \
             was built against a newer latsol.h; set it with sizeof({}) and use a matching library",
            T::NAME,
            size_of::<T>(),
            T::NAME
        )));
    }
    if size < T::V1_SIZE {
        return Err(Error::InvalidArgument(format!(
            "{name}->struct_size = {size} is smaller than the first version of {} ({} bytes): \
             not initialised? start from the {}_default() constructor",
            T::NAME,
            T::V1_SIZE,
            T::NAME
        )));
    }
    Ok(size)
}

/// Reads a caller's versioned struct: its first `struct_size` bytes over
/// the defaults.
///
/// # Safety
/// `p` is NULL or points to a struct of its declared `struct_size` bytes.
pub(crate) unsafe fn read_versioned<T: Versioned>(p: *const T, name: &str) -> Result<T> {
    let size = unsafe { struct_size_of(p, name)? };
    let mut value = T::defaults();
    // A byte copy of the caller's prefix: the caller's struct may be
    // shorter than `T`, so it cannot be read as a `T`.
    unsafe {
        std::ptr::copy_nonoverlapping(p.cast::<u8>(), (&mut value as *mut T).cast::<u8>(), size)
    };
    Ok(value)
}

/// Checks an output struct before any work is done (so a bad one fails
/// the call with nothing written) and returns its `struct_size`.
///
/// # Safety
/// As `read_versioned`.
pub(crate) unsafe fn check_out_struct<T: Versioned>(p: *mut T, name: &str) -> Result<usize> {
    unsafe { struct_size_of(p.cast_const(), name) }
}

/// Writes `value` into a caller's struct of `size` bytes (from
/// `check_out_struct`), leaving its `struct_size` as the caller set it.
///
/// # Safety
/// `p` passed `check_out_struct` with `size`, and points to `size` writable
/// bytes.
pub(crate) unsafe fn write_versioned<T: Versioned>(p: *mut T, size: usize, value: &T) {
    let skip = size_of::<usize>();
    unsafe {
        std::ptr::copy_nonoverlapping(
            (value as *const T).cast::<u8>().add(skip),
            p.cast::<u8>().add(skip),
            size - skip,
        )
    };
}

// ---------------------------------------------------------------------------
// Handles.

/// What a handle pointer really points to: the check value first (so it
/// sits at offset 0 for every handle type), then the Rust value.
#[repr(C)]
struct Checked<T> {
    magic: u64,
    value: T,
}

/// The check value a freed handle carries.
const FREED: u64 = 0x6465_6164_6465_6164; // "deaddead"

/// An opaque C handle type and the Rust value behind it.
pub(crate) trait Handle {
    type Target;
    /// Distinct per handle type, so one type passed for another is caught.
    const MAGIC: u64;
    /// The C name, for messages.
    const NAME: &'static str;
}

/// Moves `value` to the heap and returns the handle C holds.
pub(crate) fn into_handle<H: Handle>(value: H::Target) -> *mut H {
    Box::into_raw(Box::new(Checked {
        magic: H::MAGIC,
        value,
    }))
    .cast()
}

/// Checks that `p` points to a live handle of type `H`.
fn check_handle<H: Handle>(p: *const H, name: &str) -> Result<()> {
    if p.is_null() {
        return Err(Error::NullPointer(format!(
            "{name} ({} *) is NULL",
            H::NAME
        )));
    }
    if !(p as usize).is_multiple_of(align_of::<Checked<H::Target>>()) {
        return Err(Error::InvalidHandle(format!(
            "{name} = {p:p} is not a {} made by latsol (misaligned)",
            H::NAME
        )));
    }
    // Reading the check value of a foreign or freed pointer is what this
    // check is for: in practice the read finds another value.
    let magic = unsafe { std::ptr::read_volatile(p.cast::<u64>()) };
    match magic {
        m if m == H::MAGIC => Ok(()),
        FREED => Err(Error::InvalidHandle(format!(
            "{name} = {p:p}: this {} was freed already",
            H::NAME
        ))),
        _ => Err(Error::InvalidHandle(format!(
            "{name} = {p:p} is not a live {} (freed, or not made by latsol)",
            H::NAME
        ))),
    }
}

/// Borrows the value behind a handle.
///
/// # Safety
/// `p` is NULL or was returned by `into_handle::<H>` (a freed or foreign
/// pointer is detected in practice, as the module doc says).
pub(crate) unsafe fn borrow<'a, H: Handle>(p: *const H, name: &str) -> Result<&'a H::Target> {
    check_handle(p, name)?;
    Ok(unsafe { &(*p.cast::<Checked<H::Target>>()).value })
}

/// Frees a handle: clears its check value, then drops the value.
///
/// # Safety
/// As `borrow`; `p` is not used afterwards (a second free is detected in
/// practice).
pub(crate) unsafe fn free<H: Handle>(p: *mut H, name: &str) -> Result<()> {
    check_handle(p.cast_const(), name)?;
    let checked = p.cast::<Checked<H::Target>>();
    unsafe {
        std::ptr::write_volatile(std::ptr::addr_of_mut!((*checked).magic), FREED);
        drop(Box::from_raw(checked));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Host arrays.

/// The precision of the caller's host arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HostPrecision {
    F64,
    F32,
}

impl HostPrecision {
    fn bytes(self) -> usize {
        match self {
            HostPrecision::F64 => 8,
            HostPrecision::F32 => 4,
        }
    }
}

/// A caller's input array of `len` reals.
///
/// # Safety
/// `p` is NULL or points to `len` readable reals of `precision` that
/// nothing writes while the returned slice lives.
pub(crate) unsafe fn host_reals<'a>(
    p: *const c_void,
    len: usize,
    precision: HostPrecision,
    name: &str,
) -> Result<HostReals<'a>> {
    Ok(match precision {
        HostPrecision::F64 => {
            check_ptr(p.cast::<f64>(), name)?;
            HostReals::F64(unsafe { std::slice::from_raw_parts(p.cast(), len) })
        }
        HostPrecision::F32 => {
            check_ptr(p.cast::<f32>(), name)?;
            HostReals::F32(unsafe { std::slice::from_raw_parts(p.cast(), len) })
        }
    })
}

/// A caller's output array of `len` reals.
///
/// # Safety
/// `p` is NULL or points to `len` writable reals of `precision` that
/// nothing else reads or writes while the returned slice lives.
pub(crate) unsafe fn host_reals_mut<'a>(
    p: *mut c_void,
    len: usize,
    precision: HostPrecision,
    name: &str,
) -> Result<HostRealsMut<'a>> {
    Ok(match precision {
        HostPrecision::F64 => {
            check_ptr(p.cast::<f64>().cast_const(), name)?;
            HostRealsMut::F64(unsafe { std::slice::from_raw_parts_mut(p.cast(), len) })
        }
        HostPrecision::F32 => {
            check_ptr(p.cast::<f32>().cast_const(), name)?;
            HostRealsMut::F32(unsafe { std::slice::from_raw_parts_mut(p.cast(), len) })
        }
    })
}

/// Refuses an input array that overlaps an output array of `len` reals.
pub(crate) fn check_disjoint(
    input: (*const c_void, &str),
    output: (*const c_void, &str),
    len: usize,
    precision: HostPrecision,
) -> Result<()> {
    if input.0.is_null() || output.0.is_null() {
        return Ok(()); // reported as NULL by the caller's next check
    }
    let bytes = len * precision.bytes();
    let (a, b) = (input.0 as usize, output.0 as usize);
    if a < b.saturating_add(bytes) && b < a.saturating_add(bytes) {
        return Err(Error::InvalidArgument(format!(
            "{} ({:p}) and {} ({:p}) overlap: the input and the output must be separate arrays",
            input.1, input.0, output.1, output.0
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A struct that grew: version 1 had `a` and `b`, version 2 added `c`.
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Grown {
        struct_size: usize,
        a: i32,
        b: f64,
        c: f64,
    }

    /// The first version, as an old caller declares it.
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct GrownV1 {
        struct_size: usize,
        a: i32,
        b: f64,
    }

    unsafe impl Versioned for Grown {
        const NAME: &'static str = "grown";
        const V1_SIZE: usize = size_of::<GrownV1>();
        fn defaults() -> Self {
            Grown {
                struct_size: size_of::<Grown>(),
                a: 1,
                b: 2.0,
                c: 3.0,
            }
        }
    }

    #[test]
    fn an_older_shorter_struct_keeps_the_new_fields_default() {
        let old = GrownV1 {
            struct_size: size_of::<GrownV1>(),
            a: 7,
            b: 8.0,
        };
        let read =
            unsafe { read_versioned((&old as *const GrownV1).cast::<Grown>(), "p") }.unwrap();
        assert_eq!((read.a, read.b, read.c), (7, 8.0, 3.0));
    }

    #[test]
    fn an_older_output_struct_gets_only_its_bytes() {
        // An old caller's struct: `c` lies past its struct_size and stands
        // for memory the caller does not own; it must stay untouched.
        let mut out = Grown {
            struct_size: size_of::<GrownV1>(),
            a: 0,
            b: 0.0,
            c: -1.0,
        };
        let p = &mut out as *mut Grown;
        let size = unsafe { check_out_struct(p, "result") }.unwrap();
        assert_eq!(size, size_of::<GrownV1>());
        let value = Grown {
            struct_size: size_of::<Grown>(),
            a: 5,
            b: 6.0,
            c: 9.0,
        };
        unsafe { write_versioned(p, size, &value) };
        assert_eq!(
            out,
            Grown {
                struct_size: size_of::<GrownV1>(),
                a: 5,
                b: 6.0,
                c: -1.0
            }
        );
    }

    #[test]
    fn wrong_sizes_are_refused() {
        let mut v = Grown::defaults();
        v.struct_size = size_of::<Grown>() + 8;
        let e = unsafe { read_versioned(&v as *const Grown, "param") }.unwrap_err();
        assert!(
            matches!(&e, Error::InvalidArgument(m) if m.contains("larger")),
            "{e}"
        );
        v.struct_size = 4;
        let e = unsafe { read_versioned(&v as *const Grown, "param") }.unwrap_err();
        assert!(
            matches!(&e, Error::InvalidArgument(m) if m.contains("smaller")),
            "{e}"
        );
    }

    #[test]
    fn a_panic_becomes_an_internal_error() {
        use super::super::status::{last_error_ptr, LATSOL_ERROR_INTERNAL};
        let status = call("latsol_test", || panic!("boom"));
        assert_eq!(status, LATSOL_ERROR_INTERNAL);
        let msg = unsafe { std::ffi::CStr::from_ptr(last_error_ptr()) };
        assert!(msg.to_str().unwrap().contains("boom"));
    }
}
