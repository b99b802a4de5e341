//! A gauge file read in parts, as the ranks of a grid read it
//! (`gauge_io::part`), here all parts in one process: every part's sites
//! are the whole file's, and the parts' checksums, combined as the ranks
//! combine them (NERSC summed modulo 2³², MILC and SciDAC XORed), are the
//! file's: NERSC, ILDG in both precisions, MILC in natural and listed site
//! order.

use std::path::PathBuf;
use std::sync::Arc;

use latsol::field::GaugeField;
use latsol::gauge_io::part::{read_part, Combine};
use latsol::gauge_io::{self, FilePrecision, Format, WriteOptions};
use latsol::lattice::Lattice;
use latsol::random;

const GRID: [usize; 4] = [2, 3, 1, 2];

fn write(name: &str, u: &GaugeField, format: Format, precision: FilePrecision) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gauge_parts");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let options = WriteOptions {
        format,
        precision,
        nersc_rows: 2,
        ensemble: None,
        creator: "tests/gauge_parts.rs".into(),
    };
    gauge_io::write(u, &path, &options).unwrap();
    path
}

/// The MILC file at `natural` rewritten in listed order: file site `i`
/// holds site `(5 i + 3) mod V` (5 is prime to the volume here), the list
/// after the header, the checksum of the permuted data.
fn listed(natural: &PathBuf, volume: usize) -> PathBuf {
    use latsol::gauge_io::milc::HEADER_BYTES;
    let bytes = std::fs::read(natural).unwrap();
    let site = 4 * 18 * 4;
    let data = &bytes[HEADER_BYTES + 8..];
    assert_eq!(data.len(), volume * site);
    let list: Vec<usize> = (0..volume).map(|i| (5 * i + 3) % volume).collect();
    let mut permuted = Vec::with_capacity(data.len());
    for &g in &list {
        permuted.extend_from_slice(&data[g * site..(g + 1) * site]);
    }
    let words = permuted
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()));
    let (s29, s31) = latsol::gauge_io::checksum::milc(words);
    let mut out = bytes[..HEADER_BYTES].to_vec();
    out[HEADER_BYTES - 4..HEADER_BYTES].copy_from_slice(&1u32.to_le_bytes());
    for &g in &list {
        out.extend_from_slice(&(g as u32).to_le_bytes());
    }
    out.extend_from_slice(&s29.to_le_bytes());
    out.extend_from_slice(&s31.to_le_bytes());
    out.extend_from_slice(&permuted);
    let path = natural.with_extension("listed");
    std::fs::write(&path, out).unwrap();
    path
}

#[test]
fn every_part_is_the_files_sites_and_the_parts_sum_to_its_checksum() {
    let lat = Arc::new(Lattice::new([4, 6, 2, 8]).unwrap());
    let u = random::hot_gauge(&lat, 5);
    let mut files: Vec<(&str, PathBuf)> = [
        ("parts.nersc", Format::Nersc, FilePrecision::Double),
        ("parts.milc", Format::Milc, FilePrecision::Single),
        ("parts.ildg", Format::Ildg, FilePrecision::Double),
        ("parts32.ildg", Format::Ildg, FilePrecision::Single),
    ]
    .into_iter()
    .map(|(name, format, precision)| (name, write(name, &u, format, precision)))
    .collect();
    files.push(("parts.milc listed", listed(&files[1].1, lat.volume())));
    for (name, path) in files {
        let (whole, info) = gauge_io::read(&path).unwrap();
        assert!(
            !name.contains("listed") || info.checks[0].contains("listed"),
            "{name}: {:?}",
            info.checks
        );
        let local = [0, 1, 2, 3].map(|mu| lat.dims()[mu] / GRID[mu]);
        let mut combined: Option<Vec<[u32; 2]>> = None;
        let mut recorded = [0; 2];
        for t in 0..GRID[3] {
            for z in 0..GRID[2] {
                for y in 0..GRID[1] {
                    for x in 0..GRID[0] {
                        let c = [x, y, z, t];
                        let part = read_part(&path, GRID, c).unwrap().expect("read in parts");
                        assert_eq!(part.dims, lat.dims());
                        recorded = part.recorded.expect("every file here has a checksum");
                        let sums: Vec<[u32; 2]> = part.partial.iter().map(|p| p.1).collect();
                        combined = Some(match combined {
                            None => sums,
                            Some(acc) => acc
                                .iter()
                                .zip(&sums)
                                .map(|(a, b)| match part.combine {
                                    Combine::Add => [a[0].wrapping_add(b[0]), 0],
                                    Combine::Xor => [a[0] ^ b[0], a[1] ^ b[1]],
                                })
                                .collect(),
                        });
                        // The encoding the file was written in is the first
                        // the header allows, or the only one (MILC).
                        let enc = part.partial[0].0;
                        let mine = part.field(enc).unwrap();
                        let origin = [0, 1, 2, 3].map(|mu| c[mu] * local[mu]);
                        for (i, s) in (0..mine.lattice().volume()).enumerate() {
                            let p = latsol::lattice::Parity::from_index(
                                s / mine.lattice().half_volume(),
                            );
                            let xl = mine.lattice().coords(p, s % mine.lattice().half_volume());
                            let g = [0, 1, 2, 3].map(|mu| origin[mu] + xl[mu]);
                            for mu in 0..4 {
                                let (a, b) = (mine.link_at(xl, mu), whole.link_at(g, mu));
                                for r in 0..3 {
                                    for k in 0..3 {
                                        assert!(
                                            (a.0[r][k] - b.0[r][k]).norm() < 1e-15,
                                            "{name}: part {c:?} site {i}"
                                        );
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        let combined = combined.unwrap();
        assert!(
            combined.contains(&recorded),
            "{name}: the parts give {combined:x?}, the file records {recorded:x?}"
        );
    }
    // A grid that does not divide the lattice is refused, naming both.
    let nersc = write("parts2.nersc", &u, Format::Nersc, FilePrecision::Double);
    let e = read_part(&nersc, [3, 1, 1, 1], [0; 4])
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("[4, 6, 2, 8]") && e.contains("[3, 1, 1, 1]"),
        "{e}"
    );
}
