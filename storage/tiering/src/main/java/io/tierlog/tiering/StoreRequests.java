package io.tierlog.tiering;

import java.util.concurrent.atomic.LongAdder;

/**
 * Object-store requests made on behalf of one activity (the cold cleaner's passes), by S3 request kind. An upload is
 * one PUT here even when the store sends it as a multipart upload (objects above its part size, 8 MiB for S3: then
 * it is 2 + parts requests); a multi-object delete is one DELETE per 1,000 keys, as S3's DeleteObjects. Thread-safe.
 */
public final class StoreRequests {
    private final LongAdder gets = new LongAdder();
    private final LongAdder puts = new LongAdder();
    private final LongAdder lists = new LongAdder();
    private final LongAdder deletes = new LongAdder();
    private final LongAdder heads = new LongAdder();

    void get() {
        gets.increment();
    }

    void put() {
        puts.increment();
    }

    void list() {
        lists.increment();
    }

    void delete(int requests) {
        deletes.add(requests);
    }

    void head() {
        heads.increment();
    }

    /** GETs of whole objects and of ranges. */
    public long gets() {
        return gets.sum();
    }

    /** PUTs, conditional ones (manifest commits) included. */
    public long puts() {
        return puts.sum();
    }

    /** LIST pages. */
    public long lists() {
        return lists.sum();
    }

    public long deletes() {
        return deletes.sum();
    }

    public long heads() {
        return heads.sum();
    }

    public long total() {
        return gets() + puts() + lists() + deletes() + heads();
    }
}
