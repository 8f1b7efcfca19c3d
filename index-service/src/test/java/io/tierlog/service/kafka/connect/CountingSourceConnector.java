package io.tierlog.service.kafka.connect;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.source.SourceConnector;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A Kafka Connect source for KafkaConnectTest: {@code tasks.max} tasks, each writing "task-T seq-N" records to
 * {@code topic} with N counting up from where its committed source offset left off.
 */
public class CountingSourceConnector extends SourceConnector {
    static final String TOPIC = "topic";
    private Map<String, String> props;

    @Override
    public void start(Map<String, String> props) {
        this.props = props;
    }

    @Override
    public Class<? extends Task> taskClass() {
        return CountingSourceTask.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        List<Map<String, String>> out = new ArrayList<>();
        for (int t = 0; t < maxTasks; t++) {
            Map<String, String> task = new HashMap<>(props);
            task.put(CountingSourceTask.TASK, Integer.toString(t));
            out.add(task);
        }
        return out;
    }

    @Override
    public void stop() {
    }

    @Override
    public ConfigDef config() {
        return new ConfigDef().define(TOPIC, ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "where the records go");
    }

    @Override
    public String version() {
        return "1";
    }
}
