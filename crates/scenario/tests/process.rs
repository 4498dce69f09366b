//! The rate-process background models (sine, fgn, noise): what they take, what they
//! refuse, and that the filled scenario keeps them.

mod common;

use common::*;
use scenario::{BackgroundModel, Process, ScenarioFile};
use std::path::Path;
use traffic::background::process::{Fgn, Noise, Sine, Wave};

fn resolved(text: &str) -> scenario::Resolved {
    ScenarioFile::parse("s.toml", Path::new("."), text).and_then(|f| f.resolved(None, None)).unwrap_or_else(|e| panic!("{e}")).1
}

/// The filled scenario resolves to the same settings.
fn round_trips(text: &str) {
    let f = ScenarioFile::parse("s.toml", Path::new("."), text).unwrap();
    let (s, r) = f.resolved(None, None).unwrap();
    let filled = scenario::to_toml(&scenario::with_defaults(&s, &r));
    let g = ScenarioFile::parse("filled.toml", Path::new("."), &filled).unwrap_or_else(|e| panic!("{e}\n{filled}"));
    assert_eq!(r, g.resolved(None, None).unwrap().1, "{filled}");
}

const SINE: &str = "[[background]]\nmodel = \"sine\"\ntransport = \"udp\"\n";

#[test]
fn a_sine_takes_its_mean_and_amplitude_as_rates_or_shares_and_its_phase_in_radians() {
    // The seed's background on its 1 Mbit/s link, as shares, with a second wave.
    let text = format!(
        "duration = \"10s\"\n[topology.bottleneck]\nrate = \"1Mbps\"\ndelay = \"15ms\"\n{SINE}rate = \"50%\"\namplitude = \"30%\"\nfrequency = 0.462\nphase = 1.5\namplitude2 = \"200kbps\"\nfrequency2 = 3\nhosts = 1"
    );
    let r = resolved(&text);
    let BackgroundModel::Process(m) = &r.background[0] else { panic!("{:?}", r.background[0]) };
    let waves = vec![Wave { amplitude: 3e5, frequency: 0.462, phase: 1.5 }, Wave { amplitude: 2e5, frequency: 3.0, phase: 0.0 }];
    assert_eq!(m.process, Process::Sine(Sine::new(5e5, waves)));
    assert_eq!((m.hosts, m.packet_size, m.name.as_str()), (1, 1000, "sine0"));
    assert_eq!(m.process.build(&mut units::Rng::stream(1, "x")).kinds(), ["sine-udp", "sine-tcp"]);
    round_trips(&text);
}

#[test]
fn a_sine_whose_rate_would_go_below_zero_is_refused() {
    check(
        &format!("{BASE}{SINE}rate = \"1Mbps\"\namplitude = \"1.5Mbps\"\nfrequency = 1"),
        &["background[0].amplitude: the rate would go below zero: rate (1Mbps) must be at least amplitude (1500Kbps)"],
    );
    check(
        &format!("{BASE}{SINE}rate = \"1Mbps\"\namplitude = \"600kbps\"\nfrequency = 1\namplitude2 = \"500kbps\"\nfrequency2 = 2"),
        &["must be at least amplitude + amplitude2 (1100Kbps)"],
    );
}

#[test]
fn a_sine_refuses_frequencies_phases_and_half_a_second_wave_it_cannot_use() {
    let sine = |extra: &str| format!("{BASE}{SINE}rate = \"1Mbps\"\namplitude = \"500kbps\"\n{extra}");
    check(&sine("frequency = 0"), &["background[0].frequency: 0 is out of range: expected a frequency in Hz, above 0, at most 1e6"]);
    check(&sine("frequency = -2.5"), &["background[0].frequency: -2.5 is out of range"]);
    check(&sine("frequency = nan"), &["background[0].frequency: NaN is out of range"]);
    check(&sine("frequency = 1\nphase = inf"), &["background[0].phase: inf is not a phase: expected a finite number of radians"]);
    check(
        &sine("frequency = 1\nfrequency2 = 2"),
        &["background[0]: a second wave needs \"amplitude2\" and \"frequency2\"", "\"amplitude2\" is missing"],
    );
    check(&sine("frequency = 1\namplitude2 = \"1kbps\""), &["\"frequency2\" is missing"]);
    check(&sine("frequency = 1\nphase2 = 1"), &["\"amplitude2\" is missing"]);
    check(&sine(""), &["background[0]: missing required field \"frequency\""]);
    check(
        &sine("frequency = 1\nspread = \"1s\""),
        &["background[0].spread: does not apply to model \"sine\"", "\"amplitude\", \"frequency\", \"phase\""],
    );
    check(&sine("frequency = 1\npacket_size = 20"), &["background[0].packet_size: 20 bytes is out of range: expected 29B to 65535B"]);
}

#[test]
fn an_fgn_takes_its_mean_deviation_hurst_and_bin() {
    let text = format!("{BASE}[[background]]\nmodel = \"fgn\"\ntransport = \"tcp\"\nrate = \"10%\"\ndeviation = \"1Mbps\"\nhurst = 0.8\n");
    let r = resolved(&text);
    let BackgroundModel::Process(m) = &r.background[0] else { panic!("{:?}", r.background[0]) };
    // 10 s in the default 10 ms bins.
    assert_eq!(m.process, Process::Fgn(Fgn { mean: 1.5e6, deviation: 1e6, hurst: 0.8, width: 0.01, bins: 1000 }));
    round_trips(&text);
    round_trips(&format!("{text}bin = \"3ms\"\nstart = \"1s\"\n"));
    let fgn = |extra: &str| format!("{BASE}[[background]]\nmodel = \"fgn\"\ntransport = \"udp\"\nrate = \"1Mbps\"\ndeviation = \"1Mbps\"\n{extra}");
    check(&fgn("hurst = 1"), &["background[0].hurst: 1 is out of range: expected a Hurst parameter above 0 and below 1"]);
    check(&fgn("hurst = 0"), &["background[0].hurst: 0 is out of range"]);
    check(&fgn(""), &["background[0]: missing required field \"hurst\""]);
    check(&fgn("hurst = 0.7\nbin = \"100ns\""), &["background[0].bin: must be at least 1us"]);
    check(&fgn("hurst = 0.7\nbin = \"1us\""), &["background[0].bin: 10s at 1us bins is 10000000 bins: at most 4194304"]);
}

#[test]
fn a_noise_takes_its_band_and_refuses_one_that_holds_no_frequency_of_its_span() {
    let text =
        format!("{BASE}[[background]]\nmodel = \"noise\"\ntransport = \"udp\"\nrate = \"5Mbps\"\ndeviation = \"1Mbps\"\ncutoff = 30\nlow = 0.1\n");
    let r = resolved(&text);
    let BackgroundModel::Process(m) = &r.background[0] else { panic!("{:?}", r.background[0]) };
    let n = Noise { mean: 5e6, deviation: 1e6, low: 0.1, cutoff: 30.0, span: 10.0 };
    assert_eq!(m.process, Process::Noise(n));
    // Frequencies k/10 s from 0.1 Hz to 30 Hz.
    assert_eq!(n.components(), 1..=300);
    round_trips(&text);
    let noise =
        |extra: &str| format!("{BASE}[[background]]\nmodel = \"noise\"\ntransport = \"udp\"\nrate = \"1Mbps\"\ndeviation = \"1Mbps\"\n{extra}");
    check(&noise("cutoff = 0.05"), &["background[0].cutoff: the band 0 to 0.05 Hz holds no multiple of 1/10s (the model's span)"]);
    check(&noise("cutoff = 2\nlow = 2"), &["background[0].low: 2 Hz is not below the cutoff (2 Hz)"]);
    check(&noise("cutoff = 2\nlow = -1"), &["background[0].low: -1 is out of range: expected a frequency in Hz, 0, at most 1e6"]);
    check(&noise("cutoff = 100000"), &["background[0].cutoff: 100000 Hz over 10s needs 33554432 samples of the rate: at most 8388608"]);
}
