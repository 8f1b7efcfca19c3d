package io.tierlog.service.kafka;

import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.groups.GroupCoordinator;
import io.tierlog.transactions.EndTxnResult;
import io.tierlog.transactions.InitResult;
import io.tierlog.transactions.PendingOffset;
import io.tierlog.transactions.TransactionCoordinator;
import io.tierlog.transactions.TransactionDescription;
import io.tierlog.transactions.TransactionListing;
import io.tierlog.transactions.TxnError;
import io.tierlog.transactions.TxnState;
import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import jakarta.inject.Singleton;
import org.apache.kafka.common.message.AddOffsetsToTxnResponseData;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData;
import org.apache.kafka.common.message.DescribeTransactionsResponseData;
import org.apache.kafka.common.message.EndTxnResponseData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.message.ListTransactionsRequestData;
import org.apache.kafka.common.message.ListTransactionsResponseData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AddOffsetsToTxnRequest;
import org.apache.kafka.common.requests.AddOffsetsToTxnResponse;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.DescribeTransactionsRequest;
import org.apache.kafka.common.requests.DescribeTransactionsResponse;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.EndTxnResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ListTransactionsRequest;
import org.apache.kafka.common.requests.ListTransactionsResponse;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitResponse;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Kafka's transaction APIs (KIP-98, the transaction protocol before KIP-890 part 2, which is what kafka-clients and
 * librdkafka speak to a broker that does not advertise {@code transaction.version} 2) over the
 * {@link TransactionCoordinator}, whose state is on the shared volume: any instance coordinates any transactional id
 * (FindCoordinator answers with the broker asked). Blocking (file locks, fsyncs, marker appends): worker threads.
 *
 * <p>TxnOffsetCommit checks the consumer's group membership when it names one (KIP-447: a zombie consumer's
 * producer cannot commit) and keeps the offsets in the transaction; they reach the group's committed offsets only
 * when EndTxn commits it.
 */
@Singleton
public class KafkaTransactions {
    private final TransactionCoordinator coordinator;
    private final KafkaTopics topics;
    private final GroupCoordinator groups;

    public KafkaTransactions(TransactionCoordinator coordinator, TopicStore topics, GroupCoordinator groups) {
        this.coordinator = coordinator;
        this.topics = new KafkaTopics(topics);
        this.groups = groups;
    }

    /** The coordinator's answer as Kafka's error: the enum mirrors Kafka's names. */
    static Errors error(TxnError e) {
        return Errors.valueOf(e.name());
    }

    InitProducerIdResponse initProducerId(InitProducerIdRequest request) {
        InitProducerIdRequestData in = request.data();
        InitProducerIdResponseData out = new InitProducerIdResponseData().setThrottleTimeMs(0).setProducerId(-1)
                .setProducerEpoch((short) -1);
        if (in.enable2Pc() || in.keepPreparedTxn()) {
            // KIP-939's two-phase commit with an external coordinator is not offered.
            return new InitProducerIdResponse(out.setErrorCode(Errors.UNSUPPORTED_VERSION.code()));
        }
        InitResult r = coordinator.initProducerId(in.transactionalId(),
                in.transactionTimeoutMs(), in.producerId(), in.producerEpoch());
        out.setErrorCode(error(r.error()).code());
        if (r.error() == TxnError.NONE) {
            out.setProducerId(r.producerId()).setProducerEpoch(r.producerEpoch());
        }
        return new InitProducerIdResponse(out);
    }

    /**
     * AddPartitionsToTxn as clients send it (versions 0-3, one transaction): every partition must exist, else those
     * that do not are UNKNOWN_TOPIC_OR_PARTITION and the rest OPERATION_NOT_ATTEMPTED, as Kafka answers.
     */
    AddPartitionsToTxnResponse addPartitions(AddPartitionsToTxnRequest request) {
        AddPartitionsToTxnRequestData in = request.data();
        Map<String, Integer> partitionCounts = new HashMap<>(); // 0 for a topic that does not exist
        boolean allExist = true;
        List<TopicPartition> all = new ArrayList<>();
        for (AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic t : in.v3AndBelowTopics()) {
            int count = partitionCounts.computeIfAbsent(t.name(), this::partitionCount);
            for (int p : t.partitions()) {
                if (p < 0 || p >= count) {
                    allExist = false;
                } else {
                    all.add(new TopicPartition(t.name(), p));
                }
            }
        }
        Errors common = allExist ? error(coordinator.addPartitions(in.v3AndBelowTransactionalId(),
                in.v3AndBelowProducerId(), in.v3AndBelowProducerEpoch(), all)) : Errors.OPERATION_NOT_ATTEMPTED;
        AddPartitionsToTxnResponseData.AddPartitionsToTxnTopicResultCollection results =
                new AddPartitionsToTxnResponseData.AddPartitionsToTxnTopicResultCollection();
        for (AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic t : in.v3AndBelowTopics()) {
            AddPartitionsToTxnResponseData.AddPartitionsToTxnTopicResult topic =
                    new AddPartitionsToTxnResponseData.AddPartitionsToTxnTopicResult().setName(t.name());
            for (int p : t.partitions()) {
                Errors e = p < 0 || p >= partitionCounts.get(t.name()) ? Errors.UNKNOWN_TOPIC_OR_PARTITION : common;
                topic.resultsByPartition().add(new AddPartitionsToTxnResponseData.AddPartitionsToTxnPartitionResult()
                        .setPartitionIndex(p).setPartitionErrorCode(e.code()));
            }
            results.add(topic);
        }
        return new AddPartitionsToTxnResponse(new AddPartitionsToTxnResponseData().setThrottleTimeMs(0)
                .setResultsByTopicV3AndBelow(results));
    }

    private int partitionCount(String topic) {
        try {
            return topics.byName(topic).partitions();
        } catch (RuntimeException e) {
            return 0; // unknown (or unnamed) topic
        }
    }

    AddOffsetsToTxnResponse addOffsets(AddOffsetsToTxnRequest request) {
        var in = request.data();
        TxnError e = coordinator.addOffsets(in.transactionalId(), in.producerId(), in.producerEpoch(), in.groupId());
        return new AddOffsetsToTxnResponse(new AddOffsetsToTxnResponseData().setErrorCode(error(e).code()));
    }

    /**
     * TxnOffsetCommit: a request naming a member (KIP-447, versions 3+) is checked against the group as an
     * OffsetCommit of that member is, then the offsets wait in the transaction. From version 5 on (transaction version
     * 2) the request also adds its group to the transaction.
     */
    TxnOffsetCommitResponse txnOffsetCommit(TxnOffsetCommitRequest request, short version) {
        TxnOffsetCommitRequestData in = request.data();
        Map<TopicPartition, PendingOffset> offsets = new LinkedHashMap<>();
        Errors error = Errors.NONE;
        for (TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic t : in.topics()) {
            for (TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition p : t.partitions()) {
                if (p.partitionIndex() < 0) {
                    error = Errors.UNKNOWN_TOPIC_OR_PARTITION;
                } else if (p.committedOffset() < 0) {
                    error = Errors.INVALID_COMMIT_OFFSET_SIZE;
                } else if (KafkaGroupOffsets.metadataTooLarge(p.committedMetadata())) {
                    error = Errors.OFFSET_METADATA_TOO_LARGE;
                } else {
                    offsets.put(new TopicPartition(t.name(), p.partitionIndex()),
                            new PendingOffset(p.committedOffset(), p.committedMetadata(), p.committedLeaderEpoch()));
                }
            }
        }
        if (error == Errors.NONE && version > TxnOffsetCommitRequest.LAST_STABLE_VERSION_BEFORE_TRANSACTION_V2) {
            // Transaction version 2: no AddOffsetsToTxn comes first; the commit adds its group to the transaction.
            TxnError added = coordinator.addOffsets(in.transactionalId(), in.producerId(), in.producerEpoch(),
                    in.groupId());
            error = error(added);
        }
        if (error == Errors.NONE) {
            error = commitInGroup(in, offsets);
        }
        TxnOffsetCommitResponseData out = new TxnOffsetCommitResponseData().setThrottleTimeMs(0);
        for (TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic t : in.topics()) {
            TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic topic =
                    new TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic().setName(t.name());
            for (TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition p : t.partitions()) {
                topic.partitions().add(new TxnOffsetCommitResponseData.TxnOffsetCommitResponsePartition()
                        .setPartitionIndex(p.partitionIndex()).setErrorCode(error.code()));
            }
            out.topics().add(topic);
        }
        return new TxnOffsetCommitResponse(out);
    }

    /** The pending commit, made under the group's lock once the group accepts the member, as OffsetCommit's. */
    private Errors commitInGroup(TxnOffsetCommitRequestData in, Map<TopicPartition, PendingOffset> offsets) {
        Errors[] answer = {Errors.NONE};
        Errors group = KafkaGroupOffsets.commitAsMember(groups, in.groupId(), in.memberId(), in.groupInstanceId(),
                in.generationIdOrMemberEpoch(), offsets.keySet(), () -> answer[0] = error(coordinator.txnOffsetCommit(
                        in.transactionalId(), in.groupId(), in.producerId(), in.producerEpoch(), offsets)));
        return group != Errors.NONE ? group : answer[0];
    }

    /**
     * EndTxn; from version 5 on, transaction version 2's: the transaction ends at a new epoch (or producer id) that
     * the answer carries and the client continues with.
     */
    EndTxnResponse endTxn(EndTxnRequest request, short version) {
        var in = request.data();
        EndTxnResponseData out = new EndTxnResponseData().setThrottleTimeMs(0);
        if (version > EndTxnRequest.LAST_STABLE_VERSION_BEFORE_TRANSACTION_V2) {
            EndTxnResult r = coordinator.endTxnBumpingEpoch(in.transactionalId(), in.producerId(), in.producerEpoch(),
                    in.committed());
            return new EndTxnResponse(out.setErrorCode(error(r.error()).code()).setProducerId(r.producerId())
                    .setProducerEpoch(r.producerEpoch()));
        }
        TxnError e = coordinator.endTxn(in.transactionalId(), in.producerId(), in.producerEpoch(), in.committed());
        return new EndTxnResponse(out.setErrorCode(error(e).code()));
    }

    DescribeTransactionsResponse describe(DescribeTransactionsRequest request) {
        DescribeTransactionsResponseData out = new DescribeTransactionsResponseData().setThrottleTimeMs(0);
        for (String id : request.data().transactionalIds()) {
            DescribeTransactionsResponseData.TransactionState s =
                    new DescribeTransactionsResponseData.TransactionState().setTransactionalId(id);
            coordinator.describe(id).ifPresentOrElse(d -> {
                s.setTransactionState(stateName(d.state())).setTransactionTimeoutMs(d.timeoutMs())
                        .setTransactionStartTimeMs(d.startTimeMs()).setProducerId(d.producerId())
                        .setProducerEpoch(d.producerEpoch());
                Map<String, List<Integer>> byTopic = new LinkedHashMap<>();
                d.partitions().forEach(tp -> byTopic.computeIfAbsent(tp.topic(), k -> new ArrayList<>())
                        .add(tp.partition()));
                byTopic.forEach((topic, partitions) -> s.topics().add(
                        new DescribeTransactionsResponseData.TopicData().setTopic(topic).setPartitions(partitions)));
            }, () -> s.setErrorCode(Errors.TRANSACTIONAL_ID_NOT_FOUND.code()).setTransactionState("")
                    .setProducerId(-1).setProducerEpoch((short) -1).setTransactionStartTimeMs(-1));
            out.transactionStates().add(s);
        }
        return new DescribeTransactionsResponse(out);
    }

    /**
     * ListTransactions (versions 0-2): the transactional ids the caller may describe, with Kafka's filters; version 2's
     * id pattern (KIP-1152) is RE2J matched against the whole id, as Kafka matches it, and one that does not compile
     * is INVALID_REGULAR_EXPRESSION.
     */
    ListTransactionsResponse list(ListTransactionsRequest request, Predicate<String> visible) {
        ListTransactionsRequestData in = request.data();
        Pattern idPattern = null;
        if (in.transactionalIdPattern() != null && !in.transactionalIdPattern().isEmpty()) {
            try {
                idPattern = Pattern.compile(in.transactionalIdPattern());
            } catch (PatternSyntaxException e) {
                return new ListTransactionsResponse(new ListTransactionsResponseData()
                        .setErrorCode(Errors.INVALID_REGULAR_EXPRESSION.code()));
            }
        }
        Set<TxnState> states = new HashSet<>();
        List<String> unknownStates = new ArrayList<>();
        for (String name : in.stateFilters()) {
            TxnState s = stateOf(name);
            if (s == null) {
                unknownStates.add(name);
            } else {
                states.add(s);
            }
        }
        ListTransactionsResponseData out = new ListTransactionsResponseData().setThrottleTimeMs(0)
                .setUnknownStateFilters(unknownStates);
        if (!unknownStates.isEmpty() && states.isEmpty()) {
            return new ListTransactionsResponse(out); // only unknown states asked: none can match
        }
        for (TransactionListing l : coordinator.list(states, new HashSet<>(in.producerIdFilters()),
                in.durationFilter())) {
            if (visible.test(l.transactionalId())
                    && (idPattern == null || idPattern.matches(l.transactionalId()))) {
                out.transactionStates().add(new ListTransactionsResponseData.TransactionState()
                        .setTransactionalId(l.transactionalId()).setProducerId(l.producerId())
                        .setTransactionState(stateName(l.state())));
            }
        }
        return new ListTransactionsResponse(out);
    }

    /** Kafka's names of transaction states ({@code TransactionState.stateName}), as its tools print and filter them. */
    static String stateName(TxnState s) {
        return switch (s) {
            case EMPTY -> "Empty";
            case ONGOING -> "Ongoing";
            case PREPARE_COMMIT -> "PrepareCommit";
            case PREPARE_ABORT -> "PrepareAbort";
            case COMPLETE_COMMIT -> "CompleteCommit";
            case COMPLETE_ABORT -> "CompleteAbort";
            case DEAD -> "Dead";
        };
    }

    private static TxnState stateOf(String name) {
        for (TxnState s : TxnState.values()) {
            if (stateName(s).equals(name)) {
                return s;
            }
        }
        return null;
    }
}
