//! Helpers shared by the integration tests.
#![allow(dead_code)]

/// Builds pcapng files block by block, in either byte order.
pub struct Ng {
    pub big: bool,
    pub out: Vec<u8>,
}

impl Ng {
    pub fn new(big: bool) -> Ng {
        Ng { big, out: Vec::new() }
    }
    pub fn u16(&self, v: u16) -> [u8; 2] {
        if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    pub fn u32(&self, v: u32) -> [u8; 4] {
        if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    /// Appends a block of type `typ` with `body` (padded to 4 bytes).
    pub fn block(&mut self, typ: u32, body: &[u8]) -> &mut Ng {
        let pad = body.len().next_multiple_of(4) - body.len();
        let len = (12 + body.len() + pad) as u32;
        let b = [&self.u32(typ)[..], &self.u32(len), body, &vec![0; pad], &self.u32(len)].concat();
        self.out.extend(b);
        self
    }
    pub fn shb(&mut self) -> &mut Ng {
        let body = [&self.u32(0x1a2b_3c4d)[..], &self.u16(1), &self.u16(0), &[0xff; 8]].concat();
        self.block(0x0a0d_0d0a, &body)
    }
    /// IDB with optional if_tsresol and if_tsoffset options.
    pub fn idb(&mut self, linktype: u16, snaplen: u32, tsresol: Option<u8>, tsoffset: Option<i64>) -> &mut Ng {
        let mut body = [&self.u16(linktype)[..], &[0, 0], &self.u32(snaplen)].concat();
        if let Some(r) = tsresol {
            body.extend(self.u16(9));
            body.extend(self.u16(1));
            body.extend([r, 0, 0, 0]);
        }
        if let Some(o) = tsoffset {
            body.extend(self.u16(14));
            body.extend(self.u16(8));
            body.extend(if self.big { o.to_be_bytes() } else { o.to_le_bytes() });
        }
        if tsresol.is_some() || tsoffset.is_some() {
            body.extend([0; 4]); // opt_endofopt
        }
        self.block(1, &body)
    }
    pub fn epb(&mut self, iface: u32, ts: u64, orig: u32, data: &[u8]) -> &mut Ng {
        let body =
            [&self.u32(iface)[..], &self.u32((ts >> 32) as u32), &self.u32(ts as u32), &self.u32(data.len() as u32), &self.u32(orig), data].concat();
        self.block(6, &body)
    }
    pub fn spb(&mut self, orig: u32, data: &[u8]) -> &mut Ng {
        let body = [&self.u32(orig)[..], data].concat();
        self.block(3, &body)
    }
    /// The obsolete Packet Block (type 2).
    pub fn pb(&mut self, iface: u16, ts: u64, orig: u32, data: &[u8]) -> &mut Ng {
        let body = [
            &self.u16(iface)[..],
            &self.u16(0),
            &self.u32((ts >> 32) as u32),
            &self.u32(ts as u32),
            &self.u32(data.len() as u32),
            &self.u32(orig),
            data,
        ]
        .concat();
        self.block(2, &body)
    }
}

/// A classic pcap file header (microsecond, little-endian).
pub fn pcap_header(linktype: u32, snaplen: u32) -> Vec<u8> {
    [&0xa1b2_c3d4u32.to_le_bytes()[..], &2u16.to_le_bytes(), &4u16.to_le_bytes(), &[0; 8], &snaplen.to_le_bytes(), &linktype.to_le_bytes()].concat()
}

/// A classic pcap record (microsecond, little-endian).
pub fn pcap_record(sec: u32, usec: u32, orig: u32, data: &[u8]) -> Vec<u8> {
    [&sec.to_le_bytes()[..], &usec.to_le_bytes(), &(data.len() as u32).to_le_bytes(), &orig.to_le_bytes(), data].concat()
}

/// A 40-byte IPv4+TCP SYN from 10.0.0.1:1000 to 10.0.0.2:80 with sequence `seq`.
pub fn ipv4_syn(seq: u32) -> Vec<u8> {
    let mut p = vec![0x45, 0, 0, 40, 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
    p.extend(1000u16.to_be_bytes());
    p.extend(80u16.to_be_bytes());
    p.extend(seq.to_be_bytes());
    p.extend([0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0]);
    p
}
