//! Device memory of one field in its storage precision (`DeviceData`): the
//! typed allocation, its address for kernel parameters, its size, zeroing.

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};

use super::errors::device_err;
use crate::error::Result;
use crate::precision::Precision;

/// Device memory of one field, in its storage precision.
#[derive(Debug)]
pub(crate) enum DeviceData {
    F64(CudaSlice<f64>),
    F32(CudaSlice<f32>),
    /// Half: int16 values; a spinor block's f32 norms follow its values.
    I16(CudaSlice<i16>),
    /// Quarter: int8 values, norms likewise.
    I8(CudaSlice<i8>),
    /// 32-bit fixed point: the links beside 30-bit spinors only.
    I32(CudaSlice<i32>),
    /// Packed 20-bit spinors: `packed::words(20)` words per site.
    P20(CudaSlice<u32>),
    /// Packed 30-bit spinors: `packed::words(30)` words per site.
    P30(CudaSlice<u32>),
}

impl DeviceData {
    pub(crate) fn precision(&self) -> Precision {
        match self {
            DeviceData::F64(_) => Precision::Double,
            DeviceData::F32(_) => Precision::Single,
            DeviceData::I16(_) => Precision::Half,
            DeviceData::I8(_) => Precision::Quarter,
            DeviceData::I32(_) | DeviceData::P30(_) => Precision::Packed30,
            DeviceData::P20(_) => Precision::Packed20,
        }
    }
    /// The device address (for kernel parameters).
    pub(crate) fn ptr(&self, stream: &CudaStream) -> u64 {
        match self {
            DeviceData::F64(s) => s.device_ptr(stream).0,
            DeviceData::F32(s) => s.device_ptr(stream).0,
            DeviceData::I16(s) => s.device_ptr(stream).0,
            DeviceData::I8(s) => s.device_ptr(stream).0,
            DeviceData::I32(s) => s.device_ptr(stream).0,
            DeviceData::P20(s) | DeviceData::P30(s) => s.device_ptr(stream).0,
        }
    }
    /// Elements.
    pub(crate) fn len(&self) -> usize {
        match self {
            DeviceData::F64(s) => s.len(),
            DeviceData::F32(s) => s.len(),
            DeviceData::I16(s) => s.len(),
            DeviceData::I8(s) => s.len(),
            DeviceData::I32(s) => s.len(),
            DeviceData::P20(s) | DeviceData::P30(s) => s.len(),
        }
    }
    /// Sets every byte to 0 (queued on `stream`).
    pub(crate) fn zero(&mut self, stream: &CudaStream) -> Result<()> {
        let (ptr, bytes) = (self.ptr(stream), self.bytes());
        // SAFETY: the whole live allocation.
        unsafe { cudarc::driver::result::memset_d8_async(ptr, 0, bytes, stream.cu_stream()) }
            .map_err(device_err("zeroing a field"))
    }
    pub(crate) fn bytes(&self) -> usize {
        match self {
            DeviceData::F64(s) => s.len() * 8,
            DeviceData::F32(s) => s.len() * 4,
            DeviceData::I16(s) => s.len() * 2,
            DeviceData::I8(s) => s.len(),
            DeviceData::I32(s) => s.len() * 4,
            DeviceData::P20(s) | DeviceData::P30(s) => s.len() * 4,
        }
    }
}
