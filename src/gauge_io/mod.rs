//! Gauge configurations in the files lattice groups exchange.
//!
//! - [`nersc`]: the NERSC archive format (text header, big-endian links, the
//!   header's checksum, plaquette and link trace checked on read);
//! - [`ildg`]: ILDG files, SciDAC LIME records (`ildg-format`,
//!   `ildg-binary-data`, the `scidac-checksum` CRC-32 sums checked on read),
//!   on the record layer of [`lime`];
//! - [`milc`]: MILC's binary gauge files (version 5: single precision, either
//!   byte order, natural or listed site order, the sum29/sum31 checksums);
//! - latsol's own first format (`gauge_gen::io`: MILC-ordered f64 with a
//!   JSON sidecar), still read.
//!
//! [`read`] detects the format from the file's first bytes; [`write`] writes
//! any of the first three. Every reader checks what the file offers: its
//! length against the dimensions, the checksum (an error naming the file and
//! both sums), the recorded plaquette and link trace, and that the links are
//! SU(3) (a wrong byte order or precision would make them not). The files
//! hold the links without boundary signs or staggered phases. Links read in
//! single precision are projected back onto SU(3) in double precision (they
//! move by no more than their rounding).
//!
//! All three store the sites in lexicographic order, x fastest and t slowest,
//! the four links of a site together (x, y, z, t), each 3×3 row-major
//! complex (`lexicographic`). Learned from Grid (`Grid/parallelIO/NerscIO.h`,
//! `IldgIO.h`, `MetaData.h`), c-lime (`lime_writer.c`, `lime_reader.c`),
//! QIO (`DML_utils.c`, `QIO_write.c`, `qioxml_ildg_record.h`), MILC
//! (`generic/io_lat4.c`, `generic/nersc_cksum.c`, `include/io_lat.h`) and
//! QDP++ (`lib/qdp_iogauge.cc`); nothing copied (docs/conventions.md,
//! "Gauge configuration files").

pub mod checksum;
pub mod ildg;
mod lexicographic;
pub mod lime;
pub mod milc;
pub mod nersc;
mod real;

use std::io::Read as _;
use std::path::Path;

use crate::error::{Error, Result};
use crate::field::GaugeField;
use crate::invalid;

pub use real::{FilePrecision, RealEncoding};

/// A gauge configuration file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Nersc,
    Ildg,
    Milc,
    /// latsol's first format: MILC-ordered little-endian f64 and a JSON
    /// sidecar `NAME.json` (`gauge_gen::io`), read only.
    LatsolV1,
}

impl Format {
    /// The file name extension the writers use.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Nersc => "nersc",
            Format::Ildg => "ildg",
            Format::Milc => "milc",
            Format::LatsolV1 => "latsol",
        }
    }
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "nersc" => Ok(Format::Nersc),
            "ildg" | "lime" | "scidac" => Ok(Format::Ildg),
            "milc" => Ok(Format::Milc),
            _ => Err(format!(
                "unknown gauge file format '{s}' (nersc, ildg, milc)"
            )),
        }
    }
}

/// How a Markov chain of latsol-heatbath produced a field: recorded by the
/// writers (NERSC header keys `LATSOL_*`, the ILDG file's `scidac-file-xml`)
/// so that a run can resume from the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Ensemble {
    pub beta: f64,
    pub seed: u64,
    /// Sweeps of the chain so far (NERSC `SEQUENCE_NUMBER`).
    pub sweeps: u64,
    /// Overrelaxation sweeps per heatbath sweep.
    pub overrelax: usize,
}

/// What a reader found and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct FileInfo {
    pub format: Format,
    pub dims: [usize; 4],
    /// Precision of the stored links.
    pub precision: FilePrecision,
    /// The plaquette of the field read, `Re tr U_p / 3` averaged (1 for unit links).
    pub plaquette: f64,
    /// The checks made, one line each ("NERSC checksum 1a2b3c4d matches").
    pub checks: Vec<String>,
    /// The chain that wrote the field, when the file records it.
    pub ensemble: Option<Ensemble>,
}

/// What to write.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteOptions {
    pub format: Format,
    pub precision: FilePrecision,
    /// NERSC only: store all three rows (`4D_SU3_GAUGE_3x3`) or the first two
    /// (`4D_SU3_GAUGE`, the third rebuilt on read).
    pub nersc_rows: usize,
    pub ensemble: Option<Ensemble>,
    /// The program that writes (NERSC `CREATOR`, ILDG `scidac-file-xml`).
    pub creator: String,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            format: Format::Nersc,
            precision: FilePrecision::Double,
            nersc_rows: 3,
            ensemble: None,
            creator: format!("latsol {}", env!("CARGO_PKG_VERSION")),
        }
    }
}

/// Largest deviation of a read link from SU(3) that is accepted, by the
/// precision of the file: a few hundred roundings of its precision. A wrong
/// byte order or precision gives deviations of order 1 or more.
fn su3_tolerance(p: FilePrecision) -> f64 {
    match p {
        FilePrecision::Single => 1e-4,
        FilePrecision::Double => 1e-10,
    }
}

/// The format of a file, from its first bytes (or, for latsol's first
/// format, its sidecar).
pub fn detect(path: &Path) -> Result<Format> {
    let mut head = [0u8; 16];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| io_error(path, "read", e))?;
    let head = &head[..n];
    if head.starts_with(b"BEGIN_HEADER") {
        return Ok(Format::Nersc);
    }
    if head.len() >= 4 {
        let word = [head[0], head[1], head[2], head[3]];
        if u32::from_be_bytes(word) == lime::MAGIC {
            return Ok(Format::Ildg);
        }
        if u32::from_le_bytes(word) == milc::MAGIC || u32::from_be_bytes(word) == milc::MAGIC {
            return Ok(Format::Milc);
        }
    }
    if crate::gauge_gen::io::sidecar_path(path).exists() {
        return Ok(Format::LatsolV1);
    }
    invalid!(
        "{}: not a gauge configuration of a known format (NERSC, ILDG/LIME, MILC, or latsol's \
         with a .json sidecar); it starts with {:02x?}",
        path.display(),
        head
    )
}

/// Reads a configuration of any known format, checking it (module doc).
pub fn read(path: &Path) -> Result<(GaugeField, FileInfo)> {
    let format = detect(path)?;
    if format == Format::LatsolV1 {
        let (field, info) = crate::gauge_gen::io::load(path)?;
        let file = FileInfo {
            format,
            dims: info.dims,
            precision: FilePrecision::Double,
            plaquette: info.plaquette[0],
            checks: vec![format!(
                "plaquette {} matches the sidecar",
                info.plaquette[0]
            )],
            ensemble: Some(Ensemble {
                beta: info.beta,
                seed: info.seed,
                sweeps: info.sweeps,
                overrelax: info.overrelax,
            }),
        };
        return Ok((field, file));
    }
    let bytes = read_bytes(path)?;
    let named = |e: Error| prefix_error(path, e);
    let (mut field, mut info) = match format {
        Format::Nersc => nersc::decode(&bytes),
        Format::Ildg => ildg::decode(&bytes),
        Format::Milc => milc::decode(&bytes),
        Format::LatsolV1 => unreachable!("handled above"),
    }
    .map_err(named)?;
    let (deviation, site) = field.max_su3_deviation();
    if deviation > su3_tolerance(info.precision) || deviation.is_nan() {
        return invalid!(
            "{}: link {site} is not in SU(3) (deviation {deviation:.3e}): the data are not \
             what the header says (byte order, precision or dimensions)",
            path.display()
        );
    }
    if info.precision == FilePrecision::Single {
        // Single-precision links are SU(3) to 1e-7 only, too coarse for a
        // double-precision solve (whose load refuses links off SU(3) by more
        // than 1e-10): each is projected back, moving it by no more than
        // its rounding, as MILC and Chroma reunitarise what they read.
        field
            .links_mut()
            .iter_mut()
            .for_each(|u| *u = u.project_su3());
        info.checks.push(format!(
            "single-precision links reunitarised (they were SU(3) to {deviation:.1e})"
        ));
    }
    Ok((field, info))
}

/// Writes `field` to `path` in `options.format`.
pub fn write(field: &GaugeField, path: &Path, options: &WriteOptions) -> Result<()> {
    let bytes = match options.format {
        Format::Nersc => nersc::encode(field, options)?,
        Format::Ildg => {
            let lfn = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            ildg::encode(field, options, &lfn)?
        }
        Format::Milc => milc::encode(field, options)?,
        Format::LatsolV1 => {
            return invalid!("latsol's first gauge format is read only: write nersc, ildg or milc")
        }
    };
    std::fs::write(path, &bytes).map_err(|e| io_error(path, "write", e))
}

fn io_error(path: &Path, what: &str, e: std::io::Error) -> Error {
    Error::InvalidArgument(format!("{}: cannot {what}: {e}", path.display()))
}

/// The same error, its message starting with the file's name.
fn prefix_error(path: &Path, e: Error) -> Error {
    let p = path.display();
    match e {
        Error::InvalidArgument(m) => Error::InvalidArgument(format!("{p}: {m}")),
        Error::OutOfMemory(m) => Error::OutOfMemory(format!("{p}: {m}")),
        other => other,
    }
}

/// The whole file, its buffer allocated fallibly (a configuration can be
/// larger than the memory left).
fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    let mut file = std::fs::File::open(path).map_err(|e| io_error(path, "open", e))?;
    let len = file
        .metadata()
        .map_err(|e| io_error(path, "stat", e))?
        .len();
    let len = usize::try_from(len).map_err(|_| {
        Error::OutOfMemory(format!(
            "{}: {len} bytes do not fit in memory",
            path.display()
        ))
    })?;
    let mut bytes = crate::alloc::with_capacity(len, "the gauge configuration file")?;
    file.read_to_end(&mut bytes)
        .map_err(|e| io_error(path, "read", e))?;
    Ok(bytes)
}

/// Today's date and time in UTC, `YYYY-MM-DD hh:mm:ss UTC`, for the files'
/// creation dates.
pub(crate) fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (the proleptic Gregorian
    // calendar's 400-year cycle of 146097 days, years starting in March).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_date_is_a_plausible_one() {
        let d = utc_now();
        let year: i64 = d[..4].parse().unwrap();
        assert!((2024..2200).contains(&year), "{d}");
        assert_eq!(d.len(), "2026-11-23 21:28:26 UTC".len(), "{d}");
    }
}
