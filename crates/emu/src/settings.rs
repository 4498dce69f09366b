//! A host group's TCP settings as real Linux applies them: socket options
//! for what is per socket, sysctls of the host's namespace for what Linux
//! keeps per namespace, attributes of the namespace's route for what it
//! keeps per route. A setting Linux cannot take is an error naming it.

use tcp::{Algorithm, TcpConfig};

/// How Linux is told to behave like a `TcpConfig`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Linux {
    /// TCP_CONGESTION.
    pub congestion: String,
    /// TCP_MAXSEG, when not the default.
    pub mss: Option<u32>,
    /// SO_SNDBUF and SO_RCVBUF, when the buffers are fixed.
    pub sndbuf: Option<u32>,
    pub rcvbuf: Option<u32>,
    /// Sysctls of the namespace (dotted keys).
    pub sysctls: Vec<(String, String)>,
    /// Attributes of the namespace's route (`ip route ... <attrs>`).
    pub route: Vec<String>,
}

/// `tcp` as Linux settings; an error names the first field that Linux
/// cannot apply (compared with the defaults, which are Linux's own).
pub fn linux(tcp: &TcpConfig) -> Result<Linux, String> {
    let (l, refused) = translate(tcp);
    match refused.first() {
        Some((field, why)) => Err(unsupported(field, why)),
        None => Ok(l),
    }
}

/// `tcp` as Linux settings, and the fields Linux cannot apply with why
/// (for settings measured from a trace, which Linux then runs without).
pub fn translate(tcp: &TcpConfig) -> (Linux, Vec<(&'static str, &'static str)>) {
    let d = TcpConfig::default();
    let mut refused = Vec::new();
    let congestion = match tcp.algorithm {
        Algorithm::Cubic => "cubic",
        // Linux's reno recovers as RFC 6582 NewReno does.
        Algorithm::NewReno => "reno",
        Algorithm::Reno => {
            refused.push(("congestion_control = \"reno\"", "Linux's reno recovers as newreno does: use \"newreno\""));
            "reno"
        }
        Algorithm::Tahoe => {
            refused.push(("congestion_control = \"tahoe\"", "Linux has no Tahoe"));
            "reno"
        }
    };
    let mut l = Linux { congestion: congestion.into(), ..Linux::default() };
    let flag = |b: bool| if b { "1" } else { "0" }.to_string();
    let mut sysctl = |k: &str, v: String| l.sysctls.push((format!("net.ipv4.{k}"), v));
    sysctl("tcp_sack", flag(tcp.sack));
    sysctl("tcp_timestamps", flag(tcp.timestamps));
    sysctl("tcp_reordering", tcp.dupthresh.to_string());
    sysctl("tcp_retries2", tcp.max_retries.to_string());
    sysctl("tcp_syn_retries", tcp.syn_retries.to_string());
    sysctl("tcp_slow_start_after_idle", flag(tcp.slow_start_after_idle));
    // 3: the tail loss probe (RFC 8985 §7), Linux's default; 0: none.
    sysctl("tcp_early_retrans", if tcp.tlp { "3" } else { "0" }.to_string());
    // 1: ask for ECN and agree when asked; 2 (Linux's default): only agree.
    sysctl("tcp_ecn", if tcp.ecn { "1" } else { "2" }.to_string());
    if tcp.snd_buf_auto {
        sysctl("tcp_wmem", format!("4096 {} {}", tcp.snd_buf_initial, tcp.snd_buf));
    }
    if tcp.rcv_buf_auto {
        sysctl("tcp_rmem", format!("4096 {} {}", tcp.rcv_buf_initial, tcp.rcv_buf));
    }
    if !tcp.snd_buf_auto {
        match fits(tcp.snd_buf) {
            Some(s) => l.sndbuf = Some(s),
            None => refused.push(("snd_buf", "Linux takes a buffer of at most 4 GiB")),
        }
    }
    if !tcp.rcv_buf_auto {
        match fits(tcp.rcv_buf) {
            Some(r) => l.rcvbuf = Some(r),
            None => refused.push(("rcv_buf", "Linux takes a buffer of at most 4 GiB")),
        }
    }
    if tcp.mss != d.mss {
        l.mss = Some(tcp.mss);
    }
    if tcp.initial_cwnd != d.initial_cwnd {
        l.route.push(format!("initcwnd {}", tcp.initial_cwnd));
    }
    if tcp.min_rto != d.min_rto {
        l.route.push(format!("rto_min {}ms", tcp.min_rto.0.div_ceil(1_000_000)));
    }
    refused.extend(fixed_in_linux(tcp, &d));
    (l, refused)
}

/// The settings the simulator has and Linux does not let one change.
fn fixed_in_linux(tcp: &TcpConfig, d: &TcpConfig) -> Vec<(&'static str, &'static str)> {
    let fixed = [
        ("initial_ssthresh", tcp.initial_ssthresh != d.initial_ssthresh),
        ("ack_every", tcp.ack_every != d.ack_every),
        ("ack_bytes", tcp.ack_bytes != d.ack_bytes),
        ("delack_timeout", tcp.delack_timeout != d.delack_timeout),
        ("max_rto", tcp.max_rto != d.max_rto),
        ("initial_rto", tcp.initial_rto != d.initial_rto),
        ("quickack", tcp.quickack != d.quickack),
        ("byte_counting", tcp.byte_counting != d.byte_counting),
        // The cubic module's `hystart` parameter is global, not per network namespace.
        ("hystart", tcp.hystart != d.hystart),
        // Deferral is part of Linux's output path whenever the device takes GSO.
        ("tso_defer", tcp.tso_defer != d.tso_defer),
        // Linux's cwnd counts packets, its receiver ACKs a pushed segment once
        // read, and a FIN makes the connection interactive.
        ("packet_window", tcp.packet_window != d.packet_window),
        ("ack_pushed", tcp.ack_pushed != d.ack_pushed),
        ("delayed_fin_ack", tcp.delayed_fin_ack != d.delayed_fin_ack),
        ("limited_transmit", tcp.limited_transmit != d.limited_transmit),
        // Linux 6.17 removed RFC 6675's loss detection: RACK runs whatever tcp_recovery says.
        ("rack", tcp.rack != d.rack),
        ("rto_estimator", tcp.rto_estimator != d.rto_estimator),
        ("rto_tick", tcp.rto_tick != d.rto_tick),
        ("loss_response", tcp.loss_response != d.loss_response),
        ("ooo_shrinks_window", tcp.ooo_shrinks_window != d.ooo_shrinks_window),
        ("partial_ack_timer", tcp.partial_ack_timer != d.partial_ack_timer),
    ];
    fixed.iter().filter(|(_, differs)| *differs).map(|(name, _)| (*name, "Linux fixes it; only the simulator can change it")).collect()
}

fn fits(v: u64) -> Option<u32> {
    u32::try_from(v).ok()
}

fn unsupported(field: &str, why: &str) -> String {
    format!("tcp.{field} cannot be applied in the emulator: {why}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use units::Dur;

    #[test]
    fn the_defaults_are_linuxs_own_and_need_no_socket_options() {
        let l = linux(&TcpConfig::default()).unwrap();
        assert_eq!(l.congestion, "cubic");
        assert_eq!((l.mss, l.sndbuf, l.rcvbuf), (None, None, None));
        assert!(l.route.is_empty());
        assert!(l.sysctls.contains(&("net.ipv4.tcp_sack".into(), "1".into())));
        assert!(l.sysctls.contains(&("net.ipv4.tcp_early_retrans".into(), "3".into())));
    }

    #[test]
    fn ecn_is_the_namespaces_tcp_ecn() {
        let on = linux(&TcpConfig { ecn: true, ..TcpConfig::default() }).unwrap();
        assert!(on.sysctls.contains(&("net.ipv4.tcp_ecn".into(), "1".into())), "{:?}", on.sysctls);
        let off = linux(&TcpConfig::default()).unwrap();
        assert!(off.sysctls.contains(&("net.ipv4.tcp_ecn".into(), "2".into())), "{:?}", off.sysctls);
    }

    #[test]
    fn no_tail_loss_probe_is_a_sysctl_of_the_namespace() {
        let l = linux(&TcpConfig { tlp: false, ..TcpConfig::default() }).unwrap();
        assert!(l.sysctls.contains(&("net.ipv4.tcp_early_retrans".into(), "0".into())), "{:?}", l.sysctls);
    }

    #[test]
    fn newreno_is_linuxs_reno_and_classic_reno_and_tahoe_are_refused_by_name() {
        let with = |a| TcpConfig { algorithm: a, ..TcpConfig::default() };
        assert_eq!(linux(&with(Algorithm::NewReno)).unwrap().congestion, "reno");
        assert!(linux(&with(Algorithm::Reno)).unwrap_err().contains("tcp.congestion_control"));
        assert!(linux(&with(Algorithm::Tahoe)).unwrap_err().contains("tahoe"));
    }

    #[test]
    fn a_minimum_rto_and_an_initial_window_go_on_the_route() {
        let t = TcpConfig { min_rto: Dur::from_secs(1), initial_cwnd: 4, ..TcpConfig::default() };
        assert_eq!(linux(&t).unwrap().route, ["initcwnd 4", "rto_min 1000ms"]);
    }

    #[test]
    fn a_setting_linux_fixes_is_an_error_naming_the_field() {
        let t = TcpConfig { ack_every: 1, ..TcpConfig::default() };
        let e = linux(&t).unwrap_err();
        assert!(e.contains("tcp.ack_every"), "{e}");
        // HyStart is a global parameter of Linux's cubic module.
        let e = linux(&TcpConfig { hystart: false, ..TcpConfig::default() }).unwrap_err();
        assert!(e.contains("tcp.hystart"), "{e}");
        let e = linux(&TcpConfig { tso_defer: false, ..TcpConfig::default() }).unwrap_err();
        assert!(e.contains("tcp.tso_defer"), "{e}");
        let e = linux(&TcpConfig { packet_window: false, ..TcpConfig::default() }).unwrap_err();
        assert!(e.contains("tcp.packet_window"), "{e}");
        let e = linux(&TcpConfig { ack_pushed: false, ..TcpConfig::default() }).unwrap_err();
        assert!(e.contains("tcp.ack_pushed"), "{e}");
        let e = linux(&TcpConfig { delayed_fin_ack: false, ..TcpConfig::default() }).unwrap_err();
        assert!(e.contains("tcp.delayed_fin_ack"), "{e}");
        // Linux's RTO estimator is its own.
        let e = linux(&TcpConfig { rto_estimator: tcp::RtoEstimator::Rfc6298, ..TcpConfig::default() }).unwrap_err();
        assert!(e.contains("tcp.rto_estimator"), "{e}");
    }

    #[test]
    fn translating_lists_every_field_linux_cannot_apply() {
        let t = TcpConfig { ack_bytes: Some(3000), quickack: 0, ..TcpConfig::default() };
        let (l, refused) = translate(&t);
        assert_eq!(l.congestion, "cubic");
        assert_eq!(refused.iter().map(|r| r.0).collect::<Vec<_>>(), ["ack_bytes", "quickack"]);
    }

    #[test]
    fn fixed_buffers_become_socket_options() {
        let t = TcpConfig { snd_buf_auto: false, snd_buf: 64 << 10, rcv_buf_auto: false, rcv_buf: 128 << 10, ..TcpConfig::default() };
        let l = linux(&t).unwrap();
        assert_eq!((l.sndbuf, l.rcvbuf), (Some(64 << 10), Some(128 << 10)));
        // Autotuned, each is a range of the namespace's tcp_wmem or tcp_rmem instead.
        let t = TcpConfig { snd_buf_auto: false, snd_buf: 64 << 10, ..TcpConfig::default() };
        let l = linux(&t).unwrap();
        assert_eq!((l.sndbuf, l.rcvbuf), (Some(64 << 10), None));
        assert!(l.sysctls.contains(&("net.ipv4.tcp_rmem".into(), "4096 131072 4194304".into())), "{:?}", l.sysctls);
    }
}
