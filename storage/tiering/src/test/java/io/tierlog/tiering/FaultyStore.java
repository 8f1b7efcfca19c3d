package io.tierlog.tiering;

import io.tierlog.objectstore.ByteRange;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectMetadata;
import io.tierlog.objectstore.ObjectPage;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.objectstore.ObjectStoreUnavailableException;

import java.nio.file.Path;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A decorator of a real store (not a mock: every call that is not faulted reaches the real backend) that counts
 * requests per operation and, on demand, fails a chosen call as a crash or an outage would: the call throws
 * {@link ObjectStoreUnavailableException} <em>before</em> reaching the backend, so nothing of it takes effect.
 * A hook may also run before a chosen call (to stop the S3 server under a live client).
 */
final class FaultyStore implements ObjectStore {
    interface Rule {
        /** True to fail this call; {@code n} is the 1-based count of calls of this operation so far. */
        boolean fail(String op, ObjectKey key, long n);
    }

    private final ObjectStore delegate;
    private final Map<String, AtomicLong> counts = new ConcurrentHashMap<>();
    private volatile Rule rule = (op, key, n) -> false;
    private volatile Rule hookWhen = (op, key, n) -> false;
    private volatile Runnable hook = () -> { };

    FaultyStore(ObjectStore delegate) {
        this.delegate = delegate;
    }

    void failWhen(Rule rule) {
        this.rule = rule;
    }

    void heal() {
        this.rule = (op, key, n) -> false;
    }

    void runBefore(Rule when, Runnable hook) {
        this.hookWhen = when;
        this.hook = hook;
    }

    long count(String op) {
        AtomicLong c = counts.get(op);
        return c == null ? 0 : c.get();
    }

    void resetCounts() {
        counts.clear();
    }

    private void enter(String op, ObjectKey key) {
        long n = counts.computeIfAbsent(op, o -> new AtomicLong()).incrementAndGet();
        if (hookWhen.fail(op, key, n)) {
            hook.run();
        }
        if (rule.fail(op, key, n)) {
            throw new ObjectStoreUnavailableException("injected fault: " + op + " " + key + " (#" + n + ")", null);
        }
    }

    @Override
    public void put(ObjectKey key, Path file) {
        enter("put", key);
        delegate.put(key, file);
    }

    @Override
    public void put(ObjectKey key, byte[] bytes) {
        enter("put", key);
        delegate.put(key, bytes);
    }

    @Override
    public boolean putIfAbsent(ObjectKey key, byte[] bytes) {
        enter("putIfAbsent", key);
        return delegate.putIfAbsent(key, bytes);
    }

    @Override
    public byte[] get(ObjectKey key) {
        enter("get", key);
        return delegate.get(key);
    }

    @Override
    public byte[] getRange(ObjectKey key, ByteRange range) {
        enter("getRange", key);
        return delegate.getRange(key, range);
    }

    @Override
    public Optional<ObjectMetadata> head(ObjectKey key) {
        enter("head", key);
        return delegate.head(key);
    }

    @Override
    public ObjectPage list(String prefix, Optional<String> pageToken, int maxKeys) {
        enter("list", null);
        return delegate.list(prefix, pageToken, maxKeys);
    }

    @Override
    public void delete(ObjectKey key) {
        enter("delete", key);
        delegate.delete(key);
    }

    @Override
    public void deleteAll(Collection<ObjectKey> keys) {
        enter("deleteAll", null);
        delegate.deleteAll(keys);
    }

    @Override
    public void close() {
        // the test owns the real store's lifecycle
    }
}
