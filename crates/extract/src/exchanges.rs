//! Request/response pairs from the order in which each direction's byte
//! stream advances (Swing's ADU model, as in Tmix): the client's bytes until
//! the server sends are one request, the server's bytes until the client
//! sends again are one response. Each change of direction starts a new
//! element; a pair is (request, response).
//!
//! Advances come from sequence numbers, or from the other side's
//! acknowledgements when a direction's own packets were not captured, so
//! header-only and one-directional traces still give sizes. Elements that
//! do not exist are `None` here (a server that speaks first gives a pair
//! without a request; a request left unanswered gives one without a
//! response); the model writes them as 1 byte, Swing's minimum.

/// A run of bytes in one direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Element {
    pub bytes: u64,
    /// Application writes it was sent in (PSH-delimited; a tail after the
    /// last PSH is one more); 0 when no PSH was seen, so unknown.
    pub writes: u32,
    /// Times (ns since the Unix epoch) of the first and last packets that
    /// advanced it.
    pub start: i64,
    pub end: i64,
    /// Its last data unit: from its last application gap (see
    /// `Exchanges::units`) to its end; the whole element if none.
    pub unit_start: i64,
    pub unit_bytes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair {
    pub req: Option<Element>,
    pub resp: Option<Element>,
}

impl Pair {
    pub fn start(&self) -> i64 {
        self.req.or(self.resp).map_or(0, |e| e.start)
    }
    pub fn end(&self) -> i64 {
        self.resp.or(self.req).map_or(0, |e| e.end)
    }
}

/// Direction 0 is client to server, 1 server to client.
#[derive(Clone, Copy, Debug)]
struct Current {
    dir: u8,
    start_off: i64,
    start: i64,
    last: i64,
    /// Where the current application write began (the last PSH's end),
    /// and the writes that ended so far.
    write_off: i64,
    writes: u32,
    /// Where and when the current data unit began.
    unit_off: i64,
    unit_start: i64,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Exchanges {
    cur: Option<Current>,
    pending_req: Option<Element>,
    /// Data units that application gaps ended inside elements, as (first
    /// packet, direction, bytes), oldest first, for the caller to take with
    /// the pair whose elements they are part of; each element's last unit
    /// is in the element itself.
    pub units: Vec<(i64, u8, u64)>,
}

impl Exchanges {
    /// Direction `dir` advanced from offset `from` at time `t`; `hi` holds
    /// both directions' highest offsets after the advance. With `pause`
    /// (ns), an advance that long after the element's last one starts a new
    /// element in the same direction (an application pause). Returns the
    /// pair that this completes, if it closes one.
    #[inline]
    ///
    /// With `gap` (ns), an advance that long after the element's last one
    /// starts a new data unit inside the element: the caller passes it when
    /// the sender was not held back by its window, so the gap was the
    /// application's (requests written one by one, a stream produced as
    /// it goes).
    pub(crate) fn advance(&mut self, dir: u8, from: i64, t: i64, hi: [i64; 2], pause: Option<i64>, gap: Option<i64>) -> Option<Pair> {
        match &mut self.cur {
            Some(c) if c.dir == dir && pause.is_none_or(|p| t - c.last <= p) => {
                if gap.is_some_and(|g| t - c.last > g) && from > c.unit_off {
                    self.units.push((c.unit_start, dir, (from - c.unit_off) as u64));
                    c.unit_off = from;
                    c.unit_start = t;
                }
                c.last = c.last.max(t);
                None
            }
            _ => {
                // After a pause the closing element ends where this
                // direction was before the advance.
                let mut h = hi;
                if self.cur.is_some_and(|c| c.dir == dir) {
                    h[dir as usize] = from;
                }
                let out = self.close(h);
                self.cur = Some(Current { dir, start_off: from, start: t, last: t, write_off: from, writes: 0, unit_off: from, unit_start: t });
                out
            }
        }
    }

    /// A segment of direction `dir` that ends at offset `end` carried PSH,
    /// which senders set on the last segment of each write (and receive
    /// offload never merges past), so a write of the current element ended.
    pub(crate) fn push(&mut self, dir: u8, end: i64) {
        if let Some(c) = self.cur.as_mut().filter(|c| c.dir == dir && end > c.write_off) {
            c.write_off = end;
            c.writes += 1;
        }
    }

    fn close(&mut self, hi: [i64; 2]) -> Option<Pair> {
        let c = self.cur.take()?;
        let end_off = hi[c.dir as usize];
        let writes = c.writes + (c.writes > 0 && end_off > c.write_off) as u32;
        let e = Element {
            bytes: (end_off - c.start_off).max(0) as u64,
            writes,
            start: c.start,
            end: c.last,
            unit_start: c.unit_start,
            unit_bytes: (end_off - c.unit_off).max(0) as u64,
        };
        if c.dir == 0 {
            // A request after a pause leaves the one before it unanswered.
            self.pending_req.replace(e).map(|r| Pair { req: Some(r), resp: None })
        } else {
            Some(Pair { req: self.pending_req.take(), resp: Some(e) })
        }
    }

    /// Closes the connection's last element; returns the last pair if any.
    pub(crate) fn finish(&mut self, hi: [i64; 2]) -> Option<Pair> {
        self.close(hi).or_else(|| self.pending_req.take().map(|r| Pair { req: Some(r), resp: None }))
    }
}

/// Crossings that make a connection concurrent. One or two happen in
/// protocols that take turns (a TLS alert crossing the last response, a
/// request sent as a response's tail arrives, a client's HTTP/2 preface
/// crossing the server's settings); sustained interleaving is what pairs
/// cannot describe, and what a replay reproduces. A lower count would class
/// connections by such chance crossings, which a regeneration of the trace
/// need not repeat.
const CONCURRENT_MIN_CROSSINGS: u32 = 4;

/// How often the two sides of a connection sent at once: a crossing is a
/// run of one side's data segments sent while the other side's data was in
/// flight, counted once however many segments it took. A burst of small
/// writes (TLS records, each its own segment without Nagle) crossing one
/// segment of the other side's is one crossing, not one per write: how an
/// application's bytes were segmented is no interleaving.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Crossings {
    count: u32,
    /// The side whose run of crossing segments the last data segment
    /// continued, if it crossed.
    run: Option<u8>,
}

impl Crossings {
    /// A new data segment from side `d`, sent with the other side's data in
    /// flight or not.
    pub(crate) fn segment(&mut self, d: u8, other_in_flight: bool) {
        if !other_in_flight {
            self.run = None;
        } else if self.run != Some(d) {
            self.run = Some(d);
            self.count += 1;
        }
    }

    /// Whether the sides interleaved enough to make the connection
    /// concurrent (data units, not pairs).
    pub(crate) fn concurrent(&self) -> bool {
        self.count >= CONCURRENT_MIN_CROSSINGS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds (dir, new highest offset, time) advances; returns the pairs.
    fn run(steps: &[(u8, i64, i64)]) -> Vec<Pair> {
        let mut x = Exchanges::default();
        let mut hi = [0i64; 2];
        let mut out = vec![];
        for &(d, to, t) in steps {
            let from = hi[d as usize];
            hi[d as usize] = to;
            out.extend(x.advance(d, from, t, hi, Some(100), None));
        }
        out.extend(x.finish(hi));
        out
    }

    fn el(bytes: u64, start: i64, end: i64) -> Option<Element> {
        Some(Element { bytes, writes: 0, start, end, unit_start: start, unit_bytes: bytes })
    }

    #[test]
    fn alternating_directions_make_pairs() {
        let p = run(&[(0, 300, 1), (1, 1000, 5), (1, 2500, 6), (0, 400, 20), (0, 450, 21), (1, 3000, 30)]);
        assert_eq!(p, vec![Pair { req: el(300, 1, 1), resp: el(2500, 5, 6) }, Pair { req: el(150, 20, 21), resp: el(500, 30, 30) },]);
    }

    #[test]
    fn server_first_and_unanswered_requests() {
        // SMTP-like banner first, then a request that gets no answer.
        let p = run(&[(1, 100, 1), (0, 20, 2), (1, 150, 3), (0, 40, 4)]);
        assert_eq!(
            p,
            vec![Pair { req: None, resp: el(100, 1, 1) }, Pair { req: el(20, 2, 2), resp: el(50, 3, 3) }, Pair { req: el(20, 4, 4), resp: None },]
        );
        assert_eq!((p[0].start(), p[2].end()), (1, 4));
        assert!(run(&[]).is_empty());
    }

    #[test]
    fn a_pause_starts_a_new_element_in_the_same_direction() {
        // Times are ns; the pause threshold in `run` is 100.
        // A response, a pause of 150, more response (server push or a late
        // answer); then a request, a pause, another request, and its answer.
        let p = run(&[(0, 300, 1), (1, 1000, 5), (1, 1500, 50), (1, 4000, 200), (1, 5000, 210), (0, 400, 300), (0, 450, 500), (1, 5100, 510)]);
        assert_eq!(
            p,
            vec![
                Pair { req: el(300, 1, 1), resp: el(1500, 5, 50) },
                Pair { req: None, resp: el(3500, 200, 210) },
                Pair { req: el(100, 300, 300), resp: None },
                Pair { req: el(50, 500, 500), resp: el(100, 510, 510) },
            ]
        );
    }

    #[test]
    fn writes_end_at_push_and_restart_with_each_element() {
        let mut x = Exchanges::default();
        x.advance(0, 0, 1, [300, 0], None, None);
        x.push(0, 300);
        x.push(0, 300); // adds nothing: no write
        x.push(1, 10); // not the current element's direction
        x.advance(1, 0, 2, [300, 1448], None, None);
        x.advance(1, 1448, 3, [300, 2000], None, None);
        x.push(1, 2000);
        x.advance(1, 2000, 4, [300, 2100], None, None);
        // The response's tail went without PSH: one more write. The next
        // request starts afresh and shows no PSH: its writes are unknown.
        let p = x.advance(0, 300, 5, [350, 2100], None, None).unwrap();
        assert_eq!((p.req.unwrap().writes, p.resp.unwrap().writes), (1, 2));
        let last = x.finish([350, 2100]).unwrap();
        assert_eq!(last.req.unwrap().writes, 0);
    }

    #[test]
    fn application_gaps_cut_units_inside_an_element() {
        let mut x = Exchanges::default();
        // Three requests 5 ns apart with gap 3: three units of one element;
        // the fourth advance, 2 ns later, continues the third unit.
        x.advance(0, 0, 10, [100, 0], None, Some(3));
        x.advance(0, 100, 15, [250, 0], None, Some(3));
        x.advance(0, 250, 20, [300, 0], None, Some(3));
        x.advance(0, 300, 22, [310, 0], None, Some(3));
        // A long gap the caller did not pass (the sender was window-limited)
        // cuts nothing.
        x.advance(0, 310, 40, [400, 0], None, None);
        let p = x.advance(1, 0, 50, [400, 1000], None, Some(3)).unwrap_or(Pair { req: None, resp: None });
        assert_eq!(p.req, None, "the request waits for its response");
        assert_eq!(x.units, vec![(10, 0, 100), (15, 0, 150)]);
        let p = x.finish([400, 1000]).unwrap();
        let r = p.req.unwrap();
        assert_eq!((r.bytes, r.start, r.unit_start, r.unit_bytes), (400, 10, 20, 150));
        assert_eq!(p.resp.map(|e| (e.unit_start, e.unit_bytes)), Some((50, 1000)));
    }

    #[test]
    fn a_run_of_one_sides_segments_across_the_others_flight_is_one_crossing() {
        // (side, other side's data in flight) per new data segment.
        let count = |segs: &[(u8, bool)]| {
            let mut c = Crossings::default();
            segs.iter().for_each(|&(d, f)| c.segment(d, f));
            (c.count, c.concurrent())
        };
        // A TLS session: the client's four records go out while the
        // server's ticket is unacknowledged, then the server's answer
        // crosses the client's tail: two crossings, five segments.
        let turns = [(0, false), (1, false), (0, false), (1, false), (1, false), (0, true), (0, true), (0, true), (0, true), (1, true), (1, false)];
        assert_eq!(count(&turns), (2, false));
        // Sides that send at once, turn after turn (HTTP/2 requests sent
        // while responses stream, each sending while the other's is out):
        // a crossing each.
        let interleaved = [(1, false), (0, true), (1, true), (0, true), (1, true)];
        assert_eq!(count(&interleaved), (4, true));
        // A segment sent with nothing in flight ends a run: the same side
        // crossing again later is another crossing.
        assert_eq!(count(&[(0, true), (0, false), (0, true), (0, true), (1, false), (0, true), (0, false), (0, true)]), (4, true));
    }
}
