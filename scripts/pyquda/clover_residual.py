# Usage: python3 clover_residual.py PYQUDA_SOURCE_DIR GOLDEN_DATA_DIR RESOURCE_DIR (scripts/test_pyquda.sh)
# PyQUDA (unchanged) on latsol: clover computed by the library from the golden links (c_SW 1.5),
# a solve, and its residual recomputed with PyQUDA's own MatQuda call.
import sys, numpy as np
sys.path.insert(0, sys.argv[1])
import pyquda
from pyquda.field import LatticeInfo, LatticeGauge, LatticeFermion
from pyquda.dirac.clover_wilson import CloverWilsonDirac
G = sys.argv[2] + "/golden-clover-6x4x4x8/"
X, Y, Z, T = 6, 4, 4, 8
kappa = 0.12
pyquda.init(latt_size=[X, Y, Z, T], backend="numpy", backend_target="cpu", resource_path=sys.argv[3])
info = LatticeInfo([X, Y, Z, T], t_boundary=-1)
links = np.fromfile(G + "gauge_qdp.f64", "<f8").view("<c16").reshape(4, 2, T, Z, Y, X // 2, 3, 3)
psi = np.fromfile(G + "psi_dirac.f64", "<f8").view("<c16").reshape(2, T, Z, Y, X // 2, 4, 3)
dirac = CloverWilsonDirac(info, 1 / (2 * kappa) - 4, 1e-12, 1000, clover_csw=1.5)
dirac.loadGauge(LatticeGauge(info, value=links.copy()))
b = LatticeFermion(info, value=psi.copy())
x = dirac.invert(b)
mx = dirac.mat(x)
res = np.linalg.norm(mx.data - b.data) / np.linalg.norm(b.data)
print(f"clover invertQuda through PyQUDA: {dirac.invert_param.iter} iterations, true_res {dirac.invert_param.true_res[0]:.2e}, |b - M x|/|b| by MatQuda {res:.2e}")
print("PASS" if res < 1e-11 else "FAIL")
sys.exit(0 if res < 1e-11 else 1)
