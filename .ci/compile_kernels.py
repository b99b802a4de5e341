#!/usr/bin/env python3
"""Compiles every CUDA source in kernels/ with NVRTC, as the library does at
run time, for each architecture CI checks (sm_80, sm_90); no GPU needed.

NVRTC comes from the PyPI wheel `nvidia-cuda-nvrtc-cu12` (`pip install
nvidia-cuda-nvrtc-cu12`), called through ctypes. The options are read from
kernels/options.txt, the file the library embeds (src/backend/cuda/driver/modules.rs),
plus `--gpu-architecture=sm_XY`; every kernels/*.cuh is given to NVRTC as an
in-memory header, as the library does. Exits non-zero, printing NVRTC's log,
if any file fails to compile or yields no PTX.

Usage: python3 .ci/compile_kernels.py [--arch sm_80 --arch sm_90] [--out DIR] [--only FILE.cu]
"""
import argparse
import concurrent.futures
import ctypes
import glob
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = os.path.join(ROOT, "kernels")


def load_nvrtc():
    """The libnvrtc of the nvidia-cuda-nvrtc-cu12 wheel (or LATSOL_NVRTC_LIB)."""
    explicit = os.environ.get("LATSOL_NVRTC_LIB")
    candidates = [explicit] if explicit else []
    try:
        import nvidia.cuda_nvrtc as wheel  # namespace package of the wheel

        for base in wheel.__path__:
            candidates += sorted(glob.glob(os.path.join(base, "lib", "libnvrtc.so.*[0-9]")))
    except ImportError:
        pass
    candidates = [c for c in candidates if c and ".alt." not in c and "builtins" not in c]
    for path in candidates:
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            print(f"cannot load {path}: {e}", file=sys.stderr)
    sys.exit("no libnvrtc found: pip install nvidia-cuda-nvrtc-cu12 (or set LATSOL_NVRTC_LIB)")


def check(lib, status, what):
    if status != 0:
        lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        raise RuntimeError(f"{what}: {lib.nvrtcGetErrorString(status).decode()}")


def compile_one(lib, name, source, headers, options):
    """Returns (ok, log, ptx_bytes)."""
    prog = ctypes.c_void_p()
    hnames = list(headers)
    hsrc = (ctypes.c_char_p * len(hnames))(*[headers[h].encode() for h in hnames])
    hinc = (ctypes.c_char_p * len(hnames))(*[h.encode() for h in hnames])
    check(lib, lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(),
                                      len(hnames), hsrc, hinc), "nvrtcCreateProgram")
    try:
        opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
        status = lib.nvrtcCompileProgram(prog, len(options), opts)
        size = ctypes.c_size_t()
        check(lib, lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size)), "nvrtcGetProgramLogSize")
        buf = ctypes.create_string_buffer(size.value)
        check(lib, lib.nvrtcGetProgramLog(prog, buf), "nvrtcGetProgramLog")
        log = buf.value.decode(errors="replace")
        if status != 0:
            return False, log, b""
        check(lib, lib.nvrtcGetPTXSize(prog, ctypes.byref(size)), "nvrtcGetPTXSize")
        ptx = ctypes.create_string_buffer(size.value)
        check(lib, lib.nvrtcGetPTX(prog, ptx), "nvrtcGetPTX")
        return True, log, ptx.raw.rstrip(b"\0")
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


# Kernels that may read before they wait for the previous kernel (kernels/
# core.cuh, `kernel_entry`), and how many loads: the half hopping terms load
# the stored words of their first forward links first (kernels/
# wilson_dslash.cuh, `links_first`; kernels/wilson_dslash_f16.cu):
# reconstruct 12 those of x, y and z, three 8-byte rows each (its wide
# small-volume form, kernels/wilson_dslash_f16_small.cu, those of x and y),
# reconstruct 8 all four, two rows each. Every other kernel waits before its
# first load.
LOADS_BEFORE_WAIT = {
    "wilson_dslash_f16_r12": 9,
    "wilson_dslash_f16_r12_wide": 6,
    "wilson_dslash_f16_r8": 8,
    "wilson_dslash_f16_r8_wide": 8,
}


def loads_before_wait(ptx):
    """(kernel, number of global loads before its first griddepcontrol.wait)
    for every kernel of an sm_90 PTX text."""
    found = []
    for part in ptx.decode(errors="replace").split(".entry ")[1:]:
        name = part[: part.index("(")].strip()
        head = part.split("griddepcontrol.wait", 1)[0]
        found.append((name, head.count("ld.global")))
    return found


def wait_errors(ptx):
    """Kernels whose loads before the wait are not those LOADS_BEFORE_WAIT allows."""
    errors = []
    for name, loads in loads_before_wait(ptx):
        family = name.replace("_dag", "").replace("_xpay", "")
        expected = 0 if name.endswith("_split") else LOADS_BEFORE_WAIT.get(family, 0)
        if loads != expected:
            errors.append(f"{name}: {loads} global loads before griddepcontrol.wait, {expected} allowed")
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", action="append", help="sm_XY (repeatable); default sm_80 and sm_90")
    ap.add_argument("--out", help="write the PTX files here")
    ap.add_argument("--only", action="append", help="compile this kernels/ file only (repeatable)")
    args = ap.parse_args()
    archs = args.arch or ["sm_80", "sm_90"]

    lib, path = load_nvrtc()
    major, minor = ctypes.c_int(), ctypes.c_int()
    check(lib, lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
    print(f"NVRTC {major.value}.{minor.value} from {path}")

    with open(os.path.join(KERNELS, "options.txt")) as f:
        base_options = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    headers = {}
    for h in sorted(glob.glob(os.path.join(KERNELS, "*.cuh"))):
        with open(h) as f:
            headers[os.path.basename(h)] = f.read()
    sources = sorted(glob.glob(os.path.join(KERNELS, "*.cu")))
    if args.only:
        sources = [s for s in sources if os.path.basename(s) in args.only]
    if not sources:
        sys.exit(f"no kernels/*.cu found under {KERNELS}")

    # Every (architecture, source) pair at once, one thread per core: NVRTC
    # compiles separate programs concurrently, and ctypes releases the GIL
    # during the call.
    def job(arch, src):
        options = base_options + [f"--gpu-architecture={arch}"]
        with open(src) as f:
            text = f.read()
        t0 = time.perf_counter()
        ok, log, ptx = compile_one(lib, os.path.basename(src), text, headers, options)
        return arch, src, options, ok, log, ptx, time.perf_counter() - t0

    # The edges' sources of a cut lattice (wilson_edges_*, staggered_edges)
    # and the several-field ones (wilson_rhs_*, staggered_rhs) instantiate the hopping
    # terms' code once more: compiled for the last architecture only, which
    # checks them as well and keeps CI's time.
    def wanted(arch, src):
        name = os.path.basename(src)
        again = "_edges" in name or name.startswith(("wilson_rhs_", "staggered_rhs"))
        return not again or arch == archs[-1]

    jobs = [(arch, src) for arch in archs for src in sources if wanted(arch, src)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        results = list(pool.map(lambda j: job(*j), jobs))

    failures = 0
    for arch, src, options, ok, log, ptx, seconds in results:
        name = os.path.basename(src)
        entries = ptx.count(b".entry") if ok else 0
        errors = wait_errors(ptx) if ok and arch == "sm_90" else []
        if ok and entries > 0 and not errors:
            print(f"ok   {arch} {name}: {entries} kernels, {len(ptx)} bytes of PTX, {seconds:.1f} s")
            if log.strip():
                print(log)
            if args.out:
                os.makedirs(args.out, exist_ok=True)
                with open(os.path.join(args.out, f"{name[:-3]}.{arch}.ptx"), "wb") as f:
                    f.write(ptx)
        else:
            failures += 1
            why = "\n".join(errors) or log
            print(f"FAIL {arch} {name} (options: {' '.join(options)})\n{why}", file=sys.stderr)
    if failures:
        sys.exit(f"{failures} compilation(s) failed")


if __name__ == "__main__":
    main()
