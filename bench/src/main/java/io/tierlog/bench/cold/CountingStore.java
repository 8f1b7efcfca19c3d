package io.tierlog.bench.cold;

import io.tierlog.objectstore.ByteRange;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectMetadata;
import io.tierlog.objectstore.ObjectPage;
import io.tierlog.objectstore.ObjectStore;

import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntConsumer;

/**
 * An {@link ObjectStore} decorator that counts calls per SPI operation and forwards every call to the real store.
 * A multipart {@code put} counts once. {@link #close()} does not close the delegate (its owner does). Thread-safe.
 */
final class CountingStore implements ObjectStore {
    static final List<String> OPERATIONS = List.of("put", "putIfAbsent", "get", "getRange", "head", "list", "delete",
            "deleteAll");

    private final ObjectStore delegate;
    private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();

    CountingStore(ObjectStore delegate) {
        this.delegate = delegate;
    }

    long count(String op) {
        LongAdder c = counts.get(op);
        return c == null ? 0 : c.sum();
    }

    void resetCounts() {
        counts.clear();
    }

    /** {@code op=n} per GiB of {@code gib} for each operation called, e.g. {@code "get=72 getRange=1026"}. */
    String perGib(double gib) {
        StringBuilder out = new StringBuilder();
        for (String op : OPERATIONS) {
            if (count(op) > 0) {
                out.append(op).append('=').append(Math.round(count(op) / gib)).append(' ');
            }
        }
        return out.toString().trim();
    }

    private void enter(String op) {
        counts.computeIfAbsent(op, o -> new LongAdder()).increment();
    }

    @Override
    public void put(ObjectKey key, Path file) {
        enter("put");
        delegate.put(key, file);
    }

    @Override
    public void put(ObjectKey key, byte[] bytes) {
        enter("put");
        delegate.put(key, bytes);
    }

    @Override
    public boolean putIfAbsent(ObjectKey key, byte[] bytes) {
        enter("putIfAbsent");
        return delegate.putIfAbsent(key, bytes);
    }

    @Override
    public byte[] get(ObjectKey key) {
        enter("get");
        return delegate.get(key);
    }

    @Override
    public byte[] getRange(ObjectKey key, ByteRange range) {
        enter("getRange");
        return delegate.getRange(key, range);
    }

    @Override
    public int getRange(ObjectKey key, ByteRange range, byte[] into, IntConsumer arrived) {
        enter("getRange");
        return delegate.getRange(key, range, into, arrived);
    }

    @Override
    public Optional<ObjectMetadata> head(ObjectKey key) {
        enter("head");
        return delegate.head(key);
    }

    @Override
    public ObjectPage list(String prefix, Optional<String> pageToken, int maxKeys) {
        enter("list");
        return delegate.list(prefix, pageToken, maxKeys);
    }

    @Override
    public void delete(ObjectKey key) {
        enter("delete");
        delegate.delete(key);
    }

    @Override
    public void deleteAll(Collection<ObjectKey> keys) {
        enter("deleteAll");
        delegate.deleteAll(keys);
    }

    @Override
    public void close() {
        // the benchmark owns the real store's lifecycle
    }
}
