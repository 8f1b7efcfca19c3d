package io.tierlog.index;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;

import java.util.Map;

/** RocksDB failed under the index (I/O error, the directory held by another process, ...): a 500 to clients. */
public final class IndexException extends TierlogException {
    public IndexException(String detail, Throwable cause) {
        super(ErrorType.INTERNAL, detail, Map.of(), cause);
    }
}
