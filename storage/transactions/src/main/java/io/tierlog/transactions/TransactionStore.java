package io.tierlog.transactions;

import io.tierlog.log.io.LockedStateFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * The transactional ids' state files in one directory: {@code <sha-256 of the id, hex>.txn}, the id stored inside
 * (so any id fits a file name and a hash collision is detected, not obeyed). Locks are striped over
 * {@value #LOCK_STRIPES} files under {@code locks/}, by the hash's first three hex digits: a lock file cannot be
 * deleted safely (see {@link LockedStateFile}), so one per id would leave a file behind for every id ever expired
 * (Flink, for one, makes a new transactional id per checkpoint). Two ids of one stripe only wait for each other.
 */
final class TransactionStore {
    static final int LOCK_STRIPES = 4096;
    /** Replaced versions, kept until {@link #reclaim} so that a write on the produce or EndTxn path frees nothing. */
    private static final String REPLACED = "replaced";
    private static final String SUFFIX = ".txn";
    private static final Logger LOG = LoggerFactory.getLogger(TransactionStore.class);

    private final Path dir;
    private final boolean fsync;

    TransactionStore(Path dir, boolean fsync) {
        this.dir = dir;
        this.fsync = fsync;
    }

    /** A transactional id's state under its lock. */
    interface Txn {
        /** The state, null when the id is unknown (never initialized, or expired). */
        TransactionMetadata current();

        /** Durably replaces the state; {@link #current} returns it afterwards. */
        void write(TransactionMetadata next);

        /** Forgets the id durably. */
        void delete();
    }

    /** Runs {@code change} on {@code transactionalId}'s state, holding its lock across processes. */
    <T> T update(String transactionalId, Function<Txn, T> change) {
        String hash = hash(transactionalId);
        LockedStateFile file = new LockedStateFile(dir.resolve(hash + SUFFIX),
                dir.resolve("locks").resolve(hash.substring(0, 3) + ".lock"), fsync, dir.resolve(REPLACED));
        return file.update(session -> change.apply(new Txn() {
            private TransactionMetadata current = decodeFor(transactionalId, session.read());

            @Override
            public TransactionMetadata current() {
                return current;
            }

            @Override
            public void write(TransactionMetadata next) {
                session.write(TransactionMetadataCodec.encode(next));
                current = next;
            }

            @Override
            public void delete() {
                session.delete();
                current = null;
            }
        }));
    }

    /** Frees the versions writes replaced ({@link LockedStateFile#reclaim}); returns how many. */
    int reclaim() {
        return LockedStateFile.reclaim(dir.resolve(REPLACED));
    }

    /** The state without the lock: some whole version, possibly already replaced by another instance. */
    Optional<TransactionMetadata> read(String transactionalId) {
        return Optional.ofNullable(decodeFor(transactionalId,
                LockedStateFile.readIfExists(dir.resolve(hash(transactionalId) + SUFFIX))));
    }

    /**
     * Every id's state without locks, for listings and the periodic tasks (which re-read under the lock before they
     * act). A file deleted during the scan is skipped; one created during it may or may not be seen. An unreadable
     * file is logged and skipped, so one bad file does not stop the timeouts of all others.
     */
    List<TransactionMetadata> scan() {
        List<TransactionMetadata> all = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return all;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + SUFFIX)) {
            for (Path f : files) {
                byte[] bytes = LockedStateFile.readIfExists(f);
                if (bytes == null) {
                    continue;
                }
                try {
                    all.add(TransactionMetadataCodec.decode(bytes));
                } catch (RuntimeException e) {
                    LOG.error("skipping unreadable transaction state file {}", f, e);
                }
            }
        } catch (NoSuchFileException e) {
            return all;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list transaction state in " + dir, e);
        }
        return all;
    }

    private static TransactionMetadata decodeFor(String transactionalId, byte[] bytes) {
        if (bytes == null) {
            return null;
        }
        TransactionMetadata m = TransactionMetadataCodec.decode(bytes);
        if (!m.transactionalId().equals(transactionalId)) {
            throw new IllegalStateException("SHA-256 collision between transactional ids " + transactionalId
                    + " and " + m.transactionalId());
        }
        return m;
    }

    static String hash(String transactionalId) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(transactionalId.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }
}
