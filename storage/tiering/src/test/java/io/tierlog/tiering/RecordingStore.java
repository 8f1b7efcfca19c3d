package io.tierlog.tiering;

import io.tierlog.objectstore.ByteRange;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectMetadata;
import io.tierlog.objectstore.ObjectPage;
import io.tierlog.objectstore.ObjectStore;

import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A decorator of the real filesystem store that records every GET (key, range start, calling thread) and runs a
 * hook before each, which may throw as a failing GET would, or wait, before reaching the backend. The test closes the
 * backend.
 */
final class RecordingStore implements ObjectStore {
    interface Hook {
        void before(String op, ObjectKey key, ByteRange range);
    }

    record Call(String op, ObjectKey key, long offset, long length, String thread) {
    }

    private final ObjectStore delegate;
    final List<Call> calls = new CopyOnWriteArrayList<>();
    volatile Hook before = (op, key, range) -> { };

    RecordingStore(ObjectStore delegate) {
        this.delegate = delegate;
    }

    List<Call> rangeCallsOf(ObjectKey key) {
        return calls.stream().filter(c -> c.op().equals("getRange") && c.key().equals(key)).toList();
    }

    /** Every ranged GET, in the order they were asked. */
    List<ByteRange> ranges() {
        return calls.stream().filter(c -> c.op().equals("getRange")).map(c -> ByteRange.of(c.offset(), c.length()))
                .toList();
    }

    List<Long> rangesOf(ObjectKey key) {
        return calls.stream().filter(c -> c.op().equals("getRange") && c.key().equals(key))
                .map(Call::offset).toList();
    }

    List<String> rangeCalls(ObjectKey key, long offset) {
        return calls.stream().filter(c -> c.op().equals("getRange") && c.key().equals(key)
                && c.offset() == offset).map(c -> threadRole(c.thread())).toList();
    }

    long gets(ObjectKey key) {
        return getCalls(key).size();
    }

    List<String> getCalls(ObjectKey key) {
        return calls.stream().filter(c -> c.op().equals("get") && c.key().equals(key))
                .map(c -> threadRole(c.thread())).toList();
    }

    private static String threadRole(String thread) {
        return thread.startsWith("tierlog-cold-fetch") ? "tierlog-cold-fetch" : thread;
    }

    @Override
    public byte[] get(ObjectKey key) {
        calls.add(new Call("get", key, 0, 0, Thread.currentThread().getName()));
        before.before("get", key, null);
        return delegate.get(key);
    }

    @Override
    public byte[] getRange(ObjectKey key, ByteRange range) {
        calls.add(new Call("getRange", key, range.offset(), range.length(), Thread.currentThread().getName()));
        before.before("getRange", key, range);
        return delegate.getRange(key, range);
    }

    @Override
    public void put(ObjectKey key, Path file) {
        delegate.put(key, file);
    }

    @Override
    public void put(ObjectKey key, byte[] bytes) {
        delegate.put(key, bytes);
    }

    @Override
    public boolean putIfAbsent(ObjectKey key, byte[] bytes) {
        return delegate.putIfAbsent(key, bytes);
    }

    @Override
    public Optional<ObjectMetadata> head(ObjectKey key) {
        return delegate.head(key);
    }

    @Override
    public ObjectPage list(String prefix, Optional<String> pageToken, int maxKeys) {
        return delegate.list(prefix, pageToken, maxKeys);
    }

    @Override
    public void delete(ObjectKey key) {
        delegate.delete(key);
    }

    @Override
    public void deleteAll(Collection<ObjectKey> keys) {
        delegate.deleteAll(keys);
    }

    @Override
    public void close() {
        // the test closes the backend
    }
}
