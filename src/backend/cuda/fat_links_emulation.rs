//! kernels/fat_links.cu run on the host without a GPU
//! (kernels/host/fat_links.cpp, through kernels/host/shim.h) and compared
//! with the host path: one direction's one-link term and staple
//! (`fat_links::paths::staple`), its long links (`long_links`), and every
//! link's U(3) projection (`unitarize::cayley_hamilton`, the links it
//! leaves to the SVD flagged alike). The input links are fat links (far from
//! unitary, so the projection has work to do) with one link made singular.

use super::emulation::{build_emulation, f64s, run_with_files};
use super::fat_links::{neighbour_words, reals_of};
use crate::fat_links::paths::{direction, staple, Neighbours};
use crate::fat_links::unitarize::cayley_hamilton;
use crate::fat_links::{fat_links, long_links, PathCoefficients, UnitarizeParams};
use crate::lattice::Lattice;
use crate::random;
use crate::su3::Su3;

#[test]
fn device_fattening_computes_the_host_paths_numbers() {
    let Some(exe) = build_emulation("fat_links") else {
        return;
    };
    let lat = std::sync::Arc::new(Lattice::new([4, 6, 4, 4]).unwrap());
    let thin = random::hot_gauge(&lat, 21);
    let c = PathCoefficients::from_array([0.4, 0.0, -0.1, 0.02, -0.004, -0.05]);
    let mut links = fat_links(&thin, &c).unwrap();
    let mut singular = links.links()[37];
    singular.0[2] = singular.0[1];
    links.links_mut()[37] = singular;
    let (mu, nu) = (2usize, 3usize);
    let coef: [f64; 3] = [0.7, -0.3, -1.0 / 24.0];
    let nb = Neighbours::of(&lat);
    let v = lat.volume();
    let mut input = Vec::new();
    input.extend((v as i64).to_le_bytes());
    input.extend((mu as i32).to_le_bytes());
    input.extend((nu as i32).to_le_bytes());
    coef.iter().for_each(|x| input.extend(x.to_le_bytes()));
    reals_of(links.links())
        .iter()
        .for_each(|x| input.extend(x.to_le_bytes()));
    neighbour_words(&nb)
        .iter()
        .for_each(|x| input.extend(x.to_le_bytes()));
    let bytes = run_with_files(&exe, "fat", &input);
    let n = 18 * v;
    let got = f64s(&bytes[..8 * 7 * n]);
    let flags: Vec<i32> = bytes[8 * 7 * n..]
        .chunks(4)
        .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let at = |block: usize, i: usize| Su3::from_row_major(&got[block * n + 18 * i..][..18]);

    // Fat-link sizes are O(1): the device sums the same products in the same
    // order, contracted into fused multiply-adds or not.
    let u: [Vec<Su3>; 4] = std::array::from_fn(|d| direction(&links, d));
    let s = staple(&nb, &u, &u[mu], mu, nu);
    let l = long_links(&links, coef[2]).unwrap();
    for i in 0..v {
        let mut f = u[mu][i].scale(coef[0].into());
        for r in 0..3 {
            for k in 0..3 {
                f.0[r][k] += coef[1] * s[i].0[r][k];
            }
        }
        assert!(at(0, i).max_diff(&f) < 1e-13, "F at {i}");
        assert!(at(1, i).max_diff(&s[i]) < 1e-13, "S at {i}");
        assert!(
            at(2, i).max_diff(&l.links()[4 * i + mu]) < 1e-13,
            "L at {i}"
        );
    }
    let p = UnitarizeParams::default();
    for (j, v) in links.links().iter().enumerate() {
        let w = Su3::from_row_major(&got[3 * n + 18 * j..][..18]);
        match cayley_hamilton(v, &p) {
            Some(want) => {
                assert_eq!(flags[j], 0, "link {j}");
                assert!(w.max_diff(&want) < 1e-11, "W at {j}");
            }
            None => assert_eq!(flags[j], 1, "link {j}"),
        }
    }
    assert_eq!(flags[37], 1);
}
