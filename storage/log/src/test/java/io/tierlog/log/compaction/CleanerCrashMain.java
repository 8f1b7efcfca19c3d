package io.tierlog.log.compaction;

import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;

import java.nio.file.Path;

/**
 * A cleaning process for {@link CleanerCrashTest}: cleans one partition at a fixed time and, when the swap protocol
 * reaches {@code <step>} for the {@code <occurrence>}-th time, prints {@code at <step> <segment>} and waits (on stdin)
 * to be killed with SIGKILL. Exits 0 after a full pass if the step is never reached that often.
 *
 * <p>Arguments: {@code <data-dir> <topic> <now-ms> <step> <occurrence>}.
 */
public final class CleanerCrashMain {
    private CleanerCrashMain() {
    }

    public static void main(String[] args) throws Exception {
        Path data = Path.of(args[0]);
        TopicPartition tp = new TopicPartition(args[1], 0);
        ManualClock clock = new ManualClock(Long.parseLong(args[2]));
        HotCleaner.Step stopAt = HotCleaner.Step.valueOf(args[3]);
        int occurrence = Integer.parseInt(args[4]);
        int[] seen = {0};
        HotCleaner cleaner = new HotCleaner(data, clock, (step, segment) -> {
            if (step == stopAt && ++seen[0] == occurrence) {
                System.out.println("at " + step + " " + segment);
                System.out.flush();
                try {
                    System.in.read(); // the parent kills us here
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                Runtime.getRuntime().halt(3); // never reached unless stdin closes: not the kill we test
            }
        }, KeyMap.DEFAULT_BUDGET_BYTES);
        cleaner.clean(tp, CleanerCrashTest.CONFIG, Long.MAX_VALUE);
        System.out.println("done");
    }
}
