package io.tierlog.tiering;

import io.tierlog.objectstore.ByteRange;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectMetadata;
import io.tierlog.objectstore.ObjectPage;
import io.tierlog.objectstore.ObjectStore;

import java.nio.file.Path;
import java.util.Collection;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import java.util.function.Supplier;

/**
 * An {@link ObjectStore} that counts the requests made on a thread while it runs an activity's work
 * ({@link #attributing}) into that activity's {@link StoreRequests}, and passes everything through unchanged. It
 * lets the cold cleaner report its S3 cost although its manifest loads and commits go through the
 * {@link ManifestStore} every component shares. Requests made outside {@link #attributing} are not counted.
 * Thread-safe; {@link #close()} does not close the delegate (its owner does).
 */
final class AttributingObjectStore implements ObjectStore {
    private static final int DELETE_BATCH = 1000;

    private final ObjectStore delegate;
    private final ThreadLocal<StoreRequests> current = new ThreadLocal<>();

    AttributingObjectStore(ObjectStore delegate) {
        this.delegate = delegate;
    }

    /** Runs {@code work} on this thread, counting its requests into {@code requests}. Not reentrant. */
    <T> T attributing(StoreRequests requests, Supplier<T> work) {
        current.set(requests);
        try {
            return work.get();
        } finally {
            current.remove();
        }
    }

    @Override
    public void put(ObjectKey key, Path file) {
        count(StoreRequests::put);
        delegate.put(key, file);
    }

    @Override
    public void put(ObjectKey key, byte[] bytes) {
        count(StoreRequests::put);
        delegate.put(key, bytes);
    }

    @Override
    public boolean putIfAbsent(ObjectKey key, byte[] bytes) {
        count(StoreRequests::put);
        return delegate.putIfAbsent(key, bytes);
    }

    @Override
    public byte[] get(ObjectKey key) {
        count(StoreRequests::get);
        return delegate.get(key);
    }

    @Override
    public byte[] getRange(ObjectKey key, ByteRange range) {
        count(StoreRequests::get);
        return delegate.getRange(key, range);
    }

    @Override
    public int getRange(ObjectKey key, ByteRange range, byte[] into, IntConsumer arrived) {
        count(StoreRequests::get);
        return delegate.getRange(key, range, into, arrived);
    }

    @Override
    public Optional<ObjectMetadata> head(ObjectKey key) {
        count(StoreRequests::head);
        return delegate.head(key);
    }

    /** One LIST per page; {@link #listAll} (the interface's default) pages through this method. */
    @Override
    public ObjectPage list(String prefix, Optional<String> pageToken, int maxKeys) {
        count(StoreRequests::list);
        return delegate.list(prefix, pageToken, maxKeys);
    }

    @Override
    public void delete(ObjectKey key) {
        count(r -> r.delete(1));
        delegate.delete(key);
    }

    @Override
    public void deleteAll(Collection<ObjectKey> keys) {
        int requests = (keys.size() + DELETE_BATCH - 1) / DELETE_BATCH;
        count(r -> r.delete(requests));
        delegate.deleteAll(keys);
    }

    @Override
    public void close() {
        // the delegate belongs to whoever built it
    }

    private void count(Consumer<StoreRequests> request) {
        StoreRequests r = current.get();
        if (r != null) {
            request.accept(r);
        }
    }
}
