//! Host side of the block algebra (`kernels/block_blas.cuh`): `Y += X A`,
//! `Y = X A` (in place too), `Y = W + X A` and the Gram block `Xᴴ Y` of blocks of double
//! or single fields, each one pass over memory instead of one per field
//! pair. The block solvers (seed 002) spend most of their vector work
//! here: at 12 right-hand sides, one field pair at a time cost 3.7× a
//! single solve's iteration per column (docs/performance.md, "Seed 002's
//! Table 1, second take"). Other formats, and blocks wider than a launch
//! takes, return `None`: the caller goes field by field.

use cudarc::driver::DeviceRepr;
use num_complex::Complex64 as C64;

use super::blas::{format_of, vectors, Blas};
use super::driver::errors::device_err;
use super::driver::launch;
use super::fields::{check_same, CudaSpinor};
use crate::backend::SpinorField;
use crate::error::{Error, Result};
use crate::precision::Precision;

/// Most fields X and Y of one `block_caxpy` launch (`BLOCK_X_MAX`,
/// `BLOCK_Y_MAX` in block_blas.cuh).
pub const BLOCK_X_MAX: usize = 16;
pub const BLOCK_Y_MAX: usize = 12;
/// The Gram block's tile side, the numbers a tile sums, and the most tiles
/// a launch sums (`GRAM_T`, `GRAM_SUMS`, `GRAM_TILES_MAX`).
pub const GRAM_T: usize = 6;
pub const GRAM_SUMS: usize = 2 * GRAM_T * GRAM_T;
pub const GRAM_TILES_MAX: usize = 16;
/// Most fields on either side of one Gram launch.
const GRAM_FIELDS_MAX: usize = 16;
/// Threads per block of `block_caxpy` (its launch bound).
const AXPY_BLOCK: u32 = 128;
/// Threads per block of the Gram block (`RED_BLOCK`).
const GRAM_BLOCK: u32 = super::blas::RED_BLOCK;
/// Most thread blocks of one Gram launch, all tiles together (the partial
/// sums' scratch holds `GRAM_SUMS` numbers for each).
pub const GRAM_GRID_MAX: usize = 1024;

/// What `block_caxpy` does with Y (`mode` in block_blas.cuh).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target<'a> {
    /// `Y += X A`.
    Add,
    /// `Y = X A`.
    Overwrite,
    /// `Y = W + X A`.
    From(&'a [&'a CudaSpinor]),
}

/// Kernel arguments of `block_caxpy` (`struct BlockAxpyParams`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct BlockAxpyParams {
    x: [u64; BLOCK_X_MAX],
    y: [u64; BLOCK_Y_MAX],
    w: [u64; BLOCK_Y_MAX],
    a: [f64; 2 * BLOCK_X_MAX * BLOCK_Y_MAX],
    n: i64,
    nx: i32,
    ny: i32,
    mode: i32,
    pad: i32,
}
// SAFETY: plain old data with the C layout of `BlockAxpyParams`.
unsafe impl DeviceRepr for BlockAxpyParams {}

impl BlockAxpyParams {
    /// `x` and `y` (pointers), `a` (row-major, `x.len()` rows), `n` items
    /// a field, `mode` as in block_blas.cuh.
    fn new(x: &[u64], y: &[u64], a: &[C64], n: usize, mode: i32) -> Self {
        let mut p = BlockAxpyParams {
            x: [0; BLOCK_X_MAX],
            y: [0; BLOCK_Y_MAX],
            w: [0; BLOCK_Y_MAX],
            a: [0.0; 2 * BLOCK_X_MAX * BLOCK_Y_MAX],
            n: n as i64,
            nx: x.len() as i32,
            ny: y.len() as i32,
            mode,
            pad: 0,
        };
        p.x[..x.len()].copy_from_slice(x);
        p.y[..y.len()].copy_from_slice(y);
        for i in 0..x.len() {
            for j in 0..y.len() {
                let c = a[i * y.len() + j];
                p.a[2 * (i * BLOCK_Y_MAX + j)] = c.re;
                p.a[2 * (i * BLOCK_Y_MAX + j) + 1] = c.im;
            }
        }
        p
    }
}
const _: () = assert!(std::mem::size_of::<BlockAxpyParams>() == 3416);

/// Kernel arguments of `block_cdot` (`struct BlockDotParams`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct BlockDotParams {
    x: [u64; GRAM_FIELDS_MAX],
    y: [u64; GRAM_FIELDS_MAX],
    partials: u64,
    counters: u64,
    out: u64,
    n: i64,
    nx: i32,
    ny: i32,
    tile_i: [i32; GRAM_TILES_MAX],
    tile_j: [i32; GRAM_TILES_MAX],
    blocks_per_tile: i32,
    pad: i32,
}
// SAFETY: plain old data with the C layout of `BlockDotParams`.
unsafe impl DeviceRepr for BlockDotParams {}
const _: () = assert!(std::mem::size_of::<BlockDotParams>() == 432);

/// Whether the fused kernels take fields of this format (the flat double2 /
/// float4 arrays of double and single).
fn fused_format(f: &CudaSpinor) -> bool {
    matches!(f.precision(), Precision::Double | Precision::Single)
}

/// The fields of one block op: one shape, one format the kernels take.
fn fused_fields(what: &str, fields: &[&CudaSpinor]) -> Result<bool> {
    let Some(first) = fields.first() else {
        return Ok(false);
    };
    for f in fields {
        check_same(what, first, f)?;
    }
    Ok(fields
        .iter()
        .all(|f| fused_format(f) && f.precision() == first.precision()))
}

impl Blas<'_> {
    /// `Y += X A`, `Y = X A` or `Y = W + X A` (`into`), `a` row-major
    /// with `x.len()` rows. `None` where the kernel does not take the
    /// fields (format, or more than a launch's fields): nothing was done.
    pub(crate) fn block_caxpy_impl(
        &self,
        a: &[C64],
        x: &[&CudaSpinor],
        y: &mut [CudaSpinor],
        into: Target<'_>,
    ) -> Result<Option<()>> {
        let (nx, ny) = (x.len(), y.len());
        check_coefficients("block_caxpy", a, nx, ny)?;
        let mut all: Vec<&CudaSpinor> = x.to_vec();
        all.extend(y.iter());
        let (mode, base): (i32, &[&CudaSpinor]) = match into {
            Target::Add => (0, &[]),
            Target::Overwrite => (1, &[]),
            Target::From(w) if w.len() == ny => (2, w),
            Target::From(w) => {
                return Err(Error::Internal(format!(
                    "block_caxpy: {} base fields for {ny} outputs",
                    w.len()
                )))
            }
        };
        all.extend_from_slice(base);
        if nx > BLOCK_X_MAX || ny > BLOCK_Y_MAX || !fused_fields("block_caxpy", &all)? {
            return Ok(None);
        }
        let s = &self.stream;
        let xs: Vec<u64> = x.iter().map(|f| f.data.ptr(s)).collect();
        let ys: Vec<u64> = y.iter().map(|f| f.data.ptr(s)).collect();
        let mut params = BlockAxpyParams::new(&xs, &ys, a, vectors(&y[0]), mode);
        for (j, wj) in base.iter().enumerate() {
            params.w[j] = wj.data.ptr(s);
        }
        self.launch_block_caxpy(&y[0], &params)?;
        Ok(Some(()))
    }

    /// `X ← X A` in place (`a` square, row-major): every thread reads its
    /// items of all x_i before it writes any. `None` as `block_caxpy_impl`.
    pub(crate) fn block_transform_impl(
        &self,
        a: &[C64],
        x: &mut [CudaSpinor],
    ) -> Result<Option<()>> {
        let n = x.len();
        check_coefficients("block_transform", a, n, n)?;
        if n > BLOCK_Y_MAX || !fused_fields("block_transform", &x.iter().collect::<Vec<_>>())? {
            return Ok(None);
        }
        let s = &self.stream;
        let xs: Vec<u64> = x.iter().map(|f| f.data.ptr(s)).collect();
        let params = BlockAxpyParams::new(&xs, &xs, a, vectors(&x[0]), 1);
        self.launch_block_caxpy(&x[0], &params)?;
        Ok(Some(()))
    }

    fn launch_block_caxpy(&self, like: &CudaSpinor, params: &BlockAxpyParams) -> Result<()> {
        let kernel = self.kernel(&format!("blas_block_caxpy_{}", format_of(like)))?;
        let grid = (params.n as usize).div_ceil(AXPY_BLOCK as usize).max(1);
        let grid = u32::try_from(grid)
            .map_err(|_| Error::Internal(format!("block_caxpy: {grid} blocks")))?;
        launch::launch(&self.stream, &kernel, grid, AXPY_BLOCK, params)
    }

    /// The Gram block `g[i·y.len() + j] = x_i† y_j`, summed over the ranks
    /// where there are several. Where `x` and `y` are the same fields, only
    /// the tiles on and above the diagonal are summed and the rest is their
    /// conjugate. `None` where the kernel does not take the fields.
    pub(crate) fn block_cdot_impl(
        &self,
        x: &[&CudaSpinor],
        y: &[&CudaSpinor],
    ) -> Result<Option<Vec<C64>>> {
        let (nx, ny) = (x.len(), y.len());
        let mut all: Vec<&CudaSpinor> = x.to_vec();
        all.extend_from_slice(y);
        if nx > GRAM_FIELDS_MAX || ny > GRAM_FIELDS_MAX || !fused_fields("block_cdot", &all)? {
            return Ok(None);
        }
        let hermitian = nx == ny && x.iter().zip(y).all(|(a, b)| std::ptr::eq(*a, *b));
        let tiles: Vec<(usize, usize)> = (0..nx.div_ceil(GRAM_T))
            .flat_map(|ti| (0..ny.div_ceil(GRAM_T)).map(move |tj| (ti, tj)))
            .filter(|&(ti, tj)| !hermitian || ti <= tj)
            .collect();
        let s = &self.stream;
        let n = vectors(x[0]);
        let per_tile = n
            .div_ceil(GRAM_BLOCK as usize)
            .clamp(1, GRAM_GRID_MAX / tiles.len());
        let mut params = BlockDotParams {
            n: n as i64,
            nx: nx as i32,
            ny: ny as i32,
            blocks_per_tile: per_tile as i32,
            ..Default::default()
        };
        for (i, f) in x.iter().enumerate() {
            params.x[i] = f.data.ptr(s);
        }
        for (j, f) in y.iter().enumerate() {
            params.y[j] = f.data.ptr(s);
        }
        for (t, &(ti, tj)) in tiles.iter().enumerate() {
            params.tile_i[t] = (ti * GRAM_T) as i32;
            params.tile_j[t] = (tj * GRAM_T) as i32;
        }
        let name = format!("blas_block_cdot_{}", format_of(x[0]));
        let local = self.run_gram(&name, params, per_tile * tiles.len(), tiles.len());
        let sums = match self.ranks {
            None => local?,
            Some(r) => {
                let (mut v, local) = match local {
                    Ok(v) => (v, Ok(())),
                    Err(e) => (vec![0.0; tiles.len() * GRAM_SUMS], Err(e)),
                };
                self.failure.sum(r, &mut v, local)?;
                v
            }
        };
        let mut g = vec![C64::new(0.0, 0.0); nx * ny];
        for (t, &(ti, tj)) in tiles.iter().enumerate() {
            for a in 0..GRAM_T {
                for b in 0..GRAM_T {
                    let (i, j) = (ti * GRAM_T + a, tj * GRAM_T + b);
                    if i < nx && j < ny {
                        let k = t * GRAM_SUMS + 2 * (a * GRAM_T + b);
                        let v = C64::new(sums[k], sums[k + 1]);
                        g[i * ny + j] = v;
                        if hermitian && ti != tj {
                            g[j * ny + i] = v.conj();
                        }
                    }
                }
            }
        }
        Ok(Some(g))
    }

    /// Launches the Gram kernel on the reductions' scratch and reads its
    /// `tiles · GRAM_SUMS` numbers after one synchronisation.
    fn run_gram(
        &self,
        name: &str,
        mut params: BlockDotParams,
        grid: usize,
        tiles: usize,
    ) -> Result<Vec<f64>> {
        let s = &self.stream;
        let scratch = self
            .scratch
            .lock()
            .map_err(|_| Error::Internal("reduction scratch poisoned".into()))?;
        params.partials = cudarc::driver::DevicePtr::device_ptr(&scratch.partials, s).0;
        params.counters = cudarc::driver::DevicePtr::device_ptr(&scratch.counter, s).0;
        params.out = scratch.result_device;
        let kernel = self.kernel(name)?;
        launch::launch(s, &kernel, grid as u32, GRAM_BLOCK, &params)?;
        s.synchronize().map_err(device_err("Gram block"))?;
        let host = scratch.result.as_ptr().map_err(device_err("Gram block"))?;
        Ok((0..tiles * GRAM_SUMS)
            // SAFETY: `result` holds at least GRAM_TILES_MAX · GRAM_SUMS
            // doubles of pinned host memory (`Scratch::new` in backend.rs);
            // the kernel that wrote them has finished (stream synchronised).
            // Volatile: the device wrote them behind the compiler's back.
            .map(|k| unsafe { std::ptr::read_volatile(host.add(k)) })
            .collect())
    }
}

fn check_coefficients(what: &str, a: &[C64], rows: usize, cols: usize) -> Result<()> {
    if a.len() != rows * cols {
        return Err(Error::Internal(format!(
            "{what}: {} coefficients for {rows} × {cols} fields",
            a.len()
        )));
    }
    Ok(())
}
