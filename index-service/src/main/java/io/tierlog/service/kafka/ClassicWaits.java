package io.tierlog.service.kafka;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Requests of classic groups waiting for an answer (a JoinGroup for its round, a follower's SyncGroup for the
 * leader's) without a thread each: a wait asks its question again when {@link #poke} says its group changed on this
 * instance, and every {@code pollMs} for changes another instance made and for deadlines. Thread-safe.
 */
final class ClassicWaits {
    private final ScheduledExecutorService timers;
    private final long pollMs;
    private final ConcurrentHashMap<String, Set<Wait<?>>> byGroup = new ConcurrentHashMap<>();

    ClassicWaits(ScheduledExecutorService timers, long pollMs) {
        this.timers = timers;
        this.pollMs = pollMs;
    }

    /**
     * Completes with {@code question}'s first non-null answer (or its exception); the question runs on {@code
     * workers}, one at a time per wait.
     */
    <T> CompletableFuture<T> await(String group, Executor workers, Supplier<T> question) {
        Wait<T> wait = new Wait<>(group, workers, question);
        byGroup.computeIfAbsent(group, g -> ConcurrentHashMap.newKeySet()).add(wait);
        wait.timer = timers.scheduleWithFixedDelay(wait::askOnWorker, pollMs, pollMs, TimeUnit.MILLISECONDS);
        wait.askOnWorker(); // the group may have moved between the first answer and now
        return wait.answer;
    }

    /** The group changed on this instance: its waits ask again now. */
    void poke(String group) {
        Set<Wait<?>> waiting = byGroup.get(group);
        if (waiting != null) {
            waiting.forEach(Wait::askOnWorker);
        }
    }

    /** How many requests wait (for tests). */
    int waiting() {
        return byGroup.values().stream().mapToInt(Set::size).sum();
    }

    private final class Wait<T> {
        final String group;
        final Executor workers;
        final Supplier<T> question;
        final CompletableFuture<T> answer = new CompletableFuture<>();
        volatile ScheduledFuture<?> timer;

        Wait(String group, Executor workers, Supplier<T> question) {
            this.group = group;
            this.workers = workers;
            this.question = question;
        }

        void askOnWorker() {
            if (answer.isDone()) {
                finish(); // a timer scheduled after the answer came
            } else {
                workers.execute(this::ask);
            }
        }

        private synchronized void ask() {
            if (answer.isDone()) {
                return;
            }
            try {
                T a = question.get();
                if (a != null) {
                    finish();
                    answer.complete(a);
                }
            } catch (RuntimeException e) {
                finish();
                answer.completeExceptionally(e);
            }
        }

        private void finish() {
            ScheduledFuture<?> t = timer;
            if (t != null) {
                t.cancel(false);
            }
            byGroup.computeIfPresent(group, (g, set) -> {
                set.remove(this);
                return set.isEmpty() ? null : set;
            });
        }
    }
}
