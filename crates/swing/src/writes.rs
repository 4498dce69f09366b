//! How requests and responses are cut into application writes.
//!
//! A sender that writes a response in pieces while the window has room
//! puts each piece on the wire as its own segments, the last one short
//! (TLS records, HTTP/2 frames, a header before a body). The model keeps,
//! per class and direction, observed elements as `[bytes, writes]`; an
//! element to send is cut like the observed one nearest in size. Pairs, not
//! a marginal of write sizes, because small writes come with small
//! messages: cutting a large response into the many small writes of small
//! requests would multiply its segments.

use crate::DIST_CAP;
use units::Rng;

/// Keeps at most `DIST_CAP` elements of `v` (sorted by bytes), equally
/// spaced, as `Dist` keeps quantiles.
pub fn thin(v: Vec<[f64; 2]>) -> Vec<[f64; 2]> {
    if v.len() <= DIST_CAP {
        return v;
    }
    let last = (v.len() - 1) as f64;
    (0..DIST_CAP).map(|i| v[(i as f64 * last / (DIST_CAP - 1) as f64).round() as usize]).collect()
}

/// The size of each write for an element of `bytes`: the observed element
/// nearest in size (one at random among equals) gives bytes per write,
/// scaled to `bytes`. With no observations, one write.
pub fn write_size(elements: &[[f64; 2]], bytes: u64, rng: &mut Rng) -> u64 {
    if elements.is_empty() || bytes == 0 {
        return bytes.max(1);
    }
    let b = bytes as f64;
    let i = elements.partition_point(|e| e[0] < b);
    // Nearest in ratio: sizes spread over decades.
    let near = match (i.checked_sub(1), elements.get(i)) {
        (Some(j), Some(e)) if b / elements[j][0] < e[0] / b => elements[j][0],
        (_, Some(e)) => e[0],
        (Some(j), None) => elements[j][0],
        (None, None) => unreachable!("elements is not empty"),
    };
    let lo = elements.partition_point(|e| e[0] < near);
    let hi = elements.partition_point(|e| e[0] <= near);
    let [eb, ew] = elements[lo + rng.below((hi - lo) as u64) as usize];
    let writes = (b * ew / eb.max(1.0)).round().clamp(1.0, b);
    (b / writes).ceil() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_element_is_cut_like_the_nearest_observed_one() {
        let mut rng = Rng::stream(1, "test");
        let seen = [[300.0, 1.0], [300.0, 1.0], [21_136.0, 4.0], [100_000.0, 20.0]];
        assert_eq!(write_size(&seen, 250, &mut rng), 250);
        // 5284-byte writes, as a TLS server's records.
        assert_eq!(write_size(&seen, 21_136, &mut rng), 5284);
        assert_eq!(write_size(&seen, 26_000, &mut rng), 5200);
        assert_eq!(write_size(&seen, 200_000, &mut rng), 5000);
        assert_eq!(write_size(&[], 7000, &mut rng), 7000);
        assert_eq!(write_size(&seen, 0, &mut rng), 1);
    }

    #[test]
    fn equal_sizes_are_drawn_among() {
        let seen = [[1000.0, 1.0], [1000.0, 4.0]];
        let mut rng = Rng::stream(7, "test");
        let mut got: Vec<u64> = (0..50).map(|_| write_size(&seen, 1000, &mut rng)).collect();
        got.sort_unstable();
        got.dedup();
        assert_eq!(got, vec![250, 1000]);
    }

    #[test]
    fn thinning_keeps_the_ends() {
        let v: Vec<[f64; 2]> = (0..10_000).map(|i| [i as f64, 1.0]).collect();
        let t = thin(v);
        assert_eq!(t.len(), DIST_CAP);
        assert_eq!((t[0][0], t[DIST_CAP - 1][0]), (0.0, 9999.0));
    }
}
