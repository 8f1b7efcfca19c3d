/**
 * Kafka's transaction coordinator (KIP-98; transaction protocols 1 and 2, KIP-890) as a library on the hot volume,
 * shared by every service instance: {@link io.tierlog.transactions.TransactionCoordinator}.
 *
 * <h2>Durability argument</h2>
 * <ul>
 *   <li>Each transactional id's whole state is one small file, replaced by atomic rename (with fsync and directory
 *       fsync when {@code fsync}), so every reader sees a whole version, and every change is a read-modify-write
 *       under an exclusive lock held across processes (a {@code FileLock}, which NFSv4/EFS honour across hosts and
 *       the kernel releases when a process dies). No state is cached between calls: each call reads the file under
 *       the lock, so instances never act on each other's stale state.</li>
 *   <li>An answer is given only after the state it reports is written: a crash after an acknowledgement loses
 *       nothing acknowledged.</li>
 *   <li>Ending a transaction writes PrepareCommit/PrepareAbort before any side effect. From then the outcome is
 *       decided and on disk; markers (idempotent), then the offsets (idempotent, commit only), then
 *       CompleteCommit/CompleteAbort follow. A crash at any point between leaves the prepared state, which any
 *       coordinator on the directory completes with the same outcome ({@code completePrepared()}, or the next request
 *       for the id); the repeated side effects are idempotent.</li>
 *   <li>The lock is held while markers and offsets are written, so two instances never complete one transaction at
 *       once, and no request can start a new transaction for the id until the previous one is complete. The lock
 *       order is: transaction lock, then whatever the participants take; participants never take a transaction
 *       lock.</li>
 *   <li>A transactional produce takes no transaction lock: it reads the state (a whole version) while holding its
 *       partition's lock, which a marker needs too and which an ending transaction takes only after its prepared
 *       state is written ({@code requireInTransaction}). A write links the version it replaces aside, freed by
 *       {@code reclaimReplaced()}, so that no write on these paths frees blocks.</li>
 *   <li>Periodic tasks ({@code abortTimedOut}, {@code completePrepared}, {@code expireIdle}) scan without locks to
 *       pick candidates, then re-read and re-check each under its lock before acting, so files appearing,
 *       changing or disappearing during the scan are harmless.</li>
 * </ul>
 * Without {@code fsync} the state survives a process crash but not a machine or power failure.
 */
package io.tierlog.transactions;
