package io.homa.internal.loop;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

/** The user's buffers an engine reads in place: each released once, when the engine lets go or at close. */
class UserBuffersTest {
    @Test
    void aBuffer_isReleasedWhenTheEngineLetsGoOfItsView_once() {
        UserBuffers buffers = new UserBuffers();
        ByteBuf owner = Unpooled.directBuffer(16).writeZero(16);
        ByteBuffer view = owner.nioBuffer();
        buffers.own(view, owner);
        assertSame(owner, buffers.get(view));
        assertNull(buffers.get(ByteBuffer.allocate(16)), "only the very view is known (identity, not equality)");
        buffers.release(view);
        assertEquals(0, owner.refCnt());
        buffers.release(view); // the engine never says so twice, but a second time must not release again
        assertNull(buffers.get(view));
    }

    @Test
    void close_releasesEveryBufferStillHeld() {
        UserBuffers buffers = new UserBuffers();
        ByteBuf a = Unpooled.directBuffer(8).writeZero(8);
        ByteBuf b = Unpooled.directBuffer(8).writeZero(8);
        buffers.own(a.nioBuffer(), a);
        buffers.own(b.nioBuffer(), b);
        buffers.releaseAll();
        assertEquals(0, a.refCnt());
        assertEquals(0, b.refCnt());
    }
}
