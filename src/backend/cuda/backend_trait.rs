//! `Backend` for `CudaBackend`: every operation of the trait, each passed to
//! the kernel family or conversion that does it (`backend.rs` holds the
//! views), plus the few the backend does itself (field allocation, parity
//! copies, canonical uploads).

use std::sync::Arc;

use num_complex::Complex64 as C64;
use rayon::prelude::*;

use super::backend::CudaBackend;
use super::blas::{Out, ReduceOut};
use super::block_blas::Target;
use super::clover::CudaClover;
use super::driver::errors::device_err;
use super::driver::memory::DeviceData;
use super::fields::{
    alloc_spinor, check_lattice, check_same, link_scale, per_site, same_lattice, CudaGauge,
    CudaSpinor,
};
use super::halo::{GaugeHalo, LinkFaces, LinkPart};
use super::layout::{self, SoaShape, LINK_REALS};
use super::staggered::CudaStaggeredLinks;
use crate::backend::{Backend, CloverForm, OperatorFamily, SpinorField};
use crate::clover::CloverField;
use crate::domains::Domains;
use crate::error::{Error, Result};
use crate::field::{Fermion, GaugeField, HostSpinor};
use crate::lattice::{Lattice, Parity, Subset};
use crate::precision::{Precision, Reconstruct, TBoundary};

impl Backend for CudaBackend {
    type Spinor = CudaSpinor;
    type Gauge = CudaGauge;
    type Clover = CudaClover;
    type StaggeredLinks = CudaStaggeredLinks;

    fn name(&self) -> &'static str {
        "cuda"
    }

    fn ranks(&self) -> usize {
        self.ranks.as_ref().map_or(1, |r| r.comm.size())
    }

    fn all_ok(&self, ok: bool) -> Result<bool> {
        match &self.ranks {
            Some(r) => self.failure.all_ok(r, ok),
            None => Ok(ok),
        }
    }

    fn global_max(&self, value: f64) -> Result<f64> {
        let mut v = [value];
        if let Some(r) = &self.ranks {
            r.comm.max(&mut v)?;
        }
        Ok(v[0])
    }

    fn prepare(&self, family: OperatorFamily, formats: &[(Precision, Reconstruct)]) -> Result<()> {
        let mut modules = Self::modules_for(family, formats);
        if self.cut().is_some() {
            modules.extend(Self::edge_modules_for(family, formats));
        }
        self.dev.prepare_modules(&modules)
    }

    fn prepare_block(&self, formats: &[(Precision, Reconstruct)]) -> Result<()> {
        let modules: Vec<_> = formats
            .iter()
            .filter_map(|&(p, r)| {
                let name = format!("wilson_rhs_{}_r{}", super::fields::suffix(p), r.reals());
                super::driver::modules::Module::named(super::catalogue::SOURCES, &name)
            })
            .collect();
        self.dev.prepare_modules(&modules)
    }

    fn release_workspaces(&self) {
        self.dev.pool.release_all();
    }

    fn import_staggered(
        &self,
        lattice: &Arc<Lattice>,
        fat: &crate::layout::HostGauge,
        long: Option<&crate::layout::HostGauge>,
        fold: Option<crate::backend::PhaseFold>,
        formats: &[(Precision, crate::long_links::LongReconstruct)],
    ) -> Result<Option<Vec<CudaStaggeredLinks>>> {
        if self.cut().is_some() {
            return Ok(None);
        }
        self.host_order()
            .import_staggered_impl(lattice, fat, long, fold, formats)
    }

    fn import_gauge(
        &self,
        lattice: &Arc<Lattice>,
        host: &crate::layout::HostGauge,
        form: crate::backend::GaugeForm,
        formats: &[(Precision, Reconstruct)],
        accept: &dyn Fn(&crate::backend::GaugeScan) -> bool,
    ) -> Result<Option<(crate::backend::GaugeScan, Vec<CudaGauge>)>> {
        // Temporal-gauge storage is the plain one here (the default
        // `upload_gauge_temporal`). On a cut lattice the host path stores
        // the links (`upload_gauge`, with the faces).
        if self.cut().is_some() {
            return Ok(None);
        }
        check_lattice(lattice)?;
        self.prepare_gauge_import(lattice, formats)?;
        self.host_order()
            .import_gauge_impl(lattice, host, form, formats, accept)
    }

    fn import_spinor(
        &self,
        dst: &mut CudaSpinor,
        host: crate::layout::HostReals,
        order: crate::layout::DiracOrder,
        basis: crate::layout::GammaBasis,
        exp: Option<i32>,
    ) -> Result<i32> {
        self.host_order()
            .import_spinor_impl(self, dst, host, order, basis, exp)
    }

    fn import_each(
        &self,
        sources: &[crate::layout::HostReals],
        order: crate::layout::DiracOrder,
        basis: crate::layout::GammaBasis,
        alloc: &mut dyn FnMut() -> Result<CudaSpinor>,
        solve: &mut crate::backend::SolveEach<'_, CudaSpinor>,
    ) -> Result<()> {
        self.host_order()
            .import_each_impl(self, sources, order, basis, alloc, solve)
    }

    fn export_spinor(
        &self,
        src: &CudaSpinor,
        out: crate::layout::HostRealsMut,
        order: crate::layout::DiracOrder,
        basis: crate::layout::GammaBasis,
        exp: i32,
    ) -> Result<()> {
        self.host_order()
            .export_spinor_impl(self, src, out, order, basis, exp)
    }

    fn check_export(
        &self,
        src: &CudaSpinor,
        out: &crate::layout::HostRealsMut,
        exp: i32,
    ) -> Result<()> {
        self.host_order().check_export_impl(self, src, out, exp)
    }

    fn field_allocations(&self) -> (usize, usize) {
        self.dev.pool.counts()
    }

    fn upload_gauge(
        &self,
        gauge: &GaugeField,
        t_boundary: TBoundary,
        precision: Precision,
        reconstruct: Reconstruct,
    ) -> Result<CudaGauge> {
        self.upload_links(gauge, t_boundary, precision, reconstruct, false)
    }

    fn upload_domain_gauge(&self, gauge: &GaugeField, precision: Precision) -> Result<CudaGauge> {
        let periodic = TBoundary::Periodic;
        self.upload_links(gauge, periodic, precision, Reconstruct::Full18, true)
    }

    fn download_gauge(&self, gauge: &CudaGauge) -> Result<GaugeField> {
        self.gauge_to_host(gauge)
    }

    fn domain_project(&self, field: &mut CudaSpinor, d: &Domains, colour: usize) -> Result<()> {
        self.project_on_domains(field, d, colour)
    }

    fn rank_coords(&self) -> [usize; 4] {
        self.ranks.as_ref().map_or([0; 4], |r| r.grid.coords())
    }

    fn alloc_field(
        &self,
        lattice: &Arc<Lattice>,
        subset: Subset,
        precision: Precision,
        fermion: Fermion,
    ) -> Result<CudaSpinor> {
        let field = alloc_spinor(&self.dev, lattice, subset, precision, fermion);
        // On many ranks (as on the CPU): an allocation that fails on one
        // rank, inside a solve too, fails on all before any waits in a sum.
        match &self.ranks {
            Some(_) => crate::backend::agreed(self, field),
            None => field,
        }
    }

    fn upload_spinor(&self, dst: &mut CudaSpinor, src: &HostSpinor) -> Result<()> {
        if dst.subset != src.subset()
            || src.fermion() != dst.fermion
            || !same_lattice(&dst.lattice, src.lattice())
        {
            return Err(Error::Internal("upload_spinor: the fields differ".into()));
        }
        if per_site(dst.precision()) {
            // Rounded to fixed point (packed) on the device, by the kernels' rule.
            let mut d =
                self.alloc_field(&dst.lattice, dst.subset, Precision::Double, dst.fermion)?;
            self.upload_spinor(&mut d, src)?;
            return self.blas().copy_impl(dst, &d);
        }
        let reals: &[f64] = bytemuck::cast_slice(src.data());
        let shape = dst.soa_shape();
        self.upload_soa(&mut dst.data, shape, reals, 1.0)
    }

    fn download_spinor(&self, src: &CudaSpinor, dst: &mut HostSpinor) -> Result<()> {
        if src.subset != dst.subset()
            || dst.fermion() != src.fermion
            || !same_lattice(&src.lattice, dst.lattice())
        {
            return Err(Error::Internal("download_spinor: the fields differ".into()));
        }
        let shape = src.soa_shape();
        if per_site(src.precision()) {
            let mut d =
                self.alloc_field(&src.lattice, src.subset, Precision::Double, src.fermion)?;
            self.blas().copy_impl(&mut d, src)?;
            return self.download_spinor(&d, dst);
        }
        let what = "device-to-host copy";
        let reals: &mut [f64] = bytemuck::cast_slice_mut(dst.data_mut());
        match &*src.data {
            DeviceData::F64(s) => {
                let v = self.dev.stream.clone_dtoh(s).map_err(device_err(what))?;
                self.dev.synchronize()?;
                layout::from_soa(shape, &v, reals, |x| x);
            }
            DeviceData::F32(s) => {
                let v = self.dev.stream.clone_dtoh(s).map_err(device_err(what))?;
                self.dev.synchronize()?;
                layout::from_soa(shape, &v, reals, |x| x as f64);
            }
            _ => unreachable!("converted above"),
        }
        Ok(())
    }

    fn extract_parity(&self, part: &mut CudaSpinor, full: &CudaSpinor, p: Parity) -> Result<()> {
        crate::backend::check_parity_pair("extract_parity", full, part, p)?;
        // A full field is the even block then the odd one, each of the
        // single-parity field's layout (same stride, norms inside).
        let n = full.block_len();
        let r = p.index() * n..(p.index() + 1) * n;
        let (s, what) = (&self.dev.stream, "parity copy");
        match (&mut *part.data, &*full.data) {
            (DeviceData::F64(d), DeviceData::F64(x)) => s.memcpy_dtod(&x.slice(r), d),
            (DeviceData::F32(d), DeviceData::F32(x)) => s.memcpy_dtod(&x.slice(r), d),
            (DeviceData::I16(d), DeviceData::I16(x)) => s.memcpy_dtod(&x.slice(r), d),
            (DeviceData::I8(d), DeviceData::I8(x)) => s.memcpy_dtod(&x.slice(r), d),
            (DeviceData::P20(d), DeviceData::P20(x)) | (DeviceData::P30(d), DeviceData::P30(x)) => {
                s.memcpy_dtod(&x.slice(r), d)
            }
            _ => return Err(Error::Internal(format!("{what}: precisions differ"))),
        }
        .map_err(device_err(what))
    }

    fn insert_parity(&self, full: &mut CudaSpinor, p: Parity, part: &CudaSpinor) -> Result<()> {
        crate::backend::check_parity_pair("insert_parity", full, part, p)?;
        let n = full.block_len();
        let r = p.index() * n..(p.index() + 1) * n;
        let (s, what) = (&self.dev.stream, "parity copy");
        match (&mut *full.data, &*part.data) {
            (DeviceData::F64(d), DeviceData::F64(x)) => s.memcpy_dtod(x, &mut d.slice_mut(r)),
            (DeviceData::F32(d), DeviceData::F32(x)) => s.memcpy_dtod(x, &mut d.slice_mut(r)),
            (DeviceData::I16(d), DeviceData::I16(x)) => s.memcpy_dtod(x, &mut d.slice_mut(r)),
            (DeviceData::I8(d), DeviceData::I8(x)) => s.memcpy_dtod(x, &mut d.slice_mut(r)),
            (DeviceData::P20(d), DeviceData::P20(x)) | (DeviceData::P30(d), DeviceData::P30(x)) => {
                s.memcpy_dtod(x, &mut d.slice_mut(r))
            }
            _ => return Err(Error::Internal(format!("{what}: precisions differ"))),
        }
        .map_err(device_err(what))
    }

    fn copy(&self, dst: &mut CudaSpinor, src: &CudaSpinor) -> Result<()> {
        check_same("copy", src, dst)?;
        self.blas().copy_impl(dst, src)
    }

    fn zero(&self, x: &mut CudaSpinor) -> Result<()> {
        let what = "memset";
        match &mut *x.data {
            DeviceData::F64(d) => self.dev.stream.memset_zeros(d).map_err(device_err(what)),
            DeviceData::F32(d) => self.dev.stream.memset_zeros(d).map_err(device_err(what)),
            DeviceData::I16(d) => self.dev.stream.memset_zeros(d).map_err(device_err(what)),
            DeviceData::I8(d) => self.dev.stream.memset_zeros(d).map_err(device_err(what)),
            DeviceData::I32(d) => self.dev.stream.memset_zeros(d).map_err(device_err(what)),
            // All-zero words: exponent byte 0, a zero site.
            DeviceData::P20(d) | DeviceData::P30(d) => {
                self.dev.stream.memset_zeros(d).map_err(device_err(what))
            }
        }
    }

    fn ax(&self, a: f64, x: &mut CudaSpinor) -> Result<()> {
        self.blas()
            .map("ax", None, None, Out::Y(x), [a, 0.0, 0.0, 0.0])
    }

    fn axpy(&self, a: f64, x: &CudaSpinor, y: &mut CudaSpinor) -> Result<()> {
        self.blas()
            .map("axpy", Some(x), None, Out::Y(y), [a, 0.0, 0.0, 0.0])
    }

    fn xpay(&self, x: &CudaSpinor, a: f64, y: &mut CudaSpinor) -> Result<()> {
        self.blas()
            .map("xpay", Some(x), None, Out::Y(y), [a, 0.0, 0.0, 0.0])
    }

    fn axpby(&self, a: f64, x: &CudaSpinor, b: f64, y: &mut CudaSpinor) -> Result<()> {
        self.blas()
            .map("axpby", Some(x), None, Out::Y(y), [a, 0.0, b, 0.0])
    }

    fn caxpy(&self, a: C64, x: &CudaSpinor, y: &mut CudaSpinor) -> Result<()> {
        self.blas()
            .map("caxpy", Some(x), None, Out::Y(y), [a.re, a.im, 0.0, 0.0])
    }

    fn cxpaypbz(
        &self,
        x: &CudaSpinor,
        a: C64,
        y: &CudaSpinor,
        b: C64,
        z: &mut CudaSpinor,
    ) -> Result<()> {
        self.blas().map(
            "cxpaypbz",
            Some(x),
            Some(y),
            Out::Z(z),
            [a.re, a.im, b.re, b.im],
        )
    }

    fn axpy_many(&self, a: &[f64], x: &[&CudaSpinor], y: &mut CudaSpinor) -> Result<()> {
        self.blas().axpy_many_impl(a, x, y)
    }

    fn xpay_into(
        &self,
        x: &CudaSpinor,
        a: f64,
        y: &CudaSpinor,
        out: &mut CudaSpinor,
    ) -> Result<()> {
        self.blas().map(
            "xpay_into",
            Some(x),
            Some(y),
            Out::Z(out),
            [a, 0.0, 0.0, 0.0],
        )
    }

    fn axpy_norm2_pr(&self, a: f64, x: &CudaSpinor, y: &mut CudaSpinor) -> Result<(f64, f64)> {
        let r = self.blas().reduce(
            "axpy_norm2_pr",
            x,
            None,
            ReduceOut::Write(y),
            [a, 0.0, 0.0, 0.0],
        )?;
        Ok((r[0], a * r[1]))
    }

    fn norm2(&self, x: &CudaSpinor) -> Result<f64> {
        Ok(self
            .blas()
            .reduce("norm2", x, None, ReduceOut::Read, [0.0; 4])?[0])
    }

    fn cdot(&self, x: &CudaSpinor, y: &CudaSpinor) -> Result<C64> {
        let r = self
            .blas()
            .reduce("cdot", x, Some(y), ReduceOut::Read, [0.0; 4])?;
        Ok(C64::new(r[0], r[1]))
    }

    fn cdot_norm2(&self, x: &CudaSpinor, y: &CudaSpinor) -> Result<(C64, f64)> {
        let r = self
            .blas()
            .reduce("cdot_norm2", x, Some(y), ReduceOut::Read, [0.0; 4])?;
        Ok((C64::new(r[0], r[1]), r[2]))
    }

    fn axpy_norm2(&self, a: f64, x: &CudaSpinor, y: &mut CudaSpinor) -> Result<f64> {
        Ok(self.blas().reduce(
            "axpy_norm2",
            x,
            None,
            ReduceOut::Write(y),
            [a, 0.0, 0.0, 0.0],
        )?[0])
    }

    fn caxpy_norm2(&self, a: C64, x: &CudaSpinor, y: &mut CudaSpinor) -> Result<f64> {
        Ok(self.blas().reduce(
            "caxpy_norm2",
            x,
            None,
            ReduceOut::Write(y),
            [a.re, a.im, 0.0, 0.0],
        )?[0])
    }

    fn xmy_norm2(&self, x: &CudaSpinor, y: &mut CudaSpinor) -> Result<f64> {
        Ok(self
            .blas()
            .reduce("xmy_norm2", x, None, ReduceOut::Write(y), [0.0; 4])?[0])
    }

    fn bicgstab_update(
        &self,
        alpha: C64,
        p: &CudaSpinor,
        omega: C64,
        s: &mut CudaSpinor,
        x: &mut CudaSpinor,
        t: &CudaSpinor,
        r_hat: &CudaSpinor,
    ) -> Result<(C64, f64)> {
        self.blas()
            .bicgstab_update_impl(alpha, p, omega, s, x, t, r_hat)
    }

    fn wilson_dslash(
        &self,
        out: &mut CudaSpinor,
        parity: Parity,
        gauge: &CudaGauge,
        inp: &CudaSpinor,
        dagger: bool,
        a: f64,
        x: Option<&CudaSpinor>,
    ) -> Result<()> {
        self.wilson()
            .dslash_impl(out, parity, gauge, inp, dagger, a, x)
    }

    /// One pass over each field a tile of the Gram block (block_blas.cuh)
    /// for double and single fields; the other formats four inner products
    /// a pass over each `x_i` (`cdot4`, Wilson spinors) or one a pair.
    fn block_cdot(&self, x: &[&CudaSpinor], y: &[&CudaSpinor]) -> Result<Vec<C64>> {
        if let Some(g) = self.blas().block_cdot_impl(x, y)? {
            return Ok(g);
        }
        let all_wilson = x.iter().chain(y).all(|f| f.fermion() == Fermion::Wilson);
        if !all_wilson {
            return crate::backend::block_cdot_by_pairs(self, x, y);
        }
        let mut g = Vec::with_capacity(x.len() * y.len());
        for xi in x {
            for chunk in y.chunks(4) {
                g.extend(self.blas().cdot4_impl(xi, chunk)?);
            }
        }
        Ok(g)
    }

    /// One pass for double and single fields (block_blas.cuh).
    fn block_caxpy(&self, a: &[C64], x: &[&CudaSpinor], y: &mut [CudaSpinor]) -> Result<()> {
        match self.blas().block_caxpy_impl(a, x, y, Target::Add)? {
            Some(()) => Ok(()),
            None => crate::backend::block_caxpy_by_terms(self, a, x, y),
        }
    }

    fn block_combine(
        &self,
        a: &[C64],
        x: &[&CudaSpinor],
        base: Option<&[&CudaSpinor]>,
        y: &mut [CudaSpinor],
    ) -> Result<()> {
        let into = base.map_or(Target::Overwrite, Target::From);
        match self.blas().block_caxpy_impl(a, x, y, into)? {
            Some(()) => Ok(()),
            None => crate::backend::block_combine_by_terms(self, a, x, base, y),
        }
    }

    fn block_transform(&self, a: &[C64], x: &mut [CudaSpinor]) -> Result<()> {
        match self.blas().block_transform_impl(a, x)? {
            Some(()) => Ok(()),
            None => crate::backend::block_transform_by_copies(self, a, x),
        }
    }

    fn wilson_dslash_block(
        &self,
        out: &mut [CudaSpinor],
        parity: Parity,
        gauge: &CudaGauge,
        inp: &[&CudaSpinor],
        dagger: bool,
        a: f64,
        x: Option<&[&CudaSpinor]>,
    ) -> Result<()> {
        let what = "wilson_dslash_block";
        crate::backend::check_block_fields(what, out.len(), inp.len(), x.map(|x| x.len()))?;
        self.wilson()
            .dslash_rhs_impl(out, parity, gauge, inp, dagger, a, x)
    }

    fn heavy_quark_residual2(&self, x: &CudaSpinor, r: &CudaSpinor) -> Result<f64> {
        self.blas().heavy_quark_residual2_impl(x, r)
    }

    fn upload_staggered(
        &self,
        fat: &GaugeField,
        long: Option<&GaugeField>,
        precision: Precision,
        long_reconstruct: crate::long_links::LongReconstruct,
    ) -> Result<CudaStaggeredLinks> {
        self.staggered()
            .upload_staggered_impl(fat, long, precision, long_reconstruct)
    }

    fn staggered_dslash(
        &self,
        out: &mut CudaSpinor,
        parity: Parity,
        links: &CudaStaggeredLinks,
        inp: &CudaSpinor,
        a: f64,
        x: Option<(f64, &CudaSpinor)>,
    ) -> Result<()> {
        self.staggered()
            .staggered_dslash_impl(out, parity, links, inp, a, x)
    }

    fn staggered_dslash_block(
        &self,
        out: &mut [CudaSpinor],
        parity: Parity,
        links: &CudaStaggeredLinks,
        inp: &[&CudaSpinor],
        a: f64,
        x: Option<(f64, &[&CudaSpinor])>,
    ) -> Result<()> {
        let what = "staggered_dslash_block";
        crate::backend::check_block_fields(what, out.len(), inp.len(), x.map(|x| x.1.len()))?;
        self.staggered()
            .staggered_dslash_rhs_impl(out, parity, links, inp, a, x)
    }

    fn upload_clover(
        &self,
        clover: &CloverField,
        inverse: &CloverField,
        precision: Precision,
    ) -> Result<CudaClover> {
        self.clover_kernels()
            .upload_clover_impl(clover, inverse, precision)
    }

    fn fat_links(
        &self,
        links: &GaugeField,
        c: &crate::fat_links::PathCoefficients,
        long: bool,
    ) -> Result<Option<crate::backend::FatAndLong>> {
        super::fat_links::fat_links(&self.dev, links, c, long)
    }

    fn ovr_sweeps(
        &self,
        links: &GaugeField,
        dirs: usize,
        relax_boost: f64,
    ) -> Result<Option<Box<dyn crate::backend::OvrSweeps + '_>>> {
        Ok(
            super::gauge_fixing::ovr_sweeps(&self.dev, links, dirs, relax_boost)?
                .map(|s| Box::new(s) as Box<dyn crate::backend::OvrSweeps + '_>),
        )
    }

    fn unitarize_links(
        &self,
        v: &GaugeField,
        p: &crate::fat_links::UnitarizeParams,
    ) -> Result<Option<(GaugeField, Vec<usize>)>> {
        super::fat_links::unitarize_links(&self.dev, v, p)
    }

    fn compute_clover(
        &self,
        lattice: &Arc<Lattice>,
        links: &crate::layout::HostGauge,
        c: f64,
        precisions: &[Precision],
        accept: &dyn Fn(&crate::backend::GaugeScan) -> bool,
    ) -> Result<Option<Vec<CudaClover>>> {
        // On a cut lattice the clover term reaches the neighbours' links:
        // made on the host from the extended field (`comm::extend`).
        if self.cut().is_some() {
            return Ok(None);
        }
        self.host_order()
            .compute_clover_impl(lattice, links, c, precisions, accept)
    }

    fn clover(
        &self,
        out: &mut CudaSpinor,
        parity: Parity,
        clover: &CudaClover,
        inp: &CudaSpinor,
        inverse: bool,
    ) -> Result<()> {
        self.clover_kernels()
            .clover_impl(out, parity, clover, inp, inverse)
    }

    fn wilson_clover_dslash(
        &self,
        out: &mut CudaSpinor,
        parity: Parity,
        gauge: &CudaGauge,
        clover: &CudaClover,
        inp: &CudaSpinor,
        dagger: bool,
        a: f64,
        form: CloverForm,
        x: Option<&CudaSpinor>,
    ) -> Result<()> {
        self.clover_kernels()
            .clover_dslash_impl(out, parity, gauge, clover, inp, dagger, a, form, x)
    }

    fn wilson_clover_dslash_block(
        &self,
        out: &mut [CudaSpinor],
        parity: Parity,
        gauge: &CudaGauge,
        clover: &CudaClover,
        inp: &[&CudaSpinor],
        dagger: bool,
        a: f64,
        form: CloverForm,
        x: Option<&[&CudaSpinor]>,
    ) -> Result<()> {
        let what = "wilson_clover_dslash_block";
        crate::backend::check_block_fields(what, out.len(), inp.len(), x.map(|x| x.len()))?;
        self.clover_kernels()
            .clover_dslash_rhs_impl(out, parity, gauge, clover, inp, dagger, a, form, x)
    }

    fn gamma5(&self, out: &mut CudaSpinor, inp: &CudaSpinor) -> Result<()> {
        check_same("gamma5", inp, out)?;
        self.blas().gamma5_impl(out, inp)
    }

    /// Free device memory as the driver reports it (other processes on the
    /// GPU included), so the multi-mass policy sees what it can allocate.
    fn memory_available(&self) -> Option<usize> {
        self.dev.memory_available()
    }
}

impl CudaBackend {
    /// `upload_gauge`, or with `local` a box operator's links
    /// (`upload_domain_gauge`): stored without a halo, so that its hopping
    /// terms never reach the other ranks.
    fn upload_links(
        &self,
        gauge: &GaugeField,
        t_boundary: TBoundary,
        precision: Precision,
        reconstruct: Reconstruct,
        local: bool,
    ) -> Result<CudaGauge> {
        let lat = gauge.lattice().clone();
        // Every local step agreed on many ranks: no rank leaves while the
        // others go on to the next collective one.
        let checked = match &self.ranks {
            Some(r) => check_lattice(&lat).and_then(|()| r.check_local(&lat, "upload_gauge")),
            None => check_lattice(&lat),
        };
        crate::backend::agreed(self, checked)?;
        let vh = lat.half_volume();
        let reals = reconstruct.reals();
        // Fixed point relative to the largest stored number (at least 1;
        // 1 for unitary links), as the CPU backend stores them: the same
        // integers and the same `max / MAX` multiplier. One parallel pass
        // over the compressed links, nothing stored.
        let max = (0..8 * vh)
            .into_par_iter()
            .map(|k| {
                let (block, cb) = (k / vh, k % vh);
                let (p, mu) = (Parity::from_index(block / 4), block % 4);
                let mut buf = [0.0; LINK_REALS];
                crate::reconstruct::compress(gauge.link(p, cb, mu), reconstruct, &mut buf);
                buf[..reals].iter().fold(1.0f64, |m, v| m.max(v.abs()))
            })
            .reduce(|| 1.0f64, f64::max);
        // On many ranks the whole lattice's largest, as one device scales.
        let max = self.global_max(max)?;
        let (_, scale) = link_scale(precision, max);
        let stride = layout::padded_stride(vh);
        let vec = SoaShape::link_vec(precision, reals);
        let shape = SoaShape::link(reals, vec, vh, stride);
        let stored = self.store_links(gauge, reconstruct, shape, precision, max);
        let links = crate::backend::agreed(self, stored)?;
        let at = links.ptr(&self.dev.stream);
        let halo = match self.cut().filter(|_| !local) {
            None => None,
            Some(r) => {
                let real_bytes = links.bytes() / links.len();
                let faces = LinkFaces {
                    ptr: at,
                    stride,
                    reals,
                    real_bytes,
                    parts: vec![LinkPart {
                        start: 0,
                        elem: vec * real_bytes,
                        rows: reals / vec,
                    }],
                    depth: 1,
                };
                let t_sign = t_boundary.sign();
                let halo = GaugeHalo::new(&self.dev, r, &lat, &[faces], 1, t_sign)?;
                Some(Arc::new(halo))
            }
        };
        Ok(CudaGauge {
            lattice: lat,
            stride,
            links,
            precision,
            reconstruct,
            scale,
            t_sign: t_boundary.sign(),
            halo,
        })
    }

    /// `upload_gauge`'s local part: device memory for the links, the links
    /// compressed and reordered straight into the device layout in one
    /// parallel pass (no canonical copy in between), one transfer through
    /// the pinned staging buffers, stored before any later kernel starts
    /// (as `import_gauge_impl`).
    fn store_links(
        &self,
        gauge: &GaugeField,
        reconstruct: Reconstruct,
        shape: SoaShape,
        precision: Precision,
        max: f64,
    ) -> Result<DeviceData> {
        let links = self.dev.alloc_links(precision, 8 * shape.block_len())?;
        let at = links.ptr(&self.dev.stream);
        match &links {
            DeviceData::F64(_) => {
                let v = layout::links_to_soa(gauge, reconstruct, shape, |x| x)?;
                self.dev.upload_bytes(at, bytemuck::cast_slice(&v))?
            }
            DeviceData::F32(_) => {
                let v = layout::links_to_soa(gauge, reconstruct, shape, |x| x as f32)?;
                self.dev.upload_bytes(at, bytemuck::cast_slice(&v))?
            }
            DeviceData::I16(_) => {
                self.store_fixed_links::<i16>(at, gauge, reconstruct, shape, max)?
            }
            DeviceData::I8(_) => {
                self.store_fixed_links::<i8>(at, gauge, reconstruct, shape, max)?
            }
            DeviceData::I32(_) => {
                self.store_fixed_links::<i32>(at, gauge, reconstruct, shape, max)?
            }
            DeviceData::P20(_) | DeviceData::P30(_) => {
                return Err(Error::Internal("links are never stored packed".into()))
            }
        }
        self.dev.synchronize()?;
        Ok(links)
    }

    /// Compiles (or loads from the cache), all at once and in parallel, the
    /// modules of a gauge import: the import's own, those a Wilson solve on
    /// `formats` will launch, and the small-volume forms where the tuner
    /// will time them, so that a first solve finds them ready.
    fn prepare_gauge_import(
        &self,
        lattice: &Lattice,
        formats: &[(Precision, Reconstruct)],
    ) -> Result<()> {
        let mut modules = Self::modules_for(OperatorFamily::Wilson, formats);
        modules.extend(self.dev.module_named("host_gauge"));
        if lattice.half_volume() <= super::dslash_forms::SMALL_VOLUME_SITES
            && self.dslash_form() != super::dslash_forms::DslashForm::Plain
        {
            modules.extend(self.wilson().small_volume_modules(formats));
        }
        self.dev.prepare_modules(&modules)
    }
}
