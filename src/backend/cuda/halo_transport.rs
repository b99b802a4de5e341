//! How a cut lattice's packed faces reach the neighbours (issue 36): the
//! buffers of one spinor format and the transport that carries them.
//!
//! - `Transport::Peer`: each rank's receive buffer is opened by its
//!   neighbours on the node through CUDA IPC (`cuIpcGetMemHandle`, the
//!   handles swapped once over the communication layer), and each rank
//!   copies its faces straight into the neighbours' buffers, device to
//!   device (NVLink where there is one), on the copy stream. A one-byte
//!   message per face then tells the receiver they are there (the sender
//!   has waited for its copies first). The receive buffer has two halves,
//!   used in turn: a rank writes half k mod 2 of a neighbour only after
//!   that neighbour's message of application k − 1, which it sends after
//!   its own packing of k − 1, itself after its edges of k − 2 (which read
//!   that half) on its compute stream. No event crosses processes.
//! - `Transport::Host`: through pinned host memory and the host's messages
//!   (`Comm::exchange`), the fallback that always works (ranks on other
//!   nodes, a failed IPC set-up).
//!
//! Which one: `LATSOL_HALO` (`host`, `peer`; default `auto`: peer where
//! every neighbour is on the rank's node and every rank opened its
//! neighbours' buffers), agreed by all ranks.

use std::sync::Arc;

use cudarc::driver::{sys, CudaEvent, CudaSlice, CudaStream, PinnedHostSlice};

use super::driver::device::Device;
use super::driver::errors::device_err;
use crate::comm::{Message, Ranks};
use crate::error::{Error, Result};

/// One face of an exchange: the bytes at `offset` of the send buffer go
/// to rank `to`, landing at the same offset of its receive buffer; rank
/// `from` sends this rank the face at `offset`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Face {
    pub to: usize,
    pub from: usize,
    pub tag: i32,
    pub offset: usize,
    pub bytes: usize,
}

/// The transport chosen for a format's faces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HaloTransport {
    Host,
    Peer,
}

impl HaloTransport {
    /// `LATSOL_HALO`: `host` or `peer`; `None` (the default, `auto`): peer
    /// where it can be set up.
    fn from_env() -> Option<HaloTransport> {
        match std::env::var("LATSOL_HALO").as_deref() {
            Ok("host") => Some(HaloTransport::Host),
            Ok("peer") => Some(HaloTransport::Peer),
            _ => None,
        }
    }
}

/// Receive buffers that neighbours opened: this rank's (two halves of
/// `total` bytes, from `cuMemAlloc`, which IPC needs) and the neighbours'
/// as this process sees them.
struct PeerBuffers {
    own: u64,
    /// (rank, base of its receive buffer here), each neighbour once.
    peers: Vec<(usize, u64)>,
    /// Applications so far: the half they wrote.
    step: u64,
    ctx: Arc<cudarc::driver::CudaContext>,
}

enum Transport {
    Host {
        recv: CudaSlice<u8>,
        host_send: PinnedHostSlice<u8>,
        host_recv: PinnedHostSlice<u8>,
    },
    Peer(PeerBuffers),
}

/// A format's faces: the packed faces on the device and how they travel.
pub(crate) struct FaceBuffers {
    faces: Vec<Face>,
    total: usize,
    send: CudaSlice<u8>,
    transport: Transport,
    /// The copy stream (the faces' journey) and the edge stream (the pack
    /// and the edges' kernel, of the highest priority).
    pub(crate) copy: Arc<CudaStream>,
    pub(crate) edge: Arc<CudaStream>,
    /// Made once: the compute stream's work before an application done
    /// (the copy and edge streams wait for it), the faces on the device
    /// (host transport: the edge stream waits), the edges done (the
    /// compute stream waits).
    pub(crate) input_ready: CudaEvent,
    pub(crate) packed: CudaEvent,
    arrived: CudaEvent,
    pub(crate) edges_done: CudaEvent,
}

impl Drop for PeerBuffers {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: pointers this process opened or allocated, once each; the
        // device is done with them (synchronised first).
        unsafe {
            let _ = sys::cuCtxSynchronize();
            for &(_, at) in &self.peers {
                let _ = sys::cuIpcCloseMemHandle(at);
            }
            let _ = cudarc::driver::result::free_sync(self.own);
        }
    }
}

impl FaceBuffers {
    /// The buffers of `faces` (`total` bytes each way), with the peer
    /// transport where every rank can use it (collective).
    pub(crate) fn new(
        dev: &Device,
        ranks: &Ranks,
        faces: Vec<Face>,
        total: usize,
    ) -> Result<FaceBuffers> {
        let n = total.max(1);
        let what = device_err("the faces' buffers");
        let send = ranks.agree(dev.stream.alloc_zeros::<u8>(n).map_err(&what))?;
        // The choice agreed: any rank asking for host staging makes it
        // every rank's, else any asking for peers.
        let asked = match HaloTransport::from_env() {
            None => 0.0,
            Some(HaloTransport::Peer) => 1.0,
            Some(HaloTransport::Host) => 2.0,
        };
        let mut agreed = [asked];
        ranks.comm.max(&mut agreed)?;
        let want = match agreed[0] as u8 {
            2 => Some(HaloTransport::Host),
            1 => Some(HaloTransport::Peer),
            _ => None,
        };
        let peer = match want {
            Some(HaloTransport::Host) => None,
            _ => open_peers(dev, ranks, &faces, n)?,
        };
        // The streams of the faces' journey, made here where a failure is
        // every rank's.
        let streams = (|| Ok((dev.copy_stream()?, dev.edge_stream()?)))();
        let (copy, edge) = ranks.agree(streams)?;
        if want == Some(HaloTransport::Peer) && peer.is_none() {
            return Err(Error::Unsupported(
                "LATSOL_HALO=peer: a neighbour is on another node or its buffer could not be \
                 opened here"
                    .into(),
            ));
        }
        let transport = match peer {
            Some(p) => Transport::Peer(p),
            None => {
                let made = (|| -> Result<Transport> {
                    // SAFETY: plain pinned allocations, read and written by
                    // the host only between copies the copy stream has finished.
                    let pinned = || unsafe { dev.ctx.alloc_pinned_with_flags::<u8>(n, 0) };
                    Ok(Transport::Host {
                        recv: dev.stream.alloc_zeros::<u8>(n).map_err(&what)?,
                        host_send: pinned().map_err(&what)?,
                        host_recv: pinned().map_err(&what)?,
                    })
                })();
                ranks.agree(made)?
            }
        };
        let event = || {
            let flags = sys::CUevent_flags::CU_EVENT_DISABLE_TIMING;
            dev.ctx.new_event(Some(flags)).map_err(&what)
        };
        let events = (|| Ok([event()?, event()?, event()?, event()?]))();
        let [input_ready, packed, arrived, edges_done] = ranks.agree(events)?;
        Ok(FaceBuffers {
            faces,
            total,
            send,
            transport,
            copy,
            edge,
            input_ready,
            packed,
            arrived,
            edges_done,
        })
    }

    /// Where the packed faces go.
    pub(crate) fn send_ptr(&self, stream: &CudaStream) -> u64 {
        cudarc::driver::DevicePtr::device_ptr(&self.send, stream).0
    }

    /// Queues the faces' journey on `copy` (which waits for the packing
    /// already): to pinned host memory, or into the neighbours' buffers.
    pub(crate) fn start(&mut self, stream: &CudaStream, copy: &CudaStream) -> Result<()> {
        let send = self.send_ptr(stream);
        match &mut self.transport {
            Transport::Host { host_send, .. } => {
                let host = host_send
                    .as_mut_slice()
                    .map_err(device_err("the faces' host buffer"))?;
                // SAFETY: pinned memory that outlives the copy, read by the
                // host only after the copy stream is synchronised.
                unsafe {
                    cudarc::driver::result::memcpy_dtoh_async(
                        &mut host[..self.total],
                        send,
                        copy.cu_stream(),
                    )
                }
                .map_err(device_err("the faces to the host"))
            }
            Transport::Peer(p) => {
                let half = (p.step % 2) as usize * self.total;
                for f in &self.faces {
                    let base = p
                        .peers
                        .iter()
                        .find(|(r, _)| *r == f.to)
                        .map(|&(_, b)| b)
                        .ok_or_else(|| Error::Internal("a neighbour's buffer not open".into()))?;
                    // SAFETY: both ranges lie in live allocations (the
                    // neighbour's opened for this process); the neighbour
                    // reads this half only after this rank's message.
                    unsafe {
                        cudarc::driver::result::memcpy_dtod_async(
                            base + (half + f.offset) as u64,
                            send + f.offset as u64,
                            f.bytes,
                            copy.cu_stream(),
                        )
                    }
                    .map_err(device_err("a face to a neighbour's GPU"))?;
                }
                Ok(())
            }
        }
    }

    /// After `start` and the copy stream's synchronisation: the exchange
    /// with the neighbours (always: an error of the exchange itself is
    /// every rank's), and the received faces ready for the edge stream;
    /// returns where they are, or this rank's local failure (to keep:
    /// `DeferredFailure`).
    pub(crate) fn finish(&mut self, ranks: &Ranks) -> Result<Result<u64>> {
        let (copy, edge) = (&self.copy, &self.edge);
        match &mut self.transport {
            Transport::Host {
                recv,
                host_send,
                host_recv,
            } => {
                let what = device_err("the faces' host buffers");
                let slices = host_send
                    .as_slice()
                    .and_then(|send| Ok((send, host_recv.as_mut_slice()?)));
                let (send, got) = match slices {
                    Ok(s) => s,
                    Err(e) => {
                        // The neighbours' messages as long as they expect.
                        let (zeros, mut sink) = (vec![0u8; self.total], vec![0u8; self.total]);
                        exchange(ranks, &self.faces, &zeros, &mut sink)?;
                        return Ok(Err(what(e)));
                    }
                };
                exchange(ranks, &self.faces, send, got)?;
                let at = cudarc::driver::DevicePtr::device_ptr(&*recv, copy).0;
                let arrived = &self.arrived;
                Ok((|| {
                    // SAFETY: as in `start`; the device buffer is not read
                    // before the edge stream waits for this copy's event.
                    unsafe {
                        cudarc::driver::result::memcpy_htod_async(
                            at,
                            &got[..self.total],
                            copy.cu_stream(),
                        )
                    }
                    .map_err(device_err("the faces to the device"))?;
                    arrived
                        .record(copy)
                        .map_err(device_err("the faces' arrival event"))?;
                    edge.wait(arrived)
                        .map_err(device_err("waiting for the faces"))?;
                    Ok(at)
                })())
            }
            Transport::Peer(p) => {
                // One byte a face: "my copy into your buffer is done".
                exchange_small(ranks, &self.faces)?;
                let half = (p.step % 2) as usize * self.total;
                p.step += 1;
                Ok(Ok(p.own + half as u64))
            }
        }
    }

    /// The exchange of a rank that failed before `start`: the neighbours
    /// still get their messages (and, with peers, an untouched half).
    pub(crate) fn finish_failed(&mut self, ranks: &Ranks) -> Result<()> {
        match &mut self.transport {
            Transport::Host { .. } => {
                let send = vec![0u8; self.total];
                let mut recv = vec![0u8; self.total];
                exchange(ranks, &self.faces, &send, &mut recv)
            }
            Transport::Peer(p) => {
                p.step += 1;
                exchange_small(ranks, &self.faces)
            }
        }
    }
}

/// One byte a face, as `finish` sends it with peers.
fn exchange_small(ranks: &Ranks, faces: &[Face]) -> Result<()> {
    let send = vec![0u8; faces.len()];
    let mut recv = vec![0u8; faces.len()];
    let ones: Vec<Face> = faces
        .iter()
        .enumerate()
        .map(|(k, f)| Face {
            offset: k,
            bytes: 1,
            ..*f
        })
        .collect();
    exchange(ranks, &ones, &send, &mut recv)
}

/// Every face's bytes sent and received at once (the CPU backend's tags).
fn exchange(ranks: &Ranks, faces: &[Face], send: &[u8], recv: &mut [u8]) -> Result<()> {
    let mut order: Vec<&Face> = faces.iter().collect();
    order.sort_by_key(|f| f.offset);
    let mut messages = Vec::with_capacity(faces.len());
    let mut rest = recv;
    let mut taken = 0;
    for f in order {
        let (_, tail) = rest.split_at_mut(f.offset - taken);
        let (face, tail) = tail.split_at_mut(f.bytes);
        rest = tail;
        taken = f.offset + f.bytes;
        messages.push(Message {
            to: f.to,
            send: &send[f.offset..f.offset + f.bytes],
            from: f.from,
            recv: face,
            tag: f.tag,
        });
    }
    ranks.comm.exchange(&mut messages)
}

/// This rank's receive buffer (two halves of `n` bytes) opened by its
/// neighbours, and theirs here; `None` on every rank unless every rank
/// managed (collective).
fn open_peers(
    dev: &Device,
    ranks: &Ranks,
    faces: &[Face],
    n: usize,
) -> Result<Option<PeerBuffers>> {
    // Handles and node numbers travel as messages of the faces' own pairs:
    // a rank sends its buffer's handle to the ranks that write into it.
    const HANDLE: usize = 64;
    let node = ranks.comm.node_id() as u64;
    let own = (|| -> Result<(u64, [u8; HANDLE])> {
        dev.ctx
            .bind_to_thread()
            .map_err(device_err("binding the device"))?;
        // SAFETY: a plain allocation of 2n bytes, freed by `FaceBuffers`'
        // drop (or below where the set-up fails).
        let own = unsafe { cudarc::driver::result::malloc_sync(2 * n) }
            .map_err(device_err("the faces' receive buffer"))?;
        let mut handle = std::mem::MaybeUninit::<sys::CUipcMemHandle>::uninit();
        // SAFETY: `own` is the base of a cuMemAlloc allocation.
        let got = unsafe { sys::cuIpcGetMemHandle(handle.as_mut_ptr(), own).result() };
        match got {
            // SAFETY: written by the call that succeeded.
            Ok(()) => Ok((own, unsafe {
                std::mem::transmute::<sys::CUipcMemHandle, [u8; HANDLE]>(handle.assume_init())
            })),
            Err(e) => {
                // SAFETY: allocated above, never shared.
                let _ = unsafe { cudarc::driver::result::free_sync(own) };
                Err(device_err("an IPC handle")(e))
            }
        }
    })();
    let made = ranks.comm.all_ok(own.is_ok())?;
    let (own, handle) = match (own, made) {
        (Ok(o), true) => o,
        (Ok((own, _)), false) => {
            // SAFETY: allocated above, never shared.
            let _ = unsafe { cudarc::driver::result::free_sync(own) };
            return Ok(None);
        }
        (Err(_), _) => return Ok(None),
    };
    let mut mine = [0u8; HANDLE + 8];
    mine[..HANDLE].copy_from_slice(&handle);
    mine[HANDLE..].copy_from_slice(&node.to_le_bytes());
    // The rank `from` writes into this rank's buffer: it gets the handle;
    // this rank gets the handle of `to`.
    let swapped: Vec<Face> = faces
        .iter()
        .enumerate()
        .map(|(k, f)| Face {
            to: f.from,
            from: f.to,
            tag: 200 + f.tag,
            offset: k * mine.len(),
            bytes: mine.len(),
        })
        .collect();
    let send: Vec<u8> = faces.iter().flat_map(|_| mine).collect();
    let mut recv = vec![0u8; send.len()];
    exchange(ranks, &swapped, &send, &mut recv)?;
    let mut peers: Vec<(usize, u64)> = Vec::new();
    let mut ok = true;
    for (k, f) in faces.iter().enumerate() {
        if !ok || peers.iter().any(|(r, _)| *r == f.to) {
            continue;
        }
        let theirs = &recv[k * mine.len()..(k + 1) * mine.len()];
        let their_node = u64::from_le_bytes(theirs[HANDLE..].try_into().expect("8 bytes"));
        if their_node != node {
            ok = false;
            continue;
        }
        let mut raw = [0u8; HANDLE];
        raw.copy_from_slice(&theirs[..HANDLE]);
        // SAFETY: 64 bytes a neighbour's `cuIpcGetMemHandle` wrote.
        let handle = unsafe { std::mem::transmute::<[u8; HANDLE], sys::CUipcMemHandle>(raw) };
        let mut at = 0;
        // SAFETY: a handle of another process's live allocation (it is
        // freed only after this rank has closed it, at the end of both
        // ranks' use); the context is bound to this thread above.
        let opened = unsafe {
            sys::cuIpcOpenMemHandle_v2(
                &mut at,
                handle,
                sys::CUipcMem_flags::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS as u32,
            )
            .result()
        };
        match opened {
            Ok(()) => peers.push((f.to, at)),
            Err(_) => ok = false,
        }
    }
    // Closed and freed by its drop where not every rank managed.
    let opened = PeerBuffers {
        own,
        peers,
        step: 0,
        ctx: dev.ctx.clone(),
    };
    Ok(ranks.comm.all_ok(ok)?.then_some(opened))
}
