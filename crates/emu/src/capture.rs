//! pcap capture of the bottleneck as the core forwards it: the real
//! packets, cut at the snap length, stamped with the core's clock.

use crate::core::Observer;
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
    /// The first write error; later packets are not written.
    error: Option<io::Error>,
}

impl Capture {
    pub fn create(path: &Path, snaplen: u32, from: Time) -> io::Result<Capture> {
        Ok(Capture { w: PcapWriter::create(path, LinkType::RAW, snaplen)?, snaplen: snaplen as usize, from, error: None })
    }
}

impl Observer for Capture {
    fn arrived(&mut self, _monitor: u8, at: Time, ip: &[u8]) {
        if at < self.from || self.error.is_some() {
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
