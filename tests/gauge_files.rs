//! Gauge configuration files (issue 16): NERSC, ILDG and MILC written and
//! read back, the format detected from the file, and every check of the
//! readers failing on a damaged file with a message naming the file and
//! both sums or values.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use latsol::field::GaugeField;
use latsol::gauge_io::{self, Ensemble, FilePrecision, Format, WriteOptions};
use latsol::lattice::Lattice;
use latsol::random;

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gauge_files");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn field() -> GaugeField {
    let lat = Arc::new(Lattice::new([4, 6, 2, 8]).unwrap());
    random::hot_gauge(&lat, 11)
}

/// Largest difference of any link entry.
fn max_diff(a: &GaugeField, b: &GaugeField) -> f64 {
    let mut m: f64 = 0.0;
    for (u, v) in a.links().iter().zip(b.links()) {
        for r in 0..3 {
            for c in 0..3 {
                m = m.max((u.0[r][c] - v.0[r][c]).norm());
            }
        }
    }
    m
}

fn write(name: &str, u: &GaugeField, options: &WriteOptions) -> PathBuf {
    let path = dir().join(name);
    gauge_io::write(u, &path, options).unwrap();
    path
}

/// A NERSC file's header text and data.
fn split_nersc(path: &Path) -> (String, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap();
    let end = bytes
        .windows(11)
        .position(|w| w == b"END_HEADER\n")
        .unwrap()
        + 11;
    (
        String::from_utf8(bytes[..end].to_vec()).unwrap(),
        bytes[end..].to_vec(),
    )
}

/// Writes `name`: `header` followed by `data`; returns its path.
fn join_nersc(name: &str, header: &str, data: &[u8]) -> PathBuf {
    let mut bytes = header.as_bytes().to_vec();
    bytes.extend_from_slice(data);
    let path = dir().join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn error_of(path: &Path) -> String {
    match gauge_io::read(path) {
        Ok(_) => panic!("{} was read although it is damaged", path.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn every_format_and_precision_round_trips() {
    let u = field();
    let ensemble = Ensemble {
        beta: 5.85,
        seed: 42,
        sweeps: 1200,
        overrelax: 3,
    };
    let cases = [
        (Format::Nersc, FilePrecision::Double, 3, 0.0),
        (Format::Nersc, FilePrecision::Double, 2, 1e-15),
        (Format::Nersc, FilePrecision::Single, 3, 1e-7),
        (Format::Nersc, FilePrecision::Single, 2, 1e-6),
        (Format::Ildg, FilePrecision::Double, 3, 0.0),
        (Format::Ildg, FilePrecision::Single, 3, 1e-7),
        (Format::Milc, FilePrecision::Single, 3, 1e-7),
    ];
    for (format, precision, rows, tol) in cases {
        let options = WriteOptions {
            format,
            precision,
            nersc_rows: rows,
            ensemble: Some(ensemble.clone()),
            ..Default::default()
        };
        let name = format!(
            "roundtrip_{format:?}_{precision:?}_{rows}.{}",
            format.extension()
        );
        let path = write(&name, &u, &options);
        assert_eq!(gauge_io::detect(&path).unwrap(), format, "{name}");
        let (back, info) = gauge_io::read(&path).unwrap();
        let d = max_diff(&u, &back);
        assert!(
            d <= tol,
            "{name}: links differ by {d:e} (tolerance {tol:e})"
        );
        assert_eq!(info.format, format);
        assert_eq!(info.dims, u.lattice().dims());
        assert_eq!(info.precision, precision);
        assert!((info.plaquette - u.plaquette()[0]).abs() <= 10.0 * tol.max(1e-15));
        assert!(!info.checks.is_empty(), "{name}: nothing checked");
        println!("{name}: {:?}", info.checks);
        if format != Format::Milc {
            assert_eq!(info.ensemble.as_ref(), Some(&ensemble), "{name}");
        }
    }
}

#[test]
fn the_formats_agree_on_the_same_field() {
    // One field through all three formats in single precision: the same
    // numbers, so the same links to the last bit.
    let u = field();
    let read = |format: Format| {
        let options = WriteOptions {
            format,
            precision: FilePrecision::Single,
            ..Default::default()
        };
        let path = write(&format!("agree.{}", format.extension()), &u, &options);
        gauge_io::read(&path).unwrap().0
    };
    let (n, i, m) = (read(Format::Nersc), read(Format::Ildg), read(Format::Milc));
    assert_eq!(max_diff(&n, &i), 0.0);
    assert_eq!(max_diff(&n, &m), 0.0);
}

#[test]
fn a_damaged_nersc_file_is_refused_naming_the_file_and_both_sums() {
    let u = field();
    let path = write("good.nersc", &u, &WriteOptions::default());
    let (header, data) = split_nersc(&path);

    // One bit of the data flipped: the checksum.
    let mut flipped = data.clone();
    flipped[1000] ^= 0x10;
    let e = error_of(&join_nersc("flipped.nersc", &header, &flipped));
    assert!(
        e.contains("flipped.nersc") && e.contains("checksum mismatch"),
        "{e}"
    );
    let recorded = header
        .lines()
        .find_map(|l| l.strip_prefix("CHECKSUM = "))
        .unwrap();
    assert!(e.contains(&format!("header says {recorded}")), "{e}");

    // A plaquette that is not the field's, with a consistent checksum.
    let edited = header.replace("PLAQUETTE = ", "PLAQUETTE = 0.1");
    let e = error_of(&join_nersc("plaquette.nersc", &edited, &data));
    assert!(
        e.contains("plaquette.nersc") && e.contains("PLAQUETTE"),
        "{e}"
    );

    // Truncated.
    let e = error_of(&join_nersc("short.nersc", &header, &data[..data.len() - 8]));
    assert!(e.contains("short.nersc") && e.contains("bytes"), "{e}");

    // Dimensions that are not the data's (the length check catches it).
    let edited = header.replace("DIMENSION_3 = 2", "DIMENSION_3 = 4");
    assert!(error_of(&join_nersc("dims.nersc", &edited, &data)).contains("need"));

    // Double precision announced over single-precision data.
    let single = write(
        "single.nersc",
        &u,
        &WriteOptions {
            precision: FilePrecision::Single,
            ..Default::default()
        },
    );
    let (header, data) = split_nersc(&single);
    let edited = header.replace("IEEE32BIG", "IEEE64BIG");
    assert!(error_of(&join_nersc("precision.nersc", &edited, &data)).contains("64-bit"));
}

#[test]
fn bare_ieee64_is_read_in_whichever_byte_order_the_checksum_confirms() {
    let u = field();
    let path = write("bare.nersc", &u, &WriteOptions::default());
    let (header, data) = split_nersc(&path);
    // Little-endian data (as Grid writes IEEE64): every double reversed.
    let little: Vec<u8> = data
        .chunks_exact(8)
        .flat_map(|c| c.iter().rev().copied())
        .collect();
    let p = join_nersc(
        "little.nersc",
        &header.replace("IEEE64BIG", "IEEE64"),
        &little,
    );
    let (back, info) = gauge_io::read(&p).unwrap();
    assert_eq!(max_diff(&u, &back), 0.0);
    assert!(
        info.checks[0].contains("little-endian"),
        "{:?}",
        info.checks
    );
}

#[test]
fn a_damaged_ildg_file_is_refused_naming_both_sums() {
    let u = field();
    let path = write(
        "good.ildg",
        &u,
        &WriteOptions {
            format: Format::Ildg,
            ..Default::default()
        },
    );
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    // The binary data lie before the checksum record (144-byte header and
    // its XML): a byte well inside them.
    bytes[n - 2000] ^= 1;
    let bad = dir().join("flipped.ildg");
    std::fs::write(&bad, &bytes).unwrap();
    let e = error_of(&bad);
    assert!(
        e.contains("flipped.ildg") && e.contains("SciDAC checksum mismatch"),
        "{e}"
    );
    assert!(
        e.matches("suma").count() == 2 && e.matches("sumb").count() == 2,
        "{e}"
    );
    // Truncated inside a record.
    let bad = dir().join("short.ildg");
    std::fs::write(&bad, &bytes[..n / 2]).unwrap();
    assert!(error_of(&bad).contains("short.ildg"));
}

#[test]
fn a_damaged_milc_file_is_refused_and_either_byte_order_is_read() {
    let u = field();
    let options = WriteOptions {
        format: Format::Milc,
        precision: FilePrecision::Single,
        ..Default::default()
    };
    let path = write("good.milc", &u, &options);
    let bytes = std::fs::read(&path).unwrap();
    // Big-endian: every 32-bit word of the file reversed (header, stamp and
    // all: the stamp is bytes, but reversing it within words is harmless).
    let big: Vec<u8> = bytes
        .chunks_exact(4)
        .flat_map(|w| w.iter().rev().copied())
        .collect();
    let p = dir().join("big.milc");
    std::fs::write(&p, &big).unwrap();
    let (back, info) = gauge_io::read(&p).unwrap();
    assert_eq!(max_diff(&gauge_io::read(&path).unwrap().0, &back), 0.0);
    assert!(info.checks[0].contains("big-endian"));

    let mut flipped = bytes.clone();
    flipped[bytes.len() - 100] ^= 4;
    let bad = dir().join("flipped.milc");
    std::fs::write(&bad, &flipped).unwrap();
    let e = error_of(&bad);
    assert!(
        e.contains("flipped.milc") && e.contains("MILC checksum mismatch"),
        "{e}"
    );
    assert!(e.matches("sum29").count() == 2, "{e}");
}

#[test]
fn unknown_files_and_wrong_precisions_are_refused() {
    let p = dir().join("noise.bin");
    std::fs::write(&p, b"this is not a gauge field at all").unwrap();
    let e = gauge_io::read(&p).unwrap_err().to_string();
    assert!(e.contains("noise.bin") && e.contains("known format"), "{e}");
    let e = gauge_io::read(&dir().join("absent.nersc"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("absent.nersc"), "{e}");
    let e = gauge_io::write(
        &field(),
        &dir().join("x.milc"),
        &WriteOptions {
            format: Format::Milc,
            precision: FilePrecision::Double,
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("single precision"), "{e}");
}

#[test]
fn latsols_first_format_is_still_read() {
    let u = field();
    let path = dir().join("legacy.milc");
    let info = latsol::gauge_gen::io::ConfigInfo {
        dims: u.lattice().dims(),
        beta: 6.0,
        sweeps: 10,
        seed: 3,
        overrelax: 4,
        plaquette: [0.0; 3],
    };
    latsol::gauge_gen::io::save(&u, &info, &path).unwrap();
    assert_eq!(gauge_io::detect(&path).unwrap(), Format::LatsolV1);
    let (back, file) = gauge_io::read(&path).unwrap();
    assert_eq!(max_diff(&u, &back), 0.0);
    assert_eq!(file.ensemble.unwrap().sweeps, 10);
}

#[test]
fn a_chain_resumed_from_a_double_precision_file_continues_exactly() {
    use latsol::gauge_gen::{Generator, Start};
    let lat = Arc::new(Lattice::new([4, 4, 4, 4]).unwrap());
    for format in [Format::Nersc, Format::Ildg] {
        let mut g = Generator::new(lat.clone(), 5.9, 9, Start::Hot).unwrap();
        for _ in 0..2 {
            g.sweep();
        }
        let options = WriteOptions {
            format,
            ensemble: Some(Ensemble {
                beta: g.beta(),
                seed: g.seed(),
                sweeps: g.sweeps(),
                overrelax: g.overrelax(),
            }),
            ..Default::default()
        };
        let path = write(
            &format!("chain.{}", format.extension()),
            g.field(),
            &options,
        );
        g.sweep();
        let (field, info) = gauge_io::read(&path).unwrap();
        let e = info.ensemble.unwrap();
        let mut resumed = Generator::resume(field, e.beta, e.seed, e.sweeps)
            .unwrap()
            .with_overrelax(e.overrelax);
        resumed.sweep();
        assert_eq!(max_diff(g.field(), resumed.field()), 0.0, "{format:?}");
    }
}

/// Files written by other implementations (tests/data/README.md,
/// "independent/"): pyquda-utils' NERSC writer, and an ILDG file framed by
/// lyncs-io with pyquda-utils' SciDAC checksum.
fn independent(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/independent")
        .join(name)
}

#[test]
fn files_written_by_independent_implementations_are_read_and_agree() {
    let (nersc, info) = gauge_io::read(&independent("smooth_4x4x4x8.nersc")).unwrap();
    assert_eq!(info.format, Format::Nersc);
    assert_eq!(info.dims, [4, 4, 4, 8]);
    assert_eq!(info.precision, FilePrecision::Double);
    // pyquda-utils' header: PLAQUETTE 0.6190187769, LINK_TRACE 0.8869109119.
    assert!(
        (info.plaquette - 0.6190187769).abs() < 1e-10,
        "{}",
        info.plaquette
    );
    for check in ["NERSC checksum", "little-endian", "plaquette", "link trace"] {
        assert!(
            info.checks.iter().any(|c| c.contains(check)),
            "{check}: {:?}",
            info.checks
        );
    }

    // The same field through ILDG: the same numbers, site for site.
    let (ildg, info) = gauge_io::read(&independent("smooth_4x4x4x8.ildg")).unwrap();
    assert_eq!(info.format, Format::Ildg);
    assert!(
        info.checks[0].contains("SciDAC checksum"),
        "{:?}",
        info.checks
    );
    assert_eq!(max_diff(&nersc, &ildg), 0.0);

    // Single precision, Haar-random links: checksum, plaquette and link
    // trace (computed by the writer before rounding) within the tolerances.
    let (random, info) = gauge_io::read(&independent("random_4x4x4x8_fp32.nersc")).unwrap();
    assert_eq!(info.precision, FilePrecision::Single);
    assert!(info.checks.iter().any(|c| c.contains("reunitarised")));
    assert!(random.max_su3_deviation().0 < 1e-14);

    // And latsol writes what it read as the other implementation did: the
    // same checksum for the same numbers in the same encoding.
    let path = write(
        "rewritten.ildg",
        &nersc,
        &WriteOptions {
            format: Format::Ildg,
            ..Default::default()
        },
    );
    let theirs = std::fs::read(independent("smooth_4x4x4x8.ildg")).unwrap();
    let ours = std::fs::read(&path).unwrap();
    let sums = |bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes).to_string();
        let start = text.find("<suma>").unwrap();
        text[start..start + 40]
            .split("</sumb>")
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(sums(&theirs), sums(&ours));
}
