//! Field value types: parsed from human units, written back the same way.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use units::parse::{self, UnitError};
use units::{Dur, Rate};

/// Accepts a string through `parse_str`, or (when `int_ok`) a bare integer.
struct StrVisitor<T> {
    expecting: &'static str,
    parse_str: fn(&str) -> Result<T, UnitError>,
    parse_int: Option<fn(i64) -> Result<T, String>>,
}

impl<T> Visitor<'_> for StrVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.parse_str)(v).map_err(E::custom)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        match self.parse_int {
            Some(p) => p(v).map_err(E::custom),
            None => Err(E::custom(format!("{v} is not valid here: expected {}", self.expecting))),
        }
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        Err(E::custom(format!("{v} is not valid here: expected {}", self.expecting)))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<T, E> {
        Err(E::custom(format!("{v} is not valid here: expected {}", self.expecting)))
    }
}

macro_rules! unit_value {
    ($name:ident, $inner:ty, $expect:expr, $parse:expr, $int:expr, $show:expr) => {
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any(StrVisitor { expecting: $expect, parse_str: $parse, parse_int: $int })
            }
        }
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let show: fn(&$name) -> String = $show;
                s.serialize_str(&show(self))
            }
        }
    };
}

/// A positive rate: "15Mbps".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bandwidth(pub Rate);
unit_value!(Bandwidth, Rate, parse::RATE_FORMS, |s| parse::rate(s).map(Bandwidth), None, |v| v.0.to_string());

/// A duration: "30ms".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeSpan(pub Dur);
unit_value!(TimeSpan, Dur, parse::DURATION_FORMS, |s| parse::duration(s).map(TimeSpan), None, |v| v.0.to_string());

/// A size in bytes: "1MB", or a bare integer number of bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size(pub u64);
unit_value!(
    Size,
    u64,
    parse::SIZE_FORMS,
    |s| parse::size(s).map(Size),
    Some(|v| if v >= 0 { Ok(Size(v as u64)) } else { Err(format!("{v} is not a valid size: sizes cannot be negative")) }),
    |v| parse::format_size(v.0)
);

/// A fraction written as a percentage: "1%".
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fraction(pub f64);
unit_value!(Fraction, f64, parse::FRACTION_FORMS, |s| parse::fraction(s).map(Fraction), None, |v| format!("{}%", v.0 * 100.0));

/// An absolute rate ("10Mbps") or a share of the bottleneck ("66%").
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RateOrShare {
    Rate(Rate),
    Share(f64),
}
const RATE_OR_SHARE: &str = "a rate such as \"10Mbps\" (bps, Kbps, Mbps, Gbps, Tbps) or a share of the bottleneck such as \"66%\"";
fn parse_rate_or_share(s: &str) -> Result<RateOrShare, UnitError> {
    let bad = || UnitError::malformed(s, "rate", RATE_OR_SHARE);
    if s.trim_end().ends_with('%') {
        match parse::fraction(s) {
            Ok(f) if f > 0.0 => Ok(RateOrShare::Share(f)),
            _ => Err(bad()),
        }
    } else {
        parse::rate(s).map(RateOrShare::Rate).map_err(|e| if e.out_of_range { e } else { bad() })
    }
}
unit_value!(RateOrShare, RateOrShare, RATE_OR_SHARE, parse_rate_or_share, None, |v| match v {
    RateOrShare::Rate(r) => r.to_string(),
    RateOrShare::Share(f) => format!("{}%", f * 100.0),
});

impl RateOrShare {
    pub fn resolve(self, bottleneck: Rate) -> Rate {
        match self {
            RateOrShare::Rate(r) => r,
            RateOrShare::Share(f) => bottleneck.scaled(f),
        }
    }
}

/// A queue limit: packets ("100p", or a bare integer) or bytes ("150KB").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueSize {
    Packets(u32),
    Bytes(u64),
}
const QUEUE_FORMS: &str = "a number of packets such as \"100p\" (or 100), or a size in bytes such as \"150KB\"";
fn parse_queue(s: &str) -> Result<QueueSize, UnitError> {
    let bad = || UnitError::malformed(s, "queue size", QUEUE_FORMS);
    let t = s.trim();
    for suffix in ["packets", "pkts", "p"] {
        if let Some(n) = t.strip_suffix(suffix) {
            return match n.trim().parse::<u32>() {
                Ok(n) if n > 0 => Ok(QueueSize::Packets(n)),
                _ => Err(bad()),
            };
        }
    }
    match parse::size(t) {
        Ok(b) if b > 0 => Ok(QueueSize::Bytes(b)),
        Err(e) if e.out_of_range => Err(e),
        _ => Err(bad()),
    }
}
unit_value!(
    QueueSize,
    QueueSize,
    QUEUE_FORMS,
    parse_queue,
    Some(|v| if v > 0 && v <= u32::MAX as i64 {
        Ok(QueueSize::Packets(v as u32))
    } else {
        Err(format!("{v} is not a valid queue size: expected {QUEUE_FORMS}"))
    }),
    |v| match v {
        QueueSize::Packets(n) => format!("{n}p"),
        QueueSize::Bytes(b) => parse::format_size(*b),
    }
);

/// A send buffer: "auto" (Linux-style autotuning) or a fixed size, as when an
/// application sets SO_SNDBUF.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferSize {
    Auto,
    Fixed(u64),
}
const BUFFER_FORMS: &str = "\"auto\" or a size such as \"64KB\" (B, KB, MB, KiB, MiB)";
fn parse_buffer(s: &str) -> Result<BufferSize, UnitError> {
    if s.trim() == "auto" {
        return Ok(BufferSize::Auto);
    }
    match parse::size(s) {
        Ok(b) if b > 0 => Ok(BufferSize::Fixed(b)),
        Err(e) if e.out_of_range => Err(e),
        _ => Err(UnitError::malformed(s, "buffer size", BUFFER_FORMS)),
    }
}
unit_value!(
    BufferSize,
    BufferSize,
    BUFFER_FORMS,
    parse_buffer,
    Some(|v| if v > 0 { Ok(BufferSize::Fixed(v as u64)) } else { Err(format!("{v} is not a valid buffer size: expected {BUFFER_FORMS}")) }),
    |v| match v {
        BufferSize::Auto => "auto".to_string(),
        BufferSize::Fixed(b) => parse::format_size(*b),
    }
);

/// A field that takes one of a fixed set of names ("udp" or "tcp"): an
/// enum read and written as its names, declared with [`choice!`].
pub(crate) trait Choice: Copy + 'static {
    /// Every value, in the order messages list them.
    const ALL: &'static [Self];
    fn name(self) -> &'static str;
}

/// The names of `T`, as a message lists what is allowed: `"a"`, `"a" or "b"`, `one of "a", "b", "c"`.
pub(crate) fn choices<T: Choice>() -> String {
    let names: Vec<String> = T::ALL.iter().map(|c| format!("{:?}", c.name())).collect();
    match names.as_slice() {
        [one] => one.clone(),
        [a, b] => format!("{a} or {b}"),
        all => format!("one of {}", all.join(", ")),
    }
}

pub(crate) struct ChoiceVisitor<T>(pub std::marker::PhantomData<T>);

impl<T: Choice> Visitor<'_> for ChoiceVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&choices::<T>())
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        T::ALL.iter().copied().find(|c| c.name() == v).ok_or_else(|| E::custom(format!("{v:?} is not allowed: expected {}", choices::<T>())))
    }
}

/// Declares an enum whose values are written as names:
/// `choice! { Transport { Udp = "udp", Tcp = "tcp" } }`.
macro_rules! choice {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }
        impl $crate::values::Choice for $name {
            const ALL: &'static [$name] = &[$($name::$variant),+];
            fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str($crate::values::Choice::name(*self))
            }
        }
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($crate::values::Choice::name(*self))
            }
        }
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_str($crate::values::ChoiceVisitor(std::marker::PhantomData))
            }
        }
    };
}
pub(crate) use choice;
