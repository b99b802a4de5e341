//! Gauge configurations in the files lattice groups exchange.
//!
//! - [`nersc`]: the NERSC archive format (text header, big-endian links, the
//!   header's checksum, plaquette and link trace checked on read);
//! - [`ildg`]: ILDG files, SciDAC LIME records (`ildg-format`,
//!   `ildg-binary-data`, the `scidac-checksum` CRC-32 sums checked on read),
//!   on the record layer of [`lime`];
//! - [`milc`]: MILC's binary gauge files (version 5: single precision, either
//!   byte order, natural or listed site order, the sum29/sum31 checksums);
//! - latsol's own first format (`gauge_gen::io`: MILC-ordered f64 with a
//!   JSON sidecar), still read.
//!
//! [`read`] detects the format from the file's first bytes; [`write`] writes
//! any of the first three; [`part`] reads one rank's part of a NERSC, ILDG or
//! MILC file, with its share of the checksum. Every reader checks what the file offers: its
//! length against the dimensions, the checksum (an error naming the file and
//! both sums), the recorded plaquette and link trace, and that the links are
//! SU(3) (a wrong byte order or precision would make them not). The files
//! hold the links without boundary signs or staggered phases. Links read in
//! single precision are projected back onto SU(3) in double precision (they
//! move by no more than their rounding).
//!
//! All three store the sites in lexicographic order, x fastest and t slowest,
//! the four links of a site together (x, y, z, t), each 3×3 row-major
//! complex (`lexicographic`). Learned from Grid (`Grid/parallelIO/NerscIO.h`,
//! `IldgIO.h`, `MetaData.h`), c-lime (`lime_writer.c`, `lime_reader.c`),
//! QIO (`DML_utils.c`, `QIO_write.c`, `qioxml_ildg_record.h`), MILC
//! (`generic/io_lat4.c`, `generic/nersc_cksum.c`, `include/io_lat.h`) and
//! QDP++ (`lib/qdp_iogauge.cc`); nothing copied (docs/conventions.md,
//! "Gauge configuration files").

pub mod checksum;
pub mod ildg;
mod lexicographic;
pub mod lime;
pub mod milc;
pub mod nersc;
pub mod part;
mod read_write;
mod real;
mod record;

pub use read_write::{detect, read, write};
pub use real::{FilePrecision, RealEncoding};
pub(crate) use record::utc_now;
pub use record::{Ensemble, FileInfo, Format, WriteOptions};
