package io.tierlog.service.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.jackson.ObjectMapperCustomizer;
import io.tierlog.http.JsonLimits;
import jakarta.inject.Singleton;

/**
 * Gives the framework's ObjectMapper the same nesting limit as the request parsers ({@link JsonLimits}), so that a
 * body bound by Quarkus REST, should an endpoint ever take one, is held to the same limit as the bodies
 * {@link Requests} and the produce parser read.
 */
@Singleton
public class JsonNestingLimit implements ObjectMapperCustomizer {
    @Override
    public void customize(ObjectMapper mapper) {
        mapper.getFactory().setStreamReadConstraints(JsonLimits.READ);
    }
}
