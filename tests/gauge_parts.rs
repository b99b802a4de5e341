//! A gauge file read in parts, as the ranks of a grid read it
//! (`gauge_io::part`), here all parts in one process: every part's sites
//! are the whole file's, and the parts' checksums, combined as the ranks
//! combine them (NERSC summed modulo 2³², MILC XORed), are the file's. ILDG
//! files are not read in parts (`None`).

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

#[test]
fn every_part_is_the_files_sites_and_the_parts_sum_to_its_checksum() {
    let lat = Arc::new(Lattice::new([4, 6, 2, 8]).unwrap());
    let u = random::hot_gauge(&lat, 5);
    for (name, format, precision) in [
        ("parts.nersc", Format::Nersc, FilePrecision::Double),
        ("parts.milc", Format::Milc, FilePrecision::Single),
    ] {
        let path = write(name, &u, format, precision);
        let (whole, _) = gauge_io::read(&path).unwrap();
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
                        recorded = part.recorded;
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
    let ildg = write("parts.ildg", &u, Format::Ildg, FilePrecision::Double);
    assert!(read_part(&ildg, GRID, [0; 4]).unwrap().is_none());
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
