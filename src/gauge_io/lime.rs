//! LIME, the record container of SciDAC and ILDG files.
//!
//! A file is a sequence of records, each a 144-byte big-endian header and
//! its data padded with zeros to a multiple of 8 bytes. The header: the magic
//! number 0x456789AB (4 bytes), the version 1 (2 bytes), the flags (MB =
//! 0x80 on the first record of a message, ME = 0x40 on its last; 1 byte),
//! a reserved byte, the data length without padding (8 bytes) and the
//! record type, NUL-padded to 128 bytes. Records group into messages: the
//! first record of the file begins one, and a record begins a message
//! exactly when the one before ended one. (c-lime `lime_header.c`,
//! `lime_writer.c`, `lime_reader.c`.)

use std::io::{Read, Seek, SeekFrom};

use crate::error::Result;
use crate::invalid;

/// The magic number a LIME record starts with.
pub const MAGIC: u32 = 0x4567_89ab;
const VERSION: u16 = 1;
const HEADER_BYTES: usize = 144;
const TYPE_BYTES: usize = 128;
const MB: u8 = 0x80;
const ME: u8 = 0x40;

/// A record: its type and data, where it lies in its message.
#[derive(Debug, Clone, PartialEq)]
pub struct Record<'a> {
    pub kind: String,
    pub data: &'a [u8],
    pub message_begin: bool,
    pub message_end: bool,
}

impl Record<'_> {
    /// The data as text, trailing NULs removed (QIO writes one).
    pub fn text(&self) -> String {
        let end = self.data.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        String::from_utf8_lossy(&self.data[..end]).into_owned()
    }
}

fn padding(len: usize) -> usize {
    (8 - len % 8) % 8
}

/// A record's header, checked against the one before (`in_message`: the
/// previous record did not end its message).
struct Header {
    kind: String,
    len: u64,
    message_begin: bool,
    message_end: bool,
}

fn header(h: &[u8], index: usize, in_message: bool) -> Result<Header> {
    let magic = u32::from_be_bytes([h[0], h[1], h[2], h[3]]);
    if magic != MAGIC {
        return invalid!("LIME record {index}: magic number {magic:#x}, not {MAGIC:#x}");
    }
    let version = u16::from_be_bytes([h[4], h[5]]);
    if version != VERSION {
        return invalid!("LIME record {index} is of version {version}, not 1");
    }
    let (mb, me) = (h[6] & MB != 0, h[6] & ME != 0);
    if mb == in_message {
        return invalid!(
            "LIME record {index} {} a message while the previous record {}",
            if mb { "begins" } else { "does not begin" },
            if in_message {
                "did not end one"
            } else {
                "ended one"
            }
        );
    }
    let len = u64::from_be_bytes(h[8..16].try_into().expect("8 bytes"));
    let kind_bytes = &h[16..HEADER_BYTES];
    let kind_end = kind_bytes
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(TYPE_BYTES);
    Ok(Header {
        kind: String::from_utf8_lossy(&kind_bytes[..kind_end]).into_owned(),
        len,
        message_begin: mb,
        message_end: me,
    })
}

/// Every record of a LIME file, checked: magic number, version, lengths
/// within the file, message flags.
pub fn records(bytes: &[u8]) -> Result<Vec<Record<'_>>> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut in_message = false;
    while pos < bytes.len() {
        let Some(h) = bytes.get(pos..pos + HEADER_BYTES) else {
            return invalid!(
                "LIME record {} at byte {pos}: the file ends inside its 144-byte header",
                out.len()
            );
        };
        let h = header(h, out.len(), in_message)?;
        in_message = !h.message_end;
        let start = pos + HEADER_BYTES;
        let data = usize::try_from(h.len)
            .ok()
            .and_then(|len| bytes.get(start..start.checked_add(len)?));
        let Some(data) = data else {
            return invalid!(
                "LIME record '{}' holds {} bytes but the file ends {} bytes after its header",
                h.kind,
                h.len,
                bytes.len() - start
            );
        };
        pos = start + data.len() + padding(data.len());
        out.push(Record {
            kind: h.kind,
            data,
            message_begin: h.message_begin,
            message_end: h.message_end,
        });
    }
    if in_message {
        return invalid!("the last LIME record does not end its message");
    }
    Ok(out)
}

/// Where a record lies in a file: its type, the offset of its data and
/// their length.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    pub kind: String,
    pub offset: u64,
    pub len: u64,
}

/// The records of a LIME file of `file_len` bytes, found by reading their
/// headers alone and seeking past their data (a rank reading its part of a
/// large file), checked as `records` checks them.
pub fn walk(file: &mut (impl Read + Seek), file_len: u64) -> Result<Vec<Placed>> {
    let mut out = Vec::new();
    let mut pos = 0u64;
    let mut in_message = false;
    let io = |e: std::io::Error| crate::Error::InvalidArgument(format!("LIME: {e}"));
    while pos < file_len {
        if file_len - pos < HEADER_BYTES as u64 {
            return invalid!(
                "LIME record {} at byte {pos}: the file ends inside its 144-byte header",
                out.len()
            );
        }
        let mut h = [0u8; HEADER_BYTES];
        file.seek(SeekFrom::Start(pos)).map_err(io)?;
        file.read_exact(&mut h).map_err(io)?;
        let h = header(&h, out.len(), in_message)?;
        in_message = !h.message_end;
        let start = pos + HEADER_BYTES as u64;
        if h.len > file_len - start {
            return invalid!(
                "LIME record '{}' holds {} bytes but the file ends {} bytes after its header",
                h.kind,
                h.len,
                file_len - start
            );
        }
        pos = start + h.len + (8 - h.len % 8) % 8;
        out.push(Placed {
            kind: h.kind,
            offset: start,
            len: h.len,
        });
    }
    if in_message {
        return invalid!("the last LIME record does not end its message");
    }
    Ok(out)
}

/// Writes LIME records.
#[derive(Default)]
pub struct Writer {
    pub bytes: Vec<u8>,
}

impl Writer {
    /// Appends a message of records `(type, data)`.
    pub fn message(&mut self, records: &[(&str, &[u8])]) -> Result<()> {
        for (i, (kind, data)) in records.iter().enumerate() {
            if kind.len() >= TYPE_BYTES {
                return invalid!("LIME record type '{kind}' is longer than 127 bytes");
            }
            let mut flags = 0;
            if i == 0 {
                flags |= MB;
            }
            if i + 1 == records.len() {
                flags |= ME;
            }
            self.bytes.extend(MAGIC.to_be_bytes());
            self.bytes.extend(VERSION.to_be_bytes());
            self.bytes.extend([flags, 0]);
            self.bytes.extend((data.len() as u64).to_be_bytes());
            let mut kind_field = [0u8; TYPE_BYTES];
            kind_field[..kind.len()].copy_from_slice(kind.as_bytes());
            self.bytes.extend(kind_field);
            self.bytes.extend_from_slice(data);
            self.bytes
                .extend(std::iter::repeat_n(0u8, padding(data.len())));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_with_padding_and_message_flags() {
        let mut w = Writer::default();
        w.message(&[("first", b"abc"), ("second", b"12345678")])
            .unwrap();
        w.message(&[("third", b"")]).unwrap();
        assert_eq!(w.bytes.len(), 3 * 144 + 8 + 8);
        assert_eq!(&w.bytes[..4], &[0x45, 0x67, 0x89, 0xab]);
        let r = records(&w.bytes).unwrap();
        let kinds: Vec<_> = r.iter().map(|r| r.kind.as_str()).collect();
        assert_eq!(kinds, ["first", "second", "third"]);
        assert_eq!(r[0].data, b"abc");
        assert_eq!(
            r.iter()
                .map(|r| (r.message_begin, r.message_end))
                .collect::<Vec<_>>(),
            [(true, false), (false, true), (true, true)]
        );
        // Truncated data and a broken message are refused.
        assert!(records(&w.bytes[..144 + 2]).is_err());
        let mut bad = w.bytes.clone();
        bad[6] = 0; // the first record no longer begins a message
        assert!(records(&bad).is_err());
        // The walk over the headers finds each record's data where the
        // in-memory reader does, and refuses what it refuses.
        let mut file = std::io::Cursor::new(&w.bytes);
        let placed = walk(&mut file, w.bytes.len() as u64).unwrap();
        for (p, r) in placed.iter().zip(&r) {
            let at = p.offset as usize;
            assert_eq!(
                (&p.kind, &w.bytes[at..at + p.len as usize]),
                (&r.kind, r.data)
            );
        }
        assert_eq!(placed.len(), 3);
        let mut cut = std::io::Cursor::new(&w.bytes[..144 + 2]);
        assert!(walk(&mut cut, 146).is_err());
        assert!(walk(&mut std::io::Cursor::new(&bad), bad.len() as u64).is_err());
    }
}
