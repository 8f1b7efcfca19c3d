package io.tierlog.log;

/**
 * Kafka's naming rule for topics and groups: {@code [A-Za-z0-9._-]{1,249}}, and neither {@code .} nor
 * {@code ..}. Names become directory and object-key components, so this rule is also what keeps a name
 * from escaping the data directory ({@code ../x}, {@code a/b}, {@code %2e%2e} all fail it).
 */
public final class Names {
    public static final int MAX_LENGTH = 249;

    private Names() {
    }

    /** Checked char by char, not by a regex: every fetch names its partitions, and the match showed in its profile. */
    public static boolean isValid(String name) {
        if (name == null || name.isEmpty() || name.length() > MAX_LENGTH || name.equals(".") || name.equals("..")) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '.' || c == '_' || c == '-')) {
                return false;
            }
        }
        return true;
    }

    public static String requireValidTopic(String topic) {
        if (!isValid(topic)) {
            throw new TierlogException(ErrorType.INVALID_TOPIC, describe("topic", topic));
        }
        return topic;
    }

    public static String requireValidGroup(String group) {
        if (!isValid(group)) {
            throw new TierlogException(ErrorType.INVALID_GROUP, describe("group", group));
        }
        return group;
    }

    private static String describe(String what, String name) {
        String shown = name == null ? "null" : name.length() > 60 ? name.substring(0, 60) + "…" : name;
        return what + " name '" + shown + "' is invalid: it must match [A-Za-z0-9._-]{1," + MAX_LENGTH
                + "} and not be '.' or '..'";
    }
}
