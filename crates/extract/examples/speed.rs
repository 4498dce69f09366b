//! `cargo run --release -p extract --example speed -- FILE... [--loops N]`
//!
//! Extraction speed per trace: each file is read into memory once and
//! extracted N times (default 20), so the figure is the extractor's, not
//! the disk's; prints packets per second for each file.

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut loops = 20u32;
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--loops" {
            loops = args.next().and_then(|n| n.parse().ok()).ok_or("--loops needs a count")?;
        } else {
            files.push(a);
        }
    }
    let opts = swing::ExtractOptions::default();
    for f in files {
        let bytes = std::fs::read(&f)?;
        let t = Instant::now();
        let mut packets = 0;
        for _ in 0..loops {
            let src: Box<dyn std::io::Read> = Box::new(std::io::Cursor::new(bytes.clone()));
            let (_, r) = extract::extract_readers(vec![(f.clone(), src)], &opts, &mut |_| true)?;
            packets += r.packets;
        }
        let s = t.elapsed().as_secs_f64();
        println!("{f}: {} packets x {loops}: {:.2} M packets/s", packets / loops as u64, packets as f64 / s / 1e6);
    }
    Ok(())
}
