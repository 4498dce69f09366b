//! The time sliding window three colour marker (TSWTCM, RFC 2859): a
//! DiffServ traffic conditioner that colours packets green, yellow or red
//! by how far a stream's estimated rate exceeds its committed (CTR) and
//! peak (PTR) target rates. It never holds or drops a packet.

use crate::element::{Element, Verdict};
use crate::packet::{Colour, Packet};
use std::collections::HashMap;
use units::{Dur, Rng, Time};

/// What one marker meters: the whole stream it sees, or each flow apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// One profile for the aggregate (ns-2's policy per edge pair; the
    /// AF/BE study's SLA).
    Aggregate,
    /// One profile per flow label.
    PerFlow,
}

/// A TSWTCM's parameters (RFC 2859 section 2).
#[derive(Clone, Debug, PartialEq)]
pub struct TswtcmSpec {
    /// Committed and peak target rates, bits per second. PTR = CTR makes
    /// it a two-colour marker (green or red).
    pub ctr_bps: f64,
    pub ptr_bps: f64,
    /// The estimator's window (RFC 2859's win_length; ns-2 fixes 1 s).
    pub window: Dur,
    pub scope: Scope,
    /// The class it meters (`Packet::class`); every class when `None`.
    pub class: Option<u8>,
    /// The colour it gives packets of the classes it does not meter (the
    /// AF/BE study puts best effort with out-of-profile AF: red).
    pub others: Colour,
}

/// The TSW rate estimator of one stream: `avg_rate` in bytes per second,
/// updated at each packet as RFC 2859 section 2.1 (Clark and Fang's TSW).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tsw {
    pub avg_rate: f64,
    pub t_front: f64,
}

impl Tsw {
    /// An estimator configured at `now` (seconds): at the committed rate,
    /// its window's front at `now` (RFC 2859 section 2.1's initial
    /// AVG_RATE = CTR, T_FRONT = 0 for a meter configured as the run
    /// starts, as ns-2's policy table starts it).
    pub fn new(ctr_bytes_per_s: f64, now: f64) -> Tsw {
        Tsw { avg_rate: ctr_bytes_per_s, t_front: now }
    }

    /// Counts a packet of `len` bytes arriving at `now` (seconds).
    #[inline]
    pub fn update(&mut self, now: f64, len: u32, window: f64) {
        let bytes_in_tsw = self.avg_rate * window;
        let new_bytes = bytes_in_tsw + len as f64;
        self.avg_rate = new_bytes / (now - self.t_front + window);
        self.t_front = now;
    }
}

/// The RFC's colouring of a packet given the stream's estimate: green up
/// to CTR; between CTR and PTR yellow with probability (avg-CTR)/avg;
/// beyond PTR red with probability (avg-PTR)/avg and yellow with
/// (PTR-CTR)/avg. `u` is a uniform draw in [0, 1).
pub fn colour(avg: f64, ctr: f64, ptr: f64, u: f64) -> Colour {
    if avg <= ctr {
        return Colour::Green;
    }
    // One draw of a rate in [0, avg): above PTR red, above CTR yellow
    // (ns-2's TSW3CM policer), which gives the RFC's probabilities.
    let x = u * avg;
    if x >= ptr.max(ctr) {
        Colour::Red
    } else if x >= ctr {
        Colour::Yellow
    } else {
        Colour::Green
    }
}

/// The marker element.
#[derive(Debug)]
pub struct Tswtcm {
    spec: TswtcmSpec,
    /// In bytes per second.
    ctr: f64,
    ptr: f64,
    window: f64,
    /// The aggregate's estimator, configured as the run starts (time
    /// zero): the stream's first packet, however late, is counted over the
    /// time since then, as RFC 2859's and ns-2's are.
    aggregate: Tsw,
    /// Each flow's, configured when its first packet arrives.
    flows: HashMap<u32, Tsw>,
    rng: Rng,
    /// Packets coloured, by colour (metered packets only).
    pub counts: [u64; 3],
}

impl Tswtcm {
    pub fn new(spec: TswtcmSpec, rng: Rng) -> Tswtcm {
        let ctr = spec.ctr_bps / 8.0;
        let ptr = spec.ptr_bps.max(spec.ctr_bps) / 8.0;
        let window = spec.window.as_secs_f64().max(1e-9);
        Tswtcm { spec, ctr, ptr, window, aggregate: Tsw::new(ctr, 0.0), flows: HashMap::new(), rng, counts: [0; 3] }
    }

    fn meters(&self, pkt: &Packet) -> bool {
        self.spec.class.is_none_or(|c| c == pkt.class)
    }
}

impl Element for Tswtcm {
    #[inline]
    fn offer(&mut self, now: Time, pkt: &mut Packet) -> Verdict {
        if !self.meters(pkt) {
            pkt.colour = self.spec.others;
            return Verdict::Deliver(now);
        }
        let t = now.as_secs_f64();
        let (ctr, window) = (self.ctr, self.window);
        let tsw = match self.spec.scope {
            Scope::Aggregate => &mut self.aggregate,
            Scope::PerFlow => self.flows.entry(pkt.flow).or_insert_with(|| Tsw::new(ctr, t)),
        };
        tsw.update(t, pkt.len, window);
        let avg = tsw.avg_rate;
        let c = colour(avg, self.ctr, self.ptr, self.rng.uniform());
        pkt.colour = c;
        self.counts[c.index()] += 1;
        Verdict::Deliver(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(ctr: f64, ptr: f64) -> TswtcmSpec {
        TswtcmSpec { ctr_bps: ctr, ptr_bps: ptr, window: Dur::from_secs(1), scope: Scope::Aggregate, class: None, others: Colour::Red }
    }

    /// Offers a constant-rate stream of 1000-byte packets at `rate_bps`
    /// for `secs`, and returns the share of each colour after the first
    /// five windows (the estimator's warm-up).
    fn shares(m: &mut Tswtcm, rate_bps: f64, secs: f64) -> [f64; 3] {
        let gap = 1000.0 * 8.0 / rate_bps;
        let n = (secs / gap) as u64;
        let mut counts = [0u64; 3];
        for i in 0..n {
            let t = i as f64 * gap;
            let mut p = Packet::new(i as u32, 1000);
            m.offer(Time::from_secs_f64(t), &mut p);
            if t >= 5.0 {
                counts[p.colour.index()] += 1;
            }
        }
        let total: u64 = counts.iter().sum();
        counts.map(|c| c as f64 / total as f64)
    }

    #[test]
    fn the_tsw_estimate_of_a_constant_rate_converges_to_that_rate() {
        // From CTR = 1 Mbit/s, a 3 Mbit/s stream: the estimate closes
        // the gap by a factor e per window.
        let mut tsw = Tsw::new(125_000.0, 0.0);
        let gap = 1000.0 / 375_000.0;
        for i in 1..=(10.0 / gap) as u64 {
            tsw.update(i as f64 * gap, 1000, 1.0);
        }
        assert!((tsw.avg_rate / 375_000.0 - 1.0).abs() < 1e-3, "{}", tsw.avg_rate);
    }

    #[test]
    fn the_aggregate_is_metered_from_the_run_start_and_a_flow_from_its_first_packet() {
        // RFC 2859 section 2.1 starts the estimator at AVG_RATE = CTR,
        // T_FRONT = 0: a first packet one second into the run is averaged
        // over that second and the window. A flow's meter starts with it.
        let one_at = |scope| {
            let mut m = Tswtcm::new(TswtcmSpec { scope, ..spec(1e6, 1e6) }, Rng::stream(4, "t"));
            m.offer(Time::from_secs_f64(1.0), &mut Packet::new(0, 1000));
            match scope {
                Scope::Aggregate => m.aggregate.avg_rate,
                Scope::PerFlow => m.flows[&0].avg_rate,
            }
        };
        assert_eq!(one_at(Scope::Aggregate), (125_000.0 + 1000.0) / 2.0);
        assert_eq!(one_at(Scope::PerFlow), 125_000.0 + 1000.0);
    }

    #[test]
    fn a_constant_rate_stream_is_coloured_in_the_rfc_2859_shares() {
        // CTR 1 Mbit/s, PTR 2 Mbit/s. Below CTR all green; between, yellow
        // (avg-CTR)/avg; beyond PTR, red (avg-PTR)/avg and yellow
        // (PTR-CTR)/avg. Tolerance: 3 standard deviations of a binomial
        // share over the packets counted (about 1% here).
        let rng = || Rng::stream(1, "tswtcm-test");
        let cases = [(0.8e6, [1.0, 0.0, 0.0]), (1.5e6, [2.0 / 3.0, 1.0 / 3.0, 0.0]), (4e6, [0.25, 0.25, 0.5])];
        for (rate, want) in cases {
            let mut m = Tswtcm::new(spec(1e6, 2e6), rng());
            let got = shares(&mut m, rate, 60.0);
            let n = 55.0 * rate / 8000.0;
            for k in 0..3 {
                let tol = 3.0 * (want[k] * (1.0 - want[k]) / n).sqrt() + 1e-3;
                assert!((got[k] - want[k]).abs() <= tol, "rate {rate}: {got:?} against {want:?}");
            }
        }
    }

    #[test]
    fn with_ptr_equal_to_ctr_it_marks_two_colours() {
        let mut m = Tswtcm::new(spec(1e6, 1e6), Rng::stream(2, "tswtcm-test"));
        let got = shares(&mut m, 2e6, 60.0);
        assert_eq!(got[1], 0.0);
        assert!((got[2] - 0.5).abs() < 0.01, "{got:?}");
    }

    #[test]
    fn per_flow_profiles_meter_each_flow_apart_and_other_classes_take_their_colour() {
        // Two flows at 0.8 Mbit/s each against a 1 Mbit/s profile: each
        // is in profile alone, their aggregate is not.
        let mut per_flow = Tswtcm::new(TswtcmSpec { scope: Scope::PerFlow, class: Some(1), ..spec(1e6, 1e6) }, Rng::stream(3, "t"));
        let mut aggregate = Tswtcm::new(TswtcmSpec { class: Some(1), ..spec(1e6, 1e6) }, Rng::stream(3, "t"));
        let gap = 1000.0 * 8.0 / 0.8e6;
        for i in 0..(30.0 / gap) as u64 {
            for flow in [7, 9] {
                let t = Time::from_secs_f64(i as f64 * gap);
                let mut p = Packet::new(0, 1000);
                (p.flow, p.class) = (flow, 1);
                per_flow.offer(t, &mut p);
                let mut q = p;
                aggregate.offer(t, &mut q);
            }
        }
        assert_eq!(per_flow.counts[2], 0);
        let red = aggregate.counts[2] as f64 / aggregate.counts.iter().sum::<u64>() as f64;
        assert!((red - 0.375).abs() < 0.02, "{red}");
        // A best-effort packet is not metered: it takes `others`.
        let mut be = Packet::new(0, 1000);
        per_flow.offer(Time::from_secs_f64(31.0), &mut be);
        assert_eq!(be.colour, Colour::Red);
    }
}
