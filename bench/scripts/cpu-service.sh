# Sourced by json-cpu.sh and produce-cpu.sh (not run alone): makes the JSON bodies the compare benchmark sends (1000
# strings of 1022 random alphanumerics per partition, cached in /tmp), starts the packaged index-service from $APP
# with fsync=never and a filesystem cold tier under $W, stops it (and removes $W when KEEP_WORKDIR is unset) on exit,
# and defines $PID, $B (the topics URL), $tick and cpu() (the service's user+system clock ticks, from /proc).
for p in 0 1 2 3 4 5 6 7; do
  [ -f /tmp/json-body-$p.json ] || python3 - $p <<'PY'
import json, random, string, sys
p = int(sys.argv[1]); random.seed(1)
recs = [{"partition": p, "value": ''.join(random.choice(string.ascii_letters + string.digits) for _ in range(1022))}
        for _ in range(1000)]
open("/tmp/json-body-%d.json" % p, "w").write(json.dumps({"records": recs}, separators=(',', ':')))
PY
done
rm -rf $W; mkdir -p $W
PORT=$((20000 + RANDOM % 20000))
java -Xms1g -Xmx1g -XX:+UseG1GC -XX:MaxGCPauseMillis=20 $EXTRA_OPTS -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port=$PORT \
  -Dtierlog.kafka.enabled=false -Dquarkus.log.level=WARN -Dtierlog.data-dir=$W/hot -Dtierlog.index-dir=$W/index \
  -Dtierlog.cold.filesystem.dir=$W/cold -Dtierlog.fsync=never -jar $APP/quarkus-run.jar > $W/service.log 2>&1 &
PID=$!
trap "kill $PID 2>/dev/null; wait $PID 2>/dev/null || true; [ -n \"\$KEEP_WORKDIR\" ] || rm -rf $W" EXIT
for i in $(seq 1 120); do curl -sf http://127.0.0.1:$PORT/q/health/ready >/dev/null 2>&1 && break; sleep 1; done
B=http://127.0.0.1:$PORT/v1/topics
cpu() { awk '{print $14+$15}' /proc/$PID/stat; }
tick=$(getconf CLK_TCK)
