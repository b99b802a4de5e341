//! Reading and writing a gauge file in any format: the format detected from
//! the file's first bytes, the reader and writer of each format, and the
//! file named in every error.

use std::io::Read as _;
use std::path::Path;

use crate::error::{Error, Result};
use crate::field::GaugeField;
use crate::invalid;

use super::real::FilePrecision;
use super::record::{Ensemble, FileInfo, Format, WriteOptions};
use super::{ildg, lime, milc, nersc};

/// Largest deviation of a read link from SU(3) that is accepted, by the
/// precision of the file: a few hundred roundings of its precision. A wrong
/// byte order or precision gives deviations of order 1 or more.
pub(super) fn su3_tolerance(p: FilePrecision) -> f64 {
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
