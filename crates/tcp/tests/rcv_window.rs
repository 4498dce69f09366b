//! Linux's receive window: it opens from 64 KiB as data arrives, every
//! segment that opens it is ACKed at once, and the buffer grows to about
//! twice a round trip's data. Compared with what Linux 6.18 did on the same
//! path in undertow's emulator (`tcp_probe` and the core's capture): a SYN/ACK
//! window of 65,160 bytes, about 0.66 ACKs per data segment over a 1 MB
//! download, and HyStart leaving slow start at a cwnd of 70.

mod common;

use common::{Net, Side};

use tcp::{Algorithm, Dur, Flags, TcpConfig, Time};
use units::Rate;

fn linux(rcv_buf_auto: bool) -> TcpConfig {
    TcpConfig { algorithm: Algorithm::Cubic, snd_buf_auto: false, rcv_buf_auto, ..TcpConfig::default() }
}

/// A 1 MB download through a 15 Mbit/s, 20 ms each way, 100-packet bottleneck.
fn download(rcv_buf_auto: bool) -> Net {
    download_of(rcv_buf_auto, 1_000_000)
}

fn download_of(rcv_buf_auto: bool, bytes: u64) -> Net {
    let c = linux(rcv_buf_auto);
    let mut net = Net::new(c.clone(), c, Dur::from_millis(20)).bottleneck(Rate::bps(15_000_000), 100).transfer(bytes, 0);
    net.start();
    net.run(Time::from_secs_f64(30.0));
    assert_eq!(net.app[1].delivered, bytes);
    net
}

#[test]
fn the_receivers_first_window_is_64_kib_in_whole_segments() {
    let net = download(true);
    let syn_ack = net.sent_by(Side::B).next().expect("B answered");
    assert!(syn_ack.seg.syn_opts.is_some());
    // 45 segments of 1448 bytes (an MSS of 1460 less 12 bytes of timestamps).
    assert_eq!(syn_ack.seg.wnd, 65_160);
}

#[test]
fn the_receiver_acks_each_segment_while_its_window_opens() {
    let auto = download(true);
    // With a fixed window HyStart sees an ACK per two segments and leaves slow start
    // late enough for the queue to overflow before 1 MB (and a loss is ACKed segment
    // by segment): 400 kB stay loss-free.
    let fixed = download_of(false, 400_000);
    assert_eq!(fixed.a().stats().retransmits, 0);
    let per_segment = |net: &Net| net.pure_acks_by(Side::B) as f64 / net.data_by(Side::A).count() as f64;
    let (a, f) = (per_segment(&auto), per_segment(&fixed));
    eprintln!("ACKs per data segment: {a:.3} opening the window, {f:.3} with a fixed one");
    // A fixed window: every second segment, and the first 16 at once.
    assert!((0.5..0.55).contains(&f), "{f}");
    // Opening: Linux's 0.66, within a tenth.
    assert!((0.6..0.73).contains(&a), "{a}");
}

#[test]
fn the_window_opens_then_stays_once_the_buffer_holds_twice_a_round_trips_data() {
    let net = download(true);
    let windows: Vec<(f64, u64)> = net.sent_by(Side::B).filter(|w| w.seg.syn_opts.is_none()).map(|w| (w.t.as_secs_f64(), w.seg.wnd)).collect();
    let last = windows.last().unwrap().1;
    // The window grew well past its first 64 KiB...
    assert!(last > 4 * 65_160, "{last}");
    // ...to about twice what a round trip carries here (15 Mbit/s over 44 ms
    // and its queue: 82-270 kB), not to the 2 MiB the 4 MiB buffer allows.
    assert!(last < 1 << 20, "{last}");
    // It never shrinks.
    assert!(windows.windows(2).all(|p| p[1].1 >= p[0].1 || p[1].1 + 1448 >= p[0].1), "{windows:?}");
}

#[test]
fn hystart_leaves_slow_start_where_linux_does_when_acks_come_per_segment() {
    let net = download(true);
    let mss = net.a().mss() as u64;
    let end = net.trace.iter().position(|s| s.ssthresh != u64::MAX).expect("slow start ends");
    let exit = net.trace[end - 1].cwnd / mss;
    // Linux 6.18 on the same path: 70 (BDP 50 segments; the queue overflows at 150).
    assert!((60..=85).contains(&exit), "exit cwnd {exit}");
    assert_eq!(net.a().stats().retransmits, 0);
}

#[test]
fn a_client_advertises_linuxs_windows_ack_for_ack_as_a_download_opens_them() {
    // Linux 6.18's client in the emulator's capture (50 Mbit/s, 10 ms each
    // way): its SYN offers 44 segments of 1460 bytes, its handshake ACK
    // keeps that rounded up to the scale's 128-byte unit, and the ACKs of
    // the download's first segments open two segments each, rounded up,
    // until the 128 KiB buffer, less the segment just queued, is reached.
    let c = linux(true);
    let mut net = Net::new(c.clone(), c, Dur::from_millis(10)).bottleneck(Rate::bps(50_000_000), 200).transfer(0, 200_000);
    net.start();
    net.run(Time::from_secs_f64(5.0));
    assert_eq!(net.app[0].delivered, 200_000);
    // The client has nothing to send and closes its side at once: its FIN aside.
    let windows: Vec<u64> = net.sent_by(Side::A).filter(|w| w.seg.len == 0 && !w.seg.flags.contains(Flags::FIN)).map(|w| w.seg.wnd).take(9).collect();
    assert_eq!(windows, [64_240, 64_256, 67_200, 70_144, 72_960, 75_904, 78_848, 80_512, 80_512]);
}
