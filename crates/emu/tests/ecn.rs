//! ECN through the core: real Linux stacks that agreed on ECN (tcp_ecn = 1 on
//! the sender), a bottleneck whose CoDel marks instead of dropping. The mark
//! must land in the real IP header with a valid checksum: the receiver then
//! echoes it, and the sender counts the echoed marks (TcpExtTCPDeliveredCE).
//! Skips, saying why, without root or TUN.

use emu::testbed::Testbed;
use net::queue::CodelParams;
use net::{DisciplineSpec, ElementSpec, PathSpec, QueueLimit, RateSpec};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;
use units::{Dur, Rate};

/// `name`'s value in the TcpExt section of namespace `space`'s netstat
/// (thread-self: /proc/net follows the process's first thread's namespace).
fn tcp_ext(net: &emu::Network, space: usize, name: &str) -> u64 {
    let text = net.spaces[space].ns.within(|| std::fs::read_to_string("/proc/thread-self/net/netstat")).unwrap();
    let mut lines = text.lines().filter(|l| l.starts_with("TcpExt:"));
    let (keys, values) = (lines.next().unwrap(), lines.next().unwrap());
    let i = keys.split_whitespace().position(|k| k == name).unwrap_or_else(|| panic!("no {name} in /proc/net/netstat"));
    values.split_whitespace().nth(i).unwrap().parse().unwrap()
}

#[test]
fn codel_marks_real_ect_packets_and_linux_echoes_the_marks() {
    let Some(_one) = emu::testbed::exclusive() else { return };
    let codel = DisciplineSpec::Codel(CodelParams { ecn: true, ..CodelParams::default() });
    let neck = PathSpec {
        elements: vec![
            ElementSpec::Queue { rate: RateSpec::Fixed(Rate::mbps(10)), limit: QueueLimit::Packets(1000), discipline: codel },
            ElementSpec::Delay(net::DelaySpec::Fixed(Dur::from_millis(10))),
        ],
    };
    let ecn = |v: &str| vec![("net.ipv4.tcp_ecn".to_string(), v.to_string())];
    let mut r = Testbed::with_bottleneck(neck, 1000, 1000, [ecn("1"), ecn("2")]).unwrap();
    let to = SocketAddr::new(r.right, 9001);
    let listener = r.net.spaces[1].ns.within(|| TcpListener::bind(to)).unwrap();
    let left = r.left;
    // Two seconds of a greedy stream: CoDel's queue builds past its target.
    let (sent, got) = r
        .with_core(|net| {
            std::thread::scope(|s| {
                let rx = s.spawn(move || {
                    let (mut c, _) = listener.accept().unwrap();
                    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                    let mut buf = vec![0u8; 1 << 16];
                    let mut n = 0u64;
                    while let Ok(k) = c.read(&mut buf) {
                        if k == 0 {
                            break;
                        }
                        n += k as u64;
                    }
                    n
                });
                let mut c = net.spaces[0].ns.within(|| TcpStream::connect_timeout(&to, Duration::from_secs(2))).unwrap();
                assert_eq!(c.local_addr().unwrap().ip(), left);
                let chunk = vec![7u8; 1 << 16];
                let (t0, mut sent) = (std::time::Instant::now(), 0u64);
                while t0.elapsed() < Duration::from_secs(2) {
                    c.write_all(&chunk).unwrap();
                    sent += chunk.len() as u64;
                }
                drop(c);
                (sent, rx.join().unwrap())
            })
        })
        .unwrap();
    let q = r.core.fabric().paths[net::fabric::BOTTLENECK_FWD as usize].path.queue().unwrap().stats();
    let echoed = tcp_ext(&r.net, 0, "TCPDeliveredCE");
    eprintln!("sent {sent} B, received {got} B; bottleneck: {} ECN marks, {:?} drops; sender's TCPDeliveredCE {echoed}", q.aqm.ecn_marks, q.drops);
    assert_eq!(got, sent, "every byte arrives: marked packets kept valid headers");
    assert!(q.aqm.ecn_marks > 0, "CoDel marked the ECN-capable stream");
    assert!(echoed > 0, "the receiver saw CE and the sender its echo");
}
