//! IEEE reals as the files store them: 32 or 64 bits, either byte order.

use crate::error::Result;

/// Precision of the links in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilePrecision {
    Single,
    Double,
}

impl FilePrecision {
    pub fn bytes(self) -> usize {
        match self {
            FilePrecision::Single => 4,
            FilePrecision::Double => 8,
        }
    }

    pub fn bits(self) -> usize {
        8 * self.bytes()
    }
}

impl std::str::FromStr for FilePrecision {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "single" | "32" | "f32" => Ok(FilePrecision::Single),
            "double" | "64" | "f64" => Ok(FilePrecision::Double),
            _ => Err(format!("unknown file precision '{s}' (single, double)")),
        }
    }
}

/// A precision and a byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RealEncoding {
    pub precision: FilePrecision,
    pub big_endian: bool,
}

impl RealEncoding {
    pub const fn big(precision: FilePrecision) -> RealEncoding {
        RealEncoding {
            precision,
            big_endian: true,
        }
    }

    pub const fn little(precision: FilePrecision) -> RealEncoding {
        RealEncoding {
            precision,
            big_endian: false,
        }
    }

    /// The reals of `bytes` (a whole number of them).
    pub fn decode(self, bytes: &[u8]) -> Result<Vec<f64>> {
        let n = bytes.len() / self.precision.bytes();
        let mut out = crate::alloc::with_capacity(n, "the links read from the file")?;
        match (self.precision, self.big_endian) {
            (FilePrecision::Single, big) => out.extend(bytes.chunks_exact(4).map(|b| {
                let b = [b[0], b[1], b[2], b[3]];
                f64::from(if big {
                    f32::from_be_bytes(b)
                } else {
                    f32::from_le_bytes(b)
                })
            })),
            (FilePrecision::Double, big) => out.extend(bytes.chunks_exact(8).map(|b| {
                let b: [u8; 8] = b.try_into().expect("chunks of 8");
                if big {
                    f64::from_be_bytes(b)
                } else {
                    f64::from_le_bytes(b)
                }
            })),
        }
        Ok(out)
    }

    /// `reals` in this encoding, appended to `out` (single precision rounds
    /// to nearest).
    pub fn encode(self, reals: &[f64], out: &mut Vec<u8>) {
        for &x in reals {
            match (self.precision, self.big_endian) {
                (FilePrecision::Single, true) => out.extend((x as f32).to_be_bytes()),
                (FilePrecision::Single, false) => out.extend((x as f32).to_le_bytes()),
                (FilePrecision::Double, true) => out.extend(x.to_be_bytes()),
                (FilePrecision::Double, false) => out.extend(x.to_le_bytes()),
            }
        }
    }

    /// The 32-bit words of `bytes` as the host reads the stored numbers: a
    /// word of a single, or the low then the high half of a double's bits
    /// (the checksums of NERSC and MILC sum or rotate these).
    pub fn words(self, bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
        let big = self.big_endian;
        let double = self.precision == FilePrecision::Double;
        let step = self.precision.bytes();
        bytes.chunks_exact(step).flat_map(move |b| {
            if double {
                let b: [u8; 8] = b.try_into().expect("chunks of 8");
                let bits = if big {
                    u64::from_be_bytes(b)
                } else {
                    u64::from_le_bytes(b)
                };
                [bits as u32, (bits >> 32) as u32, 0].into_iter().take(2)
            } else {
                let b = [b[0], b[1], b[2], b[3]];
                let w = if big {
                    u32::from_be_bytes(b)
                } else {
                    u32::from_le_bytes(b)
                };
                [w, 0, 0].into_iter().take(1)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_encoding_round_trips_and_words_are_the_host_words() {
        let reals = [1.0, -0.5, 0.1234567890123, 3.0e-5];
        for precision in [FilePrecision::Single, FilePrecision::Double] {
            for big in [false, true] {
                let enc = RealEncoding {
                    precision,
                    big_endian: big,
                };
                let mut bytes = Vec::new();
                enc.encode(&reals, &mut bytes);
                assert_eq!(bytes.len(), reals.len() * precision.bytes());
                let back = enc.decode(&bytes).unwrap();
                for (a, b) in reals.iter().zip(&back) {
                    let tol = if precision == FilePrecision::Single {
                        1e-7 * a.abs()
                    } else {
                        0.0
                    };
                    assert!((a - b).abs() <= tol, "{enc:?}: {a} -> {b}");
                }
                let words: Vec<u32> = enc.words(&bytes).collect();
                let expect: Vec<u32> = back
                    .iter()
                    .flat_map(|&x| match precision {
                        FilePrecision::Single => vec![(x as f32).to_bits()],
                        FilePrecision::Double => {
                            vec![x.to_bits() as u32, (x.to_bits() >> 32) as u32]
                        }
                    })
                    .collect();
                assert_eq!(words, expect, "{enc:?}");
            }
        }
    }
}
