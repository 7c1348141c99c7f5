#!/usr/bin/env bash
# Opens the rendered site in headless Chromium: every page must load with no
# console error, no broken link or image (checked from the DOM Chromium
# built), and a screenshot of the index and of a few node pages is saved.
#
# Usage: scripts/browser-check.sh [SITE_DIR] [SHOTS_DIR]
# Exit: 0 all good, 1 a page failed, 3 no Chromium on this machine.
set -uo pipefail
site="${1:-site}"
shots="${2:-target/browser-check}"
browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
if [ -z "$browser" ]; then
    echo "browser check: no Chromium found (install Debian's chromium); skipped"
    exit 3
fi
mkdir -p "$shots"
site_abs="$(cd "$site" && pwd)"
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
       --disable-background-networking --disable-component-update --disable-sync
       --enable-logging=stderr --v=0)
fail=0
pages=("index.html")
while IFS= read -r p; do pages+=("$p"); done < <(cd "$site_abs" && ls nodes/*/index.html | head -n "${BROWSER_CHECK_PAGES:-8}")
for page in "${pages[@]}"; do
    name="$(echo "$page" | tr '/' '_' | sed 's/\.html$//')"
    profile="$(mktemp -d)"
    log="$shots/$name.log"
    # The DOM after load, with the console log on stderr.
    timeout 60 "$browser" "${flags[@]}" --user-data-dir="$profile" --dump-dom "file://$site_abs/$page" \
        > "$shots/$name.dom.html" 2> "$log"
    if grep -E "CONSOLE\(|Uncaught|ERR_FILE_NOT_FOUND|Failed to load resource" "$log" > "$shots/$name.errors"; then
        echo "FAIL $page: console errors or failed loads:"; cat "$shots/$name.errors"; fail=1
    fi
    if ! grep -q "</html>" "$shots/$name.dom.html"; then
        echo "FAIL $page: Chromium produced no DOM"; fail=1
    fi
    # Links and images in the DOM Chromium built must point at files that exist.
    dir="$(dirname "$site_abs/$page")"
    while IFS= read -r ref; do
        target="${ref%%#*}"
        [ -z "$target" ] && continue
        case "$target" in http:*|https:*|data:*) echo "FAIL $page: remote reference $ref"; fail=1; continue;; esac
        if [ ! -e "$dir/$target" ]; then echo "FAIL $page: broken link $ref"; fail=1; fi
    done < <(grep -oE '(href|src)="[^"]*"' "$shots/$name.dom.html" | sed -E 's/^(href|src)="//; s/"$//' | sort -u)
    timeout 60 "$browser" "${flags[@]}" --user-data-dir="$(mktemp -d)" --window-size=1400,2400 \
        --screenshot="$shots/$name.png" "file://$site_abs/$page" > /dev/null 2>&1 || { echo "FAIL $page: no screenshot"; fail=1; }
    rm -rf "$profile"
done
if [ "$fail" = 0 ]; then
    echo "browser check: ${#pages[@]} pages loaded in $("$browser" --version 2>/dev/null) with no console error or broken link; screenshots in $shots/"
fi
exit "$fail"
