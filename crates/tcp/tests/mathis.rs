mod common;
use common::*;
use tcp::{Algorithm, Dur, Time};
use units::Rng;

/// Long-run Reno throughput under random loss p follows Mathis et al. (1997):
/// rate = MSS / RTT * C / sqrt(p). With byte counting the window grows one MSS per RTT
/// even with delayed ACKs, so C = sqrt(3/2) = 1.22 (periodic-loss derivation).
#[test]
fn reno_family_throughput_follows_mathis() {
    let rtt = 0.1;
    for (alg, sack) in [(Algorithm::NewReno, true), (Algorithm::NewReno, false), (Algorithm::Reno, true)] {
        for p in [0.005, 0.02] {
            let mut rng = Rng::stream(11, &format!("{alg:?}{sack}{p}"));
            let mut net = Net::new(cfg(alg, sack), cfg(alg, sack), Dur::from_millis(50))
                .transfer(u64::MAX / 4, 0)
                .dropping(move |_, side, seg| side == Side::A && seg.len > 0 && rng.bernoulli(p));
            net.start();
            let (t1, t2) = (Time::from_secs_f64(20.0), Time::from_secs_f64(420.0));
            net.run_until(t2);
            let bytes = net.delivered_at(Side::B, t2) - net.delivered_at(Side::B, t1);
            let rate = bytes as f64 / (t2 - t1).as_secs_f64();
            let mathis = MSS as f64 / rtt * (1.5f64).sqrt() / p.sqrt();
            let ratio = rate / mathis;
            eprintln!("{alg:?} sack={sack} p={p}: {rate:.0} B/s, Mathis {mathis:.0}, ratio {ratio:.2}, rtos {}", net.a().stats().rtos);
            assert!((0.85..1.2).contains(&ratio), "{alg:?} sack={sack} p={p}: ratio {ratio:.2}");
        }
    }
}
