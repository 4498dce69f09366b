//! Writes the fuzz seed corpus: `fuzzseeds OUT_DIR TRACE...`.
//!
//! * `OUT_DIR/trace_reader/`: each trace cut after its first 3 records (a
//!   few hundred bytes: derived snippets, never whole traces), plus small
//!   synthetic files for the variants the traces lack.
//! * `OUT_DIR/decode/`: single packets in the `decode` target's input form,
//!   `[link type selector, orig_len (2 bytes BE), packet...]`, from the
//!   first records of each trace and hand-written header fixtures.

use std::fs;
use std::path::Path;
use wire::TraceReader;

/// The `decode` target's selector byte for each link type; other byte
/// values are used as the link type number itself.
const LINKTYPES: [u16; 10] = [0, 1, 12, 14, 101, 108, 113, 228, 229, 276];

fn selector(lt: u16) -> u8 {
    LINKTYPES.iter().position(|&l| l == lt).map_or(lt as u8, |i| i as u8)
}

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex")).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = args.next().ok_or("usage: fuzzseeds OUT_DIR TRACE...")?;
    let (tr, dec) = (Path::new(&out).join("trace_reader"), Path::new(&out).join("decode"));
    fs::create_dir_all(&tr)?;
    fs::create_dir_all(&dec)?;
    for path in args {
        let bytes = fs::read(&path)?;
        let stem = Path::new(&path).file_stem().and_then(|s| s.to_str()).unwrap_or("trace").to_string();
        let mut r = TraceReader::new(&bytes[..], path.clone())?;
        let mut cut = bytes.len();
        let mut n = 0;
        while let Some(rec) = r.read_next()? {
            if n == 3 {
                cut = rec.offset as usize;
                break;
            }
            let mut seed = vec![selector(rec.linktype.0)];
            seed.extend((rec.orig_len.min(0xffff) as u16).to_be_bytes());
            seed.extend(&rec.data[..rec.data.len().min(128)]);
            fs::write(dec.join(format!("{stem}-{n}")), seed)?;
            n += 1;
        }
        fs::write(tr.join(format!("{stem}-head")), &bytes[..cut])?;
    }
    // Header fixtures for paths the traces do not take.
    let tcp = "45000028 00004000 4006 0000 0a000001 0a000002 c350 0050 00000001 00000000 5002 ffff 0000 0000";
    let v6 = "60000000 0010 00 40 20010db8000000000000000000000001 20010db8000000000000000000000002
              2c00 000000000000 1100 0000 deadbeef 0035 0035 0008 0000";
    let fixtures = [
        ("sll", 113, format!("0000 0001 0006 0a0b0c0d0e0f 0000 0800 {tcp}")),
        ("sll2", 276, format!("86dd 0000 00000002 0001 00 06 0a0b0c0d0e0f0000 {v6}")),
        ("null", 0, format!("02000000 {tcp}")),
        ("loop", 108, format!("0000001e {v6}")),
        ("qinq", 1, format!("001122334455 66778899aabb 88a8 0064 8100 000a 0800 {tcp}")),
        ("snap", 1, format!("001122334455 66778899aabb 0030 aaaa03 000000 86dd {v6}")),
        ("icmp-echo", 4, "45000020 00000000 4001 0000 0a000001 0a000002 0800 0000 1234 0001 6162 6364".into()),
        ("fragment", 4, "45000020 00000010 4011 0000 0a000001 0a000002 0000 0000 0000 0000".into()),
    ];
    for (name, lt, h) in fixtures {
        let p = hex(&h);
        let mut seed = vec![selector(lt)];
        seed.extend((p.len() as u16).to_be_bytes());
        seed.extend(p);
        fs::write(dec.join(format!("fixture-{name}")), seed)?;
    }
    let syn = hex(tcp);
    // Nanosecond pcap, as the simulator writes it.
    let mut w = wire::PcapWriter::new(Vec::new(), wire::LinkType::RAW, 0)?;
    w.write_packet(1_700_000_000_000_000_001, 40, &syn)?;
    w.write_packet(1_700_000_000_000_000_000, 1500, &syn)?;
    fs::write(tr.join("synthetic-ns.pcap"), w.into_inner()?)?;
    // Big-endian pcapng: IDB (snaplen 40) with if_tsresol and if_tsoffset, then EPB,
    // SPB, obsolete PB and a name resolution block.
    let be = |v: u32| v.to_be_bytes();
    let block = |typ: u32, body: &[u8]| {
        let padded = body.len().next_multiple_of(4);
        let len = be(12 + padded as u32);
        [&be(typ)[..], &len, body, &vec![0; padded - body.len()], &len].concat()
    };
    let f = [
        block(0x0a0d_0d0a, &[&be(0x1a2b_3c4d)[..], &[0, 1, 0, 0], &[0xff; 8]].concat()),
        block(1, &[&[0, 101, 0, 0][..], &be(40), &[0, 9, 0, 1, 9, 0, 0, 0], &[0, 14, 0, 8], &5i64.to_be_bytes(), &[0; 4]].concat()),
        block(6, &[&be(0)[..], &be(1), &be(2), &be(40), &be(60), &syn].concat()),
        block(3, &[&be(60)[..], &syn].concat()),
        block(2, &[&[0, 0, 0, 0][..], &be(1), &be(3), &be(40), &be(40), &syn].concat()),
        block(4, &[0, 1, 0, 8, 10, 0, 0, 1, b'h', b'o', b's', b't', 0, 0, 0, 0]),
    ]
    .concat();
    fs::write(tr.join("synthetic-be.pcapng"), f)?;
    Ok(())
}
