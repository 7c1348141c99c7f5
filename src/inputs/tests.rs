use super::*;

#[test]
fn order_key_sorts_as_paths_do() {
    // Prefixes of names, separators sorting below letters (`a-b` vs
    // `a/c`), doubled and trailing slashes, `.` and `..`, roots.
    let raw = [
        "a",
        "a-b",
        "a/c",
        "a/c/d",
        "a//c",
        "a/c/",
        "ab",
        "a.b",
        "/a",
        "/",
        "./a",
        "../a",
        "a/..",
        "a/./c",
        "b",
        "",
        "a\u{1}",
        "caf\u{e9}",
        "cafe",
    ];
    let paths: Vec<&Path> = raw.iter().map(Path::new).collect();
    for p in &paths {
        for q in &paths {
            assert_eq!(order_key(p).cmp(&order_key(q)), p.cmp(q), "{p:?} vs {q:?}");
        }
    }
}

#[test]
fn node_names_are_the_directory_names_absolute_would_give() {
    let dirs: Vec<PathBuf> = ["captures/dgx1-p100", "a/x", "b/x", ""]
        .iter()
        .map(PathBuf::from)
        .collect();
    let names = node_names(dirs.iter());
    assert_eq!(names[0], "captures-dgx1-p100");
    assert_eq!(names[1], "a-x");
    assert_eq!(names[2], "b-x");
    // `std::path::absolute` refuses an empty path: not the working
    // directory's name, the generic one.
    assert_eq!(names[3], "node");
}
