//! MILC binary gauge files, version 5 (MILC `generic/io_lat4.c`,
//! `include/io_lat.h`).
//!
//! In the writer's byte order, which the magic number 20103 tells: the
//! magic number, the four extents (32-bit integers), a 64-byte time stamp,
//! the site order (0: natural; else a list of the V lexicographic site
//! ranks in file order follows), the checksums sum29 and sum31, then V
//! sites of four single-precision 3×3 row-major links (x, y, z, t). The
//! checksums rotate each 32-bit word of the data left by its index modulo
//! 29 and 31 and XOR them (`checksum`).

use super::lexicographic;
use super::real::{FilePrecision, RealEncoding};
use super::{checksum, FileInfo, Format, WriteOptions};
use crate::error::Result;
use crate::field::GaugeField;
use crate::invalid;

/// The magic number of version 5.
pub const MAGIC: u32 = 20103;
const STAMP_BYTES: usize = 64;
/// Magic, dims, time stamp, order.
pub const HEADER_BYTES: usize = 4 + 16 + STAMP_BYTES + 4;
pub(super) const SITE_REALS: usize = 4 * 18;

/// Reads a MILC file's contents.
/// What a MILC header says: byte order, extents, whether a site list
/// follows (the whole-file and the in-parts readers share it).
pub(super) struct Header {
    pub big: bool,
    pub dims: [usize; 4],
    pub listed: bool,
}

/// The 32-bit word at byte `at`, in the file's byte order.
pub(super) fn word(bytes: &[u8], at: usize, big: bool) -> u32 {
    let b: [u8; 4] = bytes[at..at + 4].try_into().expect("4 bytes");
    if big {
        u32::from_be_bytes(b)
    } else {
        u32::from_le_bytes(b)
    }
}

/// The header at the start of `bytes` (at least `HEADER_BYTES + 8`).
pub(super) fn header(bytes: &[u8]) -> Result<Header> {
    if bytes.len() < HEADER_BYTES + 8 {
        return invalid!("{} bytes: shorter than a MILC header", bytes.len());
    }
    let big = if word(bytes, 0, false) == MAGIC {
        false
    } else if word(bytes, 0, true) == MAGIC {
        true
    } else {
        return invalid!("not a MILC version 5 file (magic number is not {MAGIC})");
    };
    let mut dims = [0usize; 4];
    for (mu, d) in dims.iter_mut().enumerate() {
        let e = word(bytes, 4 + 4 * mu, big) as i32;
        if e <= 0 {
            return invalid!("extent {mu} is {e}");
        }
        *d = e as usize;
    }
    let listed = word(bytes, 4 + 16 + STAMP_BYTES, big) != 0;
    Ok(Header { big, dims, listed })
}

pub fn decode(bytes: &[u8]) -> Result<(GaugeField, FileInfo)> {
    let Header { big, dims, listed } = header(bytes)?;
    let word = |at: usize| word(bytes, at, big);
    let lat = crate::lattice::Lattice::new(dims)?;
    let volume = lat.volume();
    let mut pos = HEADER_BYTES;
    let site_list = if listed {
        let end = pos + 4 * volume;
        if bytes.len() < end + 8 {
            return invalid!("the file ends inside its list of {volume} site ranks");
        }
        let list: Vec<usize> = (0..volume).map(|i| word(pos + 4 * i) as usize).collect();
        let mut seen = crate::alloc::filled(volume, false, "the MILC site list check")?;
        for &r in &list {
            if r >= volume || std::mem::replace(&mut seen[r], true) {
                return invalid!("the site list names site {r} twice or out of the lattice");
            }
        }
        pos = end;
        Some(list)
    } else {
        None
    };
    let (sum29, sum31) = (word(pos), word(pos + 4));
    let data = &bytes[pos + 8..];
    let expected = volume * SITE_REALS * 4;
    if data.len() != expected {
        return invalid!(
            "{} bytes of links, but {dims:?} in single precision need {expected}",
            data.len()
        );
    }
    let enc = RealEncoding {
        precision: FilePrecision::Single,
        big_endian: big,
    };
    let (s29, s31) = checksum::milc(enc.words(data));
    if (s29, s31) != (sum29, sum31) {
        return invalid!(
            "MILC checksum mismatch: the file records sum29 {sum29:x} sum31 {sum31:x}, the \
             data give sum29 {s29:x} sum31 {s31:x}"
        );
    }
    let mut reals = enc.decode(data)?;
    if let Some(list) = site_list {
        // Into lexicographic order: file site i is site list[i].
        let mut lex = crate::alloc::filled(reals.len(), 0.0, "the MILC links reordered")?;
        for (i, &r) in list.iter().enumerate() {
            lex[r * SITE_REALS..(r + 1) * SITE_REALS]
                .copy_from_slice(&reals[i * SITE_REALS..(i + 1) * SITE_REALS]);
        }
        reals = lex;
    }
    let field = lexicographic::field(dims, &reals, 3)?;
    let info = FileInfo {
        format: Format::Milc,
        dims,
        precision: FilePrecision::Single,
        plaquette: field.plaquette()[0],
        checks: vec![format!(
            "MILC checksum sum29 {sum29:x} sum31 {sum31:x} matches ({}-endian{})",
            if big { "big" } else { "little" },
            if listed { ", listed site order" } else { "" }
        )],
        ensemble: None,
    };
    Ok((field, info))
}

/// A MILC file of `field`: little-endian, natural order, single precision
/// (the only precision of the format).
pub fn encode(field: &GaugeField, options: &WriteOptions) -> Result<Vec<u8>> {
    if options.precision != FilePrecision::Single {
        return invalid!("MILC gauge files are single precision only");
    }
    let dims = field.lattice().dims();
    let enc = RealEncoding::little(FilePrecision::Single);
    let mut data = Vec::new();
    enc.encode(&lexicographic::links(field, 3)?, &mut data);
    let (s29, s31) = checksum::milc(enc.words(&data));
    let mut out = crate::alloc::with_capacity(HEADER_BYTES + 8 + data.len(), "the MILC file")?;
    out.extend(MAGIC.to_le_bytes());
    for d in dims {
        out.extend((d as i32).to_le_bytes());
    }
    let mut stamp = [0u8; STAMP_BYTES];
    let now = super::utc_now();
    let n = now.len().min(STAMP_BYTES - 1);
    stamp[..n].copy_from_slice(&now.as_bytes()[..n]);
    out.extend(stamp);
    out.extend(0i32.to_le_bytes());
    out.extend(s29.to_le_bytes());
    out.extend(s31.to_le_bytes());
    out.extend(data);
    Ok(out)
}
