package io.tierlog.access;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;

/**
 * The one table of what every HTTP route of the API (docs/api.md) needs, shared by every HTTP edge (the
 * index-service's filter, the Lambda handler). {@link #requirements} maps a method and path to the operations and
 * resources the request needs; an empty list means "any authenticated caller" (the listings, which then show only
 * what the caller may describe). A {@code /v1} path the table does not know needs {@code admin:cluster}, so a route
 * added without an entry here is closed to everyone but admins rather than open. Stateless.
 *
 * <p>Topic operations: create, describe, alter (config), delete, produce, fetch (records, offsets, stream, keys).
 * Group operations (consumer and share groups): read (offsets, lag, describe, heartbeat, lease, acks), commit
 * (offsets, offset reset, share-group config), delete. Share-group leases and acks also need fetch on the topic.
 * Committing or resetting a group's offsets also needs fetch on every topic its body names; only the handler
 * knows those (this table sees no body), so it checks them through the same authorizer.
 */
public final class HttpRoutes {
    private static final List<Requirement> ADMIN = List.of(Requirement.of(Operation.ADMIN, Resource.CLUSTER));
    private static final List<Requirement> AUTHENTICATED = List.of();

    private HttpRoutes() {
    }

    /** What {@code method} on {@code path} (the request path without query) needs; HEAD counts as GET. */
    public static List<Requirement> requirements(String method, String path) {
        String m = method.toUpperCase(Locale.ROOT);
        if (m.equals("HEAD")) {
            m = "GET";
        }
        String p = path.length() > 1 && path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        String[] s = p.split("/", -1);
        // s[0] is "" (before the leading /), s[1] is "v1"
        if (s.length < 3 || !s[0].isEmpty() || !s[1].equals("v1")) {
            return ADMIN;
        }
        List<Requirement> r = switch (s[2]) {
            case "topics" -> topics(m, s);
            case "groups" -> groups(m, s);
            case "share-groups" -> shareGroups(m, s);
            default -> null;
        };
        return r == null ? ADMIN : r;
    }

    private static List<Requirement> topics(String m, String[] s) {
        if (s.length == 3) {
            return switch (m) {
                case "GET" -> AUTHENTICATED;
                case "POST" -> List.of(new Requirement(Operation.CREATE, Resource.Kind.TOPIC, null));
                default -> null;
            };
        }
        Resource t = Resource.topic(decode(s[3]));
        if (s.length == 4) {
            return switch (m) {
                case "GET" -> need(Operation.DESCRIBE, t);
                case "DELETE" -> need(Operation.DELETE, t);
                default -> null;
            };
        }
        String tail = String.join("/", java.util.Arrays.copyOfRange(s, 4, s.length));
        if (s.length == 5 && tail.equals("config") && m.equals("PATCH")) {
            return need(Operation.ALTER, t);
        }
        if (s.length == 5 && tail.equals("records") && m.equals("POST")) {
            return need(Operation.PRODUCE, t);
        }
        if (m.equals("GET") && s.length == 6 && s[4].equals("keys")) {
            return need(Operation.FETCH, t);
        }
        if (m.equals("GET") && s.length == 7 && s[4].equals("partitions")
                && (s[6].equals("records") || s[6].equals("offsets") || s[6].equals("stream"))) {
            return need(Operation.FETCH, t);
        }
        return null;
    }

    private static List<Requirement> groups(String m, String[] s) {
        if (s.length == 3) {
            return m.equals("GET") ? AUTHENTICATED : null;
        }
        Resource g = Resource.group(decode(s[3]));
        if (s.length == 4) {
            return switch (m) {
                case "GET" -> need(Operation.READ, g);
                case "DELETE" -> need(Operation.DELETE, g);
                default -> null;
            };
        }
        String tail = String.join("/", java.util.Arrays.copyOfRange(s, 4, s.length));
        return switch (m + " " + tail) {
            case "PUT offsets", "POST offsets/reset" -> need(Operation.COMMIT, g);
            case "GET offsets", "GET lag", "POST heartbeat" -> need(Operation.READ, g);
            default -> null;
        };
    }

    private static List<Requirement> shareGroups(String m, String[] s) {
        if (s.length < 4) {
            return null;
        }
        Resource g = Resource.group(decode(s[3]));
        if (s.length == 4) {
            return switch (m) {
                case "GET" -> need(Operation.READ, g);
                case "DELETE" -> need(Operation.DELETE, g);
                default -> null;
            };
        }
        if (s.length == 5 && s[4].equals("config") && m.equals("PUT")) {
            return need(Operation.COMMIT, g);
        }
        if (s.length == 7 && s[4].equals("topics") && m.equals("POST")
                && (s[6].equals("lease") || s[6].equals("acks"))) {
            return List.of(Requirement.of(Operation.READ, g),
                    Requirement.of(Operation.FETCH, Resource.topic(decode(s[5]))));
        }
        return null;
    }

    private static List<Requirement> need(Operation op, Resource r) {
        return List.of(Requirement.of(op, r));
    }

    private static String decode(String segment) {
        try {
            return URLDecoder.decode(segment.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return segment;
        }
    }
}
