//! Host field orders: conversion between the arrays a host program passes
//! (docs/conventions.md, "Host gauge field orders" and "Host spinor orders") and
//! the library's canonical fields (`field::GaugeField`, `field::HostSpinor`).
//! Spinors change basis on the way: DeGrand–Rossi → UKQCD (`T†`) in, and
//! UKQCD → DeGrand–Rossi (`T`) out.

pub mod colour;
pub mod gauge;
pub mod spinor;

/// Borrowed host numbers in the caller's precision.
#[derive(Debug, Clone, Copy)]
pub enum HostReals<'a> {
    F64(&'a [f64]),
    F32(&'a [f32]),
}

/// Mutable host numbers in the caller's precision.
#[derive(Debug)]
pub enum HostRealsMut<'a> {
    F64(&'a mut [f64]),
    F32(&'a mut [f32]),
}

impl HostReals<'_> {
    pub fn len(&self) -> usize {
        match self {
            HostReals::F64(v) => v.len(),
            HostReals::F32(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    #[inline]
    pub fn get(&self, i: usize) -> f64 {
        match self {
            HostReals::F64(v) => v[i],
            HostReals::F32(v) => v[i] as f64,
        }
    }
}

impl HostReals<'_> {
    /// The largest absolute value (NaN and Inf are left to the importers,
    /// which name the site that holds them).
    pub fn max_abs(&self) -> f64 {
        fn fold<T: Copy + Into<f64>>(v: &[T]) -> f64 {
            v.iter().fold(0.0f64, |m, &x| {
                let a = x.into().abs();
                if a > m {
                    a
                } else {
                    m
                }
            })
        }
        match self {
            HostReals::F64(v) => fold(v),
            HostReals::F32(v) => fold(v),
        }
    }
}

/// The exponent `e` of the exact power of two `2^e` that brings a field
/// whose largest component is `max_abs` into `[1, 2)`, or 0 when it lies in
/// `[2^-16, 2^16]` already (or is 0 or not finite). The library solves for
/// `2^e b` and returns `2^-e x`: no norm of the source or of the Krylov
/// vectors then underflows or overflows, and no storage format (single, the
/// fixed-point and packed formats' f32 norms and 8-bit exponents) loses
/// the field, however small or large the caller's source; the scaling
/// itself is exact.
pub fn normalising_exponent(max_abs: f64) -> i32 {
    let m = max_abs;
    if m == 0.0 || !m.is_finite() || (2f64.powi(-16)..=2f64.powi(16)).contains(&m) {
        return 0;
    }
    // m = f · 2^k, f in [1, 2) (subnormals: k below −1022).
    -(m.log2().floor() as i32)
}

/// `2^e` as two normal factors whose product is exact (|e| up to 2046).
pub(crate) fn power_of_two_factors(e: i32) -> (f64, f64) {
    let (a, b) = (e / 2, e - e / 2);
    (2f64.powi(a), 2f64.powi(b))
}

impl<'a> From<&'a HostRealsMut<'_>> for HostReals<'a> {
    /// Reads what a mutable host array holds (an initial guess).
    fn from(v: &'a HostRealsMut<'_>) -> HostReals<'a> {
        match v {
            HostRealsMut::F64(s) => HostReals::F64(s),
            HostRealsMut::F32(s) => HostReals::F32(s),
        }
    }
}

impl HostRealsMut<'_> {
    pub fn len(&self) -> usize {
        match self {
            HostRealsMut::F64(v) => v.len(),
            HostRealsMut::F32(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    #[inline]
    pub fn set(&mut self, i: usize, x: f64) {
        match self {
            HostRealsMut::F64(v) => v[i] = x,
            HostRealsMut::F32(v) => v[i] = x as f32,
        }
    }
}

/// Host numbers owned by the library, in a caller's precision: where a call
/// keeps results apart until it can write all of them (`Context::invert_each`).
#[derive(Debug)]
pub(crate) enum HostRealsBuf {
    F64(Vec<f64>),
    F32(Vec<f32>),
}

impl HostRealsBuf {
    /// A copy of `v` (its precision and length); out of memory is an error,
    /// not an abort.
    pub(crate) fn copy_of(v: &HostRealsMut) -> crate::error::Result<HostRealsBuf> {
        Ok(match v {
            HostRealsMut::F64(s) => HostRealsBuf::F64(crate::alloc::copied(s, "a solution")?),
            HostRealsMut::F32(s) => HostRealsBuf::F32(crate::alloc::copied(s, "a solution")?),
        })
    }

    /// Zeros of `v`'s precision and length (fallibly, as `copy_of`).
    pub(crate) fn zeroed_like(v: &HostRealsMut) -> crate::error::Result<HostRealsBuf> {
        Ok(match v {
            HostRealsMut::F64(s) => {
                HostRealsBuf::F64(crate::alloc::filled(s.len(), 0.0, "a solution")?)
            }
            HostRealsMut::F32(s) => {
                HostRealsBuf::F32(crate::alloc::filled(s.len(), 0.0, "a solution")?)
            }
        })
    }

    pub(crate) fn as_mut(&mut self) -> HostRealsMut<'_> {
        match self {
            HostRealsBuf::F64(v) => HostRealsMut::F64(v),
            HostRealsBuf::F32(v) => HostRealsMut::F32(v),
        }
    }

    /// Writes the numbers into `out` (of the same precision and length, as
    /// `copy_of` made them).
    pub(crate) fn write_to(&self, out: &mut HostRealsMut) {
        match (self, out) {
            (HostRealsBuf::F64(a), HostRealsMut::F64(b)) => b.copy_from_slice(a),
            (HostRealsBuf::F32(a), HostRealsMut::F32(b)) => b.copy_from_slice(a),
            _ => unreachable!("HostRealsBuf::write_to: a copy of another array"),
        }
    }
}

/// Host gauge orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GaugeOrder {
    /// Four arrays (μ = x, y, z, t) of V row-major links, even-odd sites.
    Qdp,
    /// One array, even-odd sites, 4 row-major links per site (μ inner).
    Milc,
    /// One array, even-odd sites, 4 column-major links per site (μ inner).
    CpsWilson,
}

/// A host gauge field as the caller passed it.
#[derive(Debug, Clone, Copy)]
pub enum HostGauge<'a> {
    Qdp([HostReals<'a>; 4]),
    Milc(HostReals<'a>),
    CpsWilson(HostReals<'a>),
}

impl HostGauge<'_> {
    pub fn order(&self) -> GaugeOrder {
        match self {
            HostGauge::Qdp(_) => GaugeOrder::Qdp,
            HostGauge::Milc(_) => GaugeOrder::Milc,
            HostGauge::CpsWilson(_) => GaugeOrder::CpsWilson,
        }
    }

    /// Whether the caller's arrays are single precision.
    pub fn is_single(&self) -> bool {
        matches!(
            self,
            HostGauge::Milc(HostReals::F32(_))
                | HostGauge::CpsWilson(HostReals::F32(_))
                | HostGauge::Qdp([HostReals::F32(_), ..])
        )
    }

    /// The arrays, in order (one, or four for QDP).
    pub fn arrays(&self) -> &[HostReals<'_>] {
        match self {
            HostGauge::Qdp(a) => a,
            HostGauge::Milc(a) | HostGauge::CpsWilson(a) => std::slice::from_ref(a),
        }
    }
}

/// Host spinor orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiracOrder {
    /// Even-odd sites; per site spin outer, colour inner.
    Dirac,
    /// Even-odd sites; per site colour outer, spin inner.
    Qdp,
    /// Odd-even sites; per site spin outer, colour inner.
    CpsWilson,
}

/// The gamma basis of host spinors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GammaBasis {
    DegrandRossi,
    Ukqcd,
    /// QUDA's chiral basis (γ5 diagonal; `gamma::chiral_to_ukqcd`), as
    /// tmLQCD passes its spinors.
    Chiral,
}
