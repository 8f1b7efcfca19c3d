package io.tierlog.service.kafka;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.BaseRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.internals.ImplicitLinkedHashCollection;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * Random Kafka requests built from kafka-clients' own generated message classes, by reflection: every field of a
 * request (and of its nested structs, lists and record sets) set to a value drawn from what breaks servers (zero,
 * -1, the extremes, empty and oversize strings, unknown ids, corrupt and old-format record batches) or to a name,
 * id, member or producer that exists ({@link Known}), so that most requests get past the lookups into the handlers.
 * A value the request's version cannot carry is taken back, so every request written is one a client could send at
 * that version. Time fields (names ending in {@code Ms}, or naming a timeout or a wait) stay at most 100 ms, so a
 * request waits for nothing longer. Deterministic for a seed.
 */
final class RandomRequestData {
    private static final int MAX_DEPTH = 5;
    private static final String[] ODD_STRINGS = {"", " ", ".", "..", "../x", "*", "a/b", "__consumer_offsets",
        "User:fuzz", "fuzz", "ü\u0000\uFFFF", "a".repeat(250), "b".repeat(300), "c".repeat(40_000)};

    private final Random random;
    private final Known known;

    /**
     * What exists on the server, drawn for the fields that name it, so that requests get past the lookups.
     *
     * @param names       topic, group and transactional ids, for fields that name a topic, group or resource
     * @param ids         topic ids, for id fields
     * @param members     member ids of live group members, for member id fields
     * @param producerIds producer ids the server gave, for producer id fields
     * @param sessionIds  ids of open fetch sessions, for session id fields
     */
    record Known(List<String> names, List<Uuid> ids, List<String> members, List<Long> producerIds,
                 List<Integer> sessionIds) {
    }

    RandomRequestData(long seed, Known known) {
        this.random = new Random(seed);
        this.known = known;
    }

    /** A request of {@code api} whose every field is random but writable at {@code version}. */
    ApiMessage request(ApiKeys api, short version) {
        ApiMessage message = api.messageType.newRequest();
        fill(message, version, 0);
        return message;
    }

    private void fill(Message message, short version, int depth) {
        Message defaults = newInstance(message.getClass());
        for (Method setter : setters(message.getClass())) {
            Object value = value(setter.getName().substring(3), setter.getGenericParameterTypes()[0], version, depth);
            invoke(setter, message, value);
            if (!writable(message, version)) {
                invoke(setter, message, invoke(getter(message.getClass(), setter), defaults));
            }
        }
    }

    private static boolean writable(Message message, short version) {
        try {
            ObjectSerializationCache cache = new ObjectSerializationCache();
            message.write(new ByteBufferAccessor(ByteBuffer.allocate(message.size(cache, version))), cache, version);
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    private Object value(String field, Type type, short version, int depth) {
        String name = field.toLowerCase(Locale.ROOT);
        if (type == int.class || type == Integer.class) {
            if (name.contains("sessionid") && random.nextBoolean() && !known.sessionIds().isEmpty()) {
                return known.sessionIds().get(random.nextInt(known.sessionIds().size()));
            }
            if (name.equals("port")) {
                return pick(0, 1, 9092, 65535, random.nextInt(65536)); // uint16 on the wire: its setter refuses more
            }
            return timeField(name) ? pick(-1, 0, 1, 100) : anInt();
        } else if (type == long.class || type == Long.class) {
            if (name.contains("producerid") && random.nextBoolean() && !known.producerIds().isEmpty()) {
                return known.producerIds().get(random.nextInt(known.producerIds().size()));
            }
            return timeField(name) ? (long) pick(-1, 0, 1, 100) : aLong();
        } else if (type == short.class || type == Short.class) {
            return (short) pick(0, 1, 2, -1, Short.MAX_VALUE, Short.MIN_VALUE, random.nextInt());
        } else if (type == byte.class || type == Byte.class) {
            return (byte) pick(0, 1, 2, -1, Byte.MAX_VALUE, Byte.MIN_VALUE, random.nextInt());
        } else if (type == boolean.class || type == Boolean.class) {
            return random.nextBoolean();
        } else if (type == double.class || type == Double.class) {
            double[] doubles = {0, -1, 1, 1e9, Double.NaN, Double.POSITIVE_INFINITY, random.nextDouble()};
            return doubles[random.nextInt(doubles.length)];
        } else if (type == String.class) {
            return aString(name);
        } else if (type == Uuid.class) {
            return anId();
        } else if (type == byte[].class) {
            return random.nextInt(8) == 0 ? null : bytes(random.nextInt(3) == 0 ? 0 : random.nextInt(200));
        } else if (type == java.nio.ByteBuffer.class) {
            // PushTelemetry's payload: bytes that are no codec's stream nor OTLP message, or none
            return random.nextInt(8) == 0 ? null : java.nio.ByteBuffer.wrap(bytes(random.nextInt(200)));
        } else if (type == BaseRecords.class) {
            return records();
        } else if (type instanceof ParameterizedType list && list.getRawType() == List.class) {
            Type element = list.getActualTypeArguments()[0];
            List<Object> values = new ArrayList<>();
            for (int i = depth >= MAX_DEPTH ? 0 : size(); i > 0; i--) {
                values.add(value(field, element, version, depth + 1));
            }
            return values;
        } else if (type instanceof Class<?> c && ImplicitLinkedHashCollection.class.isAssignableFrom(c)) {
            return collection(c, version, depth);
        } else if (type instanceof Class<?> c && Message.class.isAssignableFrom(c)) {
            if (random.nextInt(10) == 0) {
                return null;
            }
            Message nested = newInstance(c);
            fill(nested, version, depth + 1);
            return nested;
        }
        throw new IllegalStateException("no random value for " + field + " of type " + type);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private Object collection(Class<?> type, short version, int depth) {
        ImplicitLinkedHashCollection collection = (ImplicitLinkedHashCollection) newInstance(type);
        Class<?> element = (Class<?>) ((ParameterizedType) type.getGenericSuperclass()).getActualTypeArguments()[0];
        for (int i = depth >= MAX_DEPTH ? 0 : size(); i > 0; i--) {
            Message nested = newInstance(element);
            fill(nested, version, depth + 1);
            collection.add((ImplicitLinkedHashCollection.Element) nested);
        }
        return collection;
    }

    private static boolean timeField(String name) {
        return name.endsWith("ms") || name.contains("timeout") || name.contains("wait");
    }

    private int size() {
        int r = random.nextInt(10);
        return r < 2 ? 0 : r < 7 ? 1 : 2 + random.nextInt(2);
    }

    private int anInt() {
        return pick(0, 0, 1, 1, 2, 3, -1, -2, Integer.MAX_VALUE, Integer.MIN_VALUE, 1 << 20, random.nextInt(1025),
                random.nextInt());
    }

    private long aLong() {
        long[] longs = {0, 0, 1, 2, -1, -2, -3, -4, Long.MAX_VALUE, Long.MIN_VALUE, random.nextInt(1000),
            System.currentTimeMillis(), random.nextLong()};
        return longs[random.nextInt(longs.length)];
    }

    private int pick(int... values) {
        return values[random.nextInt(values.length)];
    }

    private String aString(String name) {
        int r = random.nextInt(10);
        if (r == 0) {
            return null;
        }
        if (name.contains("memberid") && r < 6 && !known.members().isEmpty()) {
            return known.members().get(random.nextInt(known.members().size()));
        }
        boolean named = name.contains("topic") || name.contains("group") || name.equals("name")
                || name.contains("resourcename") || name.contains("transactionalid");
        if (named && r < 7 && !known.names().isEmpty()) {
            return known.names().get(random.nextInt(known.names().size()));
        }
        return r < 8 ? ODD_STRINGS[random.nextInt(ODD_STRINGS.length)] : "fuzz-" + random.nextInt(1000);
    }

    private Uuid anId() {
        int r = random.nextInt(10);
        if (r < 5 && !known.ids().isEmpty()) {
            return known.ids().get(random.nextInt(known.ids().size()));
        }
        return r < 8 ? Uuid.ZERO_UUID : Uuid.randomUuid();
    }

    private byte[] bytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    /** Records in every shape a produce may carry: valid (any codec, any producer state), old, corrupt, garbage. */
    private BaseRecords records() {
        int r = random.nextInt(10);
        if (r == 0) {
            return null;
        } else if (r == 1) {
            return MemoryRecords.EMPTY;
        } else if (r == 2) {
            return MemoryRecords.readableRecords(ByteBuffer.wrap(bytes(random.nextInt(120))));
        } else if (r == 3) {
            return MemoryRecords.withRecords(RecordBatch.MAGIC_VALUE_V1, Compression.NONE, simpleRecords());
        }
        Compression[] codecs = {Compression.NONE, Compression.NONE, Compression.gzip().build(),
            Compression.lz4().build(), Compression.zstd().build()};
        boolean idempotent = random.nextBoolean();
        MemoryRecords valid = MemoryRecords.withRecords(RecordBatch.MAGIC_VALUE_V2, aLong() & 0xffff,
                codecs[random.nextInt(codecs.length)],
                random.nextBoolean() ? TimestampType.CREATE_TIME : TimestampType.LOG_APPEND_TIME,
                idempotent ? pick(0, 1, 1000, Integer.MAX_VALUE) : RecordBatch.NO_PRODUCER_ID,
                idempotent ? (short) pick(0, 1, Short.MAX_VALUE) : RecordBatch.NO_PRODUCER_EPOCH,
                idempotent ? pick(0, 1, 5, Integer.MAX_VALUE) : RecordBatch.NO_SEQUENCE, pick(-1, 0, 7),
                idempotent && random.nextBoolean(), simpleRecords());
        if (r < 8) {
            return valid;
        }
        ByteBuffer flipped = valid.buffer().duplicate();
        int at = random.nextInt(flipped.remaining());
        flipped.put(at, (byte) (flipped.get(at) ^ (1 << random.nextInt(8))));
        return MemoryRecords.readableRecords(flipped);
    }

    private SimpleRecord[] simpleRecords() {
        SimpleRecord[] records = new SimpleRecord[1 + random.nextInt(3)];
        for (int i = 0; i < records.length; i++) {
            long timestamp = pick(0, 1, 2) == 0 ? -1 : System.currentTimeMillis();
            records[i] = new SimpleRecord(timestamp, random.nextBoolean() ? null : bytes(random.nextInt(20)),
                    ("value-" + i).getBytes(StandardCharsets.UTF_8));
        }
        return records;
    }

    private static List<Method> setters(Class<?> type) {
        return Arrays.stream(type.getMethods())
                .filter(m -> m.getName().startsWith("set") && m.getParameterCount() == 1
                        && m.getReturnType() == type && !Modifier.isStatic(m.getModifiers())
                        && !m.getName().equals("setUnknownTaggedFields"))
                .sorted(Comparator.comparing(Method::getName))
                .toList();
    }

    private static Method getter(Class<?> type, Method setter) {
        String field = setter.getName().substring(3);
        try {
            return type.getMethod(Character.toLowerCase(field.charAt(0)) + field.substring(1));
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(type.getName() + " has a setter without a getter: " + setter, e);
        }
    }

    private static Object invoke(Method method, Object target, Object... args) {
        try {
            return method.invoke(target, args);
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw new IllegalStateException(method + " failed", e);
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> T newInstance(Class<?> type) {
        try {
            return (T) type.getConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot make a " + type.getName(), e);
        }
    }
}
