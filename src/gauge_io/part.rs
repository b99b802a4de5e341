//! One rank's part of a gauge file: the sites `origin + x` of a lattice
//! cut over a grid of ranks, read from where they lie in the file, with
//! what the rank's data add to the file's checksum, for the caller to
//! combine over the ranks (the communication layer, `comm::gauge_file`)
//! before it trusts them.
//!
//! NERSC files, MILC files in natural order and ILDG files store every
//! site at a fixed place (ILDG's binary record found by walking the LIME
//! headers, `lime::walk`): rows of x are contiguous there, one read each.
//! A MILC file in listed order names the site of each stored one: every
//! rank streams the list, keeps the places of its own sites and reads them
//! one by one (runs of consecutive places together).

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::field::GaugeField;
use crate::invalid;
use crate::lattice::Lattice;

use super::lime::{self, Record};
use super::real::{FilePrecision, RealEncoding};
use super::record::{Ensemble, Format};
use super::{checksum, ildg, milc, nersc};

/// How the ranks' partial checksums combine into the file's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// Summed modulo 2³² (NERSC).
    Add,
    /// XORed (MILC's sum29 and sum31, SciDAC's suma and sumb).
    Xor,
}

/// The checksum a format records (`checksum`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sum {
    Nersc,
    Milc,
    Scidac,
}

/// This rank's part of a file, read but not yet trusted.
pub struct FilePart {
    pub format: Format,
    /// The whole lattice's extents.
    pub dims: [usize; 4],
    pub precision: FilePrecision,
    /// The file's checksum words (NERSC: one, the second 0); `None` for an
    /// ILDG file without a scidac-checksum record.
    pub recorded: Option<[u32; 2]>,
    pub combine: Combine,
    /// The encodings the header allows, and this part's checksum in each.
    pub partial: Vec<(RealEncoding, [u32; 2])>,
    /// NERSC's recorded plaquette and link trace, where the header has them.
    pub plaquette: Option<f64>,
    pub link_trace: Option<f64>,
    /// The ensemble an ILDG file written by latsol records.
    pub ensemble: Option<Ensemble>,
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
    recorded: Option<[u32; 2]>,
    sum: Sum,
    candidates: Vec<RealEncoding>,
    plaquette: Option<f64>,
    link_trace: Option<f64>,
    ensemble: Option<Ensemble>,
    /// A MILC file in listed order: where its list of sites starts.
    site_list: Option<u64>,
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
        recorded: Some([recorded, 0]),
        sum: Sum::Nersc,
        candidates,
        plaquette: header.number("PLAQUETTE")?,
        link_trace: header.number("LINK_TRACE")?,
        ensemble: None,
        site_list: None,
    })
}

/// A MILC file's layout.
fn milc_layout(file: &mut std::fs::File, path: &Path) -> Result<Layout> {
    let bytes = &head(file, path, milc::HEADER_BYTES + 8)?;
    let milc::Header { big, dims, listed } = milc::header(bytes)?;
    let volume: usize = dims.iter().product();
    // The checksum follows the list of sites, if any.
    let at = milc::HEADER_BYTES + if listed { 4 * volume } else { 0 };
    let sums = if listed {
        file.seek(SeekFrom::Start(at as u64))
            .map_err(|e| io_error(path, "seek", e))?;
        head(file, path, 8)?
    } else {
        bytes[at..at + 8].to_vec()
    };
    if sums.len() < 8 {
        return invalid!("the file ends before its checksum");
    }
    let recorded = [0, 4].map(|k| milc::word(&sums, k, big));
    Ok(Layout {
        format: Format::Milc,
        dims,
        precision: FilePrecision::Single,
        data_offset: (at + 8) as u64,
        rows: 3,
        recorded: Some(recorded),
        sum: Sum::Milc,
        candidates: vec![RealEncoding {
            precision: FilePrecision::Single,
            big_endian: big,
        }],
        plaquette: None,
        link_trace: None,
        ensemble: None,
        site_list: listed.then_some(milc::HEADER_BYTES as u64),
    })
}

/// An ILDG (or SciDAC gauge) file's layout: its LIME records walked, the
/// metadata records read, the binary one located.
fn ildg_layout(file: &mut std::fs::File, path: &Path, len: u64) -> Result<Layout> {
    let placed = lime::walk(file, len)?;
    // Metadata records are small; the binary data are not read here.
    let binary = |kind: &str| kind == "ildg-binary-data" || kind == "scidac-binary-data";
    let mut texts = Vec::with_capacity(placed.len());
    for p in &placed {
        let mut data = Vec::new();
        if !binary(&p.kind) && p.len <= 1 << 20 {
            file.seek(SeekFrom::Start(p.offset))
                .map_err(|e| io_error(path, "seek", e))?;
            data = head(file, path, p.len as usize)?;
        }
        texts.push(data);
    }
    let records: Vec<Record> = placed
        .iter()
        .zip(&texts)
        .map(|(p, data)| Record {
            kind: p.kind.clone(),
            data,
            message_begin: false,
            message_end: false,
        })
        .collect();
    let (dims, precision, data_kind) = ildg::gauge_header(&records)?;
    let data = placed
        .iter()
        .find(|p| p.kind == data_kind)
        .expect("gauge_header found the binary record");
    let volume: usize = dims.iter().product();
    let site_bytes = 4 * 18 * precision.bytes();
    if data.len != (volume * site_bytes) as u64 {
        return invalid!(
            "the binary data hold {} bytes, but {dims:?} in {}-bit precision need {}",
            data.len,
            precision.bits(),
            volume * site_bytes
        );
    }
    let ensemble = records
        .iter()
        .find(|r| r.kind == "scidac-file-xml")
        .and_then(|r| ildg::latsol_ensemble(&r.text()));
    Ok(Layout {
        format: Format::Ildg,
        dims,
        precision,
        data_offset: data.offset,
        rows: 3,
        recorded: ildg::recorded_checksum(&records)?.map(|(a, b)| [a, b]),
        sum: Sum::Scidac,
        candidates: vec![RealEncoding::big(precision)],
        plaquette: None,
        link_trace: None,
        ensemble,
        site_list: None,
    })
}

/// This rank's part checksum in `enc`: `places` the places in the file's
/// data of the part's sites (for the formats here, in lexicographic order,
/// the sites' global lexicographic ranks), in the order of `bytes`.
fn partial_sum(layout: &Layout, enc: RealEncoding, places: &[usize], bytes: &[u8]) -> [u32; 2] {
    let site_bytes = layout.site_bytes();
    let sites = places.iter().zip(bytes.chunks_exact(site_bytes));
    match layout.sum {
        Sum::Nersc => [checksum::nersc(enc.words(bytes)), 0],
        Sum::Milc => {
            // MILC rotates each word by its index in the whole data.
            let words = site_bytes / 4;
            let (mut s29, mut s31) = (0u32, 0u32);
            for (&g, site) in sites {
                for (k, w) in enc.words(site).enumerate() {
                    let i = g * words + k;
                    s29 ^= w.rotate_left((i % 29) as u32);
                    s31 ^= w.rotate_left((i % 31) as u32);
                }
            }
            [s29, s31]
        }
        Sum::Scidac => {
            // A CRC-32 a site, rotated by the site's rank.
            let (mut a, mut b) = (0u32, 0u32);
            for (&g, site) in sites {
                let crc = crc32fast::hash(site);
                a ^= crc.rotate_left((g % 29) as u32);
                b ^= crc.rotate_left((g % 31) as u32);
            }
            [a, b]
        }
    }
}

/// The place in the file's data of each site of the part (local
/// lexicographic order): a MILC file's list streamed, the places of this
/// part's sites kept, each checked to be named once.
fn listed_places(
    file: &mut std::fs::File,
    path: &Path,
    layout: &Layout,
    list_offset: u64,
    local: [usize; 4],
    origin: [usize; 4],
) -> Result<Vec<usize>> {
    let dims = layout.dims;
    let volume: usize = dims.iter().product();
    let local_volume: usize = local.iter().product();
    let mut places = crate::alloc::filled(local_volume, usize::MAX, "the places of this part")?;
    let big = layout.candidates[0].big_endian;
    file.seek(SeekFrom::Start(list_offset))
        .map_err(|e| io_error(path, "seek", e))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, &mut *file);
    let mut word = [0u8; 4];
    for i in 0..volume {
        reader
            .read_exact(&mut word)
            .map_err(|e| io_error(path, "read the site list", e))?;
        let g = if big {
            u32::from_be_bytes(word)
        } else {
            u32::from_le_bytes(word)
        } as usize;
        if g >= volume {
            return invalid!("the site list names site {g}, beyond the lattice");
        }
        let mut x = [g % dims[0], 0, 0, 0];
        x[1] = (g / dims[0]) % dims[1];
        x[2] = (g / (dims[0] * dims[1])) % dims[2];
        x[3] = g / (dims[0] * dims[1] * dims[2]);
        let mine = (0..4).all(|mu| x[mu] >= origin[mu] && x[mu] < origin[mu] + local[mu]);
        if mine {
            let l = (0..4)
                .rev()
                .fold(0, |l, mu| l * local[mu] + x[mu] - origin[mu]);
            if std::mem::replace(&mut places[l], i) != usize::MAX {
                return invalid!("the site list names site {g} twice");
            }
        }
    }
    if let Some(l) = places.iter().position(|&p| p == usize::MAX) {
        return invalid!("the site list never names local site {l} of this rank");
    }
    Ok(places)
}

/// Reads the part of the file at `path` that the rank at `coords` of a
/// `grid` of ranks holds, and its partial checksums; `None` for latsol's
/// first format (read whole). The file's dimensions must divide by the
/// grid.
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
        Format::Milc => milc_layout(&mut file, path)?,
        Format::Ildg => ildg_layout(&mut file, path, len)?,
        Format::LatsolV1 => return Ok(None),
    };
    let dims = layout.dims;
    if dims.contains(&0) {
        return invalid!(
            "{}: the file's lattice {dims:?} has no sites",
            path.display()
        );
    }
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
    if format != Format::Ildg && len != expected {
        return invalid!(
            "{}: {len} bytes, but the header's {dims:?} lattice needs {expected}",
            path.display()
        );
    }
    let origin = [0, 1, 2, 3].map(|mu| coords[mu] * local[mu]);
    let local_volume: usize = local.iter().product();
    // Each site's place in the data, local lexicographic order.
    let places = match layout.site_list {
        Some(at) => listed_places(&mut file, path, &layout, at, local, origin)?,
        None => {
            let mut places = Vec::with_capacity(local_volume);
            for r in 0..local_volume / local[0] {
                let (y, z, t) = (
                    r % local[1],
                    (r / local[1]) % local[2],
                    r / (local[1] * local[2]),
                );
                let g = [origin[0], origin[1] + y, origin[2] + z, origin[3] + t];
                let lex = g[0] + dims[0] * (g[1] + dims[1] * (g[2] + dims[2] * g[3]));
                places.extend(lex..lex + local[0]);
            }
            places
        }
    };
    let mut bytes = crate::alloc::filled(local_volume * site_bytes, 0u8, "this rank's part")?;
    // Runs of consecutive places (rows of x, in a natural order) read at once.
    let mut l = 0;
    while l < local_volume {
        let run = places[l..]
            .iter()
            .enumerate()
            .take_while(|(k, &p)| p == places[l] + k)
            .count();
        file.seek(SeekFrom::Start(
            layout.data_offset + (places[l] * site_bytes) as u64,
        ))
        .and_then(|_| file.read_exact(&mut bytes[l * site_bytes..(l + run) * site_bytes]))
        .map_err(|e| io_error(path, "read", e))?;
        l += run;
    }
    let partial = layout
        .candidates
        .iter()
        .map(|&enc| (enc, partial_sum(&layout, enc, &places, &bytes)))
        .collect();
    Ok(Some(FilePart {
        format: layout.format,
        dims,
        precision: layout.precision,
        recorded: layout.recorded,
        combine: match layout.sum {
            Sum::Nersc => Combine::Add,
            Sum::Milc | Sum::Scidac => Combine::Xor,
        },
        partial,
        plaquette: layout.plaquette,
        link_trace: layout.link_trace,
        ensemble: layout.ensemble,
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
