import sys, numpy as np
sys.path.insert(0, "/tmp/writer_out")
from make_su3 import random_su3_field
from pyquda_comm import initGrid
from pyquda_io import writeNERSCGauge, readNERSCGauge, writeMILCGauge

Lx, Ly, Lz, Lt = 4, 4, 4, 8
initGrid(grid_size=[1, 1, 1, 1])             # single process, no mpirun needed
gauge = random_su3_field(Lx, Ly, Lz, Lt)    # shape (4, Lt, Lz, Ly, Lx, 3, 3), complex128
print("shape", gauge.shape, gauge.dtype, "max|det-1|", np.abs(np.linalg.det(gauge) - 1).max(),
      "max|UU^+-1|", np.abs(gauge @ gauge.conj().swapaxes(-1, -2) - np.eye(3)).max())
np.save("/tmp/writer_out/gauge_pyquda_layout.npy", gauge)
writeNERSCGauge("/tmp/writer_out/random_4x4x4x8.nersc", [Lx, Ly, Lz, Lt], gauge,
                use_fp32=False, ensemble_id="lattice-rs-ci", ensemble_label="random-su3", sequence_number=1)
writeNERSCGauge("/tmp/writer_out/random_4x4x4x8_fp32.nersc", [Lx, Ly, Lz, Lt], gauge, use_fp32=True)
# round trip with PyQUDA's own reader (verifies CHECKSUM, LINK_TRACE, PLAQUETTE)
ls, g2 = readNERSCGauge("/tmp/writer_out/random_4x4x4x8.nersc")
print("roundtrip", ls, np.abs(g2 - gauge).max())
from make_su3 import smooth_su3_field
sm = smooth_su3_field(Lx, Ly, Lz, Lt)
np.save("/tmp/writer_out/gauge_smooth_pyquda_layout.npy", sm)
writeNERSCGauge("/tmp/writer_out/smooth_4x4x4x8.nersc", [Lx, Ly, Lz, Lt], sm, ensemble_id="lattice-rs-ci", ensemble_label="smooth-su3")
print("smooth roundtrip", np.abs(readNERSCGauge("/tmp/writer_out/smooth_4x4x4x8.nersc")[1] - sm).max())
