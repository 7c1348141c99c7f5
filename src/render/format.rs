//! Numbers for people: one place decides how a bandwidth, a time or a size
//! is written, so the CLI, the site and the ticket summary agree.
//! GB/s always means 1e9 bytes per second.

/// `1.234 GB/s`.
pub fn gbs(bytes_per_s: f64) -> String {
    let g = bytes_per_s / 1e9;
    if g.abs() >= 100.0 {
        format!("{g:.1} GB/s")
    } else if g.abs() >= 10.0 {
        format!("{g:.2} GB/s")
    } else {
        format!("{g:.3} GB/s")
    }
}

/// `5.71 GB/s`: a fixed number of decimals, for sentences and lists that
/// keep one precision whatever the size.
pub fn gbs_fixed(bytes_per_s: f64, decimals: usize) -> String {
    format!("{:.*} GB/s", decimals, bytes_per_s / 1e9)
}

/// Seconds in the unit that reads best.
pub fn secs(s: f64) -> String {
    let a = s.abs();
    if a >= 1.0 {
        format!("{s:.3} s")
    } else if a >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else if a >= 1e-6 {
        format!("{:.3} us", s * 1e6)
    } else {
        format!("{:.1} ns", s * 1e9)
    }
}

/// `65536 bytes (64.0 KiB)`; a negative size (a fit's m*) keeps its sign.
pub fn bytes(b: f64) -> String {
    let a = b.abs();
    let (v, u) = if a >= 1073741824.0 {
        (b / 1073741824.0, "GiB")
    } else if a >= 1048576.0 {
        (b / 1048576.0, "MiB")
    } else if a >= 1024.0 {
        (b / 1024.0, "KiB")
    } else {
        return format!("{b:.0} bytes");
    };
    format!("{b:.0} bytes ({v:.1} {u})")
}

/// `64 KiB`, `8 MiB`, `1 GiB`, `512 B`: short, for axes and tables; a
/// negative size (a fit's m*) keeps its sign.
pub fn size_short(b: f64) -> String {
    if b < 0.0 {
        return format!("-{}", size_short(-b));
    }
    for (m, u) in [(1073741824.0, "GiB"), (1048576.0, "MiB"), (1024.0, "KiB")] {
        if b >= m {
            let v = b / m;
            return if (v - v.round()).abs() < 1e-9 {
                format!("{v:.0} {u}")
            } else {
                format!("{v:.1} {u}")
            };
        }
    }
    format!("{b:.0} B")
}

/// A coefficient of determination: `0.28`, `0.997`.
pub fn r_squared(r: f64) -> String {
    if r > 0.99 && r < 1.0 {
        format!("{r:.3}")
    } else {
        format!("{r:.2}")
    }
}

/// A share in percent, whole: `87%`.
pub fn percent(fraction: f64) -> String {
    format!("{:.0}%", fraction * 100.0)
}

/// An axis tick of bandwidth in GB/s, as many digits as its size needs:
/// `120`, `0.25`, `5e-3`.
pub fn gbs_tick(gb_per_s: f64) -> String {
    if gb_per_s >= 10.0 {
        format!("{gb_per_s:.0}")
    } else if gb_per_s >= 0.01 {
        trim_zeros(format!("{gb_per_s:.3}"))
    } else {
        format!("{gb_per_s:.0e}")
    }
}

/// An axis tick of time with its own unit, so that a log axis from 1 us to
/// 6 s reads `1 us`, `1 ms`, `1 s` and not `6000000`.
pub fn secs_tick(s: f64) -> String {
    let (v, u) = if s >= 1.0 {
        (s, "s")
    } else if s >= 1e-3 {
        (s * 1e3, "ms")
    } else if s >= 1e-6 {
        (s * 1e6, "us")
    } else {
        (s * 1e9, "ns")
    };
    format!("{} {u}", trim_zeros(format!("{v:.2}")))
}

fn trim_zeros(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_units_people_can_compare() {
        assert_eq!(gbs(370.9e9), "370.9 GB/s");
        assert_eq!(gbs(5.71e9), "5.710 GB/s");
        assert_eq!(gbs(25e9), "25.00 GB/s");
        assert_eq!(gbs_fixed(25.781e9, 3), "25.781 GB/s");
        assert_eq!(gbs_fixed(370.9e9, 2), "370.90 GB/s");
        assert_eq!(secs(0.3), "300.000 ms");
        assert_eq!(secs(2e-6), "2.000 us");
        assert_eq!(bytes(65536.0), "65536 bytes (64.0 KiB)");
        assert_eq!(size_short(8388608.0), "8 MiB");
        assert_eq!(size_short(1536.0), "1.5 KiB");
        assert_eq!(size_short(-9.9 * 1048576.0), "-9.9 MiB");
        assert_eq!(bytes(-2048.0), "-2048 bytes (-2.0 KiB)");
        assert_eq!(r_squared(0.2849), "0.28");
        assert_eq!(r_squared(0.9971), "0.997");
        assert_eq!(percent(0.874), "87%");
        assert_eq!(gbs_tick(0.25), "0.25");
        assert_eq!(gbs_tick(120.0), "120");
        assert_eq!(secs_tick(1e-5), "10 us");
        assert_eq!(secs_tick(6.0), "6 s");
        assert_eq!(secs_tick(2e-3), "2 ms");
        assert_eq!(secs_tick(5e-8), "50 ns");
    }
}
