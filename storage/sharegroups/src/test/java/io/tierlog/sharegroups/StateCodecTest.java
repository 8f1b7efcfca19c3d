package io.tierlog.sharegroups;

import io.tierlog.sharegroups.SharePartitionState.DeadLetter;
import io.tierlog.sharegroups.SharePartitionState.InFlight;
import io.tierlog.sharegroups.SharePartitionState.Status;
import org.junit.jupiter.api.Test;

import java.io.UncheckedIOException;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class StateCodecTest {
    private static SharePartitionState sample() {
        SharePartitionState s = new SharePartitionState();
        s.incarnation = 77;
        s.startOffset = 10;
        s.endOffset = 13;
        for (long o = 10; o < 13; o++) {
            InFlight r = new InFlight();
            r.status = Status.values()[(int) (o % 4)];
            r.deliveryCount = (int) o;
            r.leaseUntilMs = 1000 + o;
            r.leaseMs = 30_000;
            r.availableAtMs = 2000 + o;
            s.records.put(o, r);
        }
        DeadLetter d = new DeadLetter();
        d.offset = 11;
        d.reason = "rejected";
        d.deliveryCount = 2;
        d.topic = "orders.dlq";
        d.partition = 3;
        d.sequence = 9;
        s.deadLetters.add(d);
        s.deadLetterSequences.put(3, 10);
        return s;
    }

    @Test
    void aStateSurvivesEncodingWithItsGeneration() {
        byte[] file = StateCodec.encode(sample(), 1234);
        assertThat(StateCodec.generation(file)).isEqualTo(1234);
        SharePartitionState back = StateCodec.decode(file);
        assertThat(back).usingRecursiveComparison().isEqualTo(sample());
        assertThat(StateCodec.sameBody(file, StateCodec.encode(back, 99))).isTrue();
        back.records.get(12L).deliveryCount++;
        assertThat(StateCodec.sameBody(file, StateCodec.encode(back, 1234))).isFalse();
    }

    @Test
    void aStateFileOfAnEarlierBuildInJsonIsStillReadAndNeverTakenForACachedGeneration() {
        byte[] json = ShareGroupFiles.write(sample());
        assertThat(StateCodec.generation(json)).isZero();
        assertThat(StateCodec.decode(json)).usingRecursiveComparison().isEqualTo(sample());
    }

    @Test
    void aDamagedOrTruncatedFileIsRefusedNotMisread() {
        byte[] file = StateCodec.encode(sample(), 5);
        byte[] flipped = file.clone();
        flipped[StateCodec.HEADER_BYTES + 20] ^= 1;
        assertThatThrownBy(() -> StateCodec.decode(flipped)).isInstanceOf(UncheckedIOException.class);
        byte[] cut = Arrays.copyOf(file, file.length - 9);
        assertThatThrownBy(() -> StateCodec.decode(cut)).isInstanceOf(UncheckedIOException.class);
    }
}
