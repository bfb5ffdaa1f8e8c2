#!/usr/bin/env bash
# Starts a Stencil job as N timely processes and waits for them.
#
#   cluster/launch.sh --local N [options] -- SUBCOMMAND ARGS...
#   cluster/launch.sh --hostfile FILE [options] -- SUBCOMMAND ARGS...
#
# --local N        N processes on this machine, on 127.0.0.1 ports BASE..BASE+N-1
# --hostfile FILE  one host:port per line, process 0 first; process k starts on the host of
#                  line k: locally when it is 127.0.0.1 or localhost, else over ssh (the
#                  binary, the inputs and --out must be at the same paths there, and FILE
#                  too: it is passed to every process by its absolute path)
# --base-port P    first port for --local (2101)
# --bin PATH       the stencil binary (target/release/stencil beside this script's repo)
# --logs DIR       process k writes DIR/process-k.log (./cluster-logs)
# --workdir DIR    directory the remote processes start in (this one)
#
# Every process gets the same arguments plus `-n N -p k --hostfile FILE`. If one exits with
# an error, the others are stopped (timely has no recovery: the rest would wait forever), the
# failed rank and the tail of its log are printed, and the launcher exits non-zero.
#
# Examples:
#   cluster/launch.sh --local 2 -- run crawl/ --out out -w 1
#   cluster/launch.sh --hostfile hosts.txt -- run /shared/crawl --out /shared/out -w 8
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
local_n=""
hostfile=""
base_port=2101
bin="$here/../target/release/stencil"
logs="./cluster-logs"
workdir=$(pwd)

usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
    case "$1" in
        --local) local_n=$2; shift 2 ;;
        --hostfile) hostfile=$2; shift 2 ;;
        --base-port) base_port=$2; shift 2 ;;
        --bin) bin=$2; shift 2 ;;
        --logs) logs=$2; shift 2 ;;
        --workdir) workdir=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        --) shift; break ;;
        *) echo "launch.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
if [ $# -eq 0 ]; then
    echo "launch.sh: no stencil subcommand after --" >&2
    exit 2
fi
if [ -n "$local_n" ] && [ -n "$hostfile" ]; then
    echo "launch.sh: give --local or --hostfile, not both" >&2
    exit 2
fi
mkdir -p "$logs"
if [ -n "$local_n" ]; then
    hostfile="$logs/hostfile.txt"
    : > "$hostfile"
    for ((k = 0; k < local_n; k++)); do
        echo "127.0.0.1:$((base_port + k))" >> "$hostfile"
    done
fi
if [ -z "$hostfile" ]; then
    echo "launch.sh: give --local N or --hostfile FILE" >&2
    exit 2
fi
hostfile=$(cd "$(dirname "$hostfile")" && pwd)/$(basename "$hostfile")
mapfile -t hosts < <(grep -v '^[[:space:]]*\(#\|$\)' "$hostfile")
n=${#hosts[@]}
if [ "$n" -eq 0 ]; then
    echo "launch.sh: $hostfile lists no processes" >&2
    exit 2
fi

pids=()
stop_all() {
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
}
trap 'stop_all; exit 130' INT TERM

# Later ranks first: each connects to the ones before it and retries until they listen.
for ((k = n - 1; k >= 0; k--)); do
    host=${hosts[$k]%:*}
    log="$logs/process-$k.log"
    args=("$@" -n "$n" -p "$k" --hostfile "$hostfile")
    if [ "$host" = "127.0.0.1" ] || [ "$host" = "localhost" ]; then
        "$bin" "${args[@]}" > "$log" 2>&1 &
    else
        remote="cd $(printf %q "$workdir") && exec $(printf %q "$bin")"
        for arg in "${args[@]}"; do
            remote+=" $(printf %q "$arg")"
        done
        ssh -o BatchMode=yes "$host" "$remote" > "$log" 2>&1 &
    fi
    pids[k]=$!
done

failed=""
remaining=$n
while [ "$remaining" -gt 0 ]; do
    if wait -n -p done_pid "${pids[@]}" 2>/dev/null; then
        status=0
    else
        status=$?
    fi
    remaining=$((remaining - 1))
    if [ "$status" -ne 0 ] && [ -z "$failed" ]; then
        for k in "${!pids[@]}"; do
            if [ "${pids[$k]}" = "$done_pid" ]; then failed=$k; fi
        done
        echo "launch.sh: process $failed exited with status $status; stopping the others" >&2
        echo "--- last lines of $logs/process-$failed.log ---" >&2
        tail -n 20 "$logs/process-$failed.log" >&2
        stop_all
    fi
done
if [ -n "$failed" ]; then
    exit 1
fi
echo "launch.sh: $n processes finished; logs in $logs" >&2
cat "$logs/process-0.log" >&2
