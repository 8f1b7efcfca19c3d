package io.tierlog.bench.compare;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/** Free TCP ports on 127.0.0.1 for the servers the benchmark starts. */
public final class Ports {
    private Ports() {
    }

    /**
     * A port that was free a moment ago. Another program could take it before our child binds it; the child
     * then fails to start and the benchmark reports that, which is rare enough on a bench machine.
     */
    public static int freeLoopbackPort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free port on 127.0.0.1", e);
        }
    }
}
