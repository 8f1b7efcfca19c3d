package io.tierlog.service.kafka;

import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * What the listener offers: each API's highest version (the lowest is kafka-clients' oldest), and the features an
 * ApiVersions answer finalizes. The one feature is Kafka's {@code transaction.version}: at 2 (KIP-890 part 2) clients
 * end each transaction at a new epoch and add partitions by producing to them; at 1 the versions of EndTxn and
 * TxnOffsetCommit that protocol 2 introduced are not offered. Immutable.
 */
final class KafkaApiVersions {
    static final String TRANSACTION_VERSION = "transaction.version";
    /**
     * The epoch of the finalized features; a client takes a feature change only from a higher epoch. Fixed: the
     * features follow the configuration, which is the same on every instance of a deployment.
     */
    static final long FINALIZED_FEATURES_EPOCH = 1;

    private final Map<ApiKeys, Short> offered;
    private final short transactionVersion;

    /** @param transactionVersion 1 or 2 ({@code tierlog.kafka.transaction-version}) */
    KafkaApiVersions(int transactionVersion) {
        if (transactionVersion != 1 && transactionVersion != 2) {
            throw new IllegalArgumentException("tierlog.kafka.transaction-version must be 1 or 2, not "
                    + transactionVersion);
        }
        this.transactionVersion = (short) transactionVersion;
        this.offered = offered(transactionVersion);
    }

    boolean supports(ApiKeys api, short version) {
        Short max = offered.get(api);
        return max != null && version >= api.oldestVersion() && version <= max;
    }

    ApiVersionsResponseData response(Errors error) {
        ApiVersionsResponseData.ApiVersionCollection keys = new ApiVersionsResponseData.ApiVersionCollection();
        offered.forEach((api, max) -> keys.add(new ApiVersionsResponseData.ApiVersion().setApiKey(api.id)
                .setMinVersion(api.oldestVersion()).setMaxVersion(max)));
        ApiVersionsResponseData.SupportedFeatureKeyCollection supported =
                new ApiVersionsResponseData.SupportedFeatureKeyCollection();
        supported.add(new ApiVersionsResponseData.SupportedFeatureKey().setName(TRANSACTION_VERSION)
                .setMinVersion((short) 0).setMaxVersion((short) 2));
        ApiVersionsResponseData.FinalizedFeatureKeyCollection finalized =
                new ApiVersionsResponseData.FinalizedFeatureKeyCollection();
        finalized.add(new ApiVersionsResponseData.FinalizedFeatureKey().setName(TRANSACTION_VERSION)
                .setMinVersionLevel(transactionVersion).setMaxVersionLevel(transactionVersion));
        return new ApiVersionsResponseData().setErrorCode(error.code()).setApiKeys(keys).setThrottleTimeMs(0)
                .setSupportedFeatures(supported).setFinalizedFeaturesEpoch(FINALIZED_FEATURES_EPOCH)
                .setFinalizedFeatures(finalized);
    }

    private static Map<ApiKeys, Short> offered(int transactionVersion) {
        Map<ApiKeys, Short> m = new EnumMap<>(ApiKeys.class);
        for (ApiKeys k : List.of(ApiKeys.API_VERSIONS, ApiKeys.METADATA, ApiKeys.DESCRIBE_TOPIC_PARTITIONS,
                ApiKeys.PRODUCE, ApiKeys.FETCH,
                ApiKeys.LIST_OFFSETS, ApiKeys.CREATE_TOPICS, ApiKeys.DELETE_TOPICS, ApiKeys.DESCRIBE_CLUSTER,
                ApiKeys.FIND_COORDINATOR, ApiKeys.DESCRIBE_CONFIGS, ApiKeys.INIT_PRODUCER_ID,
                ApiKeys.CONSUMER_GROUP_HEARTBEAT, ApiKeys.CONSUMER_GROUP_DESCRIBE, ApiKeys.JOIN_GROUP,
                ApiKeys.SYNC_GROUP, ApiKeys.HEARTBEAT, ApiKeys.LEAVE_GROUP, ApiKeys.LIST_GROUPS,
                ApiKeys.DESCRIBE_GROUPS, ApiKeys.OFFSET_DELETE, ApiKeys.CREATE_PARTITIONS,
                ApiKeys.INCREMENTAL_ALTER_CONFIGS, ApiKeys.ALTER_CONFIGS, ApiKeys.SASL_HANDSHAKE,
                ApiKeys.SASL_AUTHENTICATE,
                ApiKeys.DELETE_GROUPS, ApiKeys.OFFSET_FOR_LEADER_EPOCH, ApiKeys.DESCRIBE_LOG_DIRS,
                ApiKeys.DELETE_RECORDS, ApiKeys.SHARE_GROUP_HEARTBEAT, ApiKeys.SHARE_GROUP_DESCRIBE,
                ApiKeys.DESCRIBE_SHARE_GROUP_OFFSETS, ApiKeys.ALTER_SHARE_GROUP_OFFSETS,
                ApiKeys.DELETE_SHARE_GROUP_OFFSETS, ApiKeys.DESCRIBE_PRODUCERS, ApiKeys.DESCRIBE_ACLS,
                ApiKeys.CREATE_ACLS, ApiKeys.DELETE_ACLS, ApiKeys.DESCRIBE_CLIENT_QUOTAS,
                ApiKeys.ALTER_CLIENT_QUOTAS, ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS,
                ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, ApiKeys.ELECT_LEADERS, ApiKeys.LIST_PARTITION_REASSIGNMENTS,
                ApiKeys.ALTER_PARTITION_REASSIGNMENTS, ApiKeys.GET_TELEMETRY_SUBSCRIPTIONS,
                ApiKeys.PUSH_TELEMETRY, ApiKeys.CREATE_DELEGATION_TOKEN, ApiKeys.RENEW_DELEGATION_TOKEN,
                ApiKeys.EXPIRE_DELEGATION_TOKEN, ApiKeys.DESCRIBE_DELEGATION_TOKEN)) {
            m.put(k, k.latestVersion());
        }
        // Versions 10 name topics by id (KafkaGroupOffsets); later ones are not known here.
        m.put(ApiKeys.OFFSET_COMMIT, (short) Math.min(10, ApiKeys.OFFSET_COMMIT.latestVersion()));
        m.put(ApiKeys.OFFSET_FETCH, (short) Math.min(10, ApiKeys.OFFSET_FETCH.latestVersion()));
        // Version 2 (KIP-1206, KIP-1222): a fetch never acquires more than MaxRecords here, in either acquire mode,
        // and a renewal runs a record's lock again from now.
        m.put(ApiKeys.SHARE_FETCH, (short) 2);
        m.put(ApiKeys.SHARE_ACKNOWLEDGE, (short) 2);
        // Versions 4+ of AddPartitionsToTxn are broker-to-broker. EndTxn 5 and TxnOffsetCommit 5 are transaction
        // protocol 2's (TxnOffsetCommit 6 names topics by id); ListTransactions 2 filters by an id pattern.
        boolean protocol2 = transactionVersion >= 2;
        m.put(ApiKeys.ADD_PARTITIONS_TO_TXN, (short) 3);
        m.put(ApiKeys.ADD_OFFSETS_TO_TXN, ApiKeys.ADD_OFFSETS_TO_TXN.latestVersion());
        m.put(ApiKeys.TXN_OFFSET_COMMIT, protocol2 ? (short) (TxnOffsetCommitRequest.LAST_STABLE_VERSION_BEFORE_TRANSACTION_V2 + 1)
                : TxnOffsetCommitRequest.LAST_STABLE_VERSION_BEFORE_TRANSACTION_V2);
        m.put(ApiKeys.END_TXN, protocol2 ? (short) (EndTxnRequest.LAST_STABLE_VERSION_BEFORE_TRANSACTION_V2 + 1)
                : EndTxnRequest.LAST_STABLE_VERSION_BEFORE_TRANSACTION_V2);
        m.put(ApiKeys.DESCRIBE_TRANSACTIONS, ApiKeys.DESCRIBE_TRANSACTIONS.latestVersion());
        m.put(ApiKeys.LIST_TRANSACTIONS, (short) 2);
        // Streams groups (KIP-1071): heartbeat 1 (the broker never asks for a topology description, KIP-1331);
        // describe 0 (1 adds that description).
        m.put(ApiKeys.STREAMS_GROUP_HEARTBEAT, (short) 1);
        m.put(ApiKeys.STREAMS_GROUP_DESCRIBE, (short) 0);
        // Version 1 lists every config resource type (KIP-1142), version 0 client-metrics subscriptions only.
        m.put(ApiKeys.LIST_CONFIG_RESOURCES, (short) 1);
        return m;
    }
}
