//! A staggered operator's links in CPU memory (`CpuStaggeredLinks`): how
//! they are stored (the whole lattice's scale and `|s|` on many ranks,
//! the faces of a cut lattice exchanged once) and how the hopping term is
//! run on them, across the cut faces where the lattice is partitioned.

use std::sync::Arc;

use super::floats::FloatVec;
use super::halo::{self, GaugeFaces, Ranks, Region};
use super::links::{Links, StaggeredReals};
use super::staggered::{self, ThreeHopTable};
use super::staggered_float;
use super::storage::{Sites, SitesMut};
use crate::backend::StaggeredStorage;
use crate::error::{Error, Result};
use crate::field::GaugeField;
use crate::lattice::{Lattice, Parity};
use crate::long_links::{self, LongReconstruct};
use crate::precision::Precision;

/// The links of a staggered operator in CPU memory: one-hop (fat or thin)
/// and, improved, three-hop (long) links.
pub struct CpuStaggeredLinks {
    lattice: Arc<Lattice>,
    fat: Links,
    /// The long links with the neighbour table of their hops.
    long: Option<(Links, ThreeHopTable)>,
    /// On a partitioned lattice, what the hops across the cut faces need.
    faces: Option<CutFaces>,
    /// For links stored as plain floats: the adjoint backward links of the
    /// fat and the long hops, stored at the sites they enter
    /// (`staggered_float::adjoint_behind`), which the fast path reads.
    back: Option<(FloatVec, Option<FloatVec>)>,
}

/// The fat and long links of the hops that enter this rank through its
/// cut faces.
struct CutFaces {
    fat: GaugeFaces,
    long: Option<GaugeFaces>,
}

impl CutFaces {
    /// Which sites of parity `p` keep every hop on the rank: the deepest
    /// hop's faces tell.
    fn interior(&self, p: Parity) -> &[bool] {
        &self.deepest().interior[p.index()]
    }

    /// The faces of the deepest hop (the Naik term's, where there is one).
    fn deepest(&self) -> &GaugeFaces {
        self.long.as_ref().unwrap_or(&self.fat)
    }
}

impl StaggeredStorage for CpuStaggeredLinks {
    fn lattice(&self) -> &Arc<Lattice> {
        &self.lattice
    }
    fn precision(&self) -> Precision {
        self.fat.precision()
    }
    fn improved(&self) -> bool {
        self.long.is_some()
    }
}

/// `result` agreed over the ranks, if any (`Ranks::agree`).
fn agreed<T>(ranks: Option<&Ranks>, result: Result<T>) -> Result<T> {
    match ranks {
        Some(r) => r.agree(result),
        None => result,
    }
}

/// One field's links stored (`StaggeredReals`) on `pool`'s threads: the
/// long links' `|s|` is the first link's of the whole lattice (the rank
/// at the grid's origin holds it) and the fixed-point scale the whole
/// lattice's largest stored number, as one rank would choose them.
fn store(
    pool: &rayon::ThreadPool,
    ranks: Option<&Ranks>,
    field: &GaugeField,
    precision: Precision,
    long: Option<LongReconstruct>,
) -> Result<Links> {
    let mut u3 = [long_links::scale_of(field.links())];
    if let Some(r) = ranks {
        if r.grid.coords() != [0; 4] {
            u3[0] = 0.0;
        }
        r.comm.max(&mut u3)?;
    }
    let reals = agreed(
        ranks,
        pool.install(|| StaggeredReals::of(field, long, u3[0])),
    )?;
    let mut scale = [reals.largest()];
    if let Some(r) = ranks {
        r.comm.max(&mut scale)?;
    }
    agreed(ranks, pool.install(|| reals.store(precision, scale[0])))
}

/// The adjoint backward links of links stored as plain floats (`None`
/// for other formats, which the general path reads).
fn back_links(
    lat: &Lattice,
    fat: &Links,
    long: Option<&(Links, ThreeHopTable)>,
) -> Result<Option<(FloatVec, Option<FloatVec>)>> {
    let vh = lat.half_volume();
    let Some(fat_floats) = fat.floats() else {
        return Ok(None);
    };
    let parities = [Parity::Even, Parity::Odd];
    let one = parities.map(|p| std::array::from_fn(|mu| lat.neighbour_table(p, mu, false)));
    let back_fat = staggered_float::adjoint_behind(fat_floats, vh, one)?;
    let back_long = match long {
        None => None,
        Some((l, three)) => match l.floats() {
            None => return Ok(None),
            Some(f) => {
                let three = parities.map(|p| std::array::from_fn(|mu| three.get(p, mu, false)));
                Some(staggered_float::adjoint_behind(f, vh, three)?)
            }
        },
    };
    Ok(Some((back_fat, back_long)))
}

impl CpuStaggeredLinks {
    /// The adjoint backward links as the fast path reads them.
    fn behind(&self) -> Option<staggered_float::Behind<'_>> {
        self.back
            .as_ref()
            .map(|(fat, long)| staggered_float::Behind {
                fat: fat.floats(),
                long: long.as_ref().map(FloatVec::floats),
            })
    }

    /// Stores `fat` (and `long`) links of this rank's part; `ranks`: the
    /// ranks of a context that spans several (each check agreed, the
    /// faces of the cut directions exchanged).
    pub(crate) fn upload(
        pool: &rayon::ThreadPool,
        ranks: Option<&Ranks>,
        fat: &GaugeField,
        long: Option<&GaugeField>,
        precision: Precision,
        long_reconstruct: LongReconstruct,
    ) -> Result<CpuStaggeredLinks> {
        let lat = fat.lattice();
        let checked = match ranks {
            Some(r) => r.check_local(lat, "upload_staggered").and_then(|()| {
                let part = r.grid.with_local(lat.dims())?;
                match long {
                    Some(_) => part.check_naik_depth(),
                    None => Ok(()),
                }
            }),
            None => Ok(()),
        };
        agreed(ranks, checked.and_then(|()| lat.build_neighbour_tables()))?;
        let compression = (long_reconstruct != LongReconstruct::Full18).then_some(long_reconstruct);
        let fat_links = store(pool, ranks, fat, precision, None)?;
        let long_links = match long {
            Some(l) => {
                let three = agreed(ranks, pool.install(|| ThreeHopTable::new(l.lattice())))?;
                Some((store(pool, ranks, l, precision, compression)?, three))
            }
            None => None,
        };
        let faces = match ranks.filter(|r| r.partitioned()) {
            Some(r) => Some(CutFaces {
                fat: halo::exchange_gauge_faces(r, lat, &fat_links, 1)?,
                long: match &long_links {
                    Some((l, _)) => Some(halo::exchange_gauge_faces(r, lat, l, 3)?),
                    None => None,
                },
            }),
            None => None,
        };
        let back = agreed(
            ranks,
            pool.install(|| back_links(lat, &fat_links, long_links.as_ref())),
        )?;
        Ok(CpuStaggeredLinks {
            back,
            lattice: lat.clone(),
            fat: fat_links,
            long: long_links,
            faces,
        })
    }

    /// `out = a · D_{p,p̄} inp (+ b · x)` on parity `p`'s halves (the
    /// fields checked by the caller). On a cut lattice (`cut`) the input's
    /// faces (three layers deep for the Naik term, the colour vectors' 6
    /// reals a site) travel while the sites whose hops stay here are
    /// computed; the others follow when the faces have arrived.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn dslash(
        &self,
        pool: &rayon::ThreadPool,
        cut: Option<&Ranks>,
        p: Parity,
        mut out: SitesMut,
        inp: Sites,
        a: f64,
        x: Option<(f64, Sites)>,
    ) -> Result<()> {
        let lat = &self.lattice;
        let long = self.long.as_ref().map(|(l, t)| (l, t));
        let (r, cf) = match (cut, &self.faces) {
            (None, _) => {
                pool.install(|| {
                    let (whole, back) = (Region::Whole, self.behind());
                    staggered::dslash(lat, p, &self.fat, long, out, inp, a, x, back, whole, None)
                });
                return Ok(());
            }
            (Some(r), Some(cf)) => (r, cf),
            (Some(_), None) => {
                return Err(Error::Internal(
                    "staggered_dslash: links stored without their faces on a cut lattice".into(),
                ))
            }
        };
        let interior = cf.interior(p);
        pool.install(|| {
            let (spinors, ()) = rayon::join(
                || halo::exchange_spinor_faces(r, lat, p, &inp, cf.deepest(), 6),
                || {
                    let (inside, back) = (Region::Interior(interior), self.behind());
                    let o = out.reborrow();
                    staggered::dslash(lat, p, &self.fat, long, o, inp, a, x, back, inside, None)
                },
            );
            let spinors = spinors?;
            let faces = staggered::Faces {
                local: lat.dims(),
                partitioned: [0, 1, 2, 3].map(|mu| r.grid.is_partitioned(mu)),
                spinors: &spinors,
                fat: &cf.fat,
                long: cf.long.as_ref(),
            };
            let edges = Region::Edges(interior);
            let faces = Some(&faces);
            staggered::dslash(lat, p, &self.fat, long, out, inp, a, x, None, edges, faces);
            Ok(())
        })
    }
}
