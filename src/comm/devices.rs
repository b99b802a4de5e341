//! Which GPU a rank uses (issue 36), as QUDA's `initQuda(-1)` chooses it
//! (docs/multi-gpu-research.md §1, from QUDA 9521952's
//! lib/communicator_mpi.cpp and lib/comm_common.cpp): a rank takes the
//! device numbered by its place among the ranks on its node, so `k` ranks
//! on a node of `k` GPUs take one each. The environment variable
//! `LATSOL_DEVICE` overrides it: one ordinal for every rank, or a list of
//! ordinals indexed by the place on the node (`0,2,1,3`). Two ranks of a
//! node on one device is an error on every rank unless `LATSOL_SHARE_DEVICES=1`
//! allows it (QUDA's `QUDA_ENABLE_MPS`), since they would contend for its
//! memory and bandwidth and the peer transports assume one rank a device.

use crate::error::{Error, Result};

use super::Comm;

/// The variable that overrides the choice.
pub const DEVICE_VARIABLE: &str = "LATSOL_DEVICE";
/// The variable that lets ranks of one node share a device.
pub const SHARE_VARIABLE: &str = "LATSOL_SHARE_DEVICES";

/// The device ordinal of the rank at place `node_rank` of the
/// `node_ranks` ranks on its node, with `devices` devices visible:
/// `asked` (a caller's ordinal), else `LATSOL_DEVICE` (`variable`), else
/// the place on the node; `share` lets more ranks than devices wrap round.
pub fn choose(
    asked: Option<usize>,
    variable: Option<&str>,
    node_rank: usize,
    node_ranks: usize,
    devices: usize,
    share: bool,
) -> Result<usize> {
    if devices == 0 {
        return Err(Error::NoDevice("no CUDA device is visible".into()));
    }
    let ordinal = match (asked, variable.map(str::trim).filter(|v| !v.is_empty())) {
        (Some(d), _) => d,
        (None, Some(v)) => {
            let list: Vec<usize> = v
                .split(',')
                .map(|d| d.trim().parse::<usize>())
                .collect::<std::result::Result<_, _>>()
                .map_err(|_| {
                    Error::InvalidArgument(format!(
                        "{DEVICE_VARIABLE}={v}: not a device ordinal nor a list of them"
                    ))
                })?;
            match list.len() {
                1 => list[0],
                n if node_rank < n => list[node_rank],
                n => {
                    return Err(Error::InvalidArgument(format!(
                        "{DEVICE_VARIABLE}={v} names {n} devices for the {node_ranks} ranks of \
                         this node (this one is number {node_rank})"
                    )))
                }
            }
        }
        (None, None) if node_rank < devices => node_rank,
        (None, None) if share => node_rank % devices,
        (None, None) => {
            return Err(Error::InvalidArgument(format!(
            "{node_ranks} ranks on this node but {devices} CUDA device(s): set {SHARE_VARIABLE}=1 \
                 to share them, or start fewer ranks"
        )))
        }
    };
    if ordinal >= devices {
        return Err(Error::InvalidArgument(format!(
            "device {ordinal} asked for, but {devices} CUDA device(s) are visible"
        )));
    }
    Ok(ordinal)
}

/// Whether `LATSOL_SHARE_DEVICES` allows ranks of a node to share a device.
pub fn sharing_allowed() -> bool {
    std::env::var(SHARE_VARIABLE).is_ok_and(|v| v.trim() == "1")
}

/// The ranks whose (node, device) pair another rank also holds, from every
/// rank's pair (`pairs[rank]`).
pub fn shared(pairs: &[(usize, u64)]) -> Vec<usize> {
    (0..pairs.len())
        .filter(|&r| (0..pairs.len()).any(|s| s != r && pairs[s] == pairs[r]))
        .collect()
}

/// Collective: every rank's node (`Comm::node_id`) and device (`device`, an
/// identity that is the same for one GPU whatever the ranks' visible sets,
/// such as its PCI address) gathered; two ranks on one device fail on every
/// rank, naming them, unless `share`.
pub fn check_exclusive(comm: &dyn Comm, device: u64, share: bool) -> Result<()> {
    // A gather through the sum: each rank fills its own slots, so every
    // slot's sum is its one number, exact in any order (node ids and PCI
    // addresses are below 2^53, exact in a double).
    let size = comm.size();
    let mut slots = vec![0.0; 2 * size];
    slots[2 * comm.rank()] = comm.node_id() as f64;
    slots[2 * comm.rank() + 1] = device as f64;
    comm.sum(&mut slots, super::Reduction::Fast)?;
    let pairs: Vec<(usize, u64)> = slots
        .chunks_exact(2)
        .map(|p| (p[0] as usize, p[1] as u64))
        .collect();
    let clash = shared(&pairs);
    if share || clash.is_empty() {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "ranks {clash:?} share a CUDA device on one node: give each rank its own \
         ({DEVICE_VARIABLE}, or the device parameter), or set {SHARE_VARIABLE}=1"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rank_takes_the_device_of_its_place_on_the_node() {
        assert_eq!(choose(None, None, 0, 1, 1, false).unwrap(), 0);
        assert_eq!(choose(None, None, 3, 4, 4, false).unwrap(), 3);
        // More ranks than devices: an error, or shared round the devices.
        assert!(choose(None, None, 4, 8, 4, false).is_err());
        assert_eq!(choose(None, None, 5, 8, 4, true).unwrap(), 1);
        // The caller's ordinal wins; one out of range is refused.
        assert_eq!(choose(Some(2), Some("0"), 0, 4, 4, false).unwrap(), 2);
        assert!(choose(Some(4), None, 0, 4, 4, false).is_err());
        assert!(choose(None, None, 0, 1, 0, false).is_err());
    }

    #[test]
    fn the_variable_names_one_device_or_one_a_place() {
        assert_eq!(choose(None, Some("1"), 3, 4, 4, false).unwrap(), 1);
        assert_eq!(choose(None, Some("0,2,1,3"), 1, 4, 4, false).unwrap(), 2);
        assert_eq!(choose(None, Some(" 3 , 0"), 0, 2, 4, false).unwrap(), 3);
        assert!(choose(None, Some("0,1"), 2, 4, 4, false).is_err());
        assert!(choose(None, Some("gpu0"), 0, 1, 4, false).is_err());
        assert!(choose(None, Some("7"), 0, 1, 4, false).is_err());
        // An empty variable is no choice.
        assert_eq!(choose(None, Some(" "), 1, 2, 2, false).unwrap(), 1);
    }

    #[test]
    fn ranks_sharing_a_device_on_one_node_are_named() {
        // Ranks 0 and 2 on node 0 share device 7; rank 3 has device 7 on
        // another node, which is no clash.
        let pairs = [(0, 7), (0, 8), (0, 7), (4, 7)];
        assert_eq!(shared(&pairs), vec![0, 2]);
        assert!(shared(&[(0, 1), (0, 2), (1, 1)]).is_empty());
    }

    #[test]
    fn one_process_never_clashes() {
        let comm = super::super::SingleProcess;
        check_exclusive(&comm, 42, false).unwrap();
    }
}
