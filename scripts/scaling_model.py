#!/usr/bin/env python3
"""A model of one hopping-term application on many GPUs (issue 36, "past
this machine, on paper"), fitted to latsol's measurements and used to
predict strong scaling to hundreds of GPUs (docs/performance.md, "Many
GPUs: a model").

One application of D (both parities) on a GPU holding V sites, its lattice
cut in the directions `cut` (local extents L_mu), is modelled per parity as

    t = max(t_interior, t_pack + t_faces) + t_edges + t_fixed

- t_interior = (1 - f_edge) V/2 / R, R the sites a second the GPU's
  hopping term sustains on a large lattice (fitted: one GPU, not cut);
- t_edges = f_edge V/2 / R * k_edge, f_edge the fraction of sites within
  `depth` layers of a cut face and k_edge what an edge site costs against
  an interior one once the edges run beside the interior (fitted to the
  2-GPU measurement of each precision; Nsight Compute found 2.7 for the
  edges' launch alone, before it ran beside the interior);
- t_pack = face bytes / (pack bandwidth), the faces read and written once;
- t_faces = latency + bytes / bandwidth of the link each face takes:
  NVLink to a neighbour on the node, the node's network otherwise (the
  faces of one application share the GPU's network link);
- t_fixed: what an application costs beyond these whatever its size
  (the launches, the host's exchange of one-byte messages): 5 us a
  parity, the host's time per application measured on the H200 machine
  (to be replaced by LATSOL_HALO_TIMING's figure).
The rank grid fills a node's GPUs in the fastest-moving directions of the
partition first (t fastest, as QUDA's default map), so the cuts of the
slowest-moving directions cross nodes.

Usage: python3 scripts/scaling_model.py   (prints the tables of the doc)
"""
import itertools
import math

# Fitted on one H200 (docs/performance.md, "Many GPUs"): microseconds per
# application of D, both parities, reconstruct 12, 32^4 and 48^4 (linear).
ALONE_US_32 = {"double": 322.0, "single": 152.0, "half": 106.7}
SITE_BYTES = {"double": 192, "single": 96, "half": 52}  # a Wilson spinor as stored
# The 2-GPU T cut at 32^4 (us per D), to which k_edge is fitted.
MEASURED_2GPU_T_32 = {"double": 344.2, "single": 163.5, "half": 121.4}
T_FIXED = 5e-6
PACK_GBS = 1500.0  # the gather kernel's bytes a second (read + write), H200
NVLINK = (3.0e-6, 400e9)  # latency (s), bandwidth (bytes/s) a direction, H200 NVSwitch
NETWORKS = {"IB 200 Gb/s": (5.0e-6, 25e9), "IB 400 Gb/s": (5.0e-6, 50e9)}
GPUS_PER_NODE = 8


def per_parity_parts(local, cut, prec, k_edge, depth=1):
    """(t_interior, t_edges, t_pack, face bytes per direction) in seconds."""
    v = math.prod(local)
    rate = (32**4 / 2) / (ALONE_US_32[prec] * 1e-6 / 2)  # sites a second, one parity
    inside = math.prod(l - 2 * depth if c else l for l, c in zip(local, cut))
    f_edge = 1.0 - inside / v
    t_interior = (1.0 - f_edge) * v / 2 / rate
    t_edges = f_edge * v / 2 / rate * k_edge
    faces = [depth * v / l / 2 * SITE_BYTES[prec] if c else 0.0 for l, c in zip(local, cut)]
    t_pack = 2 * 2 * sum(faces) / (PACK_GBS * 1e9)  # both ends, read and write
    return t_interior, t_edges, t_pack, faces, max(t_interior, 1e-6)


def parity_time(local, cut, prec, links, k_edge):
    """Seconds for one parity; `links[mu]` is the (latency, bandwidth) of
    direction mu's faces (None where not cut)."""
    t_int, t_edges, t_pack, faces, _ = per_parity_parts(local, cut, prec, k_edge)
    # Every face of an application leaves at once: NVLink faces each on
    # their own link, network faces sharing the GPU's one link.
    t_nv, net_bytes, net_lat = 0.0, 0.0, 0.0
    for mu in range(4):
        if not cut[mu]:
            continue
        lat, bw = links[mu]
        if bw >= NVLINK[1]:
            t_nv = max(t_nv, lat + faces[mu] / bw)
        else:
            net_bytes += 2 * faces[mu]
            net_lat = max(net_lat, lat)
            net_bw = bw
    t_net = net_lat + net_bytes / net_bw if net_bytes else 0.0
    t_comm = max(t_nv, t_net)
    return max(t_int, t_pack + t_comm) + t_edges + T_FIXED


def fit_k_edge(prec):
    """k_edge from the 2-GPU T-cut measurement at 32^4 (bisection)."""
    local, cut = (32, 32, 32, 32), (False, False, False, True)
    links = [None, None, None, NVLINK]
    want = MEASURED_2GPU_T_32[prec] * 1e-6 / 2
    lo, hi = 0.0, 20.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if parity_time(local, cut, prec, links, mid) < want:
            lo = mid
        else:
            hi = mid
    return lo


def grids(n):
    """Rank grids of n ranks (powers of two in each direction)."""
    out = []
    for a in itertools.product(range(0, 10), repeat=4):
        g = tuple(2**e for e in a)
        if math.prod(g) == n:
            out.append(g)
    return out


def best(global_dims, n, prec, network, k_edge, depth=1):
    """The fastest partition of n GPUs: (time per D in us, grid, local)."""
    found = None
    for g in grids(n):
        if any(d % p or (d // p) % 2 or (p > 1 and d // p < 2 * depth) for d, p in zip(global_dims, g)):
            continue
        local = tuple(d // p for d, p in zip(global_dims, g))
        cut = tuple(p > 1 for p in g)
        # t fastest: the node holds the grid's fastest directions first.
        links, span = [None] * 4, 1
        for mu in (3, 2, 1, 0):
            if g[mu] > 1:
                links[mu] = NVLINK if span * g[mu] <= GPUS_PER_NODE else NETWORKS[network]
                span *= g[mu]
        t = 2 * parity_time(local, cut, prec, links, k_edge) * 1e6
        if found is None or t < found[0]:
            found = (t, g, local)
    return found


def main():
    k = {p: fit_k_edge(p) for p in ALONE_US_32}
    print("k_edge fitted to the 2-GPU T cut at 32^4:", {p: round(v, 2) for p, v in k.items()})
    # Weak scaling at 32^4 a GPU, 4 GPUs on one node (the goal).
    for prec in ALONE_US_32:
        for g in [(1, 1, 1, 4), (1, 1, 2, 2)]:
            local = (32, 32, 32, 32)
            cut = tuple(p > 1 for p in g)
            links = [NVLINK if c else None for c in cut]
            t = 2 * parity_time(local, cut, prec, links, k[prec]) * 1e6
            print(f"weak 32^4 {prec} grid {g}: {t:.1f} us per D, {100 * ALONE_US_32[prec] / t:.0f}%")
    for global_dims in [(64, 64, 64, 128), (96, 96, 96, 192)]:
        for network in NETWORKS:
            print(f"\nstrong scaling {global_dims}, {GPUS_PER_NODE} GPUs a node, {network}")
            print("| GPUs | " + " | ".join(f"{p}: us per D (speed-up), grid" for p in ALONE_US_32) + " |")
            base = {}
            for n in [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]:
                cells = []
                for prec in ALONE_US_32:
                    r = best(global_dims, n, prec, network, k[prec])
                    if r is None:
                        cells.append("-")
                        continue
                    t, g, _ = r
                    base.setdefault(prec, t)
                    cells.append(f"{t:.0f} ({base[prec] / t:.0f}x), {','.join(map(str, g))}")
                print(f"| {n} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
