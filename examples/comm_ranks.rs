//! The communication layer on many ranks (cargo feature `mpi`): run by the
//! test command under `mpirun -np N` (scripts/test_mpi.sh). The program is
//! the host: it initialises MPI itself, as MILC or Chroma does, and hands
//! latsol its world communicator, which latsol duplicates.
//!
//! ```text
//! mpirun -np 4 target/release/examples/comm_ranks --grid 1,1,2,2 [--map x|t]
//! ```
//! Checks, on every rank: deterministic sums equal on every rank, bit for
//! bit, and to the sum in rank order; fast sums and maxima; a verdict that
//! is false everywhere when one rank says no; and a halo exchange of depth
//! 1 and 3 in every direction, whose faces hold the global coordinates of
//! their sites, so that every received site is the neighbour the partition
//! names (wrapping, a grid extent of 1 or 2 included). Exits non-zero on a
//! failure.

use latsol::comm::{devices, Comm, Dims, Message, MpiComm, Partition, RankMap, Reduction};
use mpi::raw::AsRaw;
use mpi::topology::Communicator;

#[path = "ranks_common/mod.rs"]
mod ranks_common;
use ranks_common::parse_grid;

const LOCAL: Dims = [4, 4, 6, 4];

/// The global coordinates of the sites of the face of `depth` layers at
/// the forward (or backward) end of direction `mu`, in a fixed order.
fn face(p: &Partition, mu: usize, forward: bool, depth: usize) -> Vec<u8> {
    let l = p.local();
    let mut out = Vec::new();
    for t in 0..l[3] {
        for z in 0..l[2] {
            for y in 0..l[1] {
                for x in 0..l[0] {
                    let site = [x, y, z, t];
                    let k = site[mu];
                    let inside = if forward {
                        k >= l[mu] - depth
                    } else {
                        k < depth
                    };
                    if inside {
                        for c in p.global_site(site) {
                            out.extend_from_slice(&(c as u32).to_le_bytes());
                        }
                    }
                }
            }
        }
    }
    out
}

/// The face the neighbour backward along `mu` sends forward, as this rank
/// expects it: the sites just behind this rank's first layers.
fn expected_from_behind(p: &Partition, mu: usize, depth: usize) -> Vec<u8> {
    let g = p.global();
    let l = p.local();
    let mut out = Vec::new();
    for t in 0..l[3] {
        for z in 0..l[2] {
            for y in 0..l[1] {
                for x in 0..l[0] {
                    let site = [x, y, z, t];
                    if site[mu] >= l[mu] - depth {
                        let mut c = p.global_site(site);
                        // The neighbour's forward face: one local extent back, wrapping.
                        c[mu] = (c[mu] + g[mu] - l[mu]) % g[mu];
                        for v in c {
                            out.extend_from_slice(&(v as u32).to_le_bytes());
                        }
                    }
                }
            }
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let grid = parse_grid(&args);
    let map = match args
        .iter()
        .position(|a| a == "--map")
        .map(|i| args[i + 1].as_str())
    {
        Some("x") => RankMap::XFastest,
        _ => RankMap::TFastest,
    };
    // The host's MPI.
    let universe = mpi::initialize().expect("MPI_Init");
    let world = universe.world();
    // SAFETY: the world communicator is live for the whole program.
    let comm = unsafe { MpiComm::duplicate_raw(world.as_raw()) }.expect("latsol's communicator");
    let (rank, size) = (comm.rank(), comm.size());
    assert_eq!((rank, size), (world.rank() as usize, world.size() as usize));
    let p = Partition::new(grid, LOCAL, size, rank, &map).expect("the partition");
    let mut failures = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            failures.push(what);
        }
    };

    // Sums: deterministic ones in rank order, the same bits everywhere.
    let mine = |r: usize| {
        [
            1.0 / (r as f64 + 3.0),
            (r as f64 + 1.0) * 1e-17,
            -0.1 * r as f64,
        ]
    };
    let mut det = mine(rank);
    comm.sum(&mut det, Reduction::Deterministic).unwrap();
    let ordered: Vec<f64> = (0..3)
        .map(|i| (0..size).fold(0.0, |s, r| s + mine(r)[i]))
        .collect();
    check(
        det[..] == ordered[..],
        format!("deterministic sum {det:?} vs {ordered:?}"),
    );
    let mut bits = det.map(f64::to_bits).map(|b| b as f64);
    let mut lowest = bits.map(|b| -b);
    comm.max(&mut bits).unwrap();
    comm.max(&mut lowest).unwrap();
    check(
        bits.iter().zip(&lowest).all(|(a, b)| *a == -*b),
        "deterministic sums differ between ranks".into(),
    );
    // The node (every rank of an mpirun on this machine shares it): its
    // number is the lowest rank, a rank's place on it its rank; devices
    // distinct per rank pass the exclusivity check, one device for all
    // fails on every rank (naming the ranks), unless sharing is allowed.
    check(
        comm.node_ranks() == size && comm.node_rank() == rank && comm.node_id() == 0,
        format!(
            "node: {} ranks, place {}, id {}",
            comm.node_ranks(),
            comm.node_rank(),
            comm.node_id()
        ),
    );
    check(
        devices::check_exclusive(&comm, 0x100 + rank as u64, false).is_ok(),
        "distinct devices refused".into(),
    );
    let one_device = devices::check_exclusive(&comm, 0x100, false);
    check(
        size == 1
            || one_device
                .as_ref()
                .is_err_and(|e| e.to_string().contains("share a CUDA device")),
        format!("one device for {size} ranks: {one_device:?}"),
    );
    check(
        devices::check_exclusive(&comm, 0x100, true).is_ok(),
        "a shared device refused where sharing is allowed".into(),
    );
    let mut fast = mine(rank);
    comm.sum(&mut fast, Reduction::Fast).unwrap();
    check(
        fast.iter()
            .zip(&ordered)
            .all(|(a, b)| (a - b).abs() <= 1e-15 * b.abs().max(1e-30)),
        format!("fast sum {fast:?} vs {ordered:?}"),
    );
    let mut m = [rank as f64, -(rank as f64)];
    comm.max(&mut m).unwrap();
    check(m == [(size - 1) as f64, 0.0], format!("max {m:?}"));

    // The collective verdict.
    check(
        comm.all_ok(true).unwrap(),
        "all_ok(true) on every rank".into(),
    );
    check(
        !comm.all_ok(rank != size / 2).unwrap(),
        "one rank's no is everyone's".into(),
    );

    // Halos of depth 1 and 3 in every direction, both senses: from this
    // thread, then from a worker of a thread pool (below
    // MPI_THREAD_SERIALIZED, which `mpi::initialize` gives, this thread
    // serves the worker's calls: `latsol::comm::install`).
    for f in halo_failures(&comm, &p) {
        check(false, f);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let (on_worker, pooled_sum, pooled_halos) = latsol::comm::install(&comm, &pool, || {
        let mut v = mine(rank);
        comm.sum(&mut v, Reduction::Deterministic).unwrap();
        let ok = comm.all_ok(true).unwrap() && !comm.all_ok(rank != 0).unwrap();
        let mut m = [rank as f64];
        comm.max(&mut m).unwrap();
        let worker = rayon::current_thread_index().is_some() && ok && m[0] == (size - 1) as f64;
        (worker, v, halo_failures(&comm, &p))
    });
    check(
        on_worker,
        "a pool worker's verdicts and maxima through the serving thread".into(),
    );
    check(
        pooled_sum == det,
        format!("a pool worker's sum {pooled_sum:?} vs {det:?}"),
    );
    for f in pooled_halos {
        check(false, format!("from a pool worker: {f}"));
    }

    let ok = comm.all_ok(failures.is_empty()).unwrap();
    for f in &failures {
        eprintln!("rank {rank}: FAILED {f}");
    }
    if rank == 0 {
        println!(
            "comm_ranks: {size} rank(s), grid {grid:?}, map {map:?}, calls funnelled {}: {}",
            comm.funnelled(),
            if ok { "all checks passed" } else { "FAILED" }
        );
    }
    drop(comm);
    drop(universe);
    std::process::exit(if ok { 0 } else { 1 });
}

/// Halos of depth 1 and 3 in every direction, both senses, whose faces
/// hold their sites' global coordinates: what went wrong.
fn halo_failures(comm: &MpiComm, p: &Partition) -> Vec<String> {
    let mut failures = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            failures.push(what);
        }
    };
    for depth in [1, 3] {
        let mut sends = Vec::new();
        let mut recvs = Vec::new();
        let mut partners = Vec::new();
        for (mu, &extent) in LOCAL.iter().enumerate() {
            if depth > extent {
                continue;
            }
            for forward in [true, false] {
                // Forward face to the forward neighbour; its backward
                // neighbour (this rank's backward one) sends the same tag.
                sends.push(face(p, mu, forward, depth));
                recvs.push(vec![0u8; sends.last().unwrap().len()]);
                partners.push((mu, forward));
            }
        }
        let mut messages: Vec<Message> = sends
            .iter()
            .zip(recvs.iter_mut())
            .zip(&partners)
            .map(|((send, recv), &(mu, forward))| Message {
                to: p.neighbour(mu, forward),
                send,
                from: p.neighbour(mu, !forward),
                recv,
                tag: (2 * mu + usize::from(forward)) as i32,
            })
            .collect();
        comm.exchange(&mut messages).unwrap();
        for (recv, &(mu, forward)) in recvs.iter().zip(&partners) {
            if forward {
                let want = expected_from_behind(p, mu, depth);
                check(
                    recv == &want,
                    format!("depth {depth}: the face from behind along {mu}"),
                );
            } else {
                // The forward neighbour's backward face: sites just ahead.
                let g = p.global();
                let ahead: Vec<u8> = face(p, mu, false, depth)
                    .chunks(16)
                    .flat_map(|c| {
                        let mut v: Vec<u32> = c
                            .chunks(4)
                            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
                            .collect();
                        v[mu] = ((v[mu] as usize + p.local()[mu]) % g[mu]) as u32;
                        v.into_iter().flat_map(u32::to_le_bytes)
                    })
                    .collect();
                check(
                    recv == &ahead,
                    format!("depth {depth}: the face from ahead along {mu}"),
                );
            }
        }
    }

    failures
}
