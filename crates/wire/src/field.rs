//! Checked fixed-width reads. Every header parser goes through these (or
//! through `first_chunk`), so a short slice is a `None`, never a panic.

/// `N` bytes at `at`, if the slice has them.
#[inline]
pub(crate) fn array<const N: usize>(d: &[u8], at: usize) -> Option<[u8; N]> {
    d.get(at..)?.first_chunk::<N>().copied()
}

#[inline]
pub(crate) fn be16(d: &[u8], at: usize) -> Option<u16> {
    array(d, at).map(u16::from_be_bytes)
}

/// Byte order of a trace file (or of one pcapng section).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Endian {
    Little,
    Big,
}

impl Endian {
    #[inline]
    pub(crate) fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        }
    }
    #[inline]
    pub(crate) fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    }
    #[inline]
    pub(crate) fn u64(self, b: [u8; 8]) -> u64 {
        match self {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        }
    }
    #[inline]
    pub(crate) fn u32_at(self, d: &[u8], at: usize) -> Option<u32> {
        array(d, at).map(|b| self.u32(b))
    }
    #[inline]
    pub(crate) fn u16_at(self, d: &[u8], at: usize) -> Option<u16> {
        array(d, at).map(|b| self.u16(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_checked() {
        let d = [1, 2, 3, 4, 5];
        assert_eq!(be16(&d, 3), Some(0x0405));
        assert_eq!(be16(&d, 4), None);
        assert_eq!(array::<4>(&d, 1), Some([2, 3, 4, 5]));
        assert_eq!(array::<4>(&d, 2), None);
        assert_eq!(array::<4>(&d, usize::MAX), None);
        assert_eq!(Endian::Little.u32_at(&d, 0), Some(0x0403_0201));
        assert_eq!(Endian::Big.u16_at(&d, 0), Some(0x0102));
    }
}
