package io.tierlog.bench.soak;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class SoakSamplingTest {

    @Test
    void gcLogGivesTheHeapAfterEachPauseAndAfterTheLastFullGc() {
        GcLog.Window w = GcLog.parse("""
                [0.012s][info][gc] Using G1
                [10.5s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 120M->35M(512M) 3.456ms
                [20.1s][info][gc] GC(1) Pause Full (System.gc()) 80M->24M(512M) 120.1ms
                [25.0s][info][gc] GC(2) Pause Young (Normal) (G1 Evacuation Pause) 300M->30M(512M) 2.0ms
                [26.0s][info][gc] GC(3) Concurrent Mark Cycle 12.0ms
                """);
        assertThat(w.pauses()).isEqualTo(3);
        assertThat(w.lastAfterBytes()).isEqualTo(30L << 20);
        assertThat(w.minAfterBytes()).isEqualTo(24L << 20);
        assertThat(w.lastFullAfterBytes()).isEqualTo(24L << 20);
        assertThat(GcLog.parse("[1s][info][gc] GC(4) Pause Young (Normal) 2G->512K(3G) 1ms\n").lastAfterBytes())
                .isEqualTo(512L << 10);
        assertThat(GcLog.parse("").pauses()).isZero();
    }

    @Test
    void prometheusSumsTheSeriesWithTheGivenLabelsOnly() {
        PrometheusText t = new PrometheusText("""
                # HELP jvm_memory_used_bytes The amount of used memory
                jvm_memory_used_bytes{area="heap",id="G1 Eden Space"} 1.0E7
                jvm_memory_used_bytes{area="heap",id="G1 Old Gen"} 5000000.0
                jvm_memory_used_bytes{area="nonheap",id="Metaspace"} 3.0E7
                jvm_memory_used_bytes_max{area="heap"} 9.0
                jvm_buffer_memory_used_bytes{id="direct"} 4096.0
                """);
        assertThat(t.sum("jvm_memory_used_bytes", "area=\"heap\"")).isEqualTo(1.5E7);
        assertThat(t.sum("jvm_buffer_memory_used_bytes", "id=\"direct\"")).isEqualTo(4096.0);
        assertThat(t.sum("netty_allocator_memory_used")).isNaN();
    }

    @Test
    void trendIsTheLeastSquaresSlopePerHourSkippingUnmeasuredSamples() {
        record Row(double seconds, double value) {
        }
        List<Row> rows = List.of(new Row(0, 100), new Row(1800, Double.NaN), new Row(3600, 110), new Row(7200, 120));
        Trend t = Trend.of(rows, Row::seconds, Row::value);
        assertThat(t.samples()).isEqualTo(3);
        assertThat(t.slopePerHour()).isCloseTo(10.0, within(1e-9));
        assertThat(t.first()).isEqualTo(100);
        assertThat(t.last()).isEqualTo(120);
        assertThat(Trend.of(List.of(new Row(0, 5)), Row::seconds, Row::value).slopePerHour()).isNaN();
    }

    @Test
    void ledgerSumsDifferWhenAValueOrAnOffsetDiffers() {
        Ledger acked = new Ledger(1);
        Ledger read = new Ledger(1);
        acked.add(0, 0, "a");
        acked.add(0, 1, "b");
        read.add(0, 1, "b");
        read.add(0, 0, "a");
        assertThat(read.sum(0)).isEqualTo(acked.sum(0));
        Ledger swapped = new Ledger(1);
        swapped.add(0, 0, "b");
        swapped.add(0, 1, "a");
        assertThat(swapped.count(0)).isEqualTo(acked.count(0));
        assertThat(swapped.sum(0)).isNotEqualTo(acked.sum(0));
    }
}
