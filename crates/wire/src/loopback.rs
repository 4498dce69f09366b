//! BSD loopback headers: NULL (LINKTYPE 0), a 4-byte address family in the
//! byte order of the machine that wrote the file, and LOOP (108), the same in
//! network byte order.

use crate::decode::{DecodeError, Net, L2};

const AF_INET: u32 = 2;
/// AF_INET6 differs by OS: Linux 10, Windows 23, Net/OpenBSD 24, FreeBSD 28,
/// Darwin 30. All appear in real NULL captures.
const AF_INET6: [u32; 5] = [10, 23, 24, 28, 30];

pub(crate) fn parse(data: &[u8], network_order: bool) -> Result<L2, DecodeError> {
    let b: [u8; 4] = crate::field::array(data, 0).ok_or(DecodeError::Truncated("loopback header"))?;
    let family = if network_order {
        u32::from_be_bytes(b)
    } else {
        // Families are small, so a value with high bits set was written
        // big-endian (the capture file does not say which).
        let le = u32::from_le_bytes(b);
        if le & 0xffff_0000 != 0 {
            le.swap_bytes()
        } else {
            le
        }
    };
    let net = match family {
        AF_INET => Net::V4,
        f if AF_INET6.contains(&f) => Net::V6,
        f => return Err(DecodeError::NotIp(f.min(0xffff) as u16)),
    };
    Ok(L2 { net, offset: 4, ..L2::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_in_both_orders() {
        assert_eq!(parse(&[2, 0, 0, 0, 0x45], false).unwrap().net, Net::V4);
        assert_eq!(parse(&[0, 0, 0, 2, 0x45], false).unwrap().net, Net::V4);
        assert_eq!(parse(&[0, 0, 0, 30], false).unwrap().net, Net::V6);
        assert_eq!(parse(&[0, 0, 0, 24], true).unwrap().net, Net::V6);
        assert_eq!(parse(&[0, 0, 0, 24], true).unwrap().offset, 4);
        // LOOP is always big-endian: 2 little-endian is a huge family.
        assert_eq!(parse(&[2, 0, 0, 0], true), Err(DecodeError::NotIp(0xffff)));
        assert_eq!(parse(&[7, 0, 0, 0], false), Err(DecodeError::NotIp(7)));
        assert_eq!(parse(&[2, 0, 0], false), Err(DecodeError::Truncated("loopback header")));
    }
}
