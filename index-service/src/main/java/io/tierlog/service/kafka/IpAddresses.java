package io.tierlog.service.kafka;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.regex.Pattern;

/**
 * The addresses Kafka's admin APIs name (an ACL's host, an ip quota entity), in the form the listener reports a
 * connection's ({@link InetAddress#getHostAddress}), so a stored one matches the caller's exactly. Stateless.
 */
final class IpAddresses {
    private static final Pattern V4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
    private static final Pattern V6 = Pattern.compile("[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*");

    private IpAddresses() {
    }

    /**
     * {@code ip} in its canonical form; throws unless it is an IPv4 or IPv6 literal (never a host name: that would need
     * a lookup, and its answer could change).
     */
    static String canonical(String ip) {
        if (ip != null && (V4.matcher(ip).matches() || V6.matcher(ip).matches())) {
            try {
                return InetAddress.getByName(ip).getHostAddress(); // a literal is parsed, never looked up
            } catch (UnknownHostException e) {
                // not an address after all: refused below
            }
        }
        throw new IllegalArgumentException("must be an IPv4 or IPv6 address, not " + ip);
    }
}
