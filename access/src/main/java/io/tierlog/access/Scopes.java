package io.tierlog.access;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A principal's grants, parsed from the space-separated form tokens and JWTs carry (OAuth 2's {@code scope}).
 * The rules of the contract live in {@link #allows}: {@code admin:cluster} allows everything; internal {@code __}
 * topics and the cluster are reached by nothing else; {@code produce} or {@code fetch} on a topic imply
 * {@code describe} of it; no scope, no access. Immutable and thread-safe.
 */
public final class Scopes {
    public static final Scopes NONE = new Scopes(List.of());

    private final List<Scope> scopes;
    private final boolean admin;

    private Scopes(List<Scope> scopes) {
        this.scopes = List.copyOf(scopes);
        this.admin = scopes.contains(Scope.ADMIN);
    }

    public static Scopes of(Scope... scopes) {
        return new Scopes(List.of(scopes));
    }

    /** Parses space-separated scopes (runs of whitespace allowed; empty means none). Throws on any invalid one. */
    public static Scopes parse(String text) {
        List<Scope> out = new ArrayList<>();
        if (text != null) {
            for (String s : text.trim().split("\\s+")) {
                if (!s.isEmpty()) {
                    out.add(Scope.parse(s));
                }
            }
        }
        return new Scopes(out);
    }

    /** Parses a JWT's scopes, skipping entries that are not Tierlog scopes (an issuer's {@code openid}, ...). */
    public static Scopes parseLenient(String text) {
        List<Scope> out = new ArrayList<>();
        if (text != null) {
            for (String s : text.trim().split("\\s+")) {
                try {
                    out.add(Scope.parse(s));
                } catch (InvalidScopeException notOurs) {
                    // another audience's scope: grants nothing here
                }
            }
        }
        return new Scopes(out);
    }

    /**
     * An OAuth 2 {@code scope} claim's Tierlog scopes: space-separated; an issuer's resource-server prefix up to the
     * last {@code /} (as Cognito writes custom scopes) is dropped; entries that are not Tierlog scopes grant nothing.
     */
    public static Scopes fromOAuthScope(String claim) {
        StringBuilder stripped = new StringBuilder();
        if (claim != null) {
            for (String s : claim.trim().split("\\s+")) {
                stripped.append(s.substring(s.lastIndexOf('/') + 1)).append(' ');
            }
        }
        return parseLenient(stripped.toString());
    }

    /** These scopes and {@code more}'s. */
    public Scopes with(Scopes more) {
        List<Scope> all = new ArrayList<>(scopes);
        all.addAll(more.scopes);
        return new Scopes(all);
    }

    public boolean admin() {
        return admin;
    }

    public List<Scope> list() {
        return scopes;
    }

    /** Whether these scopes allow {@code op} on {@code resource}. */
    public boolean allows(Operation op, Resource resource) {
        if (admin) {
            return true;
        }
        if (resource.kind() == Resource.Kind.CLUSTER || resource.internal() || op == Operation.ADMIN) {
            return false;
        }
        for (Scope s : scopes) {
            if (s.covers(resource) && (s.operation() == op || impliesDescribe(s, op))) {
                return true;
            }
        }
        return false;
    }

    /** Whether these scopes allow {@code op} on at least one non-internal resource of {@code kind}. */
    public boolean allowsSome(Operation op, Resource.Kind kind) {
        if (admin) {
            return true;
        }
        for (Scope s : scopes) {
            if (s.kind() == kind && s.operation() == op) {
                return true;
            }
        }
        return false;
    }

    /**
     * These scopes as denials (ADR 0068): whether one of them names exactly {@code op} on {@code resource}. Unlike
     * {@link #allows}, no operation implies another (denying produce leaves describe), and internal resources are
     * covered like any other.
     */
    public boolean denies(Operation op, Resource resource) {
        for (Scope s : scopes) {
            if (s.operation() == op && s.covers(resource)) {
                return true;
            }
        }
        return false;
    }

    /** These scopes as denials: whether they deny {@code op} on every resource of {@code kind} (a lone {@code *}). */
    public boolean deniesAll(Operation op, Resource.Kind kind) {
        for (Scope s : scopes) {
            if (s.operation() == op && s.kind() == kind && s.prefix() && s.name().isEmpty()) {
                return true;
            }
        }
        return false;
    }

    private static boolean impliesDescribe(Scope s, Operation op) {
        return op == Operation.DESCRIBE && (s.kind() == Resource.Kind.TOPIC
                && (s.operation() == Operation.PRODUCE || s.operation() == Operation.FETCH)
                || s.kind() == Resource.Kind.TRANSACTION && s.operation() == Operation.PRODUCE);
    }

    @Override
    public String toString() {
        return scopes.stream().map(Scope::toString).collect(Collectors.joining(" "));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Scopes other && other.scopes.equals(scopes);
    }

    @Override
    public int hashCode() {
        return scopes.hashCode();
    }
}
