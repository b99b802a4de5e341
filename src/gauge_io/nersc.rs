//! The NERSC archive format.
//!
//! A text header, `BEGIN_HEADER`, one `KEY = VALUE` line per entry,
//! `END_HEADER`, then the links in file order (`lexicographic`): all three
//! rows (`DATATYPE = 4D_SU3_GAUGE_3x3`) or the first two
//! (`4D_SU3_GAUGE`), in `FLOATING_POINT` IEEE32BIG (MILC's default when the
//! key is absent), IEEE64BIG, IEEE32LITTLE or IEEE64LITTLE. Readers differ on
//! bare `IEEE32`/`IEEE64` (Grid: little-endian, QDP++: big-endian): both are
//! tried and the checksum decides.
//!
//! Checked on read: the data length, `CHECKSUM` (exactly), `PLAQUETTE`
//! within 1e-5 and `LINK_TRACE` within 1e-6 of the field read (Grid's and
//! QDP++'s tolerances; single-precision files round at 1e-7). Unknown keys
//! are kept and ignored; `LATSOL_BETA`, `LATSOL_SEED` and
//! `LATSOL_OVERRELAX` with `SEQUENCE_NUMBER` record a latsol-heatbath chain.

use std::fmt::Write as _;

use super::lexicographic;
use super::real::{FilePrecision, RealEncoding};
use super::{checksum, Ensemble, FileInfo, Format, WriteOptions};
use crate::error::Result;
use crate::field::GaugeField;
use crate::invalid;

/// Largest plaquette difference accepted (Grid, QDP++).
pub const PLAQUETTE_TOLERANCE: f64 = 1e-5;
/// Largest link-trace difference accepted (Grid).
pub const LINK_TRACE_TOLERANCE: f64 = 1e-6;

/// The header's entries, in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Header {
    pub entries: Vec<(String, String)>,
}

impl Header {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn push(&mut self, key: &str, value: impl std::fmt::Display) {
        self.entries.push((key.to_string(), value.to_string()));
    }

    pub(super) fn number<T: std::str::FromStr>(&self, key: &str) -> Result<Option<T>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => match v.parse() {
                Ok(x) => Ok(Some(x)),
                Err(_) => invalid!("header entry {key} = '{v}' is not a number"),
            },
        }
    }
}

/// Splits a file into its header and the offset of its data.
pub fn parse_header(bytes: &[u8]) -> Result<(Header, usize)> {
    let mut header = Header::default();
    let mut pos = 0;
    let mut first = true;
    loop {
        let Some(len) = bytes[pos..].iter().position(|&b| b == b'\n') else {
            return invalid!("the NERSC header has no END_HEADER line");
        };
        let line = String::from_utf8_lossy(&bytes[pos..pos + len]);
        let line = line.trim();
        pos += len + 1;
        if first {
            if line != "BEGIN_HEADER" {
                return invalid!("a NERSC file starts with BEGIN_HEADER, not '{line}'");
            }
            first = false;
            continue;
        }
        if line == "END_HEADER" {
            return Ok((header, pos));
        }
        if line.is_empty() {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return invalid!("NERSC header line '{line}' is not KEY = VALUE");
        };
        header.push(key.trim(), value.trim());
    }
}

/// The encodings the `FLOATING_POINT` entry allows, most likely first.
pub(super) fn encodings(value: Option<&str>) -> Result<Vec<RealEncoding>> {
    use FilePrecision::{Double, Single};
    Ok(match value.unwrap_or("IEEE32BIG") {
        "IEEE32BIG" => vec![RealEncoding::big(Single)],
        "IEEE64BIG" => vec![RealEncoding::big(Double)],
        "IEEE32LITTLE" => vec![RealEncoding::little(Single)],
        "IEEE64LITTLE" => vec![RealEncoding::little(Double)],
        "IEEE32" => vec![RealEncoding::big(Single), RealEncoding::little(Single)],
        "IEEE64" => vec![RealEncoding::big(Double), RealEncoding::little(Double)],
        other => {
            return invalid!(
                "FLOATING_POINT = {other}: not IEEE32BIG, IEEE64BIG, IEEE32LITTLE, IEEE64LITTLE, \
                 IEEE32 or IEEE64"
            )
        }
    })
}

pub(super) fn parse_hex(v: &str) -> Option<u32> {
    let v = v.trim_start_matches("0x").trim_start_matches("0X");
    u64::from_str_radix(v, 16).ok().map(|x| x as u32)
}

/// Reads a NERSC file's contents.
pub fn decode(bytes: &[u8]) -> Result<(GaugeField, FileInfo)> {
    let (header, offset) = parse_header(bytes)?;
    let rows = match header.get("DATATYPE") {
        Some("4D_SU3_GAUGE") => 2,
        Some("4D_SU3_GAUGE_3x3") => 3,
        Some(other) => return invalid!("DATATYPE = {other}: not 4D_SU3_GAUGE or 4D_SU3_GAUGE_3x3"),
        None => return invalid!("the NERSC header has no DATATYPE"),
    };
    let mut dims = [0usize; 4];
    for (mu, d) in dims.iter_mut().enumerate() {
        let key = format!("DIMENSION_{}", mu + 1);
        *d = header
            .number(&key)?
            .ok_or_else(|| crate::Error::InvalidArgument(format!("the header has no {key}")))?;
    }
    let Some(recorded) = header.get("CHECKSUM") else {
        return invalid!("the NERSC header has no CHECKSUM");
    };
    let Some(recorded) = parse_hex(recorded) else {
        return invalid!("CHECKSUM = {recorded} is not hexadecimal");
    };
    let data = &bytes[offset..];
    let candidates = encodings(header.get("FLOATING_POINT"))?;
    let precision = candidates[0].precision;
    let lat = crate::lattice::Lattice::new(dims)?;
    let expected = lat.volume() * 4 * 6 * rows * precision.bytes();
    if data.len() != expected {
        return invalid!(
            "{} bytes of links after the header, but {dims:?} with {rows} rows of {}-bit \
             reals need {expected}",
            data.len(),
            precision.bits()
        );
    }
    let mut sums = Vec::new();
    let mut chosen = None;
    for enc in &candidates {
        let sum = checksum::nersc(enc.words(data));
        sums.push(sum);
        if sum == recorded {
            chosen = Some(*enc);
            break;
        }
    }
    let Some(enc) = chosen else {
        return invalid!(
            "checksum mismatch: the header says {recorded:x}, the data sum to {}",
            sums.iter()
                .map(|s| format!("{s:x}"))
                .collect::<Vec<_>>()
                .join(" or ")
        );
    };
    let mut checks = vec![format!(
        "NERSC checksum {recorded:x} matches ({}-bit {}-endian)",
        precision.bits(),
        if enc.big_endian { "big" } else { "little" }
    )];
    let field = lexicographic::field(dims, &enc.decode(data)?, rows)?;
    let plaquette = field.plaquette()[0];
    if let Some(p) = header.number::<f64>("PLAQUETTE")? {
        if (p - plaquette).abs() > PLAQUETTE_TOLERANCE || plaquette.is_nan() {
            return invalid!(
                "the header's PLAQUETTE is {p} but the links give {plaquette:.10}: the data \
                 are not the field the header describes"
            );
        }
        checks.push(format!(
            "plaquette {plaquette:.10} matches the header's {p}"
        ));
    }
    if let Some(t) = header.number::<f64>("LINK_TRACE")? {
        let trace = lexicographic::link_trace(&field);
        if (t - trace).abs() > LINK_TRACE_TOLERANCE || trace.is_nan() {
            return invalid!("the header's LINK_TRACE is {t} but the links give {trace:.10}");
        }
        checks.push(format!("link trace {trace:.10} matches the header's {t}"));
    }
    let ensemble = match (
        header.number::<f64>("LATSOL_BETA")?,
        header.number::<u64>("LATSOL_SEED")?,
        header.number::<u64>("SEQUENCE_NUMBER")?,
    ) {
        (Some(beta), Some(seed), Some(sweeps)) => Some(Ensemble {
            beta,
            seed,
            sweeps,
            overrelax: header
                .number("LATSOL_OVERRELAX")?
                .unwrap_or(crate::gauge_gen::DEFAULT_OVERRELAX),
        }),
        _ => None,
    };
    let info = FileInfo {
        format: Format::Nersc,
        dims,
        precision,
        plaquette,
        checks,
        ensemble,
    };
    Ok((field, info))
}

/// The header and links of a NERSC file of `field`.
pub fn encode(field: &GaugeField, options: &WriteOptions) -> Result<Vec<u8>> {
    let rows = options.nersc_rows;
    if rows != 2 && rows != 3 {
        return invalid!("NERSC files store 2 or 3 rows of each link, not {rows}");
    }
    let enc = RealEncoding::big(options.precision);
    let reals = lexicographic::links(field, rows)?;
    let mut data =
        crate::alloc::with_capacity(reals.len() * options.precision.bytes(), "the NERSC file")?;
    enc.encode(&reals, &mut data);
    // The header records the field as stored: rounded to the file's
    // precision, two-row links completed.
    let stored = lexicographic::field(field.lattice().dims(), &enc.decode(&data)?, rows)?;
    let dims = field.lattice().dims();

    let mut h = Header::default();
    h.push("HDR_VERSION", "1.0");
    h.push(
        "DATATYPE",
        if rows == 3 {
            "4D_SU3_GAUGE_3x3"
        } else {
            "4D_SU3_GAUGE"
        },
    );
    h.push("STORAGE_FORMAT", "1.0");
    for (mu, d) in dims.iter().enumerate() {
        h.push(&format!("DIMENSION_{}", mu + 1), d);
    }
    h.push(
        "LINK_TRACE",
        format!("{:.15}", lexicographic::link_trace(&stored)),
    );
    h.push("PLAQUETTE", format!("{:.15}", stored.plaquette()[0]));
    for mu in 1..=4 {
        h.push(&format!("BOUNDARY_{mu}"), "PERIODIC");
    }
    h.push(
        "CHECKSUM",
        format!("{:x}", checksum::nersc(enc.words(&data))),
    );
    h.push(
        "FLOATING_POINT",
        match options.precision {
            FilePrecision::Single => "IEEE32BIG",
            FilePrecision::Double => "IEEE64BIG",
        },
    );
    h.push("CREATOR", &options.creator);
    h.push("CREATION_DATE", super::utc_now());
    match &options.ensemble {
        Some(e) => {
            h.push(
                "ENSEMBLE_ID",
                format!(
                    "latsol-wilson-b{:.4}-{}x{}x{}x{}-seed{}",
                    e.beta, dims[0], dims[1], dims[2], dims[3], e.seed
                ),
            );
            h.push(
                "ENSEMBLE_LABEL",
                "quenched SU(3), Wilson gauge action, heatbath and overrelaxation",
            );
            h.push("SEQUENCE_NUMBER", e.sweeps);
            h.push("LATSOL_BETA", format!("{:?}", e.beta));
            h.push("LATSOL_SEED", e.seed);
            h.push("LATSOL_OVERRELAX", e.overrelax);
        }
        None => {
            h.push("ENSEMBLE_ID", "latsol");
            h.push("SEQUENCE_NUMBER", 0);
        }
    }

    let mut text = String::from("BEGIN_HEADER\n");
    for (k, v) in &h.entries {
        let _ = writeln!(text, "{k} = {v}");
    }
    text.push_str("END_HEADER\n");
    let mut out = crate::alloc::with_capacity(text.len() + data.len(), "the NERSC file")?;
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(&data);
    Ok(out)
}
