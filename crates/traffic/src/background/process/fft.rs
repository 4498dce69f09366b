//! The discrete Fourier transform of a power-of-two length (iterative
//! radix-2 Cooley–Tukey), all the fgn and noise generators need.

use std::f64::consts::TAU;

/// X[k] = Σ x[n]·e^(−2πi·nk/N) in place; `re` and `im` hold the real and
/// imaginary parts, N a power of two.
pub fn fft(re: &mut [f64], im: &mut [f64]) {
    let n = re.len();
    assert!(n.is_power_of_two() && im.len() == n, "fft: a power-of-two length, the same for both parts");
    // Bit-reversal permutation.
    let mut j = 0;
    for i in 1..n {
        let mut bit = n >> 1;
        while j & bit != 0 {
            j ^= bit;
            bit >>= 1;
        }
        j |= bit;
        if i < j {
            re.swap(i, j);
            im.swap(i, j);
        }
    }
    let mut len = 2;
    while len <= n {
        let half = len / 2;
        for k in 0..half {
            // Twiddles computed directly (not by repeated multiplication),
            // so the error does not grow with the length.
            let (s, c) = (-TAU * k as f64 / len as f64).sin_cos();
            for start in (0..n).step_by(len) {
                let (a, b) = (start + k, start + k + half);
                let (br, bi) = (re[b] * c - im[b] * s, re[b] * s + im[b] * c);
                (re[b], im[b]) = (re[a] - br, im[a] - bi);
                (re[a], im[a]) = (re[a] + br, im[a] + bi);
            }
        }
        len *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fft_agrees_with_the_definition() {
        let n = 64;
        let x: Vec<(f64, f64)> = (0..n).map(|k| ((k as f64 * 0.37).sin() + 0.1 * k as f64, (k as f64 * 1.3).cos())).collect();
        let (mut re, mut im): (Vec<f64>, Vec<f64>) = x.iter().copied().unzip();
        fft(&mut re, &mut im);
        for k in 0..n {
            let (mut sr, mut si) = (0.0, 0.0);
            for (j, &(xr, xi)) in x.iter().enumerate() {
                let (s, c) = (-TAU * (j * k) as f64 / n as f64).sin_cos();
                sr += xr * c - xi * s;
                si += xr * s + xi * c;
            }
            assert!((re[k] - sr).abs() < 1e-9 && (im[k] - si).abs() < 1e-9, "{k}: {} {} vs {sr} {si}", re[k], im[k]);
        }
    }
}
