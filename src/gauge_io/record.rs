//! What a gauge file records and how one is written: its `Format`, the
//! `Ensemble` and `FileInfo` read from it, the `WriteOptions`, and the
//! creation date the writers stamp.

use super::real::FilePrecision;

/// A gauge configuration file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Nersc,
    Ildg,
    Milc,
    /// latsol's first format: MILC-ordered little-endian f64 and a JSON
    /// sidecar `NAME.json` (`gauge_gen::io`), read only.
    LatsolV1,
}

impl Format {
    /// The file name extension the writers use.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Nersc => "nersc",
            Format::Ildg => "ildg",
            Format::Milc => "milc",
            Format::LatsolV1 => "latsol",
        }
    }
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "nersc" => Ok(Format::Nersc),
            "ildg" | "lime" | "scidac" => Ok(Format::Ildg),
            "milc" => Ok(Format::Milc),
            _ => Err(format!(
                "unknown gauge file format '{s}' (nersc, ildg, milc)"
            )),
        }
    }
}

/// How a Markov chain of latsol-heatbath produced a field: recorded by the
/// writers (NERSC header keys `LATSOL_*`, the ILDG file's `scidac-file-xml`)
/// so that a run can resume from the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Ensemble {
    pub beta: f64,
    pub seed: u64,
    /// Sweeps of the chain so far (NERSC `SEQUENCE_NUMBER`).
    pub sweeps: u64,
    /// Overrelaxation sweeps per heatbath sweep.
    pub overrelax: usize,
}

/// What a reader found and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct FileInfo {
    pub format: Format,
    pub dims: [usize; 4],
    /// Precision of the stored links.
    pub precision: FilePrecision,
    /// The plaquette of the field read, `Re tr U_p / 3` averaged (1 for unit links).
    pub plaquette: f64,
    /// The checks made, one line each ("NERSC checksum 1a2b3c4d matches").
    pub checks: Vec<String>,
    /// The chain that wrote the field, when the file records it.
    pub ensemble: Option<Ensemble>,
}

/// What to write.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteOptions {
    pub format: Format,
    pub precision: FilePrecision,
    /// NERSC only: store all three rows (`4D_SU3_GAUGE_3x3`) or the first two
    /// (`4D_SU3_GAUGE`, the third rebuilt on read).
    pub nersc_rows: usize,
    pub ensemble: Option<Ensemble>,
    /// The program that writes (NERSC `CREATOR`, ILDG `scidac-file-xml`).
    pub creator: String,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            format: Format::Nersc,
            precision: FilePrecision::Double,
            nersc_rows: 3,
            ensemble: None,
            creator: format!("latsol {}", env!("CARGO_PKG_VERSION")),
        }
    }
}

/// Today's date and time in UTC, `YYYY-MM-DD hh:mm:ss UTC`, for the files'
/// creation dates.
pub(crate) fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (the proleptic Gregorian
    // calendar's 400-year cycle of 146097 days, years starting in March).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_date_is_a_plausible_one() {
        let d = utc_now();
        let year: i64 = d[..4].parse().unwrap();
        assert!((2024..2200).contains(&year), "{d}");
        assert_eq!(d.len(), "2026-11-23 21:28:26 UTC".len(), "{d}");
    }
}
