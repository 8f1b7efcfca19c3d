package io.tierlog.objectstore;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One page of a listing, in lexical key order.
 *
 * @param objects   the objects on this page, ascending by key; may be empty only when {@code nextToken} is empty
 * @param nextToken pass to {@link ObjectStore#list} to get the next page; empty on the last page. Opaque: do not
 *                  parse or build one
 */
public record ObjectPage(List<ObjectMetadata> objects, Optional<String> nextToken) {

    public ObjectPage {
        objects = List.copyOf(objects);
        Objects.requireNonNull(nextToken, "nextToken");
    }

    /** Whether another page follows. */
    public boolean hasMore() {
        return nextToken.isPresent();
    }
}
