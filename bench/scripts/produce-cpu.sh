#!/bin/bash
# usage: bench/scripts/produce-cpu.sh APP_DIR LABEL [ROUNDS]   (e.g. index-service/target/quarkus-app after 20)
# The index-service's CPU seconds per GiB of values for produce into the page cache (issue #27), JSON bodies against
# record-batch bodies of the same records on the same service, from /proc/<pid>/stat. Starts the packaged service
# (fsync=never), produces ROUNDS requests of 1000 x 1 KiB values per partition of an 8-partition topic with 8 curl
# clients as JSON (the bodies of json-cpu.sh), then the same count as record batches (each partition's first stored
# batch, fetched once and posted with Content-Type application/vnd.tierlog.record-batches). Two warm-up passes, then
# three measured ones, alternating. EXTRA_OPTS reaches the service's JVM (e.g. a JFR recording); PHASES names a file
# that gets each pass's start and end time (to split a profile by path); PARALLEL=5 has each client keep 5 requests
# in flight (curl -Z), as the compare benchmark's producers do (40 at once). Needs curl and python3.
set -e
APP=$1; LABEL=$2; ROUNDS=${3:-20}
W=/tmp/produce-cpu-$LABEL
. "$(dirname "$0")/cpu-service.sh"
pids=()
produce() { # topic rounds kind
  local t=$1 n=$2 kind=$3
  curl -sf -XPOST $B -H 'Content-Type: application/json' -d "{\"name\":\"$t\",\"partitions\":8}" >/dev/null
  sleep 1
  local c0=$(cpu); [ -n "$PHASES" ] && echo "$t $kind start $(date -u +%H:%M:%S.%3N)" >> $PHASES
  for p in 0 1 2 3 4 5 6 7; do
    ( args=(); for r in $(seq 1 $n); do
        if [ $kind = json ]; then args+=(--next -sf -o /dev/null -XPOST -H 'Content-Type: application/json' --data-binary @/tmp/json-body-$p.json $B/$t/records)
        else args+=(--next -sf -o /dev/null -XPOST -H 'Content-Type: application/vnd.tierlog.record-batches' --data-binary @$W/batch-$p.bin "$B/$t/records?partition=$p"); fi
      done; if [ "${PARALLEL:-1}" -gt 1 ]; then curl -s -Z --parallel-max $PARALLEL "${args[@]}"; else curl "${args[@]}"; fi ) &
    pids+=($!)
  done; wait ${pids[@]}; pids=()
  local c1=$(cpu); [ -n "$PHASES" ] && echo "$t $kind end $(date -u +%H:%M:%S.%3N)" >> $PHASES
  python3 -c "t=$tick;g=$n*8*1000*1024/2**30;print('%s produce-%s %.2f CPU s/GiB (%.3f GiB)'%('$t','$kind',($c1-$c0)/t/g,g))"
}
produce seed 1 json >/dev/null
for p in 0 1 2 3 4 5 6 7; do
  curl -sf -o $W/batch-$p.bin -H 'Accept: application/vnd.tierlog.record-batches' "$B/seed/partitions/$p/records?offset=0&maxRecords=1000"
done
produce w1 $ROUNDS json >/dev/null; produce w2 $ROUNDS batches >/dev/null
produce w3 $ROUNDS json >/dev/null; produce w4 $ROUNDS batches >/dev/null
for i in 1 2 3; do produce j$i $ROUNDS json; produce b$i $ROUNDS batches; done
uptime
