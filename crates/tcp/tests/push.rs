//! Where a Linux sender sets PSH: on the last segment of every packet of more
//! than one segment it hands the device (`__tcp_transmit_skb` forces it on
//! GSO packets, and GSO leaves it on the last segment), besides the segment
//! that ends a write. A Linux receiver ACKs a pushed segment as soon as it is
//! read, so these marks decide where its ACKs fall.

mod common;

use common::{Net, Side};

use tcp::{Dur, Flags, TcpConfig, Time};
use units::Rate;

/// The first `n` data segments A sent, whether each carried PSH, for a 1 MB
/// download through 50 Mbit/s, 11 ms each way and a 200-packet queue.
fn pushed(c: TcpConfig, n: usize) -> Vec<bool> {
    let mut net = Net::new(c.clone(), c, Dur::from_millis(11)).bottleneck(Rate::bps(50_000_000), 200).transfer(1_000_000, 0);
    net.start();
    net.run(Time::from_secs_f64(10.0));
    assert_eq!(net.app[1].delivered, 1_000_000);
    net.sent_by(Side::A).filter(|w| w.seg.len > 0 && !w.seg.retransmit).take(n).map(|w| w.seg.flags.contains(Flags::PSH)).collect()
}

#[test]
fn a_linux_sender_pushes_the_last_segment_of_every_packet_of_two_or_more() {
    // Slow start's first rounds leave in packets of two, the TSO autosize
    // at these rates: PSH on every second segment, as on Linux's segments
    // 1, 3, ..., 65 in the emulator's capture of such a download (the 50
    // Mbit/s setting's). Here the first 50.
    let c = TcpConfig { snd_buf_auto: false, ..TcpConfig::default() };
    let psh = pushed(c, 50);
    let odd: Vec<bool> = (0..50).map(|i| i % 2 == 1).collect();
    assert_eq!(psh, odd);
}

#[test]
fn without_linux_packets_only_the_end_of_a_write_is_pushed() {
    // ns-2's and ns-3's senders (no TSO model) send segment by segment.
    let c = TcpConfig { snd_buf_auto: false, tso_defer: false, ..TcpConfig::default() };
    let psh = pushed(c, 400);
    assert!(psh.iter().all(|&p| !p), "{} of 400 pushed", psh.iter().filter(|&&p| p).count());
}
