//! ILDG gauge configurations: SciDAC LIME files (`lime`).
//!
//! Written as QIO writes them: a file message (`scidac-private-file-xml`,
//! `scidac-file-xml`) and a record message (`scidac-private-record-xml`,
//! `scidac-record-xml`, `ildg-format`, `ildg-data-lfn`, `ildg-binary-data`,
//! `scidac-checksum`). The binary data are big-endian IEEE reals of the
//! precision `ildg-format` names, sites lexicographic, four 3×3 row-major
//! links a site (`lexicographic`).
//!
//! Read: the dimensions and precision from `ildg-format` (or, in a SciDAC
//! file without ILDG records, from `scidac-private-file-xml` and
//! `scidac-private-record-xml`, the data in `scidac-binary-data`), the data
//! length, and the `scidac-checksum` sums (CRC-32 per site, `checksum`)
//! when the file has them (ILDG does not require them; Grid and QIO write
//! them). The file XML of a latsol-heatbath file records its chain.

use super::lexicographic;
use super::lime::{self, Record};
use super::real::{FilePrecision, RealEncoding};
use super::{checksum, Ensemble, FileInfo, Format, WriteOptions};
use crate::error::Result;
use crate::field::GaugeField;
use crate::invalid;

const XML_HEAD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>"#;

/// The text between `<tag>` and `</tag>`, trimmed (the first such element).
fn xml_value<'a>(text: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = text.find(&open)? + open.len();
    let len = text[start..].find(&close)?;
    Some(text[start..start + len].trim())
}

fn xml_number<T: std::str::FromStr>(text: &str, tag: &str, record: &str) -> Result<T> {
    match xml_value(text, tag) {
        Some(v) => v.parse().map_err(|_| {
            crate::Error::InvalidArgument(format!("{record}: <{tag}> '{v}' is not a number"))
        }),
        None => invalid!("{record} has no <{tag}>"),
    }
}

fn find<'r, 'a>(records: &'r [Record<'a>], kind: &str) -> Option<&'r Record<'a>> {
    records.iter().find(|r| r.kind == kind)
}

/// What an ILDG (or SciDAC gauge) file's metadata records say of its
/// binary data: the lattice, the precision and the type of the record
/// that holds them (the binary record itself need not be read).
pub(super) fn gauge_header(
    records: &[Record],
) -> Result<([usize; 4], FilePrecision, &'static str)> {
    let Some(format) = find(records, "ildg-format") else {
        let (dims, precision) = scidac_gauge(records)?;
        return Ok((dims, precision, "scidac-binary-data"));
    };
    let xml = format.text();
    let field = xml_value(&xml, "field").unwrap_or("");
    if field != "su3gauge" {
        return invalid!("ildg-format: <field> is '{field}', not su3gauge");
    }
    let precision = match xml_number::<u32>(&xml, "precision", "ildg-format")? {
        32 => FilePrecision::Single,
        64 => FilePrecision::Double,
        p => return invalid!("ildg-format: <precision> {p}, not 32 or 64"),
    };
    let mut dims = [0usize; 4];
    for (d, tag) in dims.iter_mut().zip(["lx", "ly", "lz", "lt"]) {
        *d = xml_number(&xml, tag, "ildg-format")?;
    }
    if find(records, "ildg-binary-data").is_none() {
        return invalid!("the file has an ildg-format record but no ildg-binary-data");
    }
    Ok((dims, precision, "ildg-binary-data"))
}

/// The SciDAC checksum `(suma, sumb)` the file records, if it has a
/// scidac-checksum record.
pub(super) fn recorded_checksum(records: &[Record]) -> Result<Option<(u32, u32)>> {
    let Some(record) = find(records, "scidac-checksum") else {
        return Ok(None);
    };
    let xml = record.text();
    let recorded = |tag| {
        xml_value(&xml, tag)
            .and_then(|v| u64::from_str_radix(v, 16).ok())
            .map(|v| v as u32)
            .ok_or_else(|| {
                crate::Error::InvalidArgument(format!("scidac-checksum has no hexadecimal <{tag}>"))
            })
    };
    Ok(Some((recorded("suma")?, recorded("sumb")?)))
}

/// Reads an ILDG (or SciDAC gauge) file's contents.
pub fn decode(bytes: &[u8]) -> Result<(GaugeField, FileInfo)> {
    let records = lime::records(bytes)?;
    let (dims, precision, data_kind) = gauge_header(&records)?;
    let data = find(&records, data_kind)
        .expect("gauge_header found it")
        .data;
    let lat = crate::lattice::Lattice::new(dims)?;
    let site_bytes = 4 * 18 * precision.bytes();
    if data.len() != lat.volume() * site_bytes {
        return invalid!(
            "the binary data hold {} bytes, but {dims:?} in {}-bit precision need {}",
            data.len(),
            precision.bits(),
            lat.volume() * site_bytes
        );
    }
    let mut checks = Vec::new();
    match recorded_checksum(&records)? {
        Some((a, b)) => {
            let (sa, sb) = checksum::scidac(data, site_bytes);
            if (sa, sb) != (a, b) {
                return invalid!(
                    "SciDAC checksum mismatch: the file records suma {a:x} sumb {b:x}, the data \
                     give suma {sa:x} sumb {sb:x}"
                );
            }
            checks.push(format!("SciDAC checksum suma {a:x} sumb {b:x} matches"));
        }
        None => checks.push("no scidac-checksum record: data unchecked".into()),
    }
    let reals = RealEncoding::big(precision).decode(data)?;
    let field = lexicographic::field(dims, &reals, 3)?;
    let ensemble = match find(&records, "scidac-file-xml") {
        Some(r) => latsol_ensemble(&r.text()),
        None => None,
    };
    let info = FileInfo {
        format: Format::Ildg,
        dims,
        precision,
        plaquette: field.plaquette()[0],
        checks,
        ensemble,
    };
    Ok((field, info))
}

/// A SciDAC file of colour matrices without ILDG records (QIO with no ILDG
/// tag): dims from the private file XML, type from the private record XML.
fn scidac_gauge(records: &[Record]) -> Result<([usize; 4], FilePrecision)> {
    let (Some(file), Some(record), Some(_)) = (
        find(records, "scidac-private-file-xml"),
        find(records, "scidac-private-record-xml"),
        find(records, "scidac-binary-data"),
    ) else {
        return invalid!(
            "a LIME file without an ildg-format record, nor the SciDAC private XML and \
             scidac-binary-data of a gauge field"
        );
    };
    let (fx, rx) = (file.text(), record.text());
    let dims: Vec<usize> = xml_value(&fx, "dims")
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|d| d.parse().ok())
        .collect();
    let Ok(dims) = <[usize; 4]>::try_from(dims.as_slice()) else {
        return invalid!("scidac-private-file-xml: <dims> is not four extents");
    };
    let precision = match xml_value(&rx, "datatype") {
        Some("QDP_D3_ColorMatrix" | "USQCD_D3_ColorMatrix") => FilePrecision::Double,
        Some("QDP_F3_ColorMatrix" | "USQCD_F3_ColorMatrix") => FilePrecision::Single,
        other => {
            return invalid!(
                "scidac-private-record-xml: datatype {other:?} is not a colour matrix field"
            )
        }
    };
    let count: usize = xml_number(&rx, "datacount", "scidac-private-record-xml")?;
    if count != 4 {
        return invalid!("scidac-private-record-xml: datacount {count}, not the 4 links of a site");
    }
    Ok((dims, precision))
}

/// The chain a latsol-heatbath file records in its file XML.
pub(super) fn latsol_ensemble(xml: &str) -> Option<Ensemble> {
    let e = xml_value(xml, "latsolEnsemble")?;
    Some(Ensemble {
        beta: xml_value(e, "beta")?.parse().ok()?,
        seed: xml_value(e, "seed")?.parse().ok()?,
        sweeps: xml_value(e, "sweeps")?.parse().ok()?,
        overrelax: xml_value(e, "overrelax")?.parse().ok()?,
    })
}

/// The records of an ILDG file of `field`; `lfn` is its logical file name.
pub fn encode(field: &GaugeField, options: &WriteOptions, lfn: &str) -> Result<Vec<u8>> {
    let dims = field.lattice().dims();
    let precision = options.precision;
    let enc = RealEncoding::big(precision);
    let reals = lexicographic::links(field, 3)?;
    let mut data =
        crate::alloc::with_capacity(reals.len() * precision.bytes(), "the ILDG binary data")?;
    enc.encode(&reals, &mut data);
    drop(reals);
    let site_bytes = 4 * 18 * precision.bytes();
    let (suma, sumb) = checksum::scidac(&data, site_bytes);
    let date = super::utc_now();
    let (letter, bits) = match precision {
        FilePrecision::Single => ("F", 32),
        FilePrecision::Double => ("D", 64),
    };

    let private_file = format!(
        "{XML_HEAD}<scidacFile><version>1.1</version><spacetime>4</spacetime>\
         <dims>{} {} {} {} </dims><volfmt>0</volfmt></scidacFile>",
        dims[0], dims[1], dims[2], dims[3]
    );
    let ensemble = match &options.ensemble {
        Some(e) => format!(
            "<latsolEnsemble><action>wilson</action><beta>{:?}</beta><seed>{}</seed>\
             <sweeps>{}</sweeps><overrelax>{}</overrelax></latsolEnsemble>",
            e.beta, e.seed, e.sweeps, e.overrelax
        ),
        None => String::new(),
    };
    let file_xml = format!(
        "{XML_HEAD}<info><creator>{}</creator><date>{date}</date>\
         <plaquette>{:.15}</plaquette>{ensemble}</info>",
        options.creator,
        field.plaquette()[0]
    );
    let private_record = format!(
        "{XML_HEAD}<scidacRecord><version>1.1</version><date>{date}</date>\
         <recordtype>0</recordtype><datatype>QDP_{letter}3_ColorMatrix</datatype>\
         <precision>{letter}</precision><colors>3</colors><spins>4</spins>\
         <typesize>{}</typesize><datacount>4</datacount></scidacRecord>",
        18 * precision.bytes()
    );
    let record_xml = format!("{XML_HEAD}<info>gauge links, lexicographic sites</info>");
    let format = format!(
        "{XML_HEAD}<ildgFormat xmlns=\"http://www.lqcd.org/ildg\" \
         xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" \
         xsi:schemaLocation=\"http://www.lqcd.org/ildg/filefmt.xsd\">\
         <version>1.0</version><field>su3gauge</field><precision>{bits}</precision>\
         <lx>{}</lx><ly>{}</ly><lz>{}</lz><lt>{}</lt></ildgFormat>",
        dims[0], dims[1], dims[2], dims[3]
    );
    let checksum = format!(
        "{XML_HEAD}<scidacChecksum><version>1.0</version><suma>{suma:x}</suma>\
         <sumb>{sumb:x}</sumb></scidacChecksum>"
    );
    let mut w = lime::Writer {
        bytes: crate::alloc::with_capacity(data.len() + 16 * 1024, "the ILDG file")?,
    };
    w.message(&[
        ("scidac-private-file-xml", private_file.as_bytes()),
        ("scidac-file-xml", file_xml.as_bytes()),
    ])?;
    w.message(&[
        ("scidac-private-record-xml", private_record.as_bytes()),
        ("scidac-record-xml", record_xml.as_bytes()),
        ("ildg-format", format.as_bytes()),
        ("ildg-data-lfn", lfn.as_bytes()),
        ("ildg-binary-data", &data),
        ("scidac-checksum", checksum.as_bytes()),
    ])?;
    Ok(w.bytes)
}
