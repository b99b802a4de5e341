//! The CUDA backend on a cut lattice (issue 36): the faces a hopping term
//! reads from the other ranks, packed by a kernel into one device buffer
//! in the field's stored format (kernels/halo.cu), carried to the
//! neighbours, and read by the edges' launch where they arrived.
//!
//! One application on parity p: the input's faces (parity p̄) are packed
//! on the compute stream; the copy stream takes them to pinned host memory
//! while the interior sites are computed (the one-device kernel, told to
//! skip the sites on a cut face: `DslashParams::interior_cut`); the host
//! exchanges them with the neighbours through the communication layer
//! (`Comm::exchange`, the CPU backend's messages and tags); the copy stream
//! takes the received faces to the device, and the compute stream, once
//! they are there, runs the edges' kernel over the sites on a cut face
//! (`wilson_dslash_edges`). Faces are slots in the order of
//! `crate::comm::faces` (the CPU's), so the two backends' faces agree, and
//! every site sums the same hops in the same order as on one device.
//!
//! The links behind the backward faces travel once, when the gauge field
//! is stored (`GaugeHalo::new`), as the neighbour stores them.
//!
//! Errors stay collective: a rank whose packing fails still takes part in
//! the exchange, and keeps the error for the next global sum
//! (`DeferredFailure`), where every rank leaves the solve together.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr};

use super::driver::device::Device;
use super::driver::errors::device_err;
use super::driver::launch;
use super::halo_transport::{Face, FaceBuffers};
use crate::comm::faces::{edge_sites, face_len, interior_sites, layer_sites, sent_sites};
use crate::comm::{Message, Ranks};
use crate::error::{Error, Result};
use crate::field::Fermion;
use crate::lattice::{Lattice, Parity};
use crate::precision::Precision;

/// Faces one pack launch writes at most (`LATSOL_PACK_BLOCKS`): both ends
/// of four directions.
const PACK_BLOCKS: usize = 8;

/// Slots between a face's rows: a multiple of 32, so that every row and
/// the norms after them start aligned for the widest load.
fn face_stride(slots: usize) -> usize {
    slots.div_ceil(32) * 32
}

/// Faces start on 256-byte boundaries in a buffer.
fn aligned(bytes: usize) -> usize {
    bytes.div_ceil(256) * 256
}

/// Kernel arguments (`struct PackParams` in kernels/halo.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct PackParams {
    src: u64,
    dst: u64,
    table: u64,
    src_stride: i32,
    rows: i32,
    norm: i32,
    blocks: i32,
    start: [i32; PACK_BLOCKS + 1],
    dst_stride: [i32; PACK_BLOCKS],
    dst_offset: [u64; PACK_BLOCKS],
}
// SAFETY: plain old data with the C layout of `PackParams`.
unsafe impl DeviceRepr for PackParams {}

/// What the edges' kernels read besides the fields (`struct HaloView` in
/// kernels/wilson_dslash.cuh).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct HaloView {
    pub ahead: [u64; 4],
    pub behind: [u64; 4],
    pub links: [[[u64; 2]; 4]; 2],
    pub edges: u64,
    pub face_stride: [i32; 4],
    pub link_stride: [[i32; 4]; 2],
    pub face_len: [i32; 4],
    pub cut: i32,
    pub n_edges: i32,
    pub t_sign_ahead: f64,
    pub t_sign_behind: f64,
}

/// A link field whose links behind the backward faces a halo fetches:
/// where it is (`ptr`, blocks `[parity][mu]` of `reals` numbers of
/// `real_bytes` each a site, `stride` sites apart), how its site's numbers
/// lie (`parts`: from real `start` of the site, `rows` rows of elements of
/// `elem` bytes, as kernels/core.cuh and staggered_dslash.cuh load them),
/// and the length of the hops that cross on them.
#[derive(Debug, Clone)]
pub(crate) struct LinkFaces {
    pub ptr: u64,
    pub stride: usize,
    pub reals: usize,
    pub real_bytes: usize,
    pub parts: Vec<LinkPart>,
    pub depth: usize,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct LinkPart {
    pub start: usize,
    pub elem: usize,
    pub rows: usize,
}

impl LinkFaces {
    /// Bytes of one face of `stride` slots (a direction, a receiving parity).
    fn face_bytes(&self, stride: usize) -> usize {
        aligned(self.reals * stride * self.real_bytes)
    }
}

/// A link field's faces on this rank: per cut direction, both receiving
/// parities' faces, `stride[mu]` slots each.
struct LinkHalo {
    faces: [Option<CudaSlice<u8>>; 4],
    face_bytes: [usize; 4],
    stride: [usize; 4],
}

/// How a field's site is stored, row by row (kernels/core.cuh): the bytes
/// of one element, the rows, and whether a row of f32 norms follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SiteRows {
    pub elem: usize,
    pub rows: usize,
    pub norm: bool,
}

impl SiteRows {
    /// A spinor's (Wilson) or colour vector's (staggered) rows in `p`.
    pub(crate) fn of_field(p: Precision, fermion: Fermion) -> SiteRows {
        let (elem, rows, norm) = match (fermion, p) {
            (Fermion::Wilson, Precision::Double) => (16, 12, false),
            (Fermion::Wilson, Precision::Single) => (16, 6, false),
            (Fermion::Wilson, Precision::Half) => (8, 6, true),
            (Fermion::Wilson, Precision::Quarter) => (4, 6, true),
            (Fermion::Wilson, Precision::Packed20) => (16, 4, false),
            (Fermion::Wilson, Precision::Packed30) => (4, 23, false),
            (Fermion::Staggered, Precision::Double) => (16, 3, false),
            (Fermion::Staggered, Precision::Single) => (8, 3, false),
            (Fermion::Staggered, Precision::Quarter) => (2, 3, true),
            // One 16-byte word a site: half (six 16-bit integers and the
            // norm) and 20-bit; 30-bit three uint2 (kernels/staggered_dslash.cuh,
            // `ColourVector<short>`, `PackedColour`).
            (Fermion::Staggered, Precision::Half) => (16, 1, false),
            (Fermion::Staggered, Precision::Packed20) => (16, 1, false),
            (Fermion::Staggered, Precision::Packed30) => (8, 3, false),
        };
        SiteRows { elem, rows, norm }
    }

    /// Bytes of a face of `stride` slots.
    pub(crate) fn face_bytes(&self, stride: usize) -> usize {
        stride * (self.elem * self.rows + if self.norm { 4 } else { 0 })
    }

    fn kernel(&self) -> String {
        format!("pack_faces_b{}", self.elem)
    }
}

/// The kernels of kernels/halo.cu.
pub fn kernel_names() -> Vec<String> {
    [1, 2, 4, 8, 16]
        .iter()
        .map(|b| format!("pack_faces_b{b}"))
        .collect()
}

/// Where a field's parity block is: its address, its stride and how its
/// sites are stored.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Block {
    pub ptr: u64,
    pub stride: usize,
    pub rows: SiteRows,
}

/// Packs the sites `table` lists (`starts`: the first slot of each face,
/// and the total) from `src` into the faces at `offsets` of `dst`, on
/// `stream`.
#[allow(clippy::too_many_arguments)]
fn pack(
    dev: &Device,
    stream: &Arc<CudaStream>,
    src: Block,
    dst: u64,
    table: u64,
    starts: &[usize],
    strides: &[usize],
    offsets: &[usize],
) -> Result<()> {
    let p = pack_params(src, dst, table, starts, strides, offsets);
    let total = starts[strides.len()];
    if total == 0 {
        return Ok(());
    }
    let kernel = dev.kernel(&src.rows.kernel())?;
    let block = 128;
    let threads = total * (src.rows.rows + usize::from(src.rows.norm));
    let grid = launch::grid_for(threads, block)?;
    launch::launch(stream, &kernel, grid, block, &p)
}

/// The arguments of a pack launch (`pack`).
fn pack_params(
    src: Block,
    dst: u64,
    table: u64,
    starts: &[usize],
    strides: &[usize],
    offsets: &[usize],
) -> PackParams {
    let blocks = strides.len();
    let mut p = PackParams {
        src: src.ptr,
        dst,
        table,
        src_stride: src.stride as i32,
        rows: src.rows.rows as i32,
        norm: src.rows.norm as i32,
        blocks: blocks as i32,
        ..Default::default()
    };
    for b in 0..blocks {
        p.start[b] = starts[b] as i32;
        p.dst_stride[b] = strides[b] as i32;
        p.dst_offset[b] = offsets[b] as u64;
    }
    p.start[blocks] = starts[blocks] as i32;
    p
}

/// The links of `field` in direction `mu` that this rank sends ahead,
/// packed on the device (the faces of both receiving parities) and copied
/// to the host: for hops of length d, the link at y in layer L − d + j
/// serves the site y + d μ̂ (the other parity) in layer j ahead, slot
/// `j · len + face index`.
fn pack_links(
    dev: &Device,
    lat: &Lattice,
    field: &LinkFaces,
    mu: usize,
    len: usize,
) -> Result<(CudaSlice<u8>, Vec<u8>)> {
    let (depth, local) = (field.depth, lat.dims());
    let slots = depth * len;
    let stride = face_stride(slots);
    let face_bytes = field.face_bytes(stride);
    let buf = dev
        .stream
        .alloc_zeros::<u8>(2 * face_bytes)
        .map_err(device_err("a face of links"))?;
    let at = cudarc::driver::DevicePtr::device_ptr(&buf, &dev.stream).0;
    for q in [Parity::Even, Parity::Odd] {
        let mut table = vec![0u32; slots];
        for j in 0..depth {
            for (i, cb) in layer_sites(lat, q, mu, local[mu] - depth + j) {
                table[j * len + i] = cb as u32;
            }
        }
        let table = upload_table(dev, &table)?;
        let t = cudarc::driver::DevicePtr::device_ptr(&table, &dev.stream).0;
        let block = (q.index() * 4 + mu) * field.reals * field.stride * field.real_bytes;
        let face = q.other().index() * face_bytes;
        for part in &field.parts {
            let src = Block {
                ptr: field.ptr + (block + part.start * field.stride * field.real_bytes) as u64,
                stride: field.stride,
                rows: SiteRows {
                    elem: part.elem,
                    rows: part.rows,
                    norm: false,
                },
            };
            let offset = face + part.start * stride * field.real_bytes;
            pack(
                dev,
                &dev.stream,
                src,
                at,
                t,
                &[0, slots],
                &[stride],
                &[offset],
            )?;
        }
        // The table lives until the launches have read it.
        dev.synchronize()?;
    }
    let mut host = vec![0u8; 2 * face_bytes];
    dev.download_bytes(&mut host, at)?;
    Ok((buf, host))
}

fn upload_table(dev: &Device, v: &[u32]) -> Result<CudaSlice<u32>> {
    let v = if v.is_empty() { &[0u32][..] } else { v };
    dev.stream
        .clone_htod(v)
        .map_err(device_err("a face table to the device"))
}

/// A local failure kept for the next collective step (`take`): the rank
/// that failed goes on with the others to their next global sum, where all
/// leave together (a rank returning at once would leave its neighbours
/// waiting in a collective it never reaches).
#[derive(Default)]
pub(crate) struct DeferredFailure(Mutex<Option<Error>>);

impl DeferredFailure {
    pub(crate) fn keep(&self, e: Error) {
        if let Ok(mut slot) = self.0.lock() {
            slot.get_or_insert(e);
        }
    }

    pub(crate) fn take(&self) -> Option<Error> {
        self.0.lock().ok().and_then(|mut slot| slot.take())
    }

    /// The global sums of `values` over `ranks`, one more number carrying
    /// whether a rank failed (`local`, or a failure kept since the last
    /// sum): where any did, every rank returns an error here, the failing
    /// one its own.
    pub(crate) fn sum(&self, ranks: &Ranks, values: &mut [f64], local: Result<()>) -> Result<()> {
        let kept = self.take();
        let mine = local.err().or(kept);
        let n = values.len();
        let mut all = Vec::with_capacity(n + 1);
        all.extend_from_slice(values);
        all.push(if mine.is_some() { 1.0 } else { 0.0 });
        if mine.is_some() {
            all[..n].fill(0.0);
        }
        ranks.sum(&mut all)?;
        if let Some(e) = mine {
            return Err(e);
        }
        if all[n] > 0.0 {
            return Err(Error::OtherRank(
                "another rank failed on its device in this call (its status says why)".into(),
            ));
        }
        values.copy_from_slice(&all[..n]);
        Ok(())
    }

    /// Whether `ok` holds on every rank, a kept failure counting as not
    /// ok (and returned on the rank that kept it).
    pub(crate) fn all_ok(&self, ranks: &Ranks, ok: bool) -> Result<bool> {
        let mine = self.take();
        let verdict = ranks.comm.all_ok(ok && mine.is_none())?;
        match mine {
            Some(e) => Err(e),
            None => Ok(verdict),
        }
    }
}

/// What a gauge field stored on a cut lattice keeps for its hopping terms:
/// the neighbours, the face tables, the links behind the backward faces,
/// and the faces' buffers of each spinor format (made on first use).
pub struct GaugeHalo {
    ranks: Ranks,
    cut: [bool; 4],
    depth: usize,
    /// Slots of a face (depth · sites of a parity in a layer), per direction.
    slots: [usize; 4],
    /// The sites each face sends, all cut directions in order, by the
    /// input's parity; and where each face starts in it.
    sent: [CudaSlice<u32>; 2],
    sent_starts: Vec<usize>,
    /// The sites on a cut face, by the output's parity.
    edges: [CudaSlice<u32>; 2],
    n_edges: [usize; 2],
    /// Sites of one parity in a layer, per direction.
    len: [usize; 4],
    /// The links behind the backward faces, per link field (Wilson: the
    /// links; staggered: fat, then long).
    links: Vec<LinkHalo>,
    t_sign_ahead: f64,
    t_sign_behind: f64,
    buffers: Mutex<HashMap<(Precision, Fermion), FaceBuffers>>,
    /// With `LATSOL_HALO_TIMING=1`: where the host's time goes in each
    /// application, printed when the halo is dropped.
    timing: Option<Mutex<HostTimes>>,
}

/// The host's time in the applications of a halo (`LATSOL_HALO_TIMING`):
/// launching the pack, copies and interior; waiting for the copies;
/// the exchange; launching the edges.
#[derive(Default)]
struct HostTimes {
    applications: u64,
    seconds: [f64; 4],
}

impl HostTimes {
    fn add(&mut self, marks: &[std::time::Instant; 5]) {
        self.applications += 1;
        for (s, w) in self.seconds.iter_mut().zip(marks.windows(2)) {
            *s += (w[1] - w[0]).as_secs_f64();
        }
    }
}

impl Drop for GaugeHalo {
    fn drop(&mut self) {
        let Some(Ok(t)) = self.timing.as_ref().map(|t| t.lock()) else {
            return;
        };
        if t.applications == 0 {
            return;
        }
        let us = t.seconds.map(|s| s * 1e6 / t.applications as f64);
        eprintln!(
            "latsol: rank {} halo, {} applications, host microseconds each: launching {:.1}, \
             waiting for the copies {:.1}, exchange {:.1}, edges {:.1}; total {:.1}",
            self.ranks.comm.rank(),
            t.applications,
            us[0],
            us[1],
            us[2],
            us[3],
            us.iter().sum::<f64>()
        );
    }
}

impl std::fmt::Debug for GaugeHalo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GaugeHalo")
            .field("cut", &self.cut)
            .field("depth", &self.depth)
            .field("n_edges", &self.n_edges)
            .finish()
    }
}

impl GaugeHalo {
    /// The halo of a cut lattice for hopping terms of length up to `depth`
    /// on the link fields `links`: the face tables, and each field's links
    /// behind the backward faces fetched from the ranks behind as they store
    /// them. `t_sign`: the Wilson time boundary's sign (1 for staggered,
    /// whose signs are in the links). Collective; a failure on one rank
    /// fails all.
    pub(crate) fn new(
        dev: &Device,
        ranks: &Ranks,
        lat: &Lattice,
        links: &[LinkFaces],
        depth: usize,
        t_sign: f64,
    ) -> Result<GaugeHalo> {
        let grid = &ranks.grid;
        let cut = [0, 1, 2, 3].map(|mu| grid.is_partitioned(mu));
        let local = lat.dims();
        let len = [0, 1, 2, 3].map(|mu| face_len(local, mu));
        let slots = [0, 1, 2, 3].map(|mu| if cut[mu] { depth * len[mu] } else { 0 });
        let interior = ranks.agree(interior_sites(lat, cut, depth))?;
        // Everything local first, agreed before the first exchange.
        let prepared = (|| -> Result<_> {
            let sent_sites = sent_sites(lat, cut, depth);
            let mut sent_starts = vec![0];
            let sent = [0, 1].map(|q| {
                let mut all = Vec::new();
                for mu in (0..4).filter(|&mu| cut[mu]) {
                    for side in &sent_sites[q][mu] {
                        all.extend_from_slice(side);
                        if q == 0 {
                            sent_starts.push(all.len());
                        }
                    }
                }
                all
            });
            let edges = edge_sites(&interior);
            let n_edges = [edges[0].len(), edges[1].len()];
            let on_device = |v: &[u32]| upload_table(dev, v);
            let sent = [on_device(&sent[0])?, on_device(&sent[1])?];
            let edges = [on_device(&edges[0])?, on_device(&edges[1])?];
            let mut packed = Vec::new();
            for (set, field) in links.iter().enumerate() {
                for mu in (0..4).filter(|&mu| cut[mu]) {
                    let (buf, host) = pack_links(dev, lat, field, mu, len[mu])?;
                    packed.push((set, mu, buf, host));
                }
            }
            Ok((sent, sent_starts, edges, n_edges, packed))
        })();
        let (sent, sent_starts, edges, n_edges, packed) = ranks.agree(prepared)?;
        let mut link_halos: Vec<LinkHalo> = links
            .iter()
            .map(|field| {
                let stride = [0, 1, 2, 3].map(|mu| face_stride(field.depth * len[mu]));
                LinkHalo {
                    faces: Default::default(),
                    face_bytes: stride.map(|s| field.face_bytes(s)),
                    stride,
                }
            })
            .collect();
        for (set, mu, buf, send) in packed {
            let mut recv = vec![0u8; send.len()];
            ranks.comm.exchange(&mut [Message {
                to: grid.neighbour(mu, true),
                send: &send,
                from: grid.neighbour(mu, false),
                recv: &mut recv,
                tag: 100 + (4 * set + mu) as i32,
            }])?;
            let at = cudarc::driver::DevicePtr::device_ptr(&buf, &dev.stream).0;
            let stored = dev.upload_bytes(at, &recv).and_then(|_| dev.synchronize());
            ranks.agree(stored)?;
            link_halos[set].faces[mu] = Some(buf);
        }
        let t_cut = cut[3];
        Ok(GaugeHalo {
            ranks: ranks.clone(),
            cut,
            depth,
            slots,
            sent,
            sent_starts,
            edges,
            n_edges,
            len,
            links: link_halos,
            t_sign_ahead: if !t_cut || ranks.holds_last(3) {
                t_sign
            } else {
                1.0
            },
            t_sign_behind: if !t_cut || grid.coords()[3] == 0 {
                t_sign
            } else {
                1.0
            },
            buffers: Mutex::new(HashMap::new()),
            timing: (std::env::var("LATSOL_HALO_TIMING").as_deref() == Ok("1"))
                .then(|| Mutex::new(HostTimes::default())),
        })
    }

    /// Bit mu set where direction mu is cut.
    pub(crate) fn cut_bits(&self) -> i32 {
        (0..4).filter(|&mu| self.cut[mu]).map(|mu| 1 << mu).sum()
    }

    /// The spinor faces of sites stored as `rows`: per cut direction the
    /// first layers (sent to the rank behind, which reads them as its
    /// faces ahead) and the last ones (to the rank ahead), the CPU
    /// backend's tags; and the bytes of all.
    fn faces(&self, rows: SiteRows) -> (Vec<Face>, usize) {
        let grid = &self.ranks.grid;
        let mut faces = Vec::new();
        let mut total = 0;
        for mu in (0..4).filter(|&mu| self.cut[mu]) {
            for side in 0..2 {
                let bytes = aligned(rows.face_bytes(face_stride(self.slots[mu])));
                let first = side == 0;
                faces.push(Face {
                    to: grid.neighbour(mu, !first),
                    from: grid.neighbour(mu, first),
                    tag: (2 * mu + side) as i32,
                    offset: total,
                    bytes,
                });
                total += bytes;
            }
        }
        (faces, total)
    }

    fn lock(
        &self,
    ) -> Result<std::sync::MutexGuard<'_, HashMap<(Precision, Fermion), FaceBuffers>>> {
        self.buffers
            .lock()
            .map_err(|_| Error::Internal("the faces' buffers poisoned".into()))
    }

    fn buffers<'a>(
        &self,
        dev: &Device,
        all: &'a mut HashMap<(Precision, Fermion), FaceBuffers>,
        key: (Precision, Fermion),
    ) -> Result<&'a mut FaceBuffers> {
        Ok(match all.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let (faces, total) = self.faces(SiteRows::of_field(key.0, key.1));
                e.insert(FaceBuffers::new(dev, &self.ranks, faces, total)?)
            }
        })
    }

    /// One hopping term on the output parity `p` of a cut lattice, its
    /// input `inp` (a parity block of `fermion`s in `precision`): `interior`
    /// launches the one-device kernel over the interior sites on the
    /// compute stream; meanwhile the copy stream packs the faces and
    /// carries them, and once they are here `edges` launches the edges'
    /// kernel on the edge stream (of the highest priority: its blocks go
    /// ahead of the interior's remaining ones, so the edges run beside the
    /// interior rather than after it). The compute stream then waits for
    /// the edges. A local failure is kept in `failure` for the next global
    /// sum, and the exchange still takes place.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn apply(
        &self,
        dev: &Device,
        failure: &DeferredFailure,
        p: Parity,
        inp: Block,
        key: (Precision, Fermion),
        interior: impl FnOnce() -> Result<()>,
        edges: impl FnOnce(&Arc<CudaStream>, &HaloView) -> Result<()>,
    ) -> Result<()> {
        let mut all = self.lock()?;
        // Made collectively: a failure here is every rank's.
        let bufs = self.buffers(dev, &mut all, key)?;
        let (copy, edge) = (bufs.copy.clone(), bufs.edge.clone());
        let q = p.other();
        let send_at = bufs.send_ptr(&dev.stream);
        let rows = SiteRows::of_field(key.0, key.1);
        let (faces, _) = self.faces(rows);
        let cut = self.cut_directions();
        let strides: Vec<usize> = (0..faces.len())
            .map(|k| face_stride(self.slots[cut[k / 2]]))
            .collect();
        let offsets: Vec<usize> = faces.iter().map(|f| f.offset).collect();
        let table = cudarc::driver::DevicePtr::device_ptr(&self.sent[q.index()], &dev.stream).0;
        let started = std::time::Instant::now();
        let mut launched = started;
        let local = (|| -> Result<()> {
            // The input is ready (and the output free) once the compute
            // stream's work so far is done: the copy and edge streams wait
            // for that.
            let what = device_err("the faces' events");
            bufs.input_ready.record(&dev.stream).map_err(&what)?;
            edge.wait(&bufs.input_ready).map_err(&what)?;
            // Packed on the edge stream, whose blocks go first, then carried
            // on the copy stream (a pack on a stream of the interior's
            // priority waited for the interior's blocks: measured slower).
            pack(
                dev,
                &edge,
                inp,
                send_at,
                table,
                &self.sent_starts,
                &strides,
                &offsets,
            )?;
            bufs.packed.record(&edge).map_err(&what)?;
            copy.wait(&bufs.packed).map_err(&what)?;
            bufs.start(&dev.stream, &copy)?;
            interior()?;
            launched = std::time::Instant::now();
            copy.synchronize().map_err(device_err("the faces' journey"))
        })();
        let carried = std::time::Instant::now();
        let recv_at = match local {
            Ok(()) => match bufs.finish(&self.ranks)? {
                Ok(at) => at,
                Err(e) => {
                    // The edges are not computed; the failure ends the
                    // solve on every rank at the next global sum.
                    failure.keep(e);
                    return Ok(());
                }
            },
            Err(e) => {
                failure.keep(e);
                return bufs.finish_failed(&self.ranks);
            }
        };
        let arrived = std::time::Instant::now();
        let mut view = HaloView {
            edges: cudarc::driver::DevicePtr::device_ptr(&self.edges[p.index()], &dev.stream).0,
            cut: self.cut_bits(),
            n_edges: self.n_edges[p.index()] as i32,
            t_sign_ahead: self.t_sign_ahead,
            t_sign_behind: self.t_sign_behind,
            ..Default::default()
        };
        for (k, &mu) in cut.iter().enumerate() {
            view.ahead[mu] = recv_at + faces[2 * k].offset as u64;
            view.behind[mu] = recv_at + faces[2 * k + 1].offset as u64;
            view.face_stride[mu] = face_stride(self.slots[mu]) as i32;
            view.face_len[mu] = self.len[mu] as i32;
            for (set, field) in self.links.iter().enumerate() {
                view.link_stride[set][mu] = field.stride[mu] as i32;
                if let Some(l) = &field.faces[mu] {
                    let at = cudarc::driver::DevicePtr::device_ptr(l, &dev.stream).0;
                    view.links[set][mu] = [at, at + field.face_bytes[mu] as u64];
                }
            }
        }
        let done = (|| -> Result<()> {
            if view.n_edges > 0 {
                edges(&edge, &view)?;
            }
            let what = device_err("the edges' event");
            bufs.edges_done.record(&edge).map_err(&what)?;
            dev.stream.wait(&bufs.edges_done).map_err(&what)
        })();
        if let Err(e) = done {
            failure.keep(e);
        }
        if let Some(t) = &self.timing {
            let marks = [
                started,
                launched,
                carried,
                arrived,
                std::time::Instant::now(),
            ];
            if let Ok(mut t) = t.lock() {
                t.add(&marks);
            }
        }
        Ok(())
    }

    /// The cut directions in order.
    fn cut_directions(&self) -> Vec<usize> {
        (0..4).filter(|&mu| self.cut[mu]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// kernels/halo.cu's `pack_faces` on host memory, thread by thread
    /// (addresses are byte offsets into `src` and `dst`).
    fn pack_on_host(p: &PackParams, elem: usize, src: &[u8], table: &[u32], dst: &mut [u8]) {
        let total = p.start[p.blocks as usize] as usize;
        let threads = total * (p.rows as usize + p.norm as usize);
        for t in 0..threads {
            let (j, k) = (t / total, t % total);
            let mut b = 0;
            for c in 1..PACK_BLOCKS {
                if c < p.blocks as usize && k >= p.start[c] as usize {
                    b = c;
                }
            }
            let slot = k - p.start[b] as usize;
            let cb = table[k] as usize;
            let (ds, at) = (p.dst_stride[b] as usize, p.dst_offset[b] as usize);
            let (from, to, n) = if j < p.rows as usize {
                let from = p.src as usize + (j * p.src_stride as usize + cb) * elem;
                (from, p.dst as usize + at + (j * ds + slot) * elem, elem)
            } else {
                let norms = p.src as usize + p.rows as usize * p.src_stride as usize * elem;
                let to = p.dst as usize + at + p.rows as usize * ds * elem + 4 * slot;
                (norms + 4 * cb, to, 4)
            };
            dst[to..to + n].copy_from_slice(&src[from..from + n]);
        }
    }

    /// The packed faces hold, slot by slot and row by row, the sites the
    /// CPU's exchange sends (`comm::faces::sent_sites`), in the layout the
    /// edges' kernel reads (rows `face_stride` slots apart, norms after).
    #[test]
    fn packed_faces_hold_the_sites_the_cpu_sends() {
        let lat = Lattice::new([4, 6, 2, 8]).unwrap();
        let cut = [true, false, true, true];
        let sent = sent_sites(&lat, cut, 1);
        let stride = 256;
        for rows in [
            SiteRows::of_field(Precision::Half, Fermion::Wilson),
            SiteRows::of_field(Precision::Double, Fermion::Wilson),
            SiteRows::of_field(Precision::Quarter, Fermion::Staggered),
        ] {
            // A field whose bytes say where they are.
            let len = rows.face_bytes(stride);
            let src: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
            for q in [Parity::Even, Parity::Odd] {
                let (mut table, mut starts, mut strides, mut offsets) =
                    (Vec::new(), vec![0], Vec::new(), Vec::new());
                let mut total = 0;
                for mu in (0..4).filter(|&mu| cut[mu]) {
                    for side in &sent[q.index()][mu] {
                        table.extend_from_slice(side);
                        starts.push(table.len());
                        strides.push(face_stride(side.len()));
                        offsets.push(total);
                        total += aligned(rows.face_bytes(face_stride(side.len())));
                    }
                }
                let block = Block {
                    ptr: 0,
                    stride,
                    rows,
                };
                let p = pack_params(block, 0, 0, &starts, &strides, &offsets);
                let mut dst = vec![0u8; total];
                pack_on_host(&p, rows.elem, &src, &table, &mut dst);
                for (b, &at) in offsets.iter().enumerate() {
                    for (slot, &cb) in table[starts[b]..starts[b + 1]].iter().enumerate() {
                        let cb = cb as usize;
                        for j in 0..rows.rows {
                            let got = at + (j * strides[b] + slot) * rows.elem;
                            let want = (j * stride + cb) * rows.elem;
                            assert_eq!(
                                dst[got..got + rows.elem],
                                src[want..want + rows.elem],
                                "{rows:?} face {b} slot {slot} row {j}"
                            );
                        }
                        if rows.norm {
                            let got = at + rows.rows * strides[b] * rows.elem + 4 * slot;
                            let want = rows.rows * stride * rows.elem + 4 * cb;
                            assert_eq!(dst[got..got + 4], src[want..want + 4]);
                        }
                    }
                }
            }
        }
        // The kernel's text does what `pack_on_host` does.
        let text = include_str!("../../../kernels/halo.cu");
        assert!(text.contains("const int j = t / total, k = t - j * total;"));
        assert!(text.contains("dst[j * ds + slot] = src[j * P.src_stride + cb];"));
    }

    /// A failure kept on one rank comes back at the next global sum (and
    /// only there), the sums of the others untouched.
    #[test]
    fn a_kept_failure_returns_at_the_next_sum() {
        let ranks = Ranks {
            comm: std::sync::Arc::new(crate::comm::SingleProcess),
            grid: crate::comm::RankGrid::single(),
            reduction: crate::comm::Reduction::Fast,
        };
        let failure = DeferredFailure::default();
        let mut v = [1.0, 2.0];
        failure.sum(&ranks, &mut v, Ok(())).unwrap();
        assert_eq!(v, [1.0, 2.0]);
        failure.keep(Error::Internal("a launch".into()));
        failure.keep(Error::Internal("a later one".into()));
        match failure.sum(&ranks, &mut v, Ok(())) {
            Err(Error::Internal(m)) => assert_eq!(m, "a launch"),
            other => panic!("{other:?}"),
        }
        assert!(failure.sum(&ranks, &mut v, Ok(())).is_ok());
        assert!(failure.all_ok(&ranks, true).unwrap());
        failure.keep(Error::Internal("again".into()));
        assert!(failure.all_ok(&ranks, true).is_err());
    }

    #[test]
    fn parameter_structs_match_the_kernels() {
        // kernels/halo.cu and kernels/wilson_dslash.cuh static_assert the same.
        assert_eq!(std::mem::size_of::<PackParams>(), 176);
        assert_eq!(std::mem::offset_of!(PackParams, dst_offset), 112);
        assert_eq!(std::mem::size_of::<HaloView>(), 288);
        assert_eq!(std::mem::offset_of!(HaloView, edges), 192);
        assert_eq!(std::mem::offset_of!(HaloView, face_len), 248);
        assert_eq!(std::mem::offset_of!(HaloView, t_sign_ahead), 272);
        let text = include_str!("../../../kernels/halo.cu");
        assert!(text.contains(&format!("#define LATSOL_PACK_BLOCKS {PACK_BLOCKS}")));
    }
}
