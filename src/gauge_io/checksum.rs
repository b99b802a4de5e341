//! The checksums of the three formats.
//!
//! - NERSC: the 32-bit words of the stored numbers, as the host reads them,
//!   summed modulo 2³² (Grid `NerscIO.h`, MILC `nersc_cksum.c`).
//! - SciDAC (ILDG files): the CRC-32 (zlib's) of each site's stored bytes,
//!   rotated left by the site's lexicographic rank modulo 29 and modulo 31
//!   and XORed into two sums (QIO `DML_utils.c`, Grid `IldgIO.h`).
//! - MILC: each 32-bit word of the data, rotated left by its index in the
//!   data modulo 29 and modulo 31, XORed into two sums (MILC `io_lat4.c`).

/// The NERSC checksum of host words.
pub fn nersc(words: impl Iterator<Item = u32>) -> u32 {
    words.fold(0u32, |sum, w| sum.wrapping_add(w))
}

/// The SciDAC checksum `(suma, sumb)` of data stored site after site,
/// `site_bytes` bytes each, in lexicographic order.
pub fn scidac(data: &[u8], site_bytes: usize) -> (u32, u32) {
    let (mut a, mut b) = (0u32, 0u32);
    for (rank, site) in data.chunks_exact(site_bytes).enumerate() {
        let crc = crc32fast::hash(site);
        a ^= crc.rotate_left((rank % 29) as u32);
        b ^= crc.rotate_left((rank % 31) as u32);
    }
    (a, b)
}

/// The MILC checksum `(sum29, sum31)` of the data's host words.
pub fn milc(words: impl Iterator<Item = u32>) -> (u32, u32) {
    let (mut s29, mut s31) = (0u32, 0u32);
    for (i, w) in words.enumerate() {
        s29 ^= w.rotate_left((i % 29) as u32);
        s31 ^= w.rotate_left((i % 31) as u32);
    }
    (s29, s31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_is_zlibs() {
        // The standard check value of CRC-32 (zlib, PKZIP): "123456789".
        assert_eq!(crc32fast::hash(b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn the_sums_follow_their_definitions() {
        assert_eq!(nersc([u32::MAX, 2, 3].into_iter()), 4);
        // Word 0 is not rotated, word 1 by one bit, word 29 by 0 mod 29.
        let mut words = [0u32; 31];
        words[0] = 0x8000_0001;
        words[1] = 0x8000_0000;
        let (s29, s31) = milc(words.iter().copied());
        assert_eq!(s29, 0x8000_0001 ^ 0x0000_0001);
        assert_eq!(s31, s29);
        words[29] = 1;
        let (s29b, s31b) = milc(words.iter().copied());
        assert_eq!(s29b, s29 ^ 1);
        assert_eq!(s31b, s31 ^ (1 << 29));
        // Two sites of identical bytes: the second CRC rotated by one.
        let c = crc32fast::hash(&[7u8; 8]);
        assert_eq!(
            scidac(&[7u8; 16], 8),
            (c ^ c.rotate_left(1), c ^ c.rotate_left(1))
        );
    }
}
