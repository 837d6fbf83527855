package io.homa.collective.internal;

import io.homa.collective.Algorithm;
import io.homa.collective.DataType;
import io.homa.collective.ReduceOp;
import io.netty.buffer.ByteBuf;

/**
 * The 48-byte header in front of every segment (docs/collectives.md, "Wire format"):
 * <pre>
 *  0  u8  magic 0xC7      1 u8 version 1    2 u8 kind     3 u8 element type
 *  4  u8  reduce op       5 u8 algorithm    6 u16 reserved (0)
 *  8  i32 group id       12 i32 sender's rank   16 i32 group size   20 i32 root
 * 24  i64 operation sequence number
 * 32  i32 elements of the operation   36 i32 step   40 i32 first element   44 i32 elements here
 * </pre>
 * then the segment's elements (big-endian).
 */
public final class MessageHeader {
    public static final int LENGTH = 48;
    static final int MAGIC = 0xC7;
    static final int VERSION = 1;
    private static final OpKind[] KINDS = OpKind.values();
    private static final DataType[] TYPES = DataType.values();
    private static final ReduceOp[] OPS = ReduceOp.values();
    private static final Algorithm[] ALGORITHMS = Algorithm.values();

    int groupId;
    int rank;
    int groupSize;
    long opSeq;
    OpDescriptor op;
    int step;
    int offset;
    int count;

    static void write(ByteBuf out, int groupId, int rank, int groupSize, long opSeq, OpDescriptor op,
                      int step, int offset, int count) {
        out.writeByte(MAGIC).writeByte(VERSION).writeByte(op.kind().ordinal()).writeByte(op.type().ordinal())
                .writeByte(op.op().ordinal()).writeByte(op.algorithm().ordinal()).writeShort(0)
                .writeInt(groupId).writeInt(rank).writeInt(groupSize).writeInt(op.root())
                .writeLong(opSeq).writeInt(op.elements()).writeInt(step).writeInt(offset).writeInt(count);
    }

    /**
     * Reads a header from {@code in} (advancing past it).
     *
     * @return null after a malformed header, {@code problem[0]} saying what was wrong
     */
    static MessageHeader read(ByteBuf in, String[] problem) {
        if (in.readableBytes() < LENGTH) {
            problem[0] = "a message of " + in.readableBytes() + " bytes is shorter than the " + LENGTH + "-byte header";
            return null;
        }
        int magic = in.readUnsignedByte();
        int version = in.readUnsignedByte();
        if (magic != MAGIC || version != VERSION) {
            problem[0] = "not a collective message (magic " + magic + ", version " + version + ")";
            return null;
        }
        int kind = in.readUnsignedByte();
        int type = in.readUnsignedByte();
        int op = in.readUnsignedByte();
        int algorithm = in.readUnsignedByte();
        in.skipBytes(2);
        if (kind >= KINDS.length || type >= TYPES.length || op >= OPS.length || algorithm >= ALGORITHMS.length) {
            problem[0] = "unknown kind, type, op or algorithm code (" + kind + ", " + type + ", " + op + ", " + algorithm + ")";
            return null;
        }
        MessageHeader h = new MessageHeader();
        h.groupId = in.readInt();
        h.rank = in.readInt();
        h.groupSize = in.readInt();
        int root = in.readInt();
        h.opSeq = in.readLong();
        int elements = in.readInt();
        h.step = in.readInt();
        h.offset = in.readInt();
        h.count = in.readInt();
        if (elements < 0 || h.offset < 0 || h.count < 0 || h.step < 0 || (long) h.offset + h.count > elements) {
            problem[0] = "segment [" + h.offset + ", +" + h.count + ") of an operation of " + elements + " elements";
            return null;
        }
        h.op = new OpDescriptor(KINDS[kind], TYPES[type], OPS[op], elements, root, ALGORITHMS[algorithm]);
        return h;
    }
}
