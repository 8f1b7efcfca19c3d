package io.tierlog.sharegroups;

import io.tierlog.sharegroups.SharePartitionState.InFlight;
import io.tierlog.sharegroups.SharePartitionState.Status;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The share-partition state log on real files: two instances on one file stand for two processes (each keeps the
 * file open and its state cached); a torn tail is what a writer killed mid-append leaves.
 */
class ShareStateLogTest {
    @TempDir
    Path dir;

    private ShareStateLog open() {
        return new ShareStateLog(dir.resolve("0.json"), false);
    }

    /** Leases {@code n} new records at the end of the window, as a lease commit does. */
    private static void lease(SharePartitionState s, int n) {
        SharePartition sp = new SharePartition(s);
        sp.lease(1_000, n, 30_000, Long.MAX_VALUE, Integer.MAX_VALUE);
    }

    private static void accept(SharePartitionState s, long offset) {
        SharePartition sp = new SharePartition(s);
        assertThat(sp.ack(1_000, offset, s.records.get(offset).deliveryCount, AckType.ACCEPT,
                ShareGroupConfig.DEFAULTS).ok()).isTrue();
    }

    private static SharePartitionState fresh() {
        SharePartitionState s = new SharePartitionState();
        s.incarnation = 7;
        return s;
    }

    private void commit(ShareStateLog log, java.util.function.Consumer<SharePartitionState> change) {
        log.update(session -> {
            SharePartitionState s = session.read();
            if (s == null) {
                s = fresh();
            }
            change.accept(s);
            session.write(s);
            return null;
        });
    }

    /**
     * The state as {@code log} has it after a commit that changed nothing, as a ShareGroups commit leaves it: kept,
     * so the next session checks the file with a stat and reads only frames appended since. (The object is the
     * kept one: read it at once.)
     */
    private static SharePartitionState current(ShareStateLog log) {
        return log.update(session -> {
            SharePartitionState s = session.read();
            if (s != null) {
                session.write(s);
            }
            return s;
        });
    }

    @Test
    void aCommitAppendsOnlyTheEntriesItChanged() throws IOException {
        ShareStateLog log = open();
        commit(log, s -> lease(s, 1000));
        long afterLease = Files.size(dir.resolve("0.json"));
        commit(log, s -> accept(s, 500));
        long ackBytes = Files.size(dir.resolve("0.json")) - afterLease;
        assertThat(ackBytes).as("one changed entry, not the window of 1000").isLessThan(2 * StateLogCodec.ENTRY_BYTES + 64);
        commit(log, s -> {
        }); // nothing changed: nothing written
        assertThat(Files.size(dir.resolve("0.json"))).isEqualTo(afterLease + ackBytes);
        assertThat(current(open()).records.get(500L).status).isEqualTo(Status.ACCEPTED);
    }

    @Test
    void anotherProcessReadsOnlyTheFramesAppendedSinceAndMissesNone() {
        ShareStateLog a = open();
        ShareStateLog b = open();
        commit(a, s -> lease(s, 10));
        assertThat(current(b).records).hasSize(10); // b now keeps the file open at this length
        commit(a, s -> accept(s, 0));
        commit(a, s -> accept(s, 3));
        commit(a, s -> lease(s, 2));
        SharePartitionState seen = current(b);
        assertThat(seen.startOffset).isEqualTo(1);
        assertThat(seen.records.get(3L).status).isEqualTo(Status.ACCEPTED);
        assertThat(seen.endOffset).isEqualTo(12);
        commit(b, s -> accept(s, 1));
        assertThat(current(a).startOffset).as("a reads b's frame").isEqualTo(2);
        assertSameState(current(a), new ShareStateLog(dir.resolve("0.json"), false).readUnlocked());
    }

    @Test
    void aTornTailIsIgnoredAndCutOffBeforeTheNextAppend() throws IOException {
        ShareStateLog a = open();
        commit(a, s -> lease(s, 10));
        commit(a, s -> accept(s, 0));
        Path file = dir.resolve("0.json");
        long whole = Files.size(file);
        SharePartitionState before = new ShareStateLog(file, false).readUnlocked();
        // A writer killed mid-append: the first bytes of an update frame that accepts offset 1.
        SharePartitionState next = new ShareStateLog(file, false).readUnlocked();
        accept(next, 1);
        byte[] frame = StateLogCodec.updateFrame(next, before.startOffset, before.endOffset, StateLogCodec.tail(before));
        for (int cut = 1; cut < frame.length; cut++) {
            Files.write(file, Arrays.copyOf(frame, cut), StandardOpenOption.APPEND);
            assertSameState(new ShareStateLog(file, false).readUnlocked(), before);
            assertSameState(current(open()), before);
            try (var c = java.nio.channels.FileChannel.open(file, StandardOpenOption.WRITE)) {
                c.truncate(whole);
            }
        }
        // Torn longer than the frame written next: all but the last byte of the frame, then bytes never written.
        byte[] torn = Arrays.copyOf(Arrays.copyOf(frame, frame.length - 1), frame.length + 100);
        Arrays.fill(torn, frame.length - 1, torn.length, (byte) 0xFF);
        Files.write(file, torn, StandardOpenOption.APPEND);
        commit(a, s -> accept(s, 2));
        SharePartitionState after = open().readUnlocked();
        assertThat(after.records.get(2L).status).as("the frame after the torn one is read").isEqualTo(Status.ACCEPTED);
        assertThat(after.records.get(1L).status).as("the torn frame held nothing").isEqualTo(Status.LEASED);
        long start = before.startOffset;
        long end = before.endOffset;
        byte[] tail = StateLogCodec.tail(before);
        before.clearChanges();
        accept(before, 2); // the frame a wrote, on the state before the torn bytes
        int written = StateLogCodec.updateFrame(before, start, end, tail).length;
        assertThat(Files.size(file)).as("the torn bytes are gone").isEqualTo(whole + written);
    }

    @Test
    void aReaderThatSawATornTailStillSeesAFrameOfTheSameSizeWrittenOverIt() throws IOException {
        ShareStateLog a = open();
        ShareStateLog b = open();
        commit(a, s -> lease(s, 10));
        Path file = dir.resolve("0.json");
        long whole = Files.size(file);
        SharePartitionState base = current(b);
        // The frame a writes next (accept offset 4) is known ahead; a crashed writer left that many torn bytes.
        SharePartitionState next = open().readUnlocked();
        accept(next, 4);
        int size = StateLogCodec.updateFrame(next, base.startOffset, base.endOffset, StateLogCodec.tail(base)).length;
        byte[] torn = new byte[size];
        ByteBuffer.wrap(torn).putInt(0, size - 8); // fits, with a CRC that does not match
        Files.write(file, torn, StandardOpenOption.APPEND);
        assertThat(current(b).records.get(4L).status).isEqualTo(Status.LEASED); // b saw the torn tail
        commit(a, s -> accept(s, 4)); // cuts the tail and appends a frame of the same size
        assertThat(Files.size(file)).isEqualTo(whole + size);
        assertThat(current(b).records.get(4L).status).as("same size, other bytes").isEqualTo(Status.ACCEPTED);
    }

    @Test
    void updatesGiveWayToASnapshotSoTheFileStaysBounded() throws IOException {
        ShareStateLog a = new ShareStateLog(dir.resolve("0.json"), true, 0);
        ShareStateLog b = new ShareStateLog(dir.resolve("0.json"), true, 0);
        long most = 0;
        for (int i = 0; i < 200; i++) {
            ShareStateLog by = i % 3 == 0 ? b : a;
            commit(by, s -> lease(s, 5));
            commit(by, s -> s.records.keySet().stream().limit(3).toList().forEach(o -> accept(s, o)));
            most = Math.max(most, Files.size(dir.resolve("0.json")));
        }
        SharePartitionState end = current(a);
        assertThat(end.records.size()).isGreaterThan(300);
        // A snapshot of the window plus at most four windows of updates (the threshold) and one frame.
        assertThat(most).isLessThan(6L * (end.records.size() + 1) * StateLogCodec.ENTRY_BYTES + 1024);
        assertSameState(current(b), end);
        assertSameState(new ShareStateLog(dir.resolve("0.json"), false).readUnlocked(), end);
    }

    @Test
    void aStateFileOfAnEarlierBuildIsReadAndReplacedByALogOnTheFirstWrite() throws IOException {
        SharePartitionState old = fresh();
        lease(old, 4);
        old.clearChanges();
        Path file = dir.resolve("0.json");
        Files.write(file, StateCodec.encode(old, 99));
        ShareStateLog log = open();
        assertSameState(current(log), old);
        commit(log, s -> accept(s, 0));
        assertThat(StateLogCodec.isLog(Files.readAllBytes(file))).isTrue();
        SharePartitionState now = open().readUnlocked();
        assertThat(now.startOffset).isEqualTo(1);
        assertThat(now.records.keySet()).containsExactly(1L, 2L, 3L);

        Files.write(file, ShareGroupFiles.write(old)); // the JSON form before binary state files
        assertSameState(current(open()), old);
    }

    @Test
    void openFilesStayBoundedWhenAProcessServesManySharePartitions() {
        int n = Math.max(ShareStateLog.MAX_OPEN_LOGS, ShareStateLog.MAX_OPEN_LOCKS) + 50;
        java.util.List<ShareStateLog> logs = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            ShareStateLog log = new ShareStateLog(dir.resolve("t").resolve(i + ".json"), false);
            logs.add(log); // reachable: only the bound closes their files
            commit(log, s -> lease(s, 2));
            assertThat(ShareStateLog.openLogs()).isLessThanOrEqualTo(ShareStateLog.MAX_OPEN_LOGS + 1);
        }
        for (int i : new int[]{0, n / 2, n - 1}) {
            commit(logs.get(i), s -> accept(s, 0)); // a closed log (and lock) is opened again, nothing lost
            assertThat(logs.get(i).readUnlocked().startOffset).isEqualTo(1);
            assertThat(logs.get(i).readUnlocked().records).hasSize(1);
        }
    }

    @Test
    void aFrameAppliedTwiceChangesNothing() {
        SharePartitionState s = fresh();
        lease(s, 6);
        byte[] snap = StateLogCodec.snapshotFile(s);
        SharePartitionState base = StateLogCodec.replay(snap, StateLogCodec.FILE_HEADER_BYTES, snap.length, null).state();
        s.clearChanges();
        accept(s, 0);
        accept(s, 2);
        byte[] frame = StateLogCodec.updateFrame(s, base.startOffset, base.endOffset, StateLogCodec.tail(base));
        byte[] twice = new byte[snap.length + 2 * frame.length];
        System.arraycopy(snap, 0, twice, 0, snap.length);
        System.arraycopy(frame, 0, twice, snap.length, frame.length);
        System.arraycopy(frame, 0, twice, snap.length + frame.length, frame.length);
        StateLogCodec.Replayed once = StateLogCodec.replay(twice, StateLogCodec.FILE_HEADER_BYTES,
                snap.length + frame.length, null);
        StateLogCodec.Replayed again = StateLogCodec.replay(twice, StateLogCodec.FILE_HEADER_BYTES, twice.length, null);
        assertThat(again.end()).isEqualTo(twice.length);
        assertSameState(once.state(), s);
        assertSameState(again.state(), s);
    }

    private static void assertSameState(SharePartitionState actual, SharePartitionState expected) {
        assertThat(actual.incarnation).isEqualTo(expected.incarnation);
        assertThat(actual.startOffset).isEqualTo(expected.startOffset);
        assertThat(actual.endOffset).isEqualTo(expected.endOffset);
        assertThat(actual.records.keySet()).isEqualTo(expected.records.keySet());
        for (var e : expected.records.entrySet()) {
            InFlight a = actual.records.get(e.getKey());
            InFlight x = e.getValue();
            assertThat(new Object[]{a.status, a.deliveryCount, a.leaseUntilMs, a.leaseMs, a.availableAtMs})
                    .as("offset %d", e.getKey())
                    .containsExactly(x.status, x.deliveryCount, x.leaseUntilMs, x.leaseMs, x.availableAtMs);
        }
        assertThat(actual.deadLetters).usingRecursiveFieldByFieldElementComparator()
                .isEqualTo(expected.deadLetters);
        assertThat(actual.deadLetterSequences).isEqualTo(expected.deadLetterSequences);
    }
}
