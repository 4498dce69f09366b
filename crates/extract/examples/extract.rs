//! `cargo run --release -p extract --example extract -- [--key client-server] [--repeat N] [--no-lines] FILE... > model.json`
//!
//! Extracts the Swing model of the given traces (merged as one link) with
//! the default options, writes it as JSON to stdout, and prints the
//! counters, packets per second and peak RSS (VmHWM) to stderr.
//! `--repeat N` plays one classic pcap N times in memory, each pass 400 s
//! after the previous one (longer than the idle timeout, so every pass
//! opens new connections between the same hosts): a long trace for
//! measuring speed and memory.

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::time::Instant;

fn vm_hwm_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut opts = swing::ExtractOptions::default();
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut repeat: Option<u32> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--repeat" => repeat = Some(args.next().and_then(|n| n.parse().ok()).ok_or("--repeat needs a count")?),
            "--no-lines" => opts.lines = false,
            "--key" => {
                opts.session_key = match args.next().as_deref() {
                    Some("client") => swing::SessionKey::Client,
                    Some("client-server") => swing::SessionKey::ClientServer,
                    other => return Err(format!("--key {other:?}: use client or client-server").into()),
                }
            }
            _ => paths.push(a.into()),
        }
    }
    if paths.is_empty() {
        return Err("usage: extract [--key client|client-server] [--repeat N] [--no-lines] FILE... > model.json".into());
    }
    let t = Instant::now();
    let (model, report) = match repeat {
        None => extract::extract(&paths, &opts, &mut |_| true)?,
        Some(n) => {
            let [path] = &paths[..] else { return Err("--repeat takes one classic pcap".into()) };
            let r = common::Repeat::new(std::fs::read(path)?, n, 400);
            let name = format!("{} x{n}", path.display());
            extract::extract_readers(vec![(name, Box::new(r))], &opts, &mut |_| true)?
        }
    };
    let secs = t.elapsed().as_secs_f64();
    let rss = |k: Option<u64>| k.map_or("?".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0));
    let extracting = rss(vm_hwm_kib());
    model.check()?;
    let json = serde_json::to_string_pretty(&model)?;
    println!("{json}");
    eprintln!("{report:#?}");
    eprintln!(
        "{} packets in {secs:.3} s: {:.2} M packets/s; peak RSS {extracting} extracting, {} with the {:.1} MB of JSON; \
         {} classes, {} UDP classes, {} hosts; sides: {}",
        report.packets,
        report.packets as f64 / secs / 1e6,
        rss(vm_hwm_kib()),
        json.len() as f64 / 1e6,
        model.classes.len(),
        model.udp.len(),
        model.hosts.len(),
        model.sides.decided_by
    );
    Ok(())
}
