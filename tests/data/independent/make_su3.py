import numpy as np
def random_su3_field(Lx, Ly, Lz, Lt, seed=12345):
    """Return gauge with PyQUDA layout [mu=4, Lt, Lz, Ly, Lx, 3(row), 3(col)] complex128."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(4, Lt, Lz, Ly, Lx, 3, 3)) + 1j * rng.normal(size=(4, Lt, Lz, Ly, Lx, 3, 3))
    q, r = np.linalg.qr(a)
    d = np.diagonal(r, axis1=-2, axis2=-1)
    q = q * (d / np.abs(d))[..., None, :]          # Haar-unitary
    det = np.linalg.det(q)
    q[..., :, 2] /= det[..., None]                  # fix det -> 1 (divide 3rd column)
    # alternative uniform phase fix: q /= det[...,None,None]**(1/3)
    return q

def smooth_su3_field(Lx, Ly, Lz, Lt, eps=0.3, seed=2024):
    """Near-identity SU(3) links U = exp(i*eps*H), H random traceless Hermitian -> plaquette ~O(1)."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(4, Lt, Lz, Ly, Lx, 3, 3)) + 1j * rng.normal(size=(4, Lt, Lz, Ly, Lx, 3, 3))
    h = 0.5 * (a + a.conj().swapaxes(-1, -2))
    h -= (np.trace(h, axis1=-2, axis2=-1) / 3)[..., None, None] * np.eye(3)
    w, v = np.linalg.eigh(h)
    return (v * np.exp(1j * eps * w)[..., None, :]) @ v.conj().swapaxes(-1, -2)
