package io.tierlog.service.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * The service's fixed configuration keys (docs/api.md, "Configuration"), each also settable as an environment
 * variable ({@code tierlog.data-dir} → {@code TIERLOG_DATA_DIR}). The cold-tier and tiering keys exist from the
 * start so that deployments can set them before the cold tier is wired in; until then they are read but unused.
 */
@ConfigMapping(prefix = "tierlog")
public interface TierlogConfig {

    /** The hot volume: segments and topic metadata (an EFS mount in AWS). */
    @WithDefault("./data/hot")
    Path dataDir();

    /** The RocksDB index and cold-read cache: derived data, rebuilt on start when missing. */
    @WithDefault("./data/index")
    Path indexDir();

    /** {@code always} (fsync before each acknowledgement), {@code interval} or {@code never}. */
    @WithDefault("always")
    String fsync();

    /** For {@code fsync=interval}: the longest time between two fsyncs of a partition. */
    @WithDefault("1s")
    Duration fsyncInterval();

    /** The largest produce request body accepted (api.md's {@code max.request.bytes}); larger is 413. */
    @WithDefault("8388608")
    int maxRequestBytes();

    /**
     * How long an idempotent producer is remembered after its last request (Kafka's {@code producer.id.expiration.ms},
     * with its default): a retry later than this is appended again.
     */
    @WithDefault("1d")
    Duration producerIdExpiration();

    Cold cold();

    Tiering tiering();

    Retention retention();

    Fetch fetch();

    Stream stream();

    Groups groups();

    /** Share groups (docs/share-groups.md). */
    Share share();

    Auth auth();

    /** Cross-origin access for browsers (docs/security.md). */
    Cors cors();

    Hot hot();

    Quota quota();

    Shutdown shutdown();

    Kafka kafka();

    interface Cold {
        /** {@code filesystem} (the embedded default) or {@code s3}. */
        @WithDefault("filesystem")
        String store();

        Filesystem filesystem();

        S3 s3();

        interface Filesystem {
            @WithDefault("./data/cold")
            Path dir();
        }

        interface S3 {
            Optional<String> bucket();

            Optional<String> prefix();
        }
    }

    interface Tiering {
        @WithDefault("10s")
        Duration interval();

        /** False stops the tierer, retention and orphan collection (cold reads still work). */
        @WithDefault("true")
        boolean enabled();

        /**
         * Bytes of sealed hot segments awaiting upload above which the backlog is reported (metric
         * {@code tierlog_tiering_pending_bytes}, readiness detail, WARN) and produce is refused with 503
         * {@code hot-tier-full} until it is back under; nothing is deleted, the hot segments are kept until uploaded.
         */
        @WithDefault("10737418240")
        long maxPendingBytes();

        /** Age after which an object the manifest does not reference is deleted as an orphan. */
        @WithDefault("1h")
        Duration orphanGrace();

        @WithDefault("10m")
        Duration orphanCheckInterval();

        /**
         * Size of one cold-cache entry, and of the ranged GET of a point read (a fetch at a random offset) or of a
         * sequential reader's first chunk; a sequential reader's GETs grow from here to {@code range-bytes}.
         */
        @WithDefault("1048576")
        int chunkBytes();

        /**
         * Bound of the on-disk cold chunk cache under {@code <index-dir>/cold-cache}; a chunk is written there on its
         * second fetch (a one-pass replay writes nothing), and this many bytes' worth of chunk names are remembered.
         */
        @WithDefault("536870912")
        long cacheBytes();

        /**
         * Bytes a sequential cold reader keeps requested ahead of itself, once found sequential (0: no read-ahead);
         * at most half of {@code read-ahead-memory-bytes} less a range and two chunks.
         */
        @WithDefault("33554432")
        long readAheadBytes();

        /** The largest ranged GET of a sequential cold reader's read-ahead (whole chunks). */
        @WithDefault("8388608")
        int rangeBytes();

        /**
         * Bytes of fetched cold chunks held in memory per node, all readers together: half for chunks requested and
         * not read yet (in flight, or landed and kept until read), half for chunks read recently (at least twice
         * {@code range-bytes}).
         */
        @WithDefault("134217728")
        long readAheadMemoryBytes();

        /**
         * Deprecated (read-ahead is sized in bytes now): when set, {@code read-ahead-bytes} is twice this many chunks,
         * the window it used to mean.
         */
        Optional<Integer> readAheadChunks();

        /** Ranged GETs in flight at most. */
        @WithDefault("8")
        int fetchThreads();
    }

    interface Retention {
        @WithDefault("30s")
        Duration checkInterval();
    }

    interface Fetch {
        /** Largest {@code maxRecords} a fetch may ask for; above it is 400. */
        @WithDefault("10000")
        int maxRecordsLimit();

        /**
         * How often a partition's end is re-read from disk while a long-poll or stream waits on it, to see appends
         * by other processes (ingest functions). In-process produces wake waiters at once without polling.
         */
        @WithDefault("20ms")
        Duration tailPollInterval();
    }

    interface Stream {
        /** Idle time after which an SSE stream sends a comment heartbeat (api.md: at most 15 s). */
        @WithDefault("10s")
        Duration heartbeatInterval();

        /** Records read per replay step; bounds the memory one stream holds while its client is slow. */
        @WithDefault("500")
        int batchRecords();
    }

    interface Hot {
        /**
         * Produce answers 503 {@code hot-tier-full} while the hot volume's used share (1 - usable/total) is above
         * this; 1 turns the check off (a write that fails for lack of space is still refused cleanly).
         */
        @WithDefault("0.90")
        double maxUsedRatio();
    }

    /** Per-principal byte-rate quotas (Kafka's {@code producer_byte_rate} / {@code consumer_byte_rate}); unset: none. */
    interface Quota {
        java.util.OptionalLong produceBytesPerSecond();

        java.util.OptionalLong fetchBytesPerSecond();
    }

    interface Shutdown {
        /** Longest time from SIGTERM to exit: in-flight requests are answered within it (quarkus.shutdown.timeout). */
        @WithDefault("10s")
        Duration timeout();
    }

    interface Share {
        /**
         * The most records of one share-partition in flight at once (Kafka's group.share.partition.max.record.locks):
         * when the window above the start offset is this long, no record beyond it is leased.
         */
        @WithDefault("2000")
        int maxInFlightRecords();

        /**
         * How often a waiting lease request (waitMs) tries again with no signal: releases and acks made through
         * another instance on the volume are seen only then (this instance's own acks, appends, lease expiry and
         * redelivery delays wake it at once).
         */
        @WithDefault("1s")
        Duration longPollRecheck();
    }

    interface Groups {
        /** Partitions of the internal {@code __consumer_offsets} topic, created on first start. */
        @WithDefault("16")
        int offsetsTopicPartitions();

        /**
         * How far apart the clocks of the instances sharing the hot volume may be; added to every member's session
         * timeout before it is expired, so no instance expires a member early (docs/adr/0009-group-membership.md).
         */
        @WithDefault("1s")
        Duration maxClockSkew();
    }

    /** Identity and access (docs/security.md, ADR 0008). */
    interface Auth {
        /** {@code none} (the embedded single-machine default: loopback only) or {@code token}. */
        @WithDefault("none")
        String mode();

        /** A file holding an {@code admin:cluster} token (surrounding whitespace ignored). */
        Optional<Path> bootstrapTokenFile();

        /**
         * The bootstrap token itself, for deployments that inject secrets as environment variables
         * ({@code TIERLOG_AUTH_BOOTSTRAP_TOKEN} from Secrets Manager in ECS); used when no file is set.
         */
        Optional<String> bootstrapToken();

        /** In {@code none} mode, allow listening on a non-loopback address. */
        @WithDefault("false")
        boolean allowAnonymous();

        /** Failed authentications per client address and minute before 429 {@code too-many-failures}; 0: no limit. */
        @WithDefault("30")
        int maxFailuresPerMinute();

        /**
         * How often each instance re-reads the minted tokens on the hot volume. The contract allows 2 s; half a second
         * leaves room for a loaded machine's scheduling delays (1 s measured 2.02 s once on a 2-core host at load 10).
         */
        @WithDefault("500ms")
        Duration tokenRefreshInterval();

        /**
         * How long a Kafka delegation token lives from its creation or last renewal unless the renewal asks for
         * another period, Kafka's {@code delegation.token.expiry.time.ms}.
         */
        @WithDefault("1d")
        Duration delegationTokenExpiryTime();

        /**
         * The longest a Kafka delegation token may live, renewals included, Kafka's
         * {@code delegation.token.max.lifetime.ms}.
         */
        @WithDefault("7d")
        Duration delegationTokenMaxLifetime();

        Jwt jwt();

        interface Jwt {
            /** The OIDC issuer ({@code iss}); JWTs are accepted only when it and the JWKS URL are set. */
            Optional<String> issuer();

            Optional<String> jwksUrl();

            /** The expected {@code aud} (or Cognito's {@code client_id}); unset: not checked. */
            Optional<String> audience();

            /** Shortest time between two JWKS fetches caused by unknown key ids. */
            @WithDefault("10s")
            Duration jwksMinRefreshInterval();
        }
    }

    interface Cors {
        /** Origins allowed to call from a browser ({@code https://app.example.com}, or {@code *}); empty: none. */
        Optional<java.util.List<String>> origins();
    }

    /** The Kafka wire-protocol listener (docs/kafka.md). */
    interface Kafka {
        /** False: no listener is opened. */
        @WithDefault("true")
        boolean enabled();

        /** TCP port; 0 picks a free one (tests), which Metadata then advertises. */
        @WithDefault("9092")
        int port();

        /** Interface the listener binds to; unset: the HTTP server's ({@code quarkus.http.host}). */
        Optional<String> host();

        /** Host name given to clients in Metadata; unset: the bind host, or this machine's name for 0.0.0.0. */
        Optional<String> advertisedHost();

        /** The largest request frame read; a larger one closes the connection before it is buffered. */
        @WithDefault("104857600")
        int maxRequestBytes();

        /**
         * Session timeout of KIP-848 consumers (ConsumerGroupHeartbeat), which the broker sets (Kafka's
         * {@code group.consumer.session.timeout.ms}); heartbeats come a third of it apart, at most 5 s.
         */
        @WithDefault("45s")
        Duration groupSessionTimeout();

        /**
         * How long the first round of an empty classic group whose members assign among themselves (Kafka Streams,
         * Kafka Connect, custom assignors) waits for more members before it closes, Kafka's
         * {@code group.initial.rebalance.delay.ms}; each newcomer extends it, up to the round's rebalance timeout.
         */
        @WithDefault("3s")
        Duration groupInitialRebalanceDelay();

        /**
         * How long a streams group (Kafka Streams' rebalance protocol) that was empty waits for more members before its
         * first tasks go out, Kafka's {@code group.streams.initial.rebalance.delay.ms}; a group's
         * {@code streams.initial.rebalance.delay.ms} overrides it.
         */
        @WithDefault("3s")
        Duration streamsInitialRebalanceDelay();

        /**
         * Incremental fetch sessions (KIP-227) this instance keeps, Kafka's
         * {@code max.incremental.fetch.session.cache.slots}; when full, clients without one send full fetches.
         */
        @WithDefault("1000")
        int fetchSessions();

        /**
         * The longest {@code transaction.timeout.ms} a transactional producer may ask for, Kafka's
         * {@code transaction.max.timeout.ms}: a transaction open longer is aborted, so a dead producer holds back
         * read_committed consumers at most this long.
         */
        @WithDefault("15m")
        Duration transactionMaxTimeout();

        /**
         * How long a transactional id's state is kept after its last transaction ended, Kafka's
         * {@code transactional.id.expiration.ms}.
         */
        @WithDefault("7d")
        Duration transactionalIdExpiration();

        /**
         * How often each instance looks for transactions past their timeout and for transactions a crashed instance
         * left prepared (Kafka's {@code transaction.abort.timed.out.transaction.cleanup.interval.ms} is 10 s).
         */
        @WithDefault("10s")
        Duration transactionCheckInterval();

        /**
         * The transaction protocol the listener offers, Kafka's {@code transaction.version} feature: 2 (KIP-890 part
         * 2: every transaction ends at a new epoch, a produce adds its partitions itself), which clients from Kafka
         * 4.0 use, or 1. Clients that know only protocol 1 (librdkafka, older Java clients) speak it either way.
         */
        @WithDefault("2")
        int transactionVersion();

        /**
         * SO_SNDBUF of Kafka connections, Kafka's {@code socket.send.buffer.bytes} and its default; -1: the
         * operating system's (autotuned, up to megabytes). Bounded, a fetch's {@code sendfile} hands the kernel a
         * socket buffer's worth at a time, as Kafka's broker does (ADR 0044).
         */
        @WithDefault("102400")
        int socketSendBufferBytes();

        /**
         * The largest metrics payload a client may push (KIP-714 PushTelemetry, compressed), Kafka's
         * {@code telemetry.max.bytes}; a larger push is refused with TELEMETRY_TOO_LARGE. Its decompressed form may be
         * at most 16 times this.
         */
        @WithDefault("1048576")
        int telemetryMaxBytes();

        /**
         * How many series of pushed client metrics this instance exports on {@code /q/metrics} at once; a point of a
         * series beyond it is dropped and counted ({@code tierlog_client_telemetry_points_dropped_total}).
         */
        @WithDefault("10000")
        int telemetryMaxSeries();

        /**
         * PKCS12 keystore with the listener's certificate chain and private key. Set: the listener speaks TLS only
         * (clients use {@code security.protocol=SSL}, or {@code SASL_SSL} in token mode); unset: plaintext.
         */
        Optional<java.nio.file.Path> tlsKeystore();

        /**
         * The same keystore given as base64 text, for deployments that pass secrets as environment variables (ECS
         * {@code secrets}); used when {@link #tlsKeystore()} is unset. The bytes are never written to disk.
         */
        Optional<String> tlsKeystoreBase64();

        /** Password of {@link #tlsKeystore()} or {@link #tlsKeystoreBase64()} (and of its key). */
        Optional<String> tlsKeystorePassword();

        /**
         * Whether the TLS listener asks clients for a certificate, Kafka's {@code ssl.client.auth}: {@code none},
         * {@code requested} (a client may present one) or {@code required} (a client without a certificate signed
         * by {@link #tlsClientCa()} fails the handshake). Needs the keystore and a CA.
         */
        @WithDefault("none")
        String tlsClientAuth();

        /** PEM file of the CA certificate(s) that sign client certificates. */
        Optional<java.nio.file.Path> tlsClientCa();

        /** The same CA certificates as PEM text (an environment secret); used when {@link #tlsClientCa()} is unset. */
        Optional<String> tlsClientCaPem();

        /**
         * Scopes per client certificate subject, keyed by its distinguished name ({@code CN=orders-app,O=Acme}):
         * a connection whose verified certificate names one of these subjects is that principal,
         * {@code cert:<subject>}, with these scopes, and needs no SASL. Any other certificate authenticates nothing.
         */
        java.util.Map<String, String> tlsClientScopes();

        /**
         * The same subject-to-scopes map as a JSON object ({@code {"CN=orders-app,O=Acme": "produce:topic:orders*"}}),
         * for deployments that configure through the environment, whose variable names cannot hold a subject's
         * {@code =} and {@code ,}. Merged with {@link #tlsClientScopes()}; a subject in both is refused.
         */
        Optional<String> tlsClientScopesJson();

        /**
         * This instance's rack, the availability zone it runs in (Kafka's {@code broker.rack}): clients in the same
         * rack are given leaders and read replicas here (docs/kafka.md, "Racks"). Unset: on ECS, the task's
         * availability zone from the task metadata endpoint; elsewhere none.
         */
        Optional<String> rack();

        /**
         * How long records a Kafka share consumer acquires (ShareFetch) stay its own before they are available again
         * without an acknowledgement, Kafka's {@code group.share.record.lock.duration.ms}.
         */
        @WithDefault("30s")
        Duration shareRecordLockDuration();

        /**
         * How long an instance on the hot volume may miss its heartbeats (one every third of this) before the others
         * stop advertising it as a Kafka broker (docs/kafka.md, "Several instances").
         */
        @WithDefault("10s")
        Duration brokerLiveness();

        /**
         * How long a Kafka share consumer (ShareGroupHeartbeat, KIP-932) may go without a heartbeat before it is
         * removed from its share group, Kafka's {@code group.share.session.timeout.ms}.
         */
        @WithDefault("45s")
        Duration shareSessionTimeout();

        /**
         * How often Kafka share consumers are asked to heartbeat, Kafka's {@code group.share.heartbeat.interval.ms};
         * below {@link #shareSessionTimeout()}.
         */
        @WithDefault("5s")
        Duration shareHeartbeatInterval();
    }
}
