package io.tierlog.service.api;

import io.tierlog.http.Isolation;
import io.tierlog.http.QueryParams;
import io.tierlog.service.http.Requests;

/**
 * The query parameters of a fetch (api.md, "Fetch"), checked before any I/O: the same rules for the JSON fetch
 * ({@link RecordsResource}) and the record-batch fetch ({@link BatchFetchRoute}).
 */
record FetchParams(long offset, int maxRecords, int maxBytes, long waitMs, Isolation isolation) {
    static final int DEFAULT_MAX_RECORDS = 500;
    static final int DEFAULT_MAX_BYTES = 1024 * 1024;
    static final int MAX_WAIT_MS = 30_000;

    /** @throws io.tierlog.log.TierlogException 400 {@code bad-request} naming the parameter */
    static FetchParams parse(String offset, String maxRecords, String maxBytes, String waitMs, String isolation,
                             int maxRecordsLimit) {
        return new FetchParams(
                QueryParams.offset(offset),
                (int) QueryParams.integer(maxRecords, "maxRecords", DEFAULT_MAX_RECORDS, 1, maxRecordsLimit),
                (int) QueryParams.integer(maxBytes, "maxBytes", DEFAULT_MAX_BYTES, 1, Integer.MAX_VALUE),
                QueryParams.integer(waitMs, "waitMs", 0, 0, MAX_WAIT_MS),
                Isolation.parse(isolation));
    }
}
