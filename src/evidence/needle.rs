//! A literal looked for in every line or block: its searcher is built once
//! per call site, not once per call. `str::contains` with a `&str` builds
//! a Two-Way searcher each time, which costs more than searching a short
//! line; memchr's `memmem::Finder` is built on first use and then only
//! searches (with SIMD on long texts).

/// Whether `$hay` (anything with `as_bytes`) contains the literal `$lit`:
/// the same answer as `$hay.contains($lit)`.
macro_rules! has {
    ($hay:expr, $lit:literal) => {{
        static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new($lit));
        FINDER.find($hay.as_bytes()).is_some()
    }};
}
pub(crate) use has;

#[cfg(test)]
mod tests {
    #[test]
    fn agrees_with_contains() {
        for hay in [
            "",
            "a",
            "Waiting",
            "x Waiting for client",
            "é Waiting for client é",
            "WaitinWaiting for client",
        ] {
            assert_eq!(
                has!(hay, "Waiting for client"),
                hay.contains("Waiting for client"),
                "{hay}"
            );
            assert_eq!(has!(hay, "é"), hay.contains('é'), "{hay}");
        }
    }
}
