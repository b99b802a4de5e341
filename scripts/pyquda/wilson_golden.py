# Usage: python3 wilson_golden.py PYQUDA_SOURCE_DIR GOLDEN_DATA_DIR RESOURCE_DIR (scripts/test_pyquda.sh)
# PyQUDA (unchanged, built against latsol's install) solving the golden Wilson set on the CPU.
import sys, numpy as np
sys.path.insert(0, sys.argv[1])
import pyquda
from pyquda.field import LatticeInfo, LatticeGauge, LatticeFermion
from pyquda.dirac.wilson import WilsonDirac
G = sys.argv[2] + "/golden-wilson-6x4x4x8/"
X, Y, Z, T = 6, 4, 4, 8
kappa = 0.12
pyquda.init(latt_size=[X, Y, Z, T], backend="numpy", backend_target="cpu", resource_path=sys.argv[3])
info = LatticeInfo([X, Y, Z, T], t_boundary=-1)
V = X * Y * Z * T
links = np.fromfile(G + "gauge_qdp.f64", "<f8").view("<c16").reshape(4, 2, T, Z, Y, X // 2, 3, 3)
gauge = LatticeGauge(info, value=links.copy())
psi = np.fromfile(G + "psi_dirac.f64", "<f8").view("<c16").reshape(2, T, Z, Y, X // 2, 4, 3)
mpsi = np.fromfile(G + "M_psi_dirac.f64", "<f8").view("<c16").reshape(2, T, Z, Y, X // 2, 4, 3)
mass = 1 / (2 * kappa) - 4
dirac = WilsonDirac(info, mass, 1e-12, 1000)
dirac.loadGauge(gauge)
b = LatticeFermion(info, value=mpsi.copy())
x = dirac.invert(b)
xs = x.data.reshape(psi.shape)
c = np.vdot(psi.ravel(), xs.ravel()) / np.vdot(psi.ravel(), psi.ravel())
err = np.linalg.norm(xs - c * psi) / np.linalg.norm(c * psi)
print(f"invertQuda through PyQUDA: {dirac.invert_param.iter} iterations, true_res {dirac.invert_param.true_res[0]:.2e}; x = c psi with c = {c.real:.12f} (2 kappa = {2*kappa}), |x - c psi|/|c psi| = {err:.2e}")
ok = abs(c - 2 * kappa) < 1e-10 and err < 1e-9
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
