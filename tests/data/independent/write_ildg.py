"""ILDG/SciDAC LIME writer assembled from registry code:
   - LIME record framing:   lyncs_io.lime.write_record   (lyncs-io 0.2.3)
   - SciDAC checksum:       pyquda_io.io_utils.checksumSciDAC (pyquda-utils 0.10.54.post0)
   - XML metadata text + site ordering: written here per ILDG/SciDAC spec."""
import sys, datetime, numpy as np
sys.path.insert(0, "/tmp/writer_out")
from lyncs_io.lime import write_record
from pyquda_comm import initGrid
from pyquda_io.io_utils import checksumSciDAC

def write_ildg(filename, gauge, latt_size, precision=64):
    Lx, Ly, Lz, Lt = latt_size
    dt = ">c16" if precision == 64 else ">c8"
    # PyQUDA layout [mu,t,z,y,x,a,b] -> ILDG/SciDAC site order (t,z,y,x) slowest->fastest, then mu, row, col
    data = np.ascontiguousarray(gauge.transpose(1, 2, 3, 4, 0, 5, 6)).astype(dt)
    suma, sumb = checksumSciDAC(latt_size, data.reshape(Lt * Lz * Ly * Lx, 4 * 9))
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%a %b %d %H:%M:%S %Y UTC")
    x = '<?xml version="1.0" encoding="UTF-8"?>'
    P, sz = ("D", 144) if precision == 64 else ("F", 72)
    msg1 = [
        ("scidac-private-file-xml", f"{x}<scidacFile><version>1.1</version><spacetime>4</spacetime>"
                                    f"<dims>{Lx} {Ly} {Lz} {Lt} </dims><volfmt>0</volfmt></scidacFile>"),
        ("scidac-file-xml", f"{x}<info>written for lattice-rs CI</info>"),
    ]
    msg2 = [
        ("scidac-private-record-xml", f"{x}<scidacRecord><version>1.1</version><date>{now}</date><recordtype>0</recordtype>"
                                      f"<datatype>QDP_{P}3_ColorMatrix</datatype><precision>{P}</precision><colors>3</colors>"
                                      f"<spins>4</spins><typesize>{sz}</typesize><datacount>4</datacount></scidacRecord>"),
        ("scidac-record-xml", f"{x}<info>random SU(3)</info>"),
        ("ildg-format", f'{x}<ildgFormat xmlns="http://www.lqcd.org/ildg" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
                        f'xsi:schemaLocation="http://www.lqcd.org/ildg http://www.lqcd.org/ildg/filefmt.xsd">'
                        f"<version>1.0</version><field>su3gauge</field><precision>{precision}</precision>"
                        f"<lx>{Lx}</lx><ly>{Ly}</ly><lz>{Lz}</lz><lt>{Lt}</lt></ildgFormat>"),
        ("ildg-data-lfn", "lfn://lattice-rs/ci/random_4x4x4x8"),
        ("ildg-binary-data", data),
        ("scidac-checksum", f"{x}<scidacChecksum><version>1.0</version><suma>{suma:x}</suma><sumb>{sumb:x}</sumb></scidacChecksum>"),
    ]
    with open(filename, "wb") as f:
        for msg in (msg1, msg2):
            for i, (t, d) in enumerate(msg):
                write_record(f, t, d.encode() if isinstance(d, str) else d, begin=(i == 0), end=(i == len(msg) - 1))
    return suma, sumb

if __name__ == "__main__":
    initGrid(grid_size=[1, 1, 1, 1])
    for name in ("gauge_pyquda_layout", "gauge_smooth_pyquda_layout"):
        g = np.load(f"/tmp/writer_out/{name}.npy")
        out = "/tmp/writer_out/" + ("random" if "smooth" not in name else "smooth") + "_4x4x4x8.ildg"
        print(out, "suma/sumb = %x %x" % write_ildg(out, g, [4, 4, 4, 8]))
    g = np.load("/tmp/writer_out/gauge_pyquda_layout.npy")
    print("fp32", "%x %x" % write_ildg("/tmp/writer_out/random_4x4x4x8_fp32.ildg", g, [4, 4, 4, 8], precision=32))
