//! Read+decode throughput: `cargo run -p wire --release --example readspeed FILE [REPEAT]`.
//! Reads the file REPEAT times (default 20) from the page cache, decoding
//! every record, and prints records per second.

use std::time::Instant;
use wire::{DecodeStats, TraceReader};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: readspeed FILE [REPEAT]")?;
    let repeat: u32 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(20);
    let mut counts = DecodeStats::default();
    let mut records = 0u64;
    let mut bytes = 0u64;
    let t0 = Instant::now();
    for _ in 0..repeat {
        let mut r = TraceReader::open(&path)?;
        while let Some(rec) = r.read_next()? {
            counts.add(&rec.decode());
        }
        records += r.stats().records;
        bytes += r.stats().bytes;
    }
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "{path}: {} records x {repeat} in {secs:.3} s: {:.1} M records/s, {:.0} ns/record ({:.1} Gbit/s of traffic)",
        records / repeat as u64,
        records as f64 / secs / 1e6,
        secs * 1e9 / records.max(1) as f64,
        bytes as f64 * 8.0 / secs / 1e9,
    );
    println!("decoded (all passes): {counts:?}");
    Ok(())
}
