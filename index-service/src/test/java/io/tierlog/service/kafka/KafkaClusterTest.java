package io.tierlog.service.kafka;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Leaders and read replicas by rack ({@link KafkaCluster}), over a fixed set of live brokers. */
class KafkaClusterTest {
    static final Broker A0 = new Broker(0, "h0", 9092, "az-a");
    static final Broker A1 = new Broker(1, "h1", 9092, "az-a");
    static final Broker B2 = new Broker(2, "h2", 9092, "az-b");
    static final Broker NONE3 = new Broker(3, "h3", 9092, null);
    static final List<Broker> LIVE = List.of(A0, A1, B2, NONE3);

    @Test
    void aClientOfARackIsGivenLeadersInItSpreadOverItsBrokers() {
        KafkaCluster c = new KafkaCluster(B2, LIVE);
        Set<Broker> leaders = new HashSet<>();
        for (int p = 0; p < 8; p++) {
            leaders.add(c.leaderOf("orders", p, "az-a"));
            assertThat(c.leaderOf("orders", p, "az-b")).isEqualTo(B2);
        }
        assertThat(leaders).containsExactlyInAnyOrder(A0, A1);
    }

    @Test
    void aClientOfNoRackOrAnEmptyOneIsGivenTheSameLeadersAsWithoutRacks() {
        KafkaCluster c = new KafkaCluster(A0, LIVE);
        for (int p = 0; p < 8; p++) {
            assertThat(c.leaderOf("orders", p, null)).isEqualTo(c.leaderOf("orders", p));
            assertThat(c.leaderOf("orders", p, "az-z")).as("no live broker in az-z").isEqualTo(c.leaderOf("orders", p));
        }
    }

    @Test
    void everyLiveBrokerIsAReplicaLeaderFirst() {
        KafkaCluster c = new KafkaCluster(A0, LIVE);
        assertThat(c.replicas(B2)).containsExactly(2, 0, 1, 3);
        assertThat(c.replicas(A0)).containsExactly(0, 1, 2, 3);
    }

    @Test
    void aConsumerOfAnotherRackIsSentToABrokerInItsOwn() {
        KafkaCluster asA0 = new KafkaCluster(A0, LIVE);
        assertThat(asA0.readReplicaFor("orders", 0, "az-b")).isEqualTo(B2);
        assertThat(asA0.readReplicaFor("orders", 0, "az-a")).as("already in its rack").isNull();
        assertThat(asA0.readReplicaFor("orders", 0, "")).as("no rack named").isNull();
        assertThat(asA0.readReplicaFor("orders", 0, "az-z")).as("no live broker there").isNull();
        KafkaCluster asB2 = new KafkaCluster(B2, LIVE);
        Set<Broker> replicas = new HashSet<>();
        for (int p = 0; p < 8; p++) {
            replicas.add(asB2.readReplicaFor("orders", p, "az-a"));
        }
        assertThat(replicas).as("spread over the rack's brokers").containsExactlyInAnyOrder(A0, A1);
    }

    @Test
    void theRackHintIsReadFromTheClientId() {
        assertThat(KafkaCluster.rackOf("tierlog_rack=eu-west-1a")).isEqualTo("eu-west-1a");
        assertThat(KafkaCluster.rackOf("orders-app,tierlog_rack=use1-az2")).isEqualTo("use1-az2");
        assertThat(KafkaCluster.rackOf("orders-app tierlog_rack=az.b-1 more")).isEqualTo("az.b-1");
        assertThat(KafkaCluster.rackOf("mytierlog_rack=x")).as("only as a word of its own").isNull();
        assertThat(KafkaCluster.rackOf("producer-1")).isNull();
        assertThat(KafkaCluster.rackOf(null)).isNull();
    }
}
