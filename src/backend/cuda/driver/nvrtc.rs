//! NVRTC, loaded with `dlopen` (not through cudarc, whose loader panics when
//! the library is missing and does not know CUDA 13's soname), and the
//! probe for the driver library. Compiles the embedded `kernels/*.cu` to a
//! cubin for the device's architecture, or to PTX for the newest
//! architecture this NVRTC knows when the device is newer still.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

use crate::error::{Error, Result};

/// Sonames tried for the driver, in order.
pub const CUDA_SONAMES: &[&str] = &["libcuda.so.1", "libcuda.so"];
/// Sonames tried for NVRTC, newest first.
pub const NVRTC_SONAMES: &[&str] = &[
    "libnvrtc.so.13",
    "libnvrtc.so.12",
    "libnvrtc.so.11.2",
    "libnvrtc.so",
];

/// `dlopen`s the first loadable name; the error lists every `dlerror`.
fn dlopen_first(
    names: &'static [&'static str],
) -> std::result::Result<(*mut c_void, &'static str), String> {
    let mut why = Vec::new();
    for &name in names {
        let c = CString::new(name).expect("soname without NUL");
        // SAFETY: plain dlopen of a shared library by name.
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if !h.is_null() {
            return Ok((h, name));
        }
        // SAFETY: dlerror returns a thread-local C string or null.
        let e = unsafe { libc::dlerror() };
        let msg = if e.is_null() {
            "not found".to_string()
        } else {
            unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
        };
        why.push(format!("{name}: {msg}"));
    }
    Err(why.join("; "))
}

/// Whether the CUDA driver library can be loaded; `NoDevice` says why not.
/// The handle is kept open (cudarc loads the same library afterwards).
pub fn probe_driver() -> Result<&'static str> {
    static PROBE: OnceLock<std::result::Result<&'static str, String>> = OnceLock::new();
    PROBE
        .get_or_init(|| dlopen_first(CUDA_SONAMES).map(|(_, n)| n))
        .clone()
        .map_err(|why| {
            Error::NoDevice(format!(
                "no NVIDIA driver library (libcuda) could be loaded: {why}"
            ))
        })
}

type Prog = *mut c_void;

type Status = c_int;
type VersionFn = unsafe extern "C" fn(*mut c_int, *mut c_int) -> Status;
type CreateFn = unsafe extern "C" fn(
    *mut Prog,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> Status;
type CompileFn = unsafe extern "C" fn(Prog, c_int, *const *const c_char) -> Status;
type DestroyFn = unsafe extern "C" fn(*mut Prog) -> Status;
type SizeFn = unsafe extern "C" fn(Prog, *mut usize) -> Status;
type GetFn = unsafe extern "C" fn(Prog, *mut c_char) -> Status;
type CountFn = unsafe extern "C" fn(*mut c_int) -> Status;
type ErrorStringFn = unsafe extern "C" fn(Status) -> *const c_char;

/// The NVRTC entry points the backend uses (signatures of nvrtc.h).
struct Api {
    soname: &'static str,
    version: VersionFn,
    create: CreateFn,
    compile: CompileFn,
    destroy: DestroyFn,
    log_size: SizeFn,
    log: GetFn,
    cubin_size: SizeFn,
    cubin: GetFn,
    ptx_size: SizeFn,
    ptx: GetFn,
    num_archs: CountFn,
    archs: CountFn,
    error_string: ErrorStringFn,
}

// SAFETY: the table holds plain function pointers into a library that is
// never unloaded.
unsafe impl Send for Api {}
unsafe impl Sync for Api {}

fn load_api() -> std::result::Result<Api, String> {
    let (h, soname) = dlopen_first(NVRTC_SONAMES)?;
    macro_rules! sym {
        ($name:literal, $ty:ty) => {{
            let c = CString::new($name).unwrap();
            // SAFETY: dlsym on a live handle; the symbol's C signature is
            // the one the field's type states (nvrtc.h).
            let p = unsafe { libc::dlsym(h, c.as_ptr()) };
            if p.is_null() {
                return Err(format!("{soname} lacks {}", $name));
            }
            unsafe { std::mem::transmute::<*mut c_void, $ty>(p) }
        }};
    }
    Ok(Api {
        soname,
        version: sym!("nvrtcVersion", VersionFn),
        create: sym!("nvrtcCreateProgram", CreateFn),
        compile: sym!("nvrtcCompileProgram", CompileFn),
        destroy: sym!("nvrtcDestroyProgram", DestroyFn),
        log_size: sym!("nvrtcGetProgramLogSize", SizeFn),
        log: sym!("nvrtcGetProgramLog", GetFn),
        cubin_size: sym!("nvrtcGetCUBINSize", SizeFn),
        cubin: sym!("nvrtcGetCUBIN", GetFn),
        ptx_size: sym!("nvrtcGetPTXSize", SizeFn),
        ptx: sym!("nvrtcGetPTX", GetFn),
        num_archs: sym!("nvrtcGetNumSupportedArchs", CountFn),
        archs: sym!("nvrtcGetSupportedArchs", CountFn),
        error_string: sym!("nvrtcGetErrorString", ErrorStringFn),
    })
}

fn api() -> Result<&'static Api> {
    static API: OnceLock<std::result::Result<Api, String>> = OnceLock::new();
    API.get_or_init(load_api)
        .as_ref()
        .map_err(|why| Error::NoDevice(format!("NVRTC could not be loaded: {why}")))
}

/// What a compilation produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Image {
    /// Machine code for the device's architecture.
    Cubin(Vec<u8>),
    /// PTX (NUL-terminated) for the driver to finish, when the device is newer than NVRTC.
    Ptx(Vec<u8>),
}

impl Image {
    pub fn bytes(&self) -> &[u8] {
        match self {
            Image::Cubin(b) | Image::Ptx(b) => b,
        }
    }
}

/// The loaded NVRTC.
#[derive(Clone, Copy)]
pub struct Nvrtc {
    api: &'static Api,
}

impl Nvrtc {
    pub fn load() -> Result<Nvrtc> {
        Ok(Nvrtc { api: api()? })
    }

    pub fn soname(&self) -> &'static str {
        self.api.soname
    }

    pub fn version(&self) -> Result<(i32, i32)> {
        let (mut a, mut b) = (0, 0);
        self.check(
            unsafe { (self.api.version)(&mut a, &mut b) },
            "nvrtcVersion",
        )?;
        Ok((a, b))
    }

    /// Compute capabilities (as 10 major + minor) this NVRTC compiles for.
    pub fn supported_archs(&self) -> Result<Vec<i32>> {
        let mut n = 0;
        self.check(
            unsafe { (self.api.num_archs)(&mut n) },
            "nvrtcGetNumSupportedArchs",
        )?;
        let mut v = vec![0; n.max(0) as usize];
        self.check(
            unsafe { (self.api.archs)(v.as_mut_ptr()) },
            "nvrtcGetSupportedArchs",
        )?;
        Ok(v)
    }

    fn check(&self, status: c_int, what: &str) -> Result<()> {
        if status == 0 {
            return Ok(());
        }
        let s = unsafe { (self.api.error_string)(status) };
        let msg = if s.is_null() {
            format!("status {status}")
        } else {
            unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
        };
        Err(Error::Device(format!("{what}: {msg}")))
    }

    /// Compiles `source` (named `name`, with in-memory `headers` as
    /// (include name, text)) with `options`; a cubin when `cubin`, else PTX.
    pub fn compile(
        &self,
        name: &str,
        source: &str,
        headers: &[(&str, &str)],
        options: &[String],
        cubin: bool,
    ) -> Result<Image> {
        let cstr = |s: &str| {
            CString::new(s).map_err(|_| Error::Internal(format!("NUL in kernel text {name}")))
        };
        let (src, cname) = (cstr(source)?, cstr(name)?);
        let hsrc = headers
            .iter()
            .map(|h| cstr(h.1))
            .collect::<Result<Vec<_>>>()?;
        let hname = headers
            .iter()
            .map(|h| cstr(h.0))
            .collect::<Result<Vec<_>>>()?;
        let opts = options
            .iter()
            .map(|o| cstr(o))
            .collect::<Result<Vec<_>>>()?;
        let hsrc_p: Vec<_> = hsrc.iter().map(|c| c.as_ptr()).collect();
        let hname_p: Vec<_> = hname.iter().map(|c| c.as_ptr()).collect();
        let opts_p: Vec<_> = opts.iter().map(|c| c.as_ptr()).collect();

        let mut prog: Prog = std::ptr::null_mut();
        self.check(
            unsafe {
                (self.api.create)(
                    &mut prog,
                    src.as_ptr(),
                    cname.as_ptr(),
                    headers.len() as c_int,
                    hsrc_p.as_ptr(),
                    hname_p.as_ptr(),
                )
            },
            "nvrtcCreateProgram",
        )?;
        // The program is destroyed on every path below.
        struct Guard<'a>(&'a Api, Prog);
        impl Drop for Guard<'_> {
            fn drop(&mut self) {
                unsafe { (self.0.destroy)(&mut self.1) };
            }
        }
        let guard = Guard(self.api, prog);

        let status = unsafe { (self.api.compile)(guard.1, opts_p.len() as c_int, opts_p.as_ptr()) };
        if status != 0 {
            let log = self.log(guard.1).unwrap_or_default();
            return Err(Error::Device(format!(
                "NVRTC failed to compile {name} (options {}): {log}",
                options.join(" ")
            )));
        }
        let (size_fn, get_fn, what) = if cubin {
            (self.api.cubin_size, self.api.cubin, "nvrtcGetCUBIN")
        } else {
            (self.api.ptx_size, self.api.ptx, "nvrtcGetPTX")
        };
        let mut size = 0usize;
        self.check(unsafe { size_fn(guard.1, &mut size) }, what)?;
        let mut buf = vec![0u8; size];
        self.check(
            unsafe { get_fn(guard.1, buf.as_mut_ptr() as *mut c_char) },
            what,
        )?;
        Ok(if cubin {
            Image::Cubin(buf)
        } else {
            Image::Ptx(buf)
        })
    }

    fn log(&self, prog: Prog) -> Result<String> {
        let mut size = 0usize;
        self.check(
            unsafe { (self.api.log_size)(prog, &mut size) },
            "nvrtcGetProgramLogSize",
        )?;
        let mut buf = vec![0u8; size.max(1)];
        self.check(
            unsafe { (self.api.log)(prog, buf.as_mut_ptr() as *mut c_char) },
            "nvrtcGetProgramLog",
        )?;
        Ok(String::from_utf8_lossy(&buf)
            .trim_end_matches('\0')
            .to_string())
    }
}

/// The compilation target for a device of compute capability `cc`
/// (10 major + minor): `(arch option, cubin?)`. A cubin for the device's
/// own architecture when NVRTC knows it; otherwise PTX for the newest
/// architecture NVRTC knows below it, which the driver compiles on load.
pub fn target(cc: i32, supported: &[i32]) -> Result<(String, bool)> {
    if supported.contains(&cc) {
        return Ok((format!("--gpu-architecture=sm_{cc}"), true));
    }
    match supported.iter().copied().filter(|&a| a <= cc).max() {
        Some(a) => Ok((format!("--gpu-architecture=compute_{a}"), false)),
        None => Err(Error::NoDevice(format!(
            "this NVRTC cannot compile for compute capability {}.{} (it knows {supported:?})",
            cc / 10,
            cc % 10
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_prefers_a_cubin_for_the_device() {
        let known = [75, 80, 86, 89, 90, 100, 120];
        assert_eq!(
            target(90, &known).unwrap(),
            ("--gpu-architecture=sm_90".into(), true)
        );
        assert_eq!(
            target(103, &known).unwrap(),
            ("--gpu-architecture=compute_100".into(), false)
        );
        assert!(matches!(target(70, &known), Err(Error::NoDevice(_))));
    }
}
