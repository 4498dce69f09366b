//! Errors shared by the `*Repr::emit` functions.

use std::fmt;

/// Why a header could not be written. Emitting never panics: a short buffer
/// or an impossible field combination is reported instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmitError {
    /// The buffer holds `have` bytes but the header needs `need`.
    BufferTooSmall { need: usize, have: usize },
    /// TCP carries at most 4 SACK blocks (3 alongside SYN options).
    TooManySackBlocks(usize),
    /// The TCP options need more than the 40 bytes a header can hold.
    OptionsTooLong(usize),
    /// A length does not fit its header field (e.g. IPv4 total over 65535).
    LengthOverflow,
    /// The pseudo-header needs both addresses from the same IP version.
    MixedAddressFamilies,
}

impl fmt::Display for EmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmitError::BufferTooSmall { need, have } => {
                write!(f, "buffer of {have} bytes is too small for a {need}-byte header")
            }
            EmitError::TooManySackBlocks(n) => write!(f, "{n} SACK blocks given, at most 4 fit"),
            EmitError::OptionsTooLong(n) => write!(f, "TCP options need {n} bytes, at most 40 fit"),
            EmitError::LengthOverflow => write!(f, "packet length does not fit the header's length field"),
            EmitError::MixedAddressFamilies => write!(f, "source and destination are of different IP versions"),
        }
    }
}
impl std::error::Error for EmitError {}

/// The first `N` bytes of `buf` as a fixed array, or the size error.
pub(crate) fn header<const N: usize>(buf: &mut [u8]) -> Result<&mut [u8; N], EmitError> {
    let have = buf.len();
    buf.first_chunk_mut::<N>().ok_or(EmitError::BufferTooSmall { need: N, have })
}
