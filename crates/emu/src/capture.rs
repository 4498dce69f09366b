//! pcap capture of the bottleneck as the core forwards it: the real
//! packets, cut at the snap length, stamped with the core's clock; a share
//! of data segments left out when the scenario asks for a capture that
//! misses what the trace's missed.

use crate::core::Observer;
use rundir::CaptureMiss;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;
use units::Time;
use wire::{LinkType, PcapWriter};

pub struct Capture {
    w: PcapWriter<BufWriter<File>>,
    snaplen: usize,
    /// Packets before this are not written (the run's warm-up).
    from: Time,
    miss: CaptureMiss,
    /// The first write error; later packets are not written.
    error: Option<io::Error>,
}

impl Capture {
    pub fn create(path: &Path, snaplen: u32, from: Time, miss: CaptureMiss) -> io::Result<Capture> {
        Ok(Capture { w: PcapWriter::create(path, LinkType::RAW, snaplen)?, snaplen: snaplen as usize, from, miss, error: None })
    }
}

impl Observer for Capture {
    fn arrived(&mut self, monitor: u8, at: Time, ip: &[u8]) {
        if at < self.from || self.error.is_some() {
            return;
        }
        let tcp_data = || wire::decode(LinkType::RAW, ip, ip.len() as u32).is_ok_and(|p| p.tcp().is_some_and(|t| t.payload_len > 0));
        if self.miss.skips(monitor as usize, tcp_data) {
            return;
        }
        let cut = &ip[..ip.len().min(self.snaplen)];
        if let Err(e) = self.w.write_packet(at.0, ip.len() as u32, cut) {
            self.error = Some(e);
        }
    }

    /// Flushes the file; the first error met while writing, if any.
    fn finish(mut self: Box<Self>) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.w.flush()
    }
}
