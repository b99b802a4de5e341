//! A caller's Wilson spinor array to and from a device field, converted on
//! the device (`kernels/host_spinor.cu`): the caller's bytes cross the bus
//! as they are, into a staging buffer from the pool, and the reordering,
//! the gamma-basis change, the power-of-two scale and the precision change
//! run on the GPU, bit for bit as the host path (`layout::spinor`) does
//! them. The checks are the host path's too: the array's length, a
//! non-finite number (named by its site), a result beyond the host
//! precision's range, all before anything is written to the caller's array.

use cudarc::driver::{DevicePtr, DeviceRepr};

use super::driver::errors::device_err;
use super::driver::launch;
use super::driver::pool::Pooled;
use super::fields::CudaSpinor;
use super::host_gauge::HostOrder;
use crate::backend::{Backend, SpinorField};
use crate::error::Result;
use crate::field::Fermion;
use crate::gamma::SpinMatrix;
use crate::lattice::Subset;
use crate::layout::{self, DiracOrder, GammaBasis, HostReals, HostRealsMut};
use crate::precision::Precision;

/// Mirrors `HostSpinorParams` in kernels/host_spinor.cu.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct HostSpinorParams {
    host: u64,
    field: u64,
    flags: u64,
    sites: i64,
    vh: i64,
    stride: i64,
    order: i32,
    full: i32,
    rotate: i32,
    pad: i32,
    s0: f64,
    s1: f64,
    m: [f64; 32],
}
// SAFETY: plain old data with the kernel's layout.
unsafe impl DeviceRepr for HostSpinorParams {}

/// Mirrors `MaxAbsParams` in kernels/host_spinor.cu.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct MaxAbsParams {
    x: u64,
    n: i64,
    flags: u64,
}
// SAFETY: as above.
unsafe impl DeviceRepr for MaxAbsParams {}

/// The kernels of `kernels/host_spinor.cu`.
pub fn kernel_names() -> Vec<String> {
    let mut v = Vec::new();
    for (a, b) in [
        ("f64", "f64"),
        ("f64", "f32"),
        ("f32", "f64"),
        ("f32", "f32"),
    ] {
        v.push(format!("import_spinor_{a}_to_{b}"));
        v.push(format!("export_spinor_{a}_to_{b}"));
        v.push(format!("import_colour_{a}_to_{b}"));
        v.push(format!("export_colour_{a}_to_{b}"));
    }
    v.push("max_abs_f64".into());
    v.push("max_abs_f32".into());
    v
}

fn order_code(order: DiracOrder) -> i32 {
    match order {
        DiracOrder::Dirac => 0,
        DiracOrder::Qdp => 1,
        DiracOrder::CpsWilson => 2,
    }
}

fn flatten(m: &SpinMatrix) -> [f64; 32] {
    let mut out = [0.0; 32];
    for (k, z) in m.iter().flatten().enumerate() {
        out[2 * k] = z.re;
        out[2 * k + 1] = z.im;
    }
    out
}

/// The host spinor formats the device converts: the precise fields (double,
/// single) of Wilson spinors and of staggered colour vectors.
fn supported(f: &CudaSpinor) -> bool {
    matches!(f.precision(), Precision::Double | Precision::Single)
}

/// The kernels' word for a field's kind: Wilson spinors or colour vectors.
/// The raw bytes of a caller's array.
fn host_bytes<'a>(host: &HostReals<'a>) -> &'a [u8] {
    match *host {
        HostReals::F64(h) => bytemuck::cast_slice(h),
        HostReals::F32(h) => bytemuck::cast_slice(h),
    }
}

fn kind(f: &CudaSpinor) -> &'static str {
    match f.fermion() {
        Fermion::Wilson => "spinor",
        Fermion::Staggered => "colour",
    }
}

/// Reals a site of the field's kind.
fn site_reals(f: &CudaSpinor) -> usize {
    f.fermion().reals()
}

fn host_suffix(p: Precision) -> &'static str {
    if p == Precision::Double {
        "f64"
    } else {
        "f32"
    }
}

impl HostOrder<'_> {
    /// The parameters of a conversion between `field` and the staged array
    /// at `host`, with basis change `m` and scale `2^exp`.
    fn host_spinor_params(
        &self,
        field: &CudaSpinor,
        host: u64,
        order: DiracOrder,
        m: Option<SpinMatrix>,
        exp: i32,
    ) -> HostSpinorParams {
        let (s0, s1) = layout::power_of_two_factors(exp);
        let s = &self.stream;
        HostSpinorParams {
            host,
            field: field.data.ptr(s),
            flags: self.flags.device_ptr(s).0,
            sites: field.lattice.sites(field.subset) as i64,
            vh: field.lattice.half_volume() as i64,
            stride: field.stride as i64,
            order: order_code(order),
            full: (field.subset == Subset::Full) as i32,
            rotate: m.is_some() as i32,
            pad: 0,
            s0,
            s1,
            m: m.as_ref().map(flatten).unwrap_or([0.0; 32]),
        }
    }

    /// A staging buffer for a host array of `reals` numbers (f64 or f32).
    fn staging_field(&self, double: bool, reals: usize) -> Result<Pooled> {
        let p = if double {
            Precision::Double
        } else {
            Precision::Single
        };
        self.pooled(p, reals)
    }

    /// Sets the flags to (0, no bad site).
    fn reset_flags(&self) -> Result<()> {
        let s = &self.stream;
        let at = self.flags.device_ptr(s).0;
        let what = device_err("resetting the conversion flags");
        // SAFETY: the two u64 of `flags`.
        unsafe {
            cudarc::driver::result::memset_d8_async(at, 0, 8, s.cu_stream()).map_err(&what)?;
            cudarc::driver::result::memset_d8_async(at + 8, 0xff, 8, s.cu_stream()).map_err(what)
        }
    }

    fn read_flags(&self) -> Result<[u64; 2]> {
        let mut out = [0u64; 2];
        self.stream
            .memcpy_dtoh(self.flags, &mut out)
            .map_err(device_err("reading the conversion flags"))?;
        self.synchronize()?;
        Ok(out)
    }

    /// The largest |x| of `n` elements at `x` (NaN passed over).
    fn device_max_abs(&self, x: u64, n: usize, double: bool) -> Result<f64> {
        self.reset_flags()?;
        let params = MaxAbsParams {
            x,
            n: n as i64,
            flags: self.flags.device_ptr(&self.stream).0,
        };
        let name = if double { "max_abs_f64" } else { "max_abs_f32" };
        // A grid-stride loop: any grid covers the array; this one fills the device.
        let threads = n.clamp(1, 256 * 4 * self.info.multiprocessors.max(1) as usize);
        self.launch_tuned(name, threads, 256, &params, None)?;
        Ok(f64::from_bits(self.read_flags()?[0]))
    }

    /// Host microseconds per launch of an empty kernel (`max_abs_f64` on
    /// no elements), issued `n` times: straight through the driver
    /// (`launch::launch`), and through `launch_tuned` (kernel table, tuner,
    /// the path every kernel of the backend takes). For latsol-gpu-check:
    /// a floor under the time of any one operation on a small lattice.
    pub fn launch_overhead_us(&self, n: usize) -> Result<(f64, f64)> {
        let params = self.empty_params();
        let kernel = self.kernel("max_abs_f64")?;
        let n = n.max(1);
        self.synchronize()?;
        let t = std::time::Instant::now();
        for _ in 0..n {
            launch::launch(&self.stream, &kernel, 1, 32, &params)?;
        }
        let raw = t.elapsed().as_secs_f64() * 1e6 / n as f64;
        self.synchronize()?;
        let t = std::time::Instant::now();
        for _ in 0..n {
            self.launch_empty()?;
        }
        let tuned = t.elapsed().as_secs_f64() * 1e6 / n as f64;
        self.synchronize()?;
        Ok((raw, tuned))
    }

    /// One launch of the empty kernel of `launch_overhead_us` through the
    /// backend's launch path (latsol-gpu-check's launch study).
    pub fn launch_empty(&self) -> Result<()> {
        self.launch_tuned("max_abs_f64", 1, 32, &self.empty_params(), None)
    }

    /// `max_abs_f64` on no elements: a kernel that returns at once.
    fn empty_params(&self) -> MaxAbsParams {
        MaxAbsParams {
            x: 0,
            n: 0,
            flags: self.flags.device_ptr(&self.stream).0,
        }
    }

    /// The device side of `Backend::import_spinor`.
    pub(crate) fn import_spinor_impl<B: Backend<Spinor = CudaSpinor>>(
        &self,
        host_path: &B,
        dst: &mut CudaSpinor,
        host: HostReals,
        order: DiracOrder,
        basis: GammaBasis,
        exp: Option<i32>,
    ) -> Result<i32> {
        if !supported(dst) {
            // Other formats through the host (the trait's default).
            return crate::backend::import_on_host(host_path, dst, host, order, basis, exp);
        }
        let sites = dst.lattice.sites(dst.subset);
        match dst.fermion() {
            Fermion::Wilson => layout::spinor::check_len(sites, dst.subset, order, host.len())?,
            Fermion::Staggered => layout::colour::check_len(sites, dst.subset, host.len())?,
        }
        let double = matches!(host, HostReals::F64(_));
        let staged = self.staging_field(double, sites * site_reals(dst))?;
        let at = staged.ptr(&self.stream);
        self.upload_bytes(at, host_bytes(&host))?;
        self.convert_staged(dst, at, host, order, basis, exp)
    }

    /// The conversion of a caller's array already staged at `at` (its raw
    /// bytes) into `dst`: the scale (when `exp` is None), the order, the
    /// basis, the precision; `host` is read only to word an error.
    fn convert_staged(
        &self,
        dst: &mut CudaSpinor,
        at: u64,
        host: HostReals,
        order: DiracOrder,
        basis: GammaBasis,
        exp: Option<i32>,
    ) -> Result<i32> {
        let sites = dst.lattice.sites(dst.subset);
        let double = matches!(host, HostReals::F64(_));
        let exp = match exp {
            Some(e) => e,
            None => layout::normalising_exponent(self.device_max_abs(
                at,
                sites * site_reals(dst),
                double,
            )?),
        };
        let staggered = dst.fermion() == Fermion::Staggered;
        let m = if staggered {
            None
        } else {
            layout::spinor::rotation_in(basis)
        };
        self.reset_flags()?;
        let params = self.host_spinor_params(dst, at, order, m, exp);
        let name = format!(
            "import_{}_{}_to_{}",
            kind(dst),
            if double { "f64" } else { "f32" },
            host_suffix(dst.precision())
        );
        self.launch_tuned(&name, sites, 128, &params, None)?;
        let bad = self.read_flags()?[1];
        if bad != u64::MAX {
            return Err(if staggered {
                // The host path words it (naming the site) and fails.
                match layout::colour::import_scaled(&dst.lattice, dst.subset, host, exp) {
                    Err(e) => e,
                    Ok(_) => crate::error::Error::Internal(
                        "the device found a non-finite number the host did not".into(),
                    ),
                }
            } else {
                layout::spinor::non_finite_error(&dst.lattice, dst.subset, order, bad as usize)
            });
        }
        Ok(exp)
    }

    /// The device side of `Backend::import_each`: the raw bytes of source
    /// k + 1 cross on the copy stream while the caller's `solve` of source
    /// k runs on the backend's stream (`rayon::join`: the solve on this
    /// thread, the upload on another thread of the same pool, so the
    /// context's thread count holds; with one thread they run in turn);
    /// the conversion of each source waits for its bytes (an event) and
    /// runs on the backend's stream between the solves. Two staging
    /// buffers on the device, used in turn.
    pub(crate) fn import_each_impl<B: Backend<Spinor = CudaSpinor>>(
        &self,
        host_path: &B,
        sources: &[HostReals],
        order: DiracOrder,
        basis: GammaBasis,
        alloc: &mut dyn FnMut() -> Result<CudaSpinor>,
        solve: &mut crate::backend::SolveEach<'_, CudaSpinor>,
    ) -> Result<()> {
        let name = crate::backend::name_source;
        let Some(first) = sources.first() else {
            return Ok(());
        };
        let double = matches!(first, HostReals::F64(_));
        let same = sources
            .iter()
            .all(|s| s.len() == first.len() && matches!(s, HostReals::F64(_)) == double);
        let dst = alloc()?;
        let sites = dst.lattice.sites(dst.subset);
        let reals = sites * site_reals(&dst);
        let fits = match dst.fermion() {
            Fermion::Wilson => layout::spinor::check_len(sites, dst.subset, order, first.len()),
            Fermion::Staggered => layout::colour::check_len(sites, dst.subset, first.len()),
        };
        let overlap = sources.len() > 1 && same && supported(&dst);
        let mut first_dst = Some(dst);
        let mut alloc = || match first_dst.take() {
            Some(d) => Ok(d),
            None => alloc(),
        };
        if !overlap {
            return crate::backend::import_in_turn(
                host_path, sources, order, basis, &mut alloc, solve,
            );
        }
        fits.map_err(|e| name(e, 0))?;
        let bufs = [
            self.staging_field(double, reals)?,
            self.staging_field(double, reals)?,
        ];
        let at = [bufs[0].ptr(&self.stream), bufs[1].ptr(&self.stream)];
        // The buffers are made (and zeroed) on the backend's stream.
        self.synchronize()?;
        let copy = self.copy_stream()?;
        let stage = |k: usize| -> Result<cudarc::driver::CudaEvent> {
            // Any thread of the pool may run this.
            self.ctx
                .bind_to_thread()
                .map_err(device_err("binding the device to an upload thread"))?;
            self.upload_bytes_on(&copy, at[k % 2], host_bytes(&sources[k]))?;
            copy.record_event(None)
                .map_err(device_err("recording the upload's event"))
        };
        let result = (|| -> Result<()> {
            let mut ready = stage(0)?;
            for k in 0..sources.len() {
                self.stream
                    .wait(&ready)
                    .map_err(device_err("waiting for the source's upload"))?;
                let mut field = alloc()?;
                // Buffer k % 2 converted (the call ends synchronised), so
                // source k + 1 may take the other.
                let exp = self
                    .convert_staged(&mut field, at[k % 2], sources[k], order, basis, None)
                    .map_err(|e| name(e, k))?;
                if k + 1 < sources.len() {
                    let (solved, staged) = rayon::join(|| solve(k, field, exp), || stage(k + 1));
                    solved?;
                    ready = staged?;
                } else {
                    solve(k, field, exp)?;
                }
            }
            Ok(())
        })();
        // No upload may still write a buffer that goes back to the pool.
        copy.synchronize()
            .map_err(device_err("synchronising the copy stream"))?;
        drop(bufs);
        result
    }

    /// The device side of `Backend::check_export`: the field's largest
    /// magnitude found on the device.
    pub(crate) fn check_export_impl<B: Backend<Spinor = CudaSpinor>>(
        &self,
        host_path: &B,
        src: &CudaSpinor,
        out: &HostRealsMut,
        exp: i32,
    ) -> Result<()> {
        if !supported(src) {
            return crate::backend::check_export_on_host(host_path, src, out, exp);
        }
        let double_field = src.precision() == Precision::Double;
        let max = self.device_max_abs(src.data.ptr(&self.stream), src.data.len(), double_field)?;
        match src.fermion() {
            Fermion::Wilson => layout::spinor::check_range(max, out, exp),
            Fermion::Staggered => {
                let sites = src.lattice.sites(src.subset);
                layout::colour::check_range(sites, src.subset, max, out, exp)
            }
        }
    }

    /// The device side of `Backend::export_spinor`.
    pub(crate) fn export_spinor_impl<B: Backend<Spinor = CudaSpinor>>(
        &self,
        host_path: &B,
        src: &CudaSpinor,
        out: HostRealsMut,
        order: DiracOrder,
        basis: GammaBasis,
        exp: i32,
    ) -> Result<()> {
        if !supported(src) {
            return crate::backend::export_on_host(host_path, src, out, order, basis, exp);
        }
        let sites = src.lattice.sites(src.subset);
        let staggered = src.fermion() == Fermion::Staggered;
        if !staggered {
            layout::spinor::check_out_len(sites, src.subset, order, out.len())?;
        }
        // The length (colour vectors) and the range, before anything is written.
        self.check_export_impl(host_path, src, &out, exp)?;
        let double = matches!(out, HostRealsMut::F64(_));
        let staged = self.staging_field(double, sites * site_reals(src))?;
        let m = if staggered {
            None
        } else {
            layout::spinor::rotation_out(basis)
        };
        let params = self.host_spinor_params(src, staged.ptr(&self.stream), order, m, exp);
        let name = format!(
            "export_{}_{}_to_{}",
            kind(src),
            host_suffix(src.precision()),
            if double { "f64" } else { "f32" }
        );
        self.launch_tuned(&name, sites, 128, &params, None)?;
        let bytes: &mut [u8] = match out {
            HostRealsMut::F64(h) => bytemuck::cast_slice_mut(h),
            HostRealsMut::F32(h) => bytemuck::cast_slice_mut(h),
        };
        self.download_bytes(bytes, staged.ptr(&self.stream))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_struct_matches_the_kernel() {
        // kernels/host_spinor.cu: 3 u64, 3 long long, 4 int, 2 + 32 double.
        assert_eq!(
            std::mem::size_of::<HostSpinorParams>(),
            6 * 8 + 4 * 4 + 34 * 8
        );
        assert_eq!(std::mem::offset_of!(HostSpinorParams, s0), 64);
        assert_eq!(std::mem::size_of::<MaxAbsParams>(), 24);
    }

    #[test]
    fn kernel_names_exist_in_the_source() {
        let text = include_str!("../../../kernels/host_spinor.cu");
        for k in kernel_names() {
            assert!(text.contains(&format!("void {k}(")), "{k}");
        }
    }
}
