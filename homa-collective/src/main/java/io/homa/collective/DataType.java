package io.homa.collective;

/**
 * The element type of a {@link CollectiveBuffer}. On the wire elements are big-endian, as
 * {@code ByteBuf.getFloat} and friends read them.
 */
public enum DataType {
    FLOAT(4),
    DOUBLE(8),
    INT(4),
    LONG(8);

    private final int bytes;

    DataType(int bytes) {
        this.bytes = bytes;
    }

    /** Bytes per element. */
    public int bytes() {
        return bytes;
    }
}
