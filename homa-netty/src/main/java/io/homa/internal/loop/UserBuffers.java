package io.homa.internal.loop;

import io.netty.buffer.ByteBuf;

import java.nio.ByteBuffer;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The user's {@code ByteBuf}s that one engine reads in place (requests and responses passed to
 * {@code call} and {@code reply}), by the view the engine was given: each is released when the
 * engine says it stopped reading that view, or at close. Confined to the event loop.
 */
final class UserBuffers {
    private final Map<ByteBuffer, ByteBuf> owners = new IdentityHashMap<>();

    /** The engine reads {@code view}, a view of {@code owner}, from now on. */
    void own(ByteBuffer view, ByteBuf owner) {
        owners.put(view, owner);
    }

    /** The buffer behind {@code view}, or null (a {@code byte[]} payload). */
    ByteBuf get(ByteBuffer view) {
        return owners.get(view);
    }

    /** The engine stopped reading {@code view}: its buffer is released (the engine's release listener). */
    void release(ByteBuffer view) {
        ByteBuf owner = owners.remove(view);
        if (owner != null) {
            owner.release();
        }
    }

    /** Releases every buffer still held (close). */
    void releaseAll() {
        for (ByteBuf b : owners.values()) {
            b.release();
        }
        owners.clear();
    }
}
