//! One rank: sums are the numbers themselves, and every face goes to this
//! rank itself (a grid extent of 1 wraps onto its own sites).

use super::{Comm, Message, Reduction};
use crate::error::{Error, Result};

/// The engine of a single process.
#[derive(Debug, Default, Clone, Copy)]
pub struct SingleProcess;

impl Comm for SingleProcess {
    fn rank(&self) -> usize {
        0
    }

    fn size(&self) -> usize {
        1
    }

    fn sum(&self, _values: &mut [f64], _reduction: Reduction) -> Result<()> {
        Ok(())
    }

    fn max(&self, _values: &mut [f64]) -> Result<()> {
        Ok(())
    }

    fn all_ok(&self, ok: bool) -> Result<bool> {
        Ok(ok)
    }

    fn exchange(&self, messages: &mut [Message<'_>]) -> Result<()> {
        for m in messages.iter_mut() {
            if m.to != 0 || m.from != 0 {
                return Err(Error::Internal(format!(
                    "a face for rank {} or from rank {} in a single process",
                    m.to, m.from
                )));
            }
            if m.send.len() != m.recv.len() {
                return Err(Error::Internal(format!(
                    "face {}: {} bytes sent, {} expected",
                    m.tag,
                    m.send.len(),
                    m.recv.len()
                )));
            }
            m.recv.copy_from_slice(m.send);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_rank_sends_its_faces_to_itself() {
        let send = [1u8, 2, 3];
        let mut recv = [0u8; 3];
        let mut m = [Message {
            to: 0,
            send: &send,
            from: 0,
            recv: &mut recv,
            tag: 7,
        }];
        SingleProcess.exchange(&mut m).unwrap();
        assert_eq!(recv, send);
        let mut v = [1.5, -2.0];
        SingleProcess.sum(&mut v, Reduction::Deterministic).unwrap();
        assert_eq!(v, [1.5, -2.0]);
        assert!(!SingleProcess.all_ok(false).unwrap());
        let mut short = [0u8; 2];
        let mut bad = [Message {
            to: 0,
            send: &send,
            from: 0,
            recv: &mut short,
            tag: 1,
        }];
        assert!(SingleProcess.exchange(&mut bad).is_err());
    }
}
