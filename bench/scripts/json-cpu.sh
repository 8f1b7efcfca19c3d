#!/bin/bash
# usage: bench/scripts/json-cpu.sh APP_DIR LABEL [ROUNDS]   (e.g. index-service/target/quarkus-app after 30)
# The index-service's CPU seconds per GiB of values for the JSON paths (issue #27), from /proc/<pid>/stat: starts the
# packaged service (fsync=never, cold tier on the filesystem), creates an 8-partition topic, produces ROUNDS requests
# of 1000 x 1 KiB values per partition with 8 curl clients (JSON bodies as the compare benchmark's: strings of 1022
# random alphanumerics), then reads everything back from offset 0 (maxRecords=2000, maxBytes=4 MiB, one curl per
# partition) as JSON and as record batches. Two warm-up passes, then three measured ones. Needs curl and python3.
set -e
APP=$1; LABEL=$2; ROUNDS=${3:-40}
W=/tmp/json-cpu-$LABEL
. "$(dirname "$0")/cpu-service.sh"
pids=()
run() { # topic rounds
  local t=$1 n=$2
  curl -sf -XPOST $B -H 'Content-Type: application/json' -d "{\"name\":\"$t\",\"partitions\":8}" >/dev/null
  local c0=$(cpu)
  for p in 0 1 2 3 4 5 6 7; do
    ( args=(); for r in $(seq 1 $n); do args+=(--next -s -o /dev/null -XPOST -H 'Content-Type: application/json' --data-binary @/tmp/json-body-$p.json $B/$t/records); done; curl "${args[@]}" ) &
    pids+=($!)
  done; wait ${pids[@]}; pids=()
  sleep 2; local c1=$(cpu)
  local last=$(( n*1000 - 2000 ))
  for p in 0 1 2 3 4 5 6 7; do curl -s -o /dev/null "$B/$t/partitions/$p/records?offset=[0-$last:2000]&maxRecords=2000&maxBytes=4194304" & pids+=($!); done; wait ${pids[@]}; pids=()
  local c2=$(cpu)
  for p in 0 1 2 3 4 5 6 7; do curl -s -o /dev/null -H 'Accept: application/vnd.tierlog.record-batches' "$B/$t/partitions/$p/records?offset=[0-$last:2000]&maxRecords=2000&maxBytes=4194304" & pids+=($!); done; wait ${pids[@]}; pids=()
  local c3=$(cpu)
  local gib=$(python3 -c "print($n*8*1000*1024/2**30)")
  python3 -c "t=$tick;g=$gib;print('%s produce-json %.2f fetch-json %.2f fetch-batches %.2f CPU s/GiB (%.3f GiB)'%('$t',($c1-$c0)/t/g,($c2-$c1)/t/g,($c3-$c2)/t/g,g))"
}
run warm $ROUNDS >/dev/null; run warm2 $ROUNDS > /dev/null
for i in 1 2 3; do run m$i $ROUNDS; done
uptime
