//! One rank's part of a gauge file: the sites `origin + x` of a lattice
//! cut over a grid of ranks, read from where they lie in the file (rows of
//! x, contiguous there), with what the rank's data add to the file's
//! checksum, for the caller to combine over the ranks (the communication
//! layer, `comm::gauge_file`) before it trusts them.
//!
//! NERSC and MILC files in natural order store every site at a fixed
//! place: they are read in parts. ILDG files (records found by walking the
//! LIME headers) and MILC files in listed order are not yet: `read_part`
//! says so with `None`, and the caller reads them whole.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::field::GaugeField;
use crate::invalid;
use crate::lattice::Lattice;

use super::real::{FilePrecision, RealEncoding};
use super::record::Format;
use super::{checksum, milc, nersc};

/// How the ranks' partial checksums combine into the file's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// Summed modulo 2³² (NERSC).
    Add,
    /// XORed (MILC's sum29 and sum31).
    Xor,
}

/// This rank's part of a file, read but not yet trusted.
pub struct FilePart {
    pub format: Format,
    /// The whole lattice's extents.
    pub dims: [usize; 4],
    pub precision: FilePrecision,
    /// The file's checksum words (NERSC: one, the second 0).
    pub recorded: [u32; 2],
    pub combine: Combine,
    /// The encodings the header allows, and this part's checksum in each.
    pub partial: Vec<(RealEncoding, [u32; 2])>,
    /// NERSC's recorded plaquette and link trace, where the header has them.
    pub plaquette: Option<f64>,
    pub link_trace: Option<f64>,
    local: [usize; 4],
    rows: usize,
    /// This part's sites' bytes, local lexicographic order (x fastest).
    bytes: Vec<u8>,
}

/// Where a format keeps its sites.
struct Layout {
    format: Format,
    dims: [usize; 4],
    precision: FilePrecision,
    data_offset: u64,
    rows: usize,
    recorded: [u32; 2],
    combine: Combine,
    candidates: Vec<RealEncoding>,
    plaquette: Option<f64>,
    link_trace: Option<f64>,
}

impl Layout {
    fn site_bytes(&self) -> usize {
        4 * 6 * self.rows * self.precision.bytes()
    }
}

fn io_error(path: &Path, what: &str, e: std::io::Error) -> Error {
    Error::InvalidArgument(format!("{}: cannot {what}: {e}", path.display()))
}

/// The first `n` bytes of the file (fewer if it is shorter).
fn head(file: &mut std::fs::File, path: &Path, n: usize) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(n);
    file.take(n as u64)
        .read_to_end(&mut out)
        .map_err(|e| io_error(path, "read", e))?;
    Ok(out)
}

/// A NERSC file's layout, from its header.
fn nersc_layout(bytes: &[u8]) -> Result<Layout> {
    let (header, offset) = nersc::parse_header(bytes)?;
    let rows = match header.get("DATATYPE") {
        Some("4D_SU3_GAUGE") => 2,
        Some("4D_SU3_GAUGE_3x3") => 3,
        other => return invalid!("DATATYPE = {other:?}: not 4D_SU3_GAUGE or 4D_SU3_GAUGE_3x3"),
    };
    let mut dims = [0usize; 4];
    for (mu, d) in dims.iter_mut().enumerate() {
        let key = format!("DIMENSION_{}", mu + 1);
        *d = header
            .number(&key)?
            .ok_or_else(|| Error::InvalidArgument(format!("the header has no {key}")))?;
    }
    let recorded = header
        .get("CHECKSUM")
        .and_then(nersc::parse_hex)
        .ok_or_else(|| {
            Error::InvalidArgument("the NERSC header has no hexadecimal CHECKSUM".into())
        })?;
    let candidates = nersc::encodings(header.get("FLOATING_POINT"))?;
    Ok(Layout {
        format: Format::Nersc,
        dims,
        precision: candidates[0].precision,
        data_offset: offset as u64,
        rows,
        recorded: [recorded, 0],
        combine: Combine::Add,
        candidates,
        plaquette: header.number("PLAQUETTE")?,
        link_trace: header.number("LINK_TRACE")?,
    })
}

/// A MILC file's layout (natural order only: None for a listed one).
fn milc_layout(bytes: &[u8]) -> Result<Option<Layout>> {
    if bytes.len() < milc::HEADER_BYTES + 8 {
        return invalid!("{} bytes: shorter than a MILC header", bytes.len());
    }
    let first: [u8; 4] = bytes[..4].try_into().expect("4 bytes");
    let big = u32::from_le_bytes(first) != milc::MAGIC;
    let word = |at: usize| -> u32 {
        let b: [u8; 4] = bytes[at..at + 4].try_into().expect("4 bytes");
        if big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    };
    let mut dims = [0usize; 4];
    for (mu, d) in dims.iter_mut().enumerate() {
        let e = word(4 + 4 * mu) as i32;
        if e <= 0 {
            return invalid!("extent {mu} is {e}");
        }
        *d = e as usize;
    }
    if word(milc::HEADER_BYTES - 4) != 0 {
        return Ok(None);
    }
    let at = milc::HEADER_BYTES;
    Ok(Some(Layout {
        format: Format::Milc,
        dims,
        precision: FilePrecision::Single,
        data_offset: (at + 8) as u64,
        rows: 3,
        recorded: [word(at), word(at + 4)],
        combine: Combine::Xor,
        candidates: vec![RealEncoding {
            precision: FilePrecision::Single,
            big_endian: big,
        }],
        plaquette: None,
        link_trace: None,
    }))
}

/// This rank's part checksum in `enc`: `sites` the global lexicographic
/// ranks of the part's sites, in the order of `bytes`.
fn partial_sum(layout: &Layout, enc: RealEncoding, sites: &[usize], bytes: &[u8]) -> [u32; 2] {
    let site_bytes = layout.site_bytes();
    match layout.combine {
        Combine::Add => [checksum::nersc(enc.words(bytes)), 0],
        Combine::Xor => {
            // MILC rotates each word by its index in the whole data.
            let words = site_bytes / 4;
            let (mut s29, mut s31) = (0u32, 0u32);
            for (&g, site) in sites.iter().zip(bytes.chunks_exact(site_bytes)) {
                for (k, w) in enc.words(site).enumerate() {
                    let i = g * words + k;
                    s29 ^= w.rotate_left((i % 29) as u32);
                    s31 ^= w.rotate_left((i % 31) as u32);
                }
            }
            [s29, s31]
        }
    }
}

/// Reads the part of the file at `path` that the rank at `coords` of a
/// `grid` of ranks holds, and its partial checksums; `None` for a format
/// not read in parts (module doc). The file's dimensions must divide by
/// the grid.
pub fn read_part(path: &Path, grid: [usize; 4], coords: [usize; 4]) -> Result<Option<FilePart>> {
    let format = super::detect(path)?;
    let mut file = std::fs::File::open(path).map_err(|e| io_error(path, "open", e))?;
    let len = file
        .metadata()
        .map_err(|e| io_error(path, "stat", e))?
        .len();
    let layout = match format {
        // The header is text before the data; 64 KiB holds any sane one.
        Format::Nersc => nersc_layout(&head(&mut file, path, 1 << 16)?)?,
        Format::Milc => match milc_layout(&head(&mut file, path, milc::HEADER_BYTES + 8)?)? {
            Some(l) => l,
            None => return Ok(None),
        },
        Format::Ildg | Format::LatsolV1 => return Ok(None),
    };
    let dims = layout.dims;
    if (0..4).any(|mu| grid[mu] == 0 || dims[mu] % grid[mu] != 0) {
        return invalid!(
            "{}: the file's lattice {dims:?} does not divide by the grid of ranks {grid:?}",
            path.display()
        );
    }
    let local = [0, 1, 2, 3].map(|mu| dims[mu] / grid[mu]);
    let site_bytes = layout.site_bytes();
    let volume: usize = dims.iter().product();
    let expected = layout.data_offset + (volume * site_bytes) as u64;
    if len != expected {
        return invalid!(
            "{}: {len} bytes, but the header's {dims:?} lattice needs {expected}",
            path.display()
        );
    }
    // Rows of x are contiguous in the file: one read each.
    let origin = [0, 1, 2, 3].map(|mu| coords[mu] * local[mu]);
    let local_volume: usize = local.iter().product();
    let mut bytes = crate::alloc::filled(local_volume * site_bytes, 0u8, "this rank's part")?;
    let mut sites = Vec::with_capacity(local_volume);
    let row = local[0] * site_bytes;
    for (r, chunk) in bytes.chunks_exact_mut(row).enumerate() {
        let (y, z, t) = (
            r % local[1],
            (r / local[1]) % local[2],
            r / (local[1] * local[2]),
        );
        let g = [origin[0], origin[1] + y, origin[2] + z, origin[3] + t];
        let lex = g[0] + dims[0] * (g[1] + dims[1] * (g[2] + dims[2] * g[3]));
        sites.extend(lex..lex + local[0]);
        file.seek(SeekFrom::Start(
            layout.data_offset + (lex * site_bytes) as u64,
        ))
        .and_then(|_| file.read_exact(chunk))
        .map_err(|e| io_error(path, "read", e))?;
    }
    let partial = layout
        .candidates
        .iter()
        .map(|&enc| (enc, partial_sum(&layout, enc, &sites, &bytes)))
        .collect();
    Ok(Some(FilePart {
        format: layout.format,
        dims,
        precision: layout.precision,
        recorded: layout.recorded,
        combine: layout.combine,
        partial,
        plaquette: layout.plaquette,
        link_trace: layout.link_trace,
        local,
        rows: layout.rows,
        bytes,
    }))
}

impl FilePart {
    /// The part's links decoded in `enc` (the encoding the combined
    /// checksum chose), checked to be SU(3) to the file's precision and,
    /// from single precision, projected back onto it (as `read` does).
    pub fn field(&self, enc: RealEncoding) -> Result<GaugeField> {
        let reals = enc.decode(&self.bytes)?;
        let mut field = super::lexicographic::field(self.local, &reals, self.rows)?;
        let (deviation, site) = field.max_su3_deviation();
        if deviation > super::read_write::su3_tolerance(self.precision) || deviation.is_nan() {
            return invalid!(
                "link {site} of this rank's part is not in SU(3) (deviation {deviation:.3e}): \
                 the data are not what the header says"
            );
        }
        if self.precision == FilePrecision::Single {
            field
                .links_mut()
                .iter_mut()
                .for_each(|u| *u = u.project_su3());
        }
        Ok(field)
    }

    /// This part's lattice.
    pub fn lattice(&self) -> Result<Arc<Lattice>> {
        Ok(Arc::new(Lattice::new(self.local)?))
    }
}
