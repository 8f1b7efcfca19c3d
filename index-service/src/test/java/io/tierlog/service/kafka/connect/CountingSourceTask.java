package io.tierlog.service.kafka.connect;

import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** One task of {@link CountingSourceConnector}: ten records per poll, a poll every 50 ms at most. */
public class CountingSourceTask extends SourceTask {
    static final String TASK = "task";
    private String topic;
    private String task;
    private long next;

    @Override
    public void start(Map<String, String> props) {
        topic = props.get(CountingSourceConnector.TOPIC);
        task = props.get(TASK);
        Map<String, Object> committed = context.offsetStorageReader().offset(Map.of(TASK, task));
        next = committed == null ? 0 : ((Number) committed.get("seq")).longValue() + 1;
    }

    @Override
    public List<SourceRecord> poll() throws InterruptedException {
        Thread.sleep(50); // a source paced by the outside world, as a real one is
        List<SourceRecord> out = new ArrayList<>();
        for (int i = 0; i < 10; i++, next++) {
            out.add(new SourceRecord(Map.of(TASK, task), Map.of("seq", next), topic, null, Schema.STRING_SCHEMA,
                    task, Schema.STRING_SCHEMA, "task-" + task + " seq-" + next));
        }
        return out;
    }

    @Override
    public void stop() {
    }

    @Override
    public String version() {
        return "1";
    }
}
