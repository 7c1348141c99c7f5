#!/usr/bin/env bash
# Fleet collection under a real Slurm cluster on this machine (run by
# .ci/run): starts N Slurm nodes (scripts/slurm-cluster.sh), collects every
# node with one srun line into DIR/wire/{host}, renders the fleet, then runs
# the two-node ib_write_bw orchestration with the SYNTHETIC stand-in
# tests/standins/ib_write_bw on PATH (real TCP rendezvous between the two
# Slurm tasks; the printed figures are a real captured pair's). Stops the
# cluster on exit.
#
#   scripts/slurm-fleet-check.sh BINARY DIR [NODES]
set -euo pipefail
cd "$(dirname "$0")/.."

bin=$(realpath "${1:?usage: $0 BINARY DIR [NODES]}")
dir=${2:?usage: $0 BINARY DIR [NODES]}
nodes=${3:-3}
rm -rf "$dir"
mkdir -p "$dir"
dir=$(realpath "$dir")

trap 'scripts/slurm-cluster.sh down "$dir/slurm"' EXIT
eval "$(scripts/slurm-cluster.sh up "$dir/slurm" "$nodes")"
export PATH="$PATH:/usr/sbin"

fail() { echo "slurm fleet check: FAILED: $*" >&2; exit 1; }

echo "-- srun -N$nodes --ntasks-per-node=1 wire-report collect --out $dir/wire/{host}"
start=$(date +%s%N)
srun -N"$nodes" --ntasks-per-node=1 "$bin" collect --quiet --budget 1 --out "$dir/wire/{host}"
echo "   collected $nodes nodes in $(( ($(date +%s%N) - start) / 1000000 )) ms"
for i in $(seq 1 "$nodes"); do
    b="$dir/wire/n$i/bundle.json"
    [ -f "$b" ] || fail "no bundle for n$i"
    python3 - "$b" "n$i" <<'EOF' || fail "bundle of n$i"
import json, sys
b = json.load(open(sys.argv[1]))
assert b["host"]["name"] == sys.argv[2], b["host"]
assert b["host"]["origin"] == "live"
names = [p["name"] for p in b["probes"]]
assert "host memcpy sweep" in names or any("sweep" in n for n in names), names
EOF
done
leftover=$(find "$dir/wire" -name '.wire-report-*' | wc -l)
[ "$leftover" -eq 0 ] || fail "$leftover temporary files left behind"

echo "-- render the fleet"
"$bin" render "$dir/wire" --out "$dir/site"
grep -q "<h2>Fleet</h2>" "$dir/site/index.html" || fail "no fleet section in the index"
for i in $(seq 1 "$nodes"); do
    [ -f "$dir/site/nodes/n$i/index.html" ] || fail "no page for n$i"
done
"$bin" render "$dir/wire/n1" --format md > "$dir/n1.md"
grep -q "^### wire-report: n1" "$dir/n1.md" || fail "markdown summary of n1"
"$bin" diff "$dir/wire" "$dir/wire" > "$dir/diff.txt" || fail "diff of a fleet with itself is not quiet"

echo "-- two-node ib_write_bw under Slurm (stand-in tool, real orchestration)"
srun -N2 -n2 --ntasks-per-node=1 env PATH="$PWD/tests/standins:$PATH" \
    "$bin" collect --quiet --no-sweep --benchmarks --benchmark-budget 30 --out "$dir/pair/{host}"
python3 - "$dir/pair" <<'EOF' || fail "pair bundles"
import json, sys, os
d = sys.argv[1]
s = json.load(open(os.path.join(d, "n1", "bundle.json")))["peer"]
c = json.load(open(os.path.join(d, "n2", "bundle.json")))["peer"]
assert s["role"] == "server" and s["peer"] == "n2" and s["ok"] and s["via"] == "slurm", s
assert c["role"] == "client" and c["peer"] == "n1" and c["ok"], c
assert c["address"] == "127.0.0.1", c   # Slurm's NodeAddr of n1, from scontrol
assert s["job"] == c["job"] and s["job"], (s, c)
print("   server n1 <-> client n2 in job", s["job"], "; transcripts:", s["transcript"], c["transcript"])
EOF
[ -f "$dir/pair/n1/ib_write_bw-pair-server.txt" ] || fail "server transcript"
[ -f "$dir/pair/n2/ib_write_bw-pair-client.txt" ] || fail "client transcript"
"$bin" render "$dir/pair" --out "$dir/pair-site"
echo "slurm fleet check: OK ($nodes nodes)"
