//! One tab-separated line per record, in the column order of
//! `tshark -T fields -e frame.number -e frame.len -e ip.src -e ip.dst
//! -e ip.proto -e tcp.srcport -e tcp.dstport -e tcp.seq_raw -e tcp.ack_raw
//! -e tcp.flags -e tcp.window_size_value -e tcp.len -e tcp.options.mss_val
//! -e tcp.options.wscale.shift -e udp.srcport -e udp.dstport -e udp.length
//! -e icmp.type -e icmp.code`, so the two can be diffed.
//! Usage: `cargo run -p wire --release --example tracedump FILE`.

use std::io::{self, BufWriter, Write};
use wire::{TraceReader, Transport};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: tracedump FILE")?;
    let mut r = TraceReader::open(&path)?;
    let mut out = BufWriter::new(io::stdout().lock());
    let mut n = 0;
    while let Some(rec) = r.read_next()? {
        n += 1;
        write!(out, "{n}\t{}", rec.orig_len)?;
        let Ok(p) = rec.decode() else {
            writeln!(out, "{}", "\t".repeat(17))?;
            continue;
        };
        write!(out, "\t{}\t{}\t{}", p.ip.src, p.ip.dst, p.ip.proto)?;
        match p.transport {
            Transport::Tcp(t) => {
                let opt = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_default();
                write!(
                    out,
                    "\t{}\t{}\t{}\t{}\t0x{:04x}\t{}\t{}\t{}\t{}",
                    t.src_port,
                    t.dst_port,
                    t.seq,
                    t.ack,
                    t.flags.0,
                    t.window,
                    t.payload_len,
                    opt(t.options.mss.map(u32::from)),
                    opt(t.options.window_scale.map(u32::from)),
                )?;
            }
            _ => write!(out, "{}", "\t".repeat(9))?,
        }
        match p.transport {
            Transport::Udp(u) => write!(out, "\t{}\t{}\t{}", u.src_port, u.dst_port, u.length)?,
            _ => write!(out, "\t\t\t")?,
        }
        match p.transport {
            Transport::Icmp(i) => writeln!(out, "\t{}\t{}", i.icmp_type, i.code)?,
            _ => writeln!(out, "\t\t")?,
        }
    }
    out.flush()?;
    eprintln!("{:?}", r.stats());
    Ok(())
}
