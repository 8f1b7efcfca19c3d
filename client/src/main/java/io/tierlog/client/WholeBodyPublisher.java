package io.tierlog.client;

import java.net.http.HttpRequest;
import java.nio.ByteBuffer;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A request body published as one buffer over the caller's array (no copy). The JDK's
 * {@code BodyPublishers.ofByteArray} copies a body into 16 KiB buffers and hands them to the connection one at a
 * time; for a 512 KiB produce batch that is a copy and 32 steps through the client's asynchronous write machinery
 * (measured in the client-produce benchmark, docs/BENCHMARKS.md: the producer's CPU per record went from 1.6x to
 * 0.5-0.7x of a plain JDK {@code HttpClient} sender using {@code ofByteArray}). The array must not change until the
 * request is answered. Each subscription (a resend subscribes again) gets the whole body.
 */
final class WholeBodyPublisher implements HttpRequest.BodyPublisher {
    private final byte[] body;

    WholeBodyPublisher(byte[] body) {
        this.body = body;
    }

    @Override
    public long contentLength() {
        return body.length;
    }

    @Override
    public void subscribe(Flow.Subscriber<? super ByteBuffer> subscriber) {
        AtomicBoolean done = new AtomicBoolean();
        subscriber.onSubscribe(new Flow.Subscription() {
            @Override
            public void request(long n) {
                if (done.getAndSet(true)) {
                    return;
                }
                if (n <= 0) {
                    subscriber.onError(new IllegalArgumentException("request " + n + " (must be positive)"));
                    return;
                }
                subscriber.onNext(ByteBuffer.wrap(body));
                subscriber.onComplete();
            }

            @Override
            public void cancel() {
                done.set(true);
            }
        });
    }
}
