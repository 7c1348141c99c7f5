#!/usr/bin/env bash
# A real Slurm cluster of N nodes on this one machine, for CI: Debian's
# slurmctld, slurmd and munge, one slurmd per node ("ports" mode: every
# node at 127.0.0.1 with its own slurmd port), each slurmd in its own UTS
# namespace so that node nX has hostname nX. Nothing is written outside
# DIR; every daemon gets its configuration through -f / SLURM_CONF.
#
#   scripts/slurm-cluster.sh up DIR [N]   # start; prints the SLURM_CONF line
#   scripts/slurm-cluster.sh down DIR     # stop what `up` started
#
# Needs root (slurmd runs jobs as their submitter) and the packages
# slurmctld slurmd slurm-client munge.
set -euo pipefail

cmd=${1:-}
dir=${2:-}
nodes=${3:-3}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 up|down DIR [NODES]" >&2; exit 2; }

down() {
    # Stop in reverse order of start, by the PIDs we recorded; wait for each.
    for f in "$dir"/pids/slurmd-*.pid "$dir"/pids/slurmctld.pid "$dir"/pids/munged.pid; do
        [ -f "$f" ] || continue
        pid=$(cat "$f" 2>/dev/null || true)
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
            for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -KILL "$pid" 2>/dev/null || true
        fi
        rm -f "$f"
    done
}

if [ "$cmd" = down ]; then
    down
    exit 0
fi
[ "$cmd" = up ] || { echo "usage: $0 up|down DIR [NODES]" >&2; exit 2; }

for tool in slurmctld slurmd munged mungekey srun scontrol unshare; do
    command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || { echo "slurm-cluster: $tool is not installed" >&2; exit 1; }
done
export PATH="$PATH:/usr/sbin"

dir=$(mkdir -p "$dir" && cd "$dir" && pwd)
mkdir -p "$dir"/{munge-key,state,pids,log,spool}
chmod 0700 "$dir/munge-key"
# munged refuses a socket directory others cannot traverse.
mkdir -p "$dir/munge-run"
chmod 0755 "$dir" "$dir/munge-run"

[ -f "$dir/munge-key/munge.key" ] || mungekey -c -k "$dir/munge-key/munge.key"
chmod 0600 "$dir/munge-key/munge.key"
munged --force \
    --socket="$dir/munge-run/munge.socket" \
    --key-file="$dir/munge-key/munge.key" \
    --pid-file="$dir/pids/munged.pid" \
    --log-file="$dir/log/munged.log" \
    --seed-file="$dir/state/munge.seed"

host=$(hostname)
conf="$dir/slurm.conf"
{
    echo "ClusterName=wirereport"
    echo "SlurmctldHost=$host(127.0.0.1)"
    echo "SlurmUser=root"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    echo "AuthInfo=socket=$dir/munge-run/munge.socket"
    echo "StateSaveLocation=$dir/state"
    echo "SlurmctldPidFile=$dir/pids/slurmctld.pid"
    echo "SlurmctldLogFile=$dir/log/slurmctld.log"
    echo "SlurmdSpoolDir=$dir/spool/%n"
    echo "SlurmdPidFile=$dir/pids/slurmd-%n.pid"
    echo "SlurmdLogFile=$dir/log/slurmd-%n.log"
    echo "SlurmctldPort=16817"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "MpiDefault=none"
    echo "MailProg=/bin/true"
    echo "ReturnToService=2"
    for i in $(seq 1 "$nodes"); do
        echo "NodeName=n$i NodeAddr=127.0.0.1 NodeHostName=n$i Port=$((17000 + i)) CPUs=1 RealMemory=256 State=UNKNOWN"
    done
    echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
} > "$conf"

export SLURM_CONF="$conf"
slurmctld -f "$conf"
for i in $(seq 1 "$nodes"); do
    mkdir -p "$dir/spool/n$i"
    # Its own hostname, so the node's tasks see `n$i` as a real node would.
    unshare --uts sh -c "hostname n$i && exec slurmd -f '$conf' -N n$i"
done

# Wait until every node is idle (a few tenths of a second here).
for _ in $(seq 1 150); do
    idle=$(sinfo -h -N -t idle -o '%N' 2>/dev/null | sort -u | wc -l)
    [ "$idle" -ge "$nodes" ] && break
    sleep 0.2
done
if [ "${idle:-0}" -lt "$nodes" ]; then
    echo "slurm-cluster: only ${idle:-0} of $nodes nodes came up; logs in $dir/log" >&2
    sinfo -N >&2 || true
    tail -5 "$dir"/log/*.log >&2 || true
    down
    exit 1
fi
echo "export SLURM_CONF=$conf"
