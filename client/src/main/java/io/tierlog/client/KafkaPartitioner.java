package io.tierlog.client;

/**
 * Kafka's default partitioner for keyed records, {@code toPositive(murmur2(key)) % partitions}, as the service
 * applies it (docs/api.md, "Produce"), so the client can batch per partition and a key lands where a Kafka producer
 * would put it. {@code murmur2} is kafka-clients' {@code Utils.murmur2}, bit for bit (checked against it in the
 * tests); copied rather than depended on to keep kafka-clients out of the client. Stateless.
 */
public final class KafkaPartitioner {
    private KafkaPartitioner() {
    }

    public static int partitionForKey(byte[] key, int partitions) {
        return (murmur2(key) & 0x7fffffff) % partitions;
    }

    public static int murmur2(byte[] data) {
        int length = data.length;
        final int m = 0x5bd1e995;
        final int r = 24;
        int h = 0x9747b28c ^ length;
        int length4 = length / 4;
        for (int i = 0; i < length4; i++) {
            int i4 = i * 4;
            int k = (data[i4] & 0xff) + ((data[i4 + 1] & 0xff) << 8) + ((data[i4 + 2] & 0xff) << 16)
                    + ((data[i4 + 3] & 0xff) << 24);
            k *= m;
            k ^= k >>> r;
            k *= m;
            h *= m;
            h ^= k;
        }
        int tail = length & ~3;
        switch (length % 4) {
            case 3:
                h ^= (data[tail + 2] & 0xff) << 16;
                // fall through
            case 2:
                h ^= (data[tail + 1] & 0xff) << 8;
                // fall through
            case 1:
                h ^= data[tail] & 0xff;
                h *= m;
                break;
            default:
                break;
        }
        h ^= h >>> 13;
        h *= m;
        h ^= h >>> 15;
        return h;
    }
}
