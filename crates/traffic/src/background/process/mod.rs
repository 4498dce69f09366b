//! Rate processes, and the packet times they give.
//!
//! A rate process is a rate r(t) ≥ 0 in bits per second, t in seconds
//! since the model's start, with its integral F(t) = ∫₀ᵗ r in closed form.
//! Packets are not sent at a rate held for a while: the j-th packet of the
//! whole model (j = 1, 2, …) leaves at the instant where F reaches j packets'
//! bits, found by a safeguarded Newton solve ([`time_of`]). This is the
//! generator of the ns-2 sine-background anchor (Kenesi et al.), used here
//! for every process. With `n` hosts, host `i` (from 0) sends packets
//! `i + 1, i + 1 + n, …`: each host carries rate/n and the hosts together
//! send exactly the one-host sequence.

mod fft;
mod fgn;
mod noise;
mod samples;
mod sine;

pub use fgn::{autocovariance, unit_fgn, Embedding, Fgn};
pub use noise::Noise;
pub use samples::{Ramps, Steps};
pub use sine::{Sine, Wave};

/// A rate that varies in time.
pub trait RateProcess: Send {
    /// What summary.json calls a source of this process over UDP and TCP.
    fn kinds(&self) -> [&'static str; 2];
    /// r(t), bits per second, `t` seconds after the start.
    fn rate(&self, t: f64) -> f64;
    /// F(t) = ∫₀ᵗ r, bits; non-decreasing.
    fn bits(&self, t: f64) -> f64;
    /// The mean rate, bits per second (where to look for the next packet).
    fn mean(&self) -> f64;
    /// Seconds after which the rate is zero for good (infinity if never).
    fn end(&self) -> f64 {
        f64::INFINITY
    }
    /// Whole-run figures of the process for summary.json.
    fn counters(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// Solves F(t) to this many seconds: below the engines' 1 ns timers.
const TOLERANCE_S: f64 = 1e-10;

/// The first time t ≥ `t0` with F(t) = `target` bits, given F(`t0`) ≤
/// `target`; `None` if the process never gets there.
pub fn time_of(p: &dyn RateProcess, t0: f64, target: f64) -> Option<f64> {
    let (mut lo, mut hi) = bracket(p, t0, target)?;
    let r0 = p.rate(lo);
    let mut t = if r0 > 0.0 { lo + (target - p.bits(lo)) / r0 } else { f64::NAN };
    if !(t > lo && t <= hi) {
        t = 0.5 * (lo + hi);
    }
    for _ in 0..200 {
        let g = p.bits(t) - target;
        if g == 0.0 {
            return Some(t);
        }
        if g < 0.0 {
            lo = t;
        } else {
            hi = t;
        }
        let r = p.rate(t);
        if hi - lo < TOLERANCE_S || (r > 0.0 && g.abs() / r < TOLERANCE_S) {
            return Some(t);
        }
        // Newton where it stays inside the bracket, bisection elsewhere
        // (where the rate is zero or the step overshoots).
        let next = if r > 0.0 { t - g / r } else { f64::NAN };
        t = if next > lo && next <= hi { next } else { 0.5 * (lo + hi) };
    }
    Some(hi)
}

/// An interval [lo, hi] with F(lo) ≤ target ≤ F(hi), found by doubling
/// steps from `t0`; `None` if F stays below `target` up to the end.
fn bracket(p: &dyn RateProcess, t0: f64, target: f64) -> Option<(f64, f64)> {
    let mut lo = t0;
    let mut step = ((target - p.bits(t0)) / p.mean().max(1e-9)).max(TOLERANCE_S);
    loop {
        let hi = lo + step;
        if p.bits(hi) >= target {
            return Some((lo, hi));
        }
        if hi >= p.end() || !hi.is_finite() {
            return None;
        }
        lo = hi;
        step *= 2.0;
    }
}

/// Packet times of `hosts` hosts sharing a rate process, each host's
/// packets in turn (see the module's notes).
pub struct Pacer {
    process: Box<dyn RateProcess>,
    hosts: usize,
    /// Bits of one packet.
    packet_bits: f64,
    start_ns: f64,
    /// Per host: its next packet, counted in packets of the whole model
    /// (F / packet bits), and when it is due, ns.
    next: Vec<(f64, f64)>,
}

impl Pacer {
    pub fn new(process: Box<dyn RateProcess>, hosts: usize, packet_bytes: u32, start: units::Time) -> Pacer {
        let hosts = hosts.max(1);
        Pacer { process, hosts, packet_bits: packet_bytes as f64 * 8.0, start_ns: start.0 as f64, next: vec![(0.0, 0.0); hosts] }
    }

    pub fn process(&self) -> &dyn RateProcess {
        self.process.as_ref()
    }

    fn secs(&self, ns: f64) -> f64 {
        ((ns - self.start_ns) / 1e9).max(0.0)
    }

    /// Host `i`'s packet numbered `packets` (of the whole model), searched
    /// from `from_ns`; remembers it as the host's next.
    fn due(&mut self, i: usize, packets: f64, from_ns: f64) -> Option<f64> {
        let t = time_of(self.process.as_ref(), self.secs(from_ns), packets * self.packet_bits)?;
        let at = self.start_ns + t * 1e9;
        self.next[i] = (packets, at);
        Some(at)
    }

    /// Host `i`'s first packet at or after `from_ns` (the model's start, or
    /// when a TCP host's connection is ready): the first of its own packets
    /// there.
    pub fn first(&mut self, i: usize, from_ns: f64) -> Option<f64> {
        let own = (i % self.hosts + 1) as f64;
        let done = self.process.bits(self.secs(from_ns)) / self.packet_bits;
        let n = self.hosts as f64;
        let packets = if done <= own { own } else { own + ((done - own) / n).ceil() * n };
        self.due(i, packets, from_ns)
    }

    /// Host `i`'s packet after its last one. A host that fell behind (a
    /// TCP writer blocked past its last packet's time, `from_ns` later than
    /// it) sends one of its packets' worth of the rate after `from_ns`, as
    /// cbr's writer sends one gap after it unblocks.
    pub fn after(&mut self, i: usize, from_ns: f64) -> Option<f64> {
        let (packets, at) = self.next[i];
        let n = self.hosts as f64;
        // Timers fire at the nanosecond after the exact time: that is not
        // falling behind.
        if from_ns > at.ceil() {
            let done = self.process.bits(self.secs(from_ns)) / self.packet_bits;
            self.due(i, done + n, from_ns)
        } else {
            self.due(i, packets + n, at)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rate of 8000 bit/s for a second, nothing for a second, then 8000
    /// bit/s again: a process with a gap.
    fn gappy() -> Steps {
        Steps::new(["t-udp", "t-tcp"], vec![8000.0, 0.0, 8000.0], 1.0)
    }

    #[test]
    fn time_of_finds_where_the_integral_reaches_the_target_across_a_silent_stretch() {
        let p = gappy();
        // 1000 bits at 8000 bit/s: 0.125 s; 9000 bits is 1000 bits into
        // the third second.
        assert!((time_of(&p, 0.0, 1000.0).expect("reached") - 0.125).abs() < 1e-9);
        assert!((time_of(&p, 0.5, 9000.0).expect("reached") - 2.125).abs() < 1e-9);
        // 24000 bits is all there is; 24001 is never reached.
        assert!(time_of(&p, 0.0, 24001.0).is_none());
    }

    #[test]
    fn hosts_take_packets_in_turn_and_together_send_the_one_host_sequence() {
        // 1000-byte packets at 8 Mbit/s: packet j at j ms.
        let one = Sine::new(8e6, vec![]);
        let mut p = Pacer::new(Box::new(one), 3, 1000, units::Time(0));
        let mut times = vec![];
        for i in 0..3 {
            let mut t = p.first(i, 0.0).expect("first");
            for _ in 0..4 {
                times.push((t, i));
                t = p.after(i, t).expect("next");
            }
        }
        times.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (j, &(t, i)) in times.iter().enumerate() {
            assert!((t - (j + 1) as f64 * 1e6).abs() < 0.1, "{j}: {t}");
            assert_eq!(i, j % 3);
        }
    }

    #[test]
    fn a_host_that_fell_behind_sends_its_share_of_one_packet_after_it_catches_up() {
        // Two hosts at 8 Mbit/s together: each sends every 2 ms. Host 0's
        // first is at 1 ms; held up until 10 ms, its next is at 12 ms.
        let mut p = Pacer::new(Box::new(Sine::new(8e6, vec![])), 2, 1000, units::Time(0));
        assert!((p.first(0, 0.0).expect("first") - 1e6).abs() < 0.1);
        assert!((p.after(0, 10e6).expect("next") - 12e6).abs() < 0.1);
        assert!((p.after(0, 12e6).expect("next") - 14e6).abs() < 0.1);
        // A host starting late takes its next own packet: host 1 (packets
        // 2, 4, 6, ...) from 4.5 ms sends at 6 ms.
        assert!((p.first(1, 4.5e6).expect("first") - 6e6).abs() < 0.1);
    }
}
