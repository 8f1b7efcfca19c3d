package io.tierlog.groups;

import java.util.Set;

/**
 * Resolves a member's subscription by regular expression into the topic names it covers now: the listener that
 * received the heartbeat knows the topics and what the caller may see. Called under the group's lock, on every
 * heartbeat of a member that has one, so topics created later join its subscription.
 */
@FunctionalInterface
public interface RegexTopics {
    /** For callers that take no regular expressions (HTTP): a member that has one keeps its resolved topics. */
    RegexTopics UNCHANGED = regex -> null;

    /** The topics {@code regex} matches now; null to keep those resolved before. */
    Set<String> topics(String regex);
}
