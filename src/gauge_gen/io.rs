//! Gauge configurations on disk.
//!
//! A configuration is two files:
//! - `NAME`: the links as raw little-endian f64 in the MILC order
//!   (docs/conventions.md, "Host gauge field orders": even-odd sites, the four
//!   links of a site together, each 3×3 row-major, (re, im) pairs), exactly
//!   what `layout::gauge::export` with `GaugeOrder::Milc` writes; `V·4·18`
//!   numbers, no header.
//! - `NAME.json`: a flat JSON object with the format name, the dims, β, the
//!   run's seed and sweep count, the overrelaxation steps and the plaquettes.
//!
//! Loading checks the file length against the dims and recomputes the
//! plaquette, which must agree with the sidecar's to 1e-12: a truncated,
//! reordered or corrupted file, or a sidecar of another field, is refused.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::plaquette;
use crate::error::{Error, Result};
use crate::field::GaugeField;
use crate::invalid;
use crate::lattice::Lattice;
use crate::layout::gauge::{export, import, LINK_REALS};
use crate::layout::{GaugeOrder, HostGauge, HostReals, HostRealsMut};

/// The `format` entry of the sidecar.
pub const FORMAT: &str = "latsol-gauge-v1";

/// Largest difference between the recomputed and the recorded plaquette
/// that `load` accepts: the recomputation is the same sum in the same
/// order, so only a changed field can move it by more.
pub const PLAQUETTE_TOLERANCE: f64 = 1e-12;

/// What the sidecar records about a configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigInfo {
    pub dims: [usize; 4],
    pub beta: f64,
    /// Sweeps of the run that produced the field.
    pub sweeps: u64,
    pub seed: u64,
    /// Overrelaxation sweeps per heatbath sweep.
    pub overrelax: usize,
    /// [average, spatial, temporal], as `gauge_gen::plaquette` returns.
    pub plaquette: [f64; 3],
}

/// The sidecar of a configuration file: `NAME.json` beside `NAME`.
pub fn sidecar_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".json");
    PathBuf::from(s)
}

fn io_error(path: &Path, what: &str, e: std::io::Error) -> Error {
    Error::InvalidArgument(format!("{}: cannot {what}: {e}", path.display()))
}

/// Writes `field` to `path` and its sidecar to `path.json`. The plaquette
/// recorded is recomputed here, and `info.plaquette` is ignored.
pub fn save(field: &GaugeField, info: &ConfigInfo, path: &Path) -> Result<()> {
    let lat = field.lattice();
    if info.dims != lat.dims() {
        return invalid!(
            "save: the info says dims {:?} but the field has {:?}",
            info.dims,
            lat.dims()
        );
    }
    let mut reals = vec![0.0f64; lat.volume() * 4 * LINK_REALS];
    export(
        field,
        GaugeOrder::Milc,
        &mut [HostRealsMut::F64(&mut reals)],
    )?;
    let bytes: Vec<u8> = reals.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(path, &bytes).map_err(|e| io_error(path, "write", e))?;

    let info = ConfigInfo {
        plaquette: plaquette(field),
        ..info.clone()
    };
    let side = sidecar_path(path);
    std::fs::write(&side, sidecar_text(&info, bytes.len())).map_err(|e| io_error(&side, "write", e))
}

/// Reads a configuration written by `save`, checking it (see the module doc).
pub fn load(path: &Path) -> Result<(GaugeField, ConfigInfo)> {
    let side = sidecar_path(path);
    let text = std::fs::read_to_string(&side).map_err(|e| io_error(&side, "read", e))?;
    let info = parse_sidecar(&text).map_err(|m| {
        Error::InvalidArgument(format!(
            "{}: not a latsol gauge sidecar: {m}",
            side.display()
        ))
    })?;
    let lat = Arc::new(Lattice::new(info.dims)?);
    let bytes = std::fs::read(path).map_err(|e| io_error(path, "read", e))?;
    let expected = lat.volume() * 4 * LINK_REALS * 8;
    if bytes.len() != expected {
        return invalid!(
            "{}: {} bytes, but dims {:?} need V*4*18*8 = {expected}",
            path.display(),
            bytes.len(),
            info.dims
        );
    }
    let reals: Vec<f64> = bytes
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().expect("chunks of 8")))
        .collect();
    let field = import(&lat, &HostGauge::Milc(HostReals::F64(&reals)))?;
    let p = plaquette(&field);
    if (p[0] - info.plaquette[0]).abs() > PLAQUETTE_TOLERANCE || !p[0].is_finite() {
        return invalid!(
            "{}: plaquette {} but the sidecar records {}: the file does not hold the field \
             the sidecar describes",
            path.display(),
            p[0],
            info.plaquette[0]
        );
    }
    Ok((field, info))
}

/// The sidecar: a flat JSON object, one entry a line. Floats are written
/// with Rust's shortest round-trip formatting, so they read back exactly.
fn sidecar_text(info: &ConfigInfo, bytes: usize) -> String {
    let d = info.dims;
    let [p, ps, pt] = info.plaquette;
    let mut s = String::from("{\n");
    let _ = writeln!(s, "  \"format\": \"{FORMAT}\",");
    let _ = writeln!(s, "  \"order\": \"MILC\",");
    let _ = writeln!(s, "  \"precision\": \"f64-le\",");
    let _ = writeln!(s, "  \"bytes\": {bytes},");
    let _ = writeln!(s, "  \"dims\": [{}, {}, {}, {}],", d[0], d[1], d[2], d[3]);
    let _ = writeln!(s, "  \"action\": \"wilson\",");
    let _ = writeln!(s, "  \"beta\": {:?},", info.beta);
    let _ = writeln!(s, "  \"sweeps\": {},", info.sweeps);
    let _ = writeln!(s, "  \"seed\": {},", info.seed);
    let _ = writeln!(s, "  \"overrelax\": {},", info.overrelax);
    let _ = writeln!(s, "  \"plaquette\": {p:?},");
    let _ = writeln!(s, "  \"plaquette_spatial\": {ps:?},");
    let _ = writeln!(s, "  \"plaquette_temporal\": {pt:?}");
    s.push_str("}\n");
    s
}

/// The raw text of the value of `"key"` in a flat JSON object: a string
/// without its quotes, an array with its brackets, or a number.
fn json_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let pattern = format!("\"{key}\"");
    let rest = text[text.find(&pattern)? + pattern.len()..].trim_start();
    let rest = rest.strip_prefix(':')?.trim_start();
    if let Some(s) = rest.strip_prefix('"') {
        return s.find('"').map(|e| &s[..e]);
    }
    if rest.starts_with('[') {
        return rest.find(']').map(|e| &rest[..=e]);
    }
    let end = rest.find([',', '}', '\n']).unwrap_or(rest.len());
    Some(rest[..end].trim())
}

fn parse_sidecar(text: &str) -> std::result::Result<ConfigInfo, String> {
    let get = |key: &str| json_value(text, key).ok_or(format!("no \"{key}\""));
    fn num<T: std::str::FromStr>(key: &str, v: &str) -> std::result::Result<T, String> {
        v.parse()
            .map_err(|_| format!("\"{key}\": cannot read '{v}'"))
    }
    let format = get("format")?;
    if format != FORMAT {
        return Err(format!("format '{format}', expected '{FORMAT}'"));
    }
    for (key, want) in [("order", "MILC"), ("precision", "f64-le")] {
        let v = get(key)?;
        if v != want {
            return Err(format!("\"{key}\" is '{v}', only '{want}' is supported"));
        }
    }
    let dims_text = get("dims")?;
    let dims: Vec<usize> = dims_text
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split(',')
        .map(|v| num("dims", v.trim()))
        .collect::<std::result::Result<_, _>>()?;
    let dims: [usize; 4] = dims
        .try_into()
        .map_err(|_| format!("\"dims\": {dims_text} is not four extents"))?;
    Ok(ConfigInfo {
        dims,
        beta: num("beta", get("beta")?)?,
        sweeps: num("sweeps", get("sweeps")?)?,
        seed: num("seed", get("seed")?)?,
        overrelax: num("overrelax", get("overrelax")?)?,
        plaquette: [
            num("plaquette", get("plaquette")?)?,
            num("plaquette_spatial", get("plaquette_spatial")?)?,
            num("plaquette_temporal", get("plaquette_temporal")?)?,
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sidecar_round_trips() {
        let info = ConfigInfo {
            dims: [4, 6, 2, 8],
            beta: 5.85,
            sweeps: 1234,
            seed: u64::MAX,
            overrelax: 4,
            plaquette: [0.575_123_456_789_012_3, 0.1 + 0.2, 1.0 / 3.0],
        };
        let text = sidecar_text(&info, 99);
        assert_eq!(parse_sidecar(&text).unwrap(), info);
        // "plaquette" must not be read from "plaquette_spatial".
        assert_eq!(json_value(&text, "plaquette"), Some("0.5751234567890123"));
    }

    #[test]
    fn foreign_sidecars_are_refused() {
        let info = ConfigInfo {
            dims: [4, 4, 4, 4],
            beta: 6.0,
            sweeps: 1,
            seed: 1,
            overrelax: 4,
            plaquette: [0.5; 3],
        };
        let text = sidecar_text(&info, 1);
        for (from, to) in [
            (FORMAT, "other-v9"),
            ("\"MILC\"", "\"QDP\""),
            ("[4, 4, 4, 4]", "[4, 4, 4]"),
            ("\"beta\": 6.0", "\"beta\": six"),
        ] {
            let bad = text.replace(from, to);
            assert!(parse_sidecar(&bad).is_err(), "{bad}");
        }
    }
}
