package io.tierlog.service;

import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.Map;
import java.util.UUID;

/**
 * Token mode with a bootstrap token, in a data directory of its own: for the random rounds sent as `admin:cluster`
 * (over HTTP and Kafka), so that what they store (a quota on the default user, a denying ACL, a minted token) reaches
 * no other test. One profile for both, so Quarkus starts the service once for them.
 */
public class AdminRoundsProfile implements QuarkusTestProfile {
    public static final String BOOTSTRAP = "tierlog_rounds-" + UUID.randomUUID().toString().replace("-", "");

    @Override
    public Map<String, String> getConfigOverrides() {
        String dir = "target/admin-rounds-" + UUID.randomUUID();
        return Map.of("tierlog.data-dir", dir + "/hot", "tierlog.index-dir", dir + "/index",
                "tierlog.cold.filesystem.dir", dir + "/cold", "tierlog.auth.mode", "token",
                "tierlog.auth.bootstrap-token", BOOTSTRAP, "tierlog.auth.max-failures-per-minute", "100000");
    }
}
