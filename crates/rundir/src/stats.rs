//! Summary statistics as summary.json reports them.

/// Count, mean, sample standard deviation, extremes and percentiles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Describe {
    pub count: usize,
    pub mean: f64,
    pub sd: f64,
    pub min: f64,
    pub max: f64,
    pub p5: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
}

/// Percentile with linear interpolation between closest ranks (numpy's
/// default), `q` in [0, 100], of sorted data.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        n => {
            let pos = q / 100.0 * (n - 1) as f64;
            let lo = pos.floor() as usize;
            let hi = (lo + 1).min(n - 1);
            sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
        }
    }
}

/// Statistics of the finite values; None when there are none.
pub fn describe(values: &[f64]) -> Option<Describe> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let mean = v.iter().sum::<f64>() / n as f64;
    let sd = if n > 1 { (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt() } else { 0.0 };
    Some(Describe {
        count: n,
        mean,
        sd,
        min: v[0],
        max: v[n - 1],
        p5: percentile(&v, 5.0),
        p50: percentile(&v, 50.0),
        p90: percentile(&v, 90.0),
        p95: percentile(&v, 95.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_numpy_linear_percentiles() {
        // numpy.percentile([1, 2, 3, 4, 10], [5, 50, 90]) = [1.2, 3.0, 7.6]
        let d = describe(&[4.0, 2.0, 10.0, 1.0, 3.0]).unwrap();
        assert!((d.p5 - 1.2).abs() < 1e-12);
        assert_eq!(d.p50, 3.0);
        assert!((d.p90 - 7.6).abs() < 1e-12);
        assert_eq!((d.min, d.max, d.count), (1.0, 10.0, 5));
        assert_eq!(d.mean, 4.0);
        // Sample sd: sqrt(((3^2+2^2+6^2+1^2+0^2))/4) = sqrt(12.5)
        assert!((d.sd - 12.5f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn ignores_non_finite_and_handles_empty() {
        assert!(describe(&[]).is_none());
        assert!(describe(&[f64::NAN]).is_none());
        assert_eq!(describe(&[f64::NAN, 2.0]).unwrap().count, 1);
    }
}
