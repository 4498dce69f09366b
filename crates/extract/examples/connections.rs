//! `cargo run --release -p extract --example connections -- FILE...`
//!
//! Prints every TCP connection the extractor rebuilt (the debugging view
//! `extract::connections`): endpoints, times relative to the first one,
//! handshake, bytes, retransmissions and each request/response pair.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let paths: Vec<std::path::PathBuf> = std::env::args().skip(1).map(Into::into).collect();
    if paths.is_empty() {
        return Err("usage: connections FILE...".into());
    }
    let recs = extract::connections(&paths, &swing::ExtractOptions::default())?;
    let t0 = recs.iter().map(|r| r.start_ns).min().unwrap_or(0);
    let rel = |t: i64| (t - t0) as f64 * 1e-9;
    for r in &recs {
        println!(
            "{} -> {} [{}] {:.6}..{:.6} {:?} syn {:?}x{} synack {:?}x{} ack {:?} rtt {:?} pkts {:?} payload {:?} retx {:?} fills {:?}",
            r.client,
            r.server,
            r.class,
            rel(r.start_ns),
            rel(r.end_ns),
            r.end,
            r.syn_ns.map(rel),
            r.syns,
            r.synack_ns.map(rel),
            r.synacks,
            r.ack_ns.map(rel),
            r.handshake_rtt_s(),
            r.packets,
            r.payload,
            r.retransmissions,
            r.fills
        );
        for p in &r.pairs {
            let e = |e: Option<extract::Element>| e.map(|e| (e.bytes, rel(e.start), rel(e.end)));
            println!("    req {:?} resp {:?}", e(p.req), e(p.resp));
        }
    }
    Ok(())
}
