package io.tierlog.bench.cold;

/**
 * Finds the {@code value} of a record rendered as JSON by the service (api.md's fetch record, also each SSE
 * event's data) without parsing the whole object, so the benchmark client stays cheap next to the server it
 * measures. Stateless.
 */
final class RecordValues {
    private static final byte[] FIELD = "\"value\":".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private RecordValues() {
    }

    /**
     * The length in bytes of the value's JSON string, quotes included (for {@code encoding=json} that is exactly
     * the stored value bytes when the value was produced as a JSON string), or -1 when there is no
     * {@code "value":} followed by a string. Assumes the service's compact rendering (no space after the colon).
     */
    static int jsonStringValueLength(byte[] json, int length) {
        int at = indexOf(json, length, FIELD);
        if (at < 0) {
            return -1;
        }
        int open = at + FIELD.length;
        if (open >= length || json[open] != '"') {
            return -1;
        }
        for (int i = open + 1; i < length; i++) {
            byte b = json[i];
            if (b == '\\') {
                i++; // the escaped character cannot close the string
            } else if (b == '"') {
                return i - open + 1;
            }
        }
        return -1;
    }

    private static int indexOf(byte[] haystack, int length, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
