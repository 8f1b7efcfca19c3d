package io.tierlog.service.read;

import io.tierlog.log.format.LogRecord;

import java.util.List;

/** Records of one fetch, the offset to fetch next, and the partition's extent when the fetch was served. */
public record FetchResult(List<LogRecord> records, long nextOffset, long highWatermark, long logStartOffset) {
    public FetchResult {
        records = List.copyOf(records);
    }
}
