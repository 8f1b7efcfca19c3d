package io.tierlog.ingest;

import java.util.List;
import java.util.Optional;

/** A parsed, well-formed produce request (docs/api.md, "Produce"). */
public record ProduceRequest(List<ProduceRecord> records, Optional<ProducerRef> producer) {
    public ProduceRequest {
        records = List.copyOf(records);
    }
}
