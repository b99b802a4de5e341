//! A gauge file read by every rank in parts (`gauge_io::part`): each rank
//! reads its own sites, and the file's checks are made on the whole
//! lattice through the other ranks: the checksum from every rank's share
//! (NERSC's sum modulo 2³², MILC's and SciDAC's XORs, combined exactly through global
//! sums of integers), the recorded plaquette against the whole lattice's
//! (`extend::plaquette`), the recorded link trace against the global mean.
//! Every step is agreed first, so a file that fails on one rank fails on
//! all.

use std::path::Path;

use super::Ranks;
use crate::error::{Error, Result};
use crate::field::GaugeField;
use crate::gauge_io::nersc::{LINK_TRACE_TOLERANCE, PLAQUETTE_TOLERANCE};
use crate::gauge_io::part::{read_part, Combine, FilePart};
use crate::gauge_io::FileInfo;
use crate::invalid;

/// The file's checksum words combined over the ranks, for every
/// encoding the header allows: sums modulo 2³² of the 32-bit words (each
/// rank's below 2³², their sum exact in a double), or XORs bit by bit
/// (a bit's count over the ranks, its parity the XOR).
fn combined(ranks: &Ranks, part: &FilePart) -> Result<Vec<[u32; 2]>> {
    let mut values = Vec::new();
    for (_, words) in &part.partial {
        for w in words {
            match part.combine {
                Combine::Add => values.push(f64::from(*w)),
                Combine::Xor => values.extend((0..32).map(|b| f64::from((w >> b) & 1))),
            }
        }
    }
    ranks.sum(&mut values)?;
    let per_word = match part.combine {
        Combine::Add => 1,
        Combine::Xor => 32,
    };
    let word = |chunk: &[f64]| -> u32 {
        match part.combine {
            Combine::Add => (chunk[0] as u64 % (1u64 << 32)) as u32,
            Combine::Xor => chunk
                .iter()
                .enumerate()
                .fold(0u32, |w, (b, &n)| w | (((n as u64 & 1) as u32) << b)),
        }
    };
    Ok(values
        .chunks_exact(2 * per_word)
        .map(|c| [word(&c[..per_word]), word(&c[per_word..])])
        .collect())
}

/// This rank's part of the gauge file at `path` (its lattice the whole
/// one's divided by the grid), the file checked on the whole lattice
/// (module doc); `None` for a format not read in parts, on every rank
/// alike (the caller then reads it whole). Collective.
pub fn read_gauge_part(ranks: &Ranks, path: &Path) -> Result<Option<(GaugeField, FileInfo)>> {
    let grid = ranks.grid.grid();
    let read = read_part(path, grid, ranks.grid.coords());
    let Some(part) = ranks.agree(read)? else {
        return Ok(None);
    };
    let sums = combined(ranks, &part)?;
    let mut checks = Vec::new();
    let enc = match part.recorded {
        Some(recorded) => {
            let chosen = part
                .partial
                .iter()
                .zip(&sums)
                .find(|(_, s)| **s == recorded)
                .map(|((enc, _), _)| *enc);
            let Some(enc) = chosen else {
                let found: Vec<String> = sums
                    .iter()
                    .map(|s| format!("{:x} {:x}", s[0], s[1]))
                    .collect();
                return invalid!(
                    "{}: checksum mismatch over the ranks: the file records {:x} {:x}, the data \
                     give {}",
                    path.display(),
                    recorded[0],
                    recorded[1],
                    found.join(" or ")
                );
            };
            checks.push(format!(
                "{:?} checksum {:x} {:x} matches over the {} ranks ({}-endian)",
                part.format,
                recorded[0],
                recorded[1],
                ranks.comm.size(),
                if enc.big_endian { "big" } else { "little" }
            ));
            enc
        }
        None => {
            checks.push("no scidac-checksum record: data unchecked".into());
            part.partial[0].0
        }
    };
    let field = ranks.agree(part.field(enc).map_err(|e| match e {
        Error::InvalidArgument(m) => Error::InvalidArgument(format!("{}: {m}", path.display())),
        other => other,
    }))?;
    let plaquette = super::extend::plaquette(ranks, &field)?[0];
    if let Some(p) = part.plaquette {
        if (p - plaquette).abs() > PLAQUETTE_TOLERANCE || plaquette.is_nan() {
            return invalid!(
                "{}: the header's PLAQUETTE is {p} but the links give {plaquette:.10}",
                path.display()
            );
        }
        checks.push(format!(
            "plaquette {plaquette:.10} matches the header's {p}"
        ));
    }
    if let Some(t) = part.link_trace {
        let mut sum = [field
            .links()
            .iter()
            .map(|u| u.trace().re / 3.0)
            .sum::<f64>()];
        ranks.sum(&mut sum)?;
        let trace = sum[0] / (field.links().len() * ranks.comm.size()) as f64;
        if (t - trace).abs() > LINK_TRACE_TOLERANCE || trace.is_nan() {
            return invalid!(
                "{}: the header's LINK_TRACE is {t} but the links give {trace:.10}",
                path.display()
            );
        }
        checks.push(format!("link trace {trace:.10} matches the header's {t}"));
    }
    let info = FileInfo {
        format: part.format,
        dims: part.dims,
        precision: part.precision,
        plaquette,
        checks,
        ensemble: part.ensemble.clone(),
    };
    Ok(Some((field, info)))
}
