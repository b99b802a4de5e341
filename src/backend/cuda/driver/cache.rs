//! The on-disk cache of compiled kernel modules and tuned launch parameters,
//! so that a second start compiles and tunes nothing (issue 3).
//!
//! Location: `$LATSOL_CACHE_DIR`, else `$XDG_CACHE_HOME/latsol`, else
//! `~/.cache/latsol`. A module is stored as `<module>-<key>.<cubin|ptx>`,
//! the key a 64-bit FNV-1a hash of everything that changes the machine code:
//! source and headers, architecture, options and the NVRTC version. Files are
//! written atomically (a temporary file in the same folder, then a rename),
//! so a concurrent or interrupted writer never leaves a torn file. A cache
//! that cannot be created is not an error: the backend then compiles at
//! every start.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// 64-bit FNV-1a over a sequence of byte strings, each followed by its
/// length so that ("ab", "c") and ("a", "bc") differ. Stable across Rust
/// versions and platforms, unlike `DefaultHasher`.
#[derive(Debug, Clone, Copy)]
pub struct KeyHasher(u64);

impl Default for KeyHasher {
    fn default() -> Self {
        KeyHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl KeyHasher {
    pub fn add(&mut self, bytes: &[u8]) -> &mut Self {
        for &b in bytes.iter().chain(&(bytes.len() as u64).to_le_bytes()) {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self
    }
    pub fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

/// The key of a compiled module.
pub fn module_key(
    source: &str,
    headers: &[(&str, &str)],
    options: &[String],
    nvrtc_version: (i32, i32),
) -> String {
    let mut h = KeyHasher::default();
    h.add(source.as_bytes());
    for (name, text) in headers {
        h.add(name.as_bytes()).add(text.as_bytes());
    }
    // The architecture is one of the options.
    for o in options {
        h.add(o.as_bytes());
    }
    h.add(&nvrtc_version.0.to_le_bytes())
        .add(&nvrtc_version.1.to_le_bytes());
    h.hex()
}

/// The cache folder from the environment (not created here).
pub fn default_dir() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("LATSOL_CACHE_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("latsol")))
        .or_else(|| env("HOME").map(|d| d.join(".cache").join("latsol")))
}

/// Writes `bytes` to `path` atomically: a unique temporary file beside it,
/// then a rename over the target.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let tmp = dir.join(format!(
        ".{}.tmp.{}.{nanos}",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("latsol"),
        std::process::id()
    ));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The cache folder, if usable.
#[derive(Debug, Clone)]
pub struct DiskCache {
    dir: Option<PathBuf>,
}

impl DiskCache {
    /// Opens (creating it if needed) `dir`; an unusable folder gives a cache
    /// that stores nothing.
    pub fn open(dir: Option<PathBuf>) -> DiskCache {
        let dir = dir.filter(|d| std::fs::create_dir_all(d).is_ok());
        DiskCache { dir }
    }

    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    fn module_path(&self, module: &str, key: &str, ext: &str) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(format!("{module}-{key}.{ext}")))
    }

    /// A cached module image, if present.
    pub fn load_module(&self, module: &str, key: &str, ext: &str) -> Option<Vec<u8>> {
        let bytes = std::fs::read(self.module_path(module, key, ext)?).ok()?;
        (!bytes.is_empty()).then_some(bytes)
    }

    /// Stores a module image; failures only cost a recompilation later.
    pub fn store_module(&self, module: &str, key: &str, ext: &str, bytes: &[u8]) -> bool {
        match self.module_path(module, key, ext) {
            Some(p) => write_atomic(&p, bytes).is_ok(),
            None => false,
        }
    }

    /// The file of tuned launch parameters for one device.
    pub fn tune_path(&self, device_key: &str) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(format!("tune-{device_key}.txt")))
    }
}

/// Tuned block sizes: `key → block`, stored one `key block` per line.
pub fn parse_tune_table(text: &str) -> BTreeMap<String, u32> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let (k, v) = (it.next()?, it.next()?);
            Some((k.to_string(), v.parse().ok().filter(|&b: &u32| b > 0)?))
        })
        .collect()
}

pub fn format_tune_table(table: &BTreeMap<String, u32>) -> String {
    table.iter().map(|(k, v)| format!("{k} {v}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(src: &str, hdr: &str, arch: &str, opt: &str, ver: (i32, i32)) -> String {
        module_key(
            src,
            &[("core.cuh", hdr)],
            &[opt.to_string(), arch.to_string()],
            ver,
        )
    }

    #[test]
    fn every_input_changes_the_key() {
        let base = key("s", "h", "sm_90", "-O3", (12, 9));
        for other in [
            key("s2", "h", "sm_90", "-O3", (12, 9)),
            key("s", "h2", "sm_90", "-O3", (12, 9)),
            key("s", "h", "sm_80", "-O3", (12, 9)),
            key("s", "h", "sm_90", "-O2", (12, 9)),
            key("s", "h", "sm_90", "-O3", (13, 0)),
        ] {
            assert_ne!(base, other);
        }
        assert_eq!(base, key("s", "h", "sm_90", "-O3", (12, 9)));
        assert_eq!(base.len(), 16);
    }

    #[test]
    fn boundaries_between_inputs_matter() {
        let mut a = KeyHasher::default();
        a.add(b"ab").add(b"c");
        let mut b = KeyHasher::default();
        b.add(b"a").add(b"bc");
        assert_ne!(a.hex(), b.hex());
    }

    #[test]
    fn modules_and_tune_tables_round_trip_on_disk() {
        let dir = std::env::temp_dir().join(format!("latsol-cache-test-{}", std::process::id()));
        let cache = DiskCache::open(Some(dir.clone()));
        assert!(cache.dir().is_some());
        assert_eq!(cache.load_module("m", "k", "cubin"), None);
        assert!(cache.store_module("m", "k", "cubin", b"\x7fELF"));
        assert_eq!(
            cache.load_module("m", "k", "cubin").as_deref(),
            Some(&b"\x7fELF"[..])
        );
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");

        let mut t = BTreeMap::new();
        t.insert("wilson_dslash_f64_r18:8192".to_string(), 128u32);
        t.insert("blas_axpy_f32:1024".to_string(), 256u32);
        assert_eq!(parse_tune_table(&format_tune_table(&t)), t);
        assert_eq!(parse_tune_table("garbage\nk 0\nk2 x\n"), BTreeMap::new());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unusable_folder_gives_a_cache_that_stores_nothing() {
        let cache = DiskCache::open(Some(PathBuf::from("/proc/latsol-no-such-dir")));
        assert!(cache.dir().is_none());
        assert!(!cache.store_module("m", "k", "ptx", b"x"));
    }
}
