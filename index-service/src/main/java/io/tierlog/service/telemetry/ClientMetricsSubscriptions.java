package io.tierlog.service.telemetry;

import io.tierlog.access.Secrets;
import io.tierlog.access.VolumeRecords;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The client-metrics subscriptions an administrator set, durable on the shared hot volume ({@link VolumeRecords}: one
 * file per subscription, named by the SHA-256 of its name, replaced whole by a change), so every instance hands
 * clients the same subscriptions within its refresh interval. Thread-safe.
 */
public final class ClientMetricsSubscriptions implements AutoCloseable {
    private final VolumeRecords<ClientMetricsSubscription, List<ClientMetricsSubscription>> records;

    public ClientMetricsSubscriptions(Path dir, Clock clock, Secrets secrets) {
        this.records = new VolumeRecords<>(dir, clock, secrets, "client metrics subscription",
                ClientMetricsSubscriptions::parse, byName -> byName.values().stream()
                        .sorted(Comparator.comparing(ClientMetricsSubscription::name)).toList());
    }

    /** The directory under a hot volume: {@code <data-dir>/__metadata/client-metrics}. */
    public static Path directoryIn(Path dataDir) {
        return dataDir.resolve("__metadata").resolve("client-metrics");
    }

    public void startRefresher(Duration period) {
        records.startRefresher(period);
    }

    /** Re-reads the directory now (the refresher does this every period). */
    public void refresh() {
        records.refresh();
    }

    /** Every subscription, sorted by name (immutable). */
    public List<ClientMetricsSubscription> all() {
        return records.index();
    }

    public Optional<ClientMetricsSubscription> get(String name) {
        return Optional.ofNullable(records.all().get(key(name)));
    }

    /** Stores {@code subscription} in place of any of its name; durable before it returns. */
    public void put(ClientMetricsSubscription subscription) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("name", subscription.name());
        json.put("configs", new TreeMap<>(subscription.configs()));
        records.put(key(subscription.name()), json, subscription);
    }

    /** Removes the subscription named {@code name}; durable before it returns. Whether there was one. */
    public boolean remove(String name) {
        return records.remove(key(name));
    }

    private static String key(String name) {
        return HexFormat.of().formatHex(Secrets.sha256(name));
    }

    @SuppressWarnings("unchecked")
    private static ClientMetricsSubscription parse(String key, Map<String, Object> json) {
        String name = (String) json.get("name");
        if (name == null || !key(name).equals(key)) {
            throw new IllegalArgumentException("its name is not its subscription's");
        }
        return ClientMetricsSubscription.of(name, (Map<String, String>) json.get("configs"));
    }

    @Override
    public void close() {
        records.close();
    }
}
