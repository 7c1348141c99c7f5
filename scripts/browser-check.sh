#!/usr/bin/env bash
# Opens the rendered site in headless Chromium and fails on what a person
# would see as broken:
#   - every page (index, node pages, transcript pages) is loaded at 1400 px
#     and again at 800 px, in one Chromium run per width (a driver page
#     loads each one in a frame of that width): no horizontal scroll, no
#     SVG text drawn under 11 px (font size times the SVG's scale on
#     screen, so a chart scaled down to fit 800 px counts at its drawn
#     size), no link with an empty href;
#   - a few pages load with no console error and no broken link or image
#     (from the DOM Chromium built);
#   - screenshots of the index and of four node pages (DGX-1V, an 8-GPU
#     NVSwitch node, an AMD two-hive node, an InfiniBand-only node) at 1400
#     and 800 px, for a person to look at.
#
# The site is copied to a scratch folder first; the site given is not
# touched.
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
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cp -r "$site" "$scratch/site"
site_abs="$scratch/site"
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
       --disable-background-networking --disable-component-update --disable-sync
       --enable-logging=stderr --v=0)
fail=0

# 1. Every page at 1400 px and at 800 px, measured in the browser.
pages_js="$(cd "$site_abs" && find . -name '*.html' | sed 's|^\./||' | sort | sed 's/.*/"&"/' | paste -sd, -)"
total="$(cd "$site_abs" && find . -name '*.html' | wc -l)"
measured_at=()
for width in 1400 800; do
cat > "$site_abs/_browser_check.html" <<EOF
<!doctype html><html><body><pre id="out"></pre><script>
const pages = [$pages_js];
const out = document.getElementById('out');
let i = 0;
function measure(d) {
  const root = d.documentElement;
  let minFont = 1000;
  for (const t of d.querySelectorAll('svg text')) {
    const m = t.getScreenCTM();
    if (!m || !t.textContent.trim()) continue;
    const px = parseFloat(d.defaultView.getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
    if (px < minFont) minFont = px;
  }
  const empty = d.querySelectorAll('a[href=""], a[href="#"]').length;
  return root.scrollWidth + ' ' + root.clientWidth + ' ' + minFont.toFixed(1) + ' ' + empty;
}
function next() {
  if (i >= pages.length) { out.setAttribute('data-done', String(i)); return; }
  const f = document.createElement('iframe');
  f.style.width = '${width}px'; f.style.height = '900px'; f.style.border = '0';
  f.onload = () => {
    let r;
    try { r = measure(f.contentDocument); } catch (e) { r = 'ERROR ' + e; }
    out.textContent += '\nPAGE ' + pages[i] + ' ' + r;
    f.remove(); i++; next();
  };
  f.src = pages[i]; document.body.appendChild(f);
}
next();
</script></body></html>
EOF
dom="$shots/all-pages-$width.dom.html"
timeout 600 "$browser" "${flags[@]}" --allow-file-access-from-files --user-data-dir="$scratch/profile-$width" \
    --window-size=$((width + 100)),1000 --virtual-time-budget=3600000 --dump-dom \
    "file://$site_abs/_browser_check.html" > "$dom" 2> "$shots/all-pages-$width.log"
measured="$(grep -c '^PAGE ' "$dom" || true)"
measured_at+=("$measured at $width px")
if [ "$measured" -lt "$total" ]; then
    echo "FAIL only $measured of $total pages were measured at $width px (see $shots/all-pages-$width.log)"; fail=1
fi
while read -r _ page scroll client font empty _; do
    empty="${empty%%<*}"
    [ "$page" = "_browser_check.html" ] && continue
    if [ "$scroll" = "ERROR" ]; then echo "FAIL $page: could not be measured at $width px: $client $font $empty"; fail=1; continue; fi
    if [ "$scroll" -gt "$client" ]; then echo "FAIL $page: scrolls sideways at $width px ($scroll > $client px)"; fail=1; fi
    if awk "BEGIN{exit !($font < 11)}"; then echo "FAIL $page: SVG text drawn at $font px at $width px wide (< 11)"; fail=1; fi
    if [ "$empty" != "0" ]; then echo "FAIL $page: $empty link(s) with an empty href"; fail=1; fi
done < <(grep '^PAGE ' "$dom")
done

# 2. A few pages: console errors and broken references, from the DOM.
pages=("index.html")
while IFS= read -r p; do pages+=("$p"); done < <(cd "$site_abs" && ls nodes/*/index.html | head -n "${BROWSER_CHECK_PAGES:-8}")
for page in "${pages[@]}"; do
    name="$(echo "$page" | tr '/' '_' | sed 's/\.html$//')"
    log="$shots/$name.log"
    timeout 60 "$browser" "${flags[@]}" --user-data-dir="$(mktemp -d -p "$scratch")" --dump-dom "file://$site_abs/$page" \
        > "$shots/$name.dom.html" 2> "$log"
    if grep -E "CONSOLE\(|Uncaught|ERR_FILE_NOT_FOUND|Failed to load resource" "$log" > "$shots/$name.errors"; then
        echo "FAIL $page: console errors or failed loads:"; cat "$shots/$name.errors"; fail=1
    fi
    if ! grep -q "</html>" "$shots/$name.dom.html"; then
        echo "FAIL $page: Chromium produced no DOM"; fail=1
    fi
    dir="$(dirname "$site_abs/$page")"
    while IFS= read -r ref; do
        target="${ref%%#*}"
        [ -z "$target" ] && continue
        case "$target" in http:*|https:*|data:*) echo "FAIL $page: remote reference $ref"; fail=1; continue;; esac
        if [ ! -e "$dir/$target" ]; then echo "FAIL $page: broken link $ref"; fail=1; fi
    done < <(grep -oE '(href|src)="[^"]*"' "$shots/$name.dom.html" | sed -E 's/^(href|src)="//; s/"$//' | sort -u)
done

# 3. Screenshots at 1400 and 800 px, to look at.
shoot=("index.html")
for n in dgx1v-v100-8gpu-1nic b300-8gpu-8nic-bond amd-8gpu-two-xgmi-hives h100-8nic-ndr400; do
    [ -e "$site_abs/nodes/$n/index.html" ] && shoot+=("nodes/$n/index.html")
done
for page in "${shoot[@]}"; do
    name="$(echo "$page" | sed 's|^nodes/||; s|/index\.html$||; s|\.html$||')"
    for w in 1400 800; do
        timeout 60 "$browser" "${flags[@]}" --user-data-dir="$(mktemp -d -p "$scratch")" --window-size="$w,2400" \
            --hide-scrollbars --screenshot="$shots/$name-$w.png" "file://$site_abs/$page" > /dev/null 2>&1 \
            || { echo "FAIL $page: no screenshot at $w px"; fail=1; }
    done
done
if [ "$fail" = 0 ]; then
    echo "browser check: pages measured: ${measured_at[*]} (no sideways scroll, SVG text >= 11 px, no empty href), ${#pages[@]} loaded with no console error or broken link, in $("$browser" --version 2>/dev/null); screenshots in $shots/"
fi
exit "$fail"
