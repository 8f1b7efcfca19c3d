package io.tierlog.http;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The detail of a 5xx problem says what failed, never where (api.md, "Names and limits"): the messages of I/O and
 * storage failures name files, directories, object keys and endpoints, which are the operator's business (they are
 * logged in full) and no client's. Every word holding a path separator is replaced by {@value #PLACEHOLDER}
 * (quotes, brackets and trailing punctuation around it stay), except word pairs such as "I/O" or "Input/output".
 * Stateless and thread-safe.
 */
public final class ServerErrorDetail {
    static final String PLACEHOLDER = "<path>";
    /** Leading wrappers, the word, trailing wrappers and punctuation. */
    private static final Pattern WORD = Pattern.compile("([\"'(\\[]*)([^\\s]*?)([\"')\\].,;:]*)(?=\\s|$)");
    private static final Pattern WORD_PAIR = Pattern.compile("[A-Za-z]{1,12}/[A-Za-z]{1,12}");

    private ServerErrorDetail() {
    }

    /** {@code detail} with every path-like word replaced; null stays null. */
    public static String withoutPaths(String detail) {
        if (detail == null || (detail.indexOf('/') < 0 && detail.indexOf('\\') < 0)) {
            return detail;
        }
        Matcher m = WORD.matcher(detail);
        StringBuilder out = new StringBuilder(detail.length());
        while (m.find()) {
            String word = m.group(2);
            boolean path = (word.indexOf('/') >= 0 || word.indexOf('\\') >= 0) && !WORD_PAIR.matcher(word).matches();
            m.appendReplacement(out, Matcher.quoteReplacement(path ? m.group(1) + PLACEHOLDER + m.group(3) : m.group()));
        }
        m.appendTail(out);
        return out.toString();
    }
}
